package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/runrecord"
)

// TestRunFile: a run of 30 days keeps its per-partition detail in a run
// file, not in the snapshot summary, on every site. The summary names the
// file and its SHA-256 and holds no partition list; history, status,
// verify, a rerun, a resumed run in batches, a scoped rollback after
// another writer and a full rollback all read the detail back; a run file
// changed by hand fails verify naming it, and history says so.
func TestRunFile(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--table", "eng.days", "--schema", filepath.Join("..", "..", "examples", "retail", "daily_orders.table.yaml"))
		const tbl = "eng.days"
		days := func(n, cents int) (string, string) { // n days from 2025-01-01, one row each
			var b strings.Builder
			start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := range n {
				fmt.Fprintf(&b, `{"order_date":"%s","channel":"web","order_count":1,"amount_cents":%d}`+"\n", start.AddDate(0, 0, i).Format(time.DateOnly), cents)
			}
			return write(t, t.TempDir(), "in.ndjson", b.String()), "order_date=2025-01-01.." + start.AddDate(0, 0, n-1).Format(time.DateOnly)
		}
		in, sel := days(30, 100)
		s.must("publish", "--run-id", "big", "--table", tbl, "--partitions", sel, in)

		summary := func(run string) map[string]string {
			t.Helper()
			_, loaded, done := engineTable(t, s, "days")
			defer done()
			snap := runrecord.Find(loaded.Metadata(), run)
			if snap == nil {
				t.Fatalf("no snapshot records run %s", run)
			}
			return snap.Summary.Properties
		}
		props := summary("big")
		file := props[runrecord.PropRunFile]
		for _, k := range []string{runrecord.PropPartitionHashes, runrecord.PropPartitionValues, runrecord.PropPartitions} {
			if _, ok := props[k]; ok {
				t.Errorf("the summary of a 30-day run holds %s", k)
			}
		}
		if props[runrecord.PropPartitionCount] != "30" || !strings.Contains(file, "/lakeswap/runs/"+props[runrecord.PropRunFileSHA]+".json") || !slices.Contains(s.files(), file) {
			t.Fatalf("the summary names run file %q (sha %s, %s partitions); the table's files: %v", file, props[runrecord.PropRunFileSHA], props[runrecord.PropPartitionCount], s.files())
		}
		var size int
		for k, v := range props {
			size += len(k) + len(v)
		}
		if size > 2048 {
			t.Errorf("the summary of a 30-day run is %d bytes: %v", size, props)
		}

		// Read back by history, status and verify.
		var hist struct {
			Main []runrecord.Entry `json:"main"`
		}
		if err := json.Unmarshal([]byte(s.must("-o", "json", "history", "--table", tbl)), &hist); err != nil {
			t.Fatal(err)
		}
		if len(hist.Main) == 0 || hist.Main[0].RunID != "big" || len(hist.Main[0].Partitions) != 30 || hist.Main[0].Problem != "" {
			t.Errorf("history of the run: %+v", hist.Main)
		}
		if out := s.must("-o", "json", "status", "--table", tbl, "--run", "big"); !strings.Contains(out, `"on_main": true`) {
			t.Errorf("status of the run: %s", out)
		}
		s.must("verify", "--table", tbl, "--run", "big")
		meta := s.metadata(tbl)
		if out := s.must("publish", "--run-id", "big", "--table", tbl, "--partitions", sel, in); s.metadata(tbl) != meta || !strings.Contains(out, "already") {
			t.Errorf("a rerun of the run id committed or said otherwise: %s", out)
		}

		// In batches, killed at the second commit, then resumed.
		in2, _ := days(30, 200)
		args := []string{"publish", "--run-id", "batches", "--batch", "12", "--table", tbl, "--partitions", sel, in2}
		cmd := s.command(args...)
		cmd.Env = append(cmd.Env, "LAKESWAP_TEST_KILL_AT_COMMIT=2")
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("the publish told to die at its second commit exited 0: %s", out)
		}
		s.must(args...)
		if out := s.must("-o", "json", "status", "--table", tbl, "--run", "batches"); !strings.Contains(out, `"complete": true`) || !strings.Contains(out, `"committed_batches": 3`) {
			t.Errorf("status of the resumed run: %s", out)
		}
		s.must("verify", "--table", tbl, "--run", "batches")

		// Another writer, then a scoped rollback of the batches; then a
		// full rollback of the scoped rollback's own record is refused
		// or done, and the first run verifies again.
		other := write(t, t.TempDir(), "other.ndjson", `{"order_date":"2026-06-01","channel":"web","order_count":1,"amount_cents":5}`+"\n")
		s.must("publish", "--table", tbl, "--partitions", "order_date=2026-06-01", other)
		s.must("rollback", "--scoped", "--table", tbl, "--run", "batches")
		if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) {
			t.Errorf("verify --table after the scoped rollback: %s", out)
		}
		s.must("rollback", "--table", tbl, "--run", "rollback-batches")
		if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) {
			t.Errorf("verify --table after the full rollback: %s", out)
		}

		// A run file changed by hand: verify fails naming it; history
		// shows the run with the problem.
		_, loaded, done := engineTable(t, s, "days")
		fsys, err := loaded.FS(t.Context())
		done()
		if err != nil {
			t.Fatal(err)
		}
		if err := fsys.(icebergio.WriteFileIO).WriteFile(file, []byte(`{"partitions":[]}`)); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := s.cli("verify", "--table", tbl, "--run", "big"); code == 0 || !strings.Contains(errs, file) || !strings.Contains(errs, "not what the run wrote") {
			t.Errorf("verify of a run whose run file changed: exit %d: %s", code, errs)
		}
		if out := s.must("history", "--table", tbl); !strings.Contains(out, "not what the run wrote") {
			t.Errorf("history does not say the run file changed:\n%s", out)
		}
	})
}
