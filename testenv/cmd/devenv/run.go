package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/internal/devserver"
	"github.com/lakeswap/lakeswap/testenv"
)

const usage = "usage: devenv minio | up [DIR] | down [DIR]   (DIR defaults to .lakeswap-dev)"

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	dir := ".lakeswap-dev"
	if len(args) > 1 {
		dir = args[1]
	}
	switch args[0] {
	case "minio":
		bin, err := devserver.MinIOBinary(ctx, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Println(bin)
		return nil
	case "up":
		return up(ctx, dir)
	case "down":
		return down(dir)
	}
	return errors.New(usage)
}

// up starts MinIO and PostgreSQL with their data under dir, writes the
// environment to dir/env, and prints it.
func up(ctx context.Context, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "env")); err == nil {
		return fmt.Errorf("%s/env exists: servers are up already (make dev-down first)", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, d := range []string{"minio", "pg"} {
		if err := os.MkdirAll(filepath.Join(abs, d), 0o755); err != nil {
			return err
		}
	}
	log, err := os.Create(filepath.Join(abs, "minio.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	// Each step says what it does: the first build of MinIO takes
	// minutes, and a silent terminal looks hung.
	step := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "dev-up: "+format+"\n", args...) }
	step("finding the minio server (built once from the Go module proxy into the cache, four to seven minutes the first time)")
	if _, err := devserver.MinIOBinary(ctx, os.Stderr); err != nil {
		return err
	}
	step("starting MinIO (its log: %s)", log.Name())
	s3, pid, err := devserver.StartMinIODetached(ctx, filepath.Join(abs, "minio"), log)
	if err != nil {
		return err
	}
	bucket := "lakeswap"
	step("creating bucket %s", bucket)
	if err := s3.Client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: s3.Region}); err != nil {
		return fmt.Errorf("create bucket: %w", err)
	}
	step("starting PostgreSQL in %s", filepath.Join(abs, "pg"))
	pg, err := testenv.StartPostgres(ctx, filepath.Join(abs, "pg"))
	if err != nil {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		return err
	}
	env := strings.Join(append(s3.Env(),
		"LAKESWAP_TEST_S3_ENDPOINT="+s3.Endpoint,
		"LAKESWAP_TEST_POSTGRES_DSN="+pg.DSN("postgres"),
		"LAKESWAP_DEV_MINIO_PID="+strconv.Itoa(pid),
	), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(abs, "env"), []byte(env), 0o600); err != nil {
		return err
	}
	fmt.Printf(`# MinIO at %s (bucket %s), PostgreSQL at %s:%d. To use them:
set -a; . %s/env; set +a
# a lakeswap.yaml catalog on them:
#   default-catalog: dev
#   catalog:
#     dev:
#       type: sql
#       uri: %s
#       sql.driver: pgx
#       sql.dialect: postgres
#       warehouse: s3://%s/warehouse
#       s3.endpoint: %s
`, s3.Endpoint, bucket, pg.Host, pg.Port, abs, pg.DSN("postgres"), bucket, s3.Endpoint)
	return nil
}

// down stops what up started and removes dir.
func down(dir string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		return fmt.Errorf("nothing to stop: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "LAKESWAP_DEV_MINIO_PID="); ok {
			if pid, err := strconv.Atoi(v); err == nil {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	}
	if err := testenv.StopPostgres(filepath.Join(dir, "pg")); err != nil {
		fmt.Fprintln(os.Stderr, "devenv: stop postgres:", err)
	}
	return os.RemoveAll(dir)
}
