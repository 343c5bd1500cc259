package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/doctor"
)

// TestDoctor: doctor passes on every site (its probe leaves no file in the
// warehouse), and fails with a named fix when the store cannot be reached,
// masking the catalog's password.
func TestDoctor(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		before := s.files()
		out := s.must("-o", "json", "doctor")
		var r doctor.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil || !r.OK || len(r.Checks) < 3 {
			t.Fatalf("doctor: %v %s", err, out)
		}
		if s.srv != nil && (r.Credentials == "" || !strings.Contains(out, "clock within")) {
			t.Errorf("doctor on S3 says nothing of credentials or the clock: %s", out)
		}
		if after := s.files(); len(after) != len(before) {
			t.Errorf("doctor left files: before %v, after %v", before, after)
		}
	})
	s := newSite(t, "sqlite+minio")
	conf := write(t, s.home, "down.yaml", "catalog:\n  down:\n    type: sql\n    sql.driver: sqlite\n    sql.dialect: sqlite\n    uri: file:"+s.home+
		"/down.db\n    warehouse: s3://"+s.bkt+"/w\n    s3.endpoint: http://127.0.0.1:1\n    lakeswap.s3.max-backoff: 10ms\n")
	code, out, _ := cli(t, s.home, "--config", conf, "--catalog", "down", "doctor")
	if code != exitError || !strings.Contains(out, "FAIL warehouse writable") || !strings.Contains(out, "fix: check the bucket exists, the endpoint") {
		t.Errorf("doctor with the store down: exit %d:\n%s", code, out)
	}
	// A REST catalog's warehouse is a name, not a folder to probe.
	dir := t.TempDir()
	t.Chdir(dir)
	rest := write(t, dir, "rest.yaml", "catalog:\n  lake:\n    uri: http://127.0.0.1:1/api/catalog\n    warehouse: analytics\n")
	code, out, _ = cli(t, s.home, "--config", rest, "--catalog", "lake", "doctor")
	if code != exitError || !strings.Contains(out, "skip warehouse writable") || !strings.Contains(out, "FAIL catalog reachable") {
		t.Errorf("doctor of a REST catalog: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "analytics")); err == nil {
		t.Error("doctor probed a REST catalog's warehouse name as a local folder")
	}
	if got := doctor.Mask("postgres://lake:s3cret@db:5432/ice?sslmode=require&password=hunter2"); strings.Contains(got, "s3cret") || strings.Contains(got, "hunter2") {
		t.Errorf("masked uri %s", got)
	}
}
