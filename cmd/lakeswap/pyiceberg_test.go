package main

import (
	"bytes"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/testenv"
)

// TestPyIcebergSetupOnly: a user whose only configuration is PyIceberg's
// ~/.pyiceberg.yaml, a SQL catalog on PostgreSQL (as a SQLAlchemy URI) with
// its warehouse on MinIO, runs lakeswap in a folder of nothing: it creates
// a table, publishes and reads it back there; doctor passes. With MinIO
// stopped, doctor fails naming the warehouse and a fix; with no
// credentials, every command says so in one line naming the variables.
func TestPyIcebergSetupOnly(t *testing.T) {
	srv := testenv.MinIO(t)
	bkt := srv.NewBucket(t)
	dsn := testenv.Postgres(t).NewDatabase(t)
	// MinIO behind a proxy this test can stop.
	target, _ := url.Parse(srv.Endpoint)
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	defer proxy.Close()

	home, cwd := t.TempDir(), t.TempDir()
	write(t, home, ".pyiceberg.yaml", `catalog:
  default:
    uri: `+strings.Replace(dsn, "postgres://", "postgresql+psycopg2://", 1)+`
    warehouse: s3://`+bkt+`/warehouse
    s3.endpoint: `+proxy.URL+`
    s3.region: `+srv.Region+`
    lakeswap.s3.max-backoff: 10ms
`)
	schema := write(t, cwd, "daily_orders.yaml", schemaYAML)
	input := newHomeInput(t)
	env := func(creds bool) []string {
		out := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), "AWS_EC2_METADATA_DISABLED=true"}
		if creds {
			out = append(out, srv.Env()...)
		}
		return out
	}
	run := func(creds bool, args ...string) (int, string, string) {
		cmd := exec.Command(lakeswapBinary(t), args...)
		cmd.Dir, cmd.Env = cwd, env(creds)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	must := func(args ...string) string {
		t.Helper()
		code, out, errs := run(true, args...)
		if code != 0 {
			t.Fatalf("lakeswap %v: exit %d: %s%s", args, code, out, errs)
		}
		return out
	}

	must("table", "create", "--schema", schema)
	must("publish", "--run-id", "py-1", "--table", "retail.daily_orders", "--partitions", twoDays, input)
	if out := must("verify", "--table", "retail.daily_orders", "--run", "py-1"); !strings.Contains(out, "matches") && !strings.Contains(out, "ok") {
		t.Errorf("verify: %s", out)
	}
	if out := must("history", "--table", "retail.daily_orders"); !strings.Contains(out, "py-1") {
		t.Errorf("history: %s", out)
	}
	out := must("doctor")
	if !strings.Contains(out, filepath.Join(home, ".pyiceberg.yaml")) || strings.Contains(out, "FAIL") {
		t.Errorf("doctor on PyIceberg's setup: %s", out)
	}
	if entries, _ := os.ReadDir(cwd); len(entries) != 1 {
		t.Errorf("lakeswap made files in the folder it ran in (an embedded catalog?): %v", entries)
	}

	// No credentials: one line, naming what to set; no SDK noise.
	code, out, errs := run(false, "doctor")
	if code == 0 || !strings.Contains(out+errs, "AWS_ACCESS_KEY_ID") || strings.Contains(errs, "SDK") {
		t.Errorf("doctor with no credentials: exit %d: %s%s", code, out, errs)
	}
	code, _, errs = run(false, "history", "--table", "retail.daily_orders")
	if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") > 1 || !strings.Contains(errs, "AWS_ACCESS_KEY_ID") {
		t.Errorf("history with no credentials: exit %d: %s", code, errs)
	}

	// MinIO stopped.
	proxy.Close()
	code, out, _ = run(true, "doctor")
	if code == 0 || !strings.Contains(out, "FAIL warehouse writable") || !strings.Contains(out, "fix:") {
		t.Errorf("doctor with MinIO stopped: exit %d:\n%s", code, out)
	}
}
