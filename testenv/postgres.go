package testenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/lakeswap/lakeswap/internal/devserver"
)

// EnvPostgresDSN points the tests at a PostgreSQL server of one's own: a DSN
// whose user may create databases.
const EnvPostgresDSN = "LAKESWAP_TEST_POSTGRES_DSN"

// PG is a running PostgreSQL server.
type PG struct {
	Host     string
	Port     int
	User     string
	Password string
	adminDSN string
	stop     func()
}

var (
	pgOnce sync.Once
	pgSrv  *PG
	pgErr  error
)

// Postgres returns the process's PostgreSQL server, starting it on first use.
func Postgres(t testing.TB) *PG {
	t.Helper()
	shortTier(t)
	pgOnce.Do(func() { pgSrv, pgErr = startPG(context.Background()) })
	if pgErr != nil {
		unavailable(t, "PostgreSQL", pgErr)
	}
	return pgSrv
}

// StartPostgres starts a server in dataDir that lives until Stop; for
// `make dev-up`.
func StartPostgres(ctx context.Context, dataDir string) (*PG, error) {
	return startPostgres(ctx, dataDir)
}

// Stop stops the server if this process started it.
func (p *PG) Stop() {
	if p.stop != nil {
		p.stop()
	}
}

// DSN is the connection string of a database on the server.
func (p *PG) DSN(db string) string {
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", p.User, p.Password, p.Host, p.Port, db)
}

// NewDatabase creates a database with a fresh name for one test and returns
// its DSN.
func (p *PG) NewDatabase(t testing.TB) string {
	t.Helper()
	name := "lakeswap_" + devserver.Random(6)
	db, err := sql.Open("pgx", p.adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// FILE_COPY copies template1's files: about a third of the server's
	// CPU that PostgreSQL 15's default (WAL_LOG, the copy written through
	// the log) takes, measured at 53 and 140 ms a database, with the log
	// unsynced as here. A server before 15 knows no strategy.
	if _, err := db.Exec("CREATE DATABASE " + name + " STRATEGY FILE_COPY"); err != nil {
		if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
			t.Fatalf("create database %s: %v", name, err)
		}
	}
	return p.DSN(name)
}

func startPG(ctx context.Context) (*PG, error) {
	if dsn := os.Getenv(EnvPostgresDSN); dsn != "" {
		return fromDSN(dsn)
	}
	dir, err := os.MkdirTemp("", "lakeswap-pg-")
	if err != nil {
		return nil, err
	}
	p, err := startPostgres(ctx, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	stop := p.stop
	var once sync.Once
	p.stop = func() { once.Do(func() { stop(); _ = os.RemoveAll(dir) }) }
	atExit(p.Stop)
	return p, nil
}

func fromDSN(dsn string) (*PG, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var host string
	var port int
	var usr string
	if err := db.QueryRow("SELECT coalesce(inet_server_addr()::text, 'localhost'), inet_server_port(), current_user").Scan(&host, &port, &usr); err != nil {
		return nil, fmt.Errorf("reach %s: %w", EnvPostgresDSN, err)
	}
	return &PG{Host: host, Port: port, User: usr, adminDSN: dsn}, nil
}

// pgBin finds the folder of initdb and pg_ctl: on the PATH, or Debian's
// /usr/lib/postgresql/<version>/bin, newest first.
func pgBin() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no pg_ctl on the PATH or in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql)")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// startPostgres runs initdb and pg_ctl in dataDir on a free loopback port
// with a random password. PostgreSQL refuses to run as root, so as root the
// server runs as the postgres user that Debian's package creates.
func startPostgres(ctx context.Context, dataDir string) (*PG, error) {
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	port, err := devserver.FreePort()
	if err != nil {
		return nil, err
	}
	p := &PG{Host: "127.0.0.1", Port: port, User: "lakeswap", Password: devserver.Random(16)}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs a postgres user to run the server: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dataDir, 0o700); err != nil {
			return nil, err
		}
		if err := os.Chown(dataDir, uid, gid); err != nil {
			return nil, err
		}
	}
	run := func(name string, args ...string) error {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = dataDir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", name, err, out)
		}
		return nil
	}
	pwFile := filepath.Join(dataDir, "pwfile")
	if err := os.WriteFile(pwFile, []byte(p.Password+"\n"), 0o600); err != nil {
		return nil, err
	}
	if cred != nil {
		_ = os.Chown(pwFile, int(cred.Uid), int(cred.Gid))
	}
	pgdata := filepath.Join(dataDir, "data")
	if err := run("initdb", "-D", pgdata, "-U", p.User, "--pwfile", pwFile, "--auth", "scram-sha-256", "-E", "UTF8", "--no-sync"); err != nil {
		return nil, err
	}
	opts := fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off -c full_page_writes=off -c max_connections=200", port, dataDir)
	if err := run("pg_ctl", "-D", pgdata, "-o", opts, "-l", filepath.Join(dataDir, "log"), "-w", "-t", "60", "start"); err != nil {
		return nil, err
	}
	p.stop = func() { _ = run("pg_ctl", "-D", pgdata, "-m", "immediate", "-w", "stop") }
	p.adminDSN = p.DSN("postgres")
	if err := pingPG(ctx, p.adminDSN); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func pingPG(ctx context.Context, dsn string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err = db.PingContext(ctx); err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// StopPostgres stops a server StartPostgres started in dataDir.
func StopPostgres(dataDir string) error {
	bin, err := pgBin()
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(bin, "pg_ctl"), "-D", filepath.Join(dataDir, "data"), "-m", "fast", "-w", "stop")
	if os.Geteuid() == 0 {
		if u, err := user.Lookup("postgres"); err == nil {
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

// shortTier skips a test that needs a server under go test -short: the
// fast tier runs the scenario files and the tests on the embedded
// catalog and local files; make test runs every test, on every server.
func shortTier(t testing.TB) {
	if testing.Short() {
		t.Skip("-short: tests on a server run in the full tier (make test)")
	}
}
