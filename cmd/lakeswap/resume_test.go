package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
)

// TestCommitPerPartitionResumes, on every site: a backfill of six
// partitions committed one per snapshot, killed (SIGKILL) as it is about to
// commit the fourth, leaves three committed and verified; run again with
// the same run id, it resumes at the fourth, reading from the table's
// history which landed, and the history shows one run id over six
// snapshots.
func TestCommitPerPartitionResumes(t *testing.T) {
	days := []string{"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05", "2026-01-06"}
	input := func(cents int64) string {
		var rows []retail.DailyOrder
		for _, d := range days {
			rows = append(rows, retail.DailyOrder{OrderDate: d, Channel: "web", OrderCount: 10, AmountCents: cents})
		}
		in := filepath.Join(t.TempDir(), "in.ndjson")
		if err := retail.WriteNDJSON(in, rows); err != nil {
			t.Fatal(err)
		}
		return in
	}
	const span = "order_date=2026-01-01..2026-01-06"
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--schema", write(t, s.home, "daily_orders.yaml", schemaYAML))
		s.must("publish", "--table", "retail.daily_orders", "--partitions", span, input(100))
		backfill := input(200)
		args := []string{"publish", "-o", "json", "--run-id", "resume-1", "--commit-per-partition", "--table", "retail.daily_orders", "--partitions", span, backfill}

		cmd := s.command(args...)
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, "LAKESWAP_TEST_KILL_AT_COMMIT=4")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
			t.Fatalf("the publish was to be killed at its fourth commit: %v: %s", err, out)
		}
		runSnapshots := func() string {
			var h struct {
				Main []runrecord.Entry `json:"main"`
			}
			if err := json.Unmarshal([]byte(s.must("history", "-o", "json", "--table", "retail.daily_orders")), &h); err != nil {
				t.Fatal(err)
			}
			var runs []string // the run's snapshots on main
			for _, e := range h.Main {
				if e.RunID == "resume-1" {
					runs = append(runs, strings.Join(e.Partitions, ","))
				}
			}
			return fmt.Sprint(len(runs))
		}
		if got := runSnapshots(); got != "3" {
			t.Fatalf("after the kill, main holds %s snapshots of run resume-1, want 3", got)
		}
		if code, _, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", "resume-1"); code != 0 {
			t.Errorf("verify the three batches that landed: exit %d: %s", code, errs)
		}

		code, stdout, errs := s.cli(args...)
		if code != 0 {
			t.Fatalf("the rerun: exit %d: %s%s", code, stdout, errs)
		}
		var res swap.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		var statuses []string
		for _, b := range res.Batches {
			statuses = append(statuses, b.Batch+" "+string(b.Status))
		}
		want := "1/6 already-published,2/6 already-published,3/6 already-published,4/6 published,5/6 published,6/6 published"
		if got := strings.Join(statuses, ","); got != want || res.Status != "published" {
			t.Errorf("the rerun: %s %s, want it to resume at the fourth: %s", res.Status, got, want)
		}
		if got := runSnapshots(); got != "6" {
			t.Errorf("main holds %s snapshots of run resume-1, want 6", got)
		}
		st := s.must("status", "--table", "retail.daily_orders", "--run", "resume-1")
		if strings.Count(st, "run resume-1 landed as snapshot") != 6 {
			t.Errorf("status: %s, want six snapshots", st)
		}
		if code, _, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", "resume-1"); code != 0 {
			t.Errorf("verify the whole run: exit %d: %s", code, errs)
		}
		// Once more: everything landed, nothing is committed.
		meta := s.metadata("daily_orders")
		if code, stdout, errs := s.cli(args...); code != 0 || !strings.Contains(stdout, `"already-published"`) || s.metadata("daily_orders") != meta {
			t.Errorf("a third run: exit %d: %s%s; want already published and the table unchanged", code, stdout, errs)
		}
		// Rolled back whole, to before the first batch.
		s.must("rollback", "--table", "retail.daily_orders", "--run", "resume-1")
		if got := runSnapshots(); got != "0" {
			t.Errorf("after rolling the run back, main holds %s of its snapshots", got)
		}
	})
}
