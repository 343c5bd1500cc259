package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
)

// TestDisjointWritersBothLand: two lakeswap processes backfill disjoint
// partitions against the same base at the same moment, 20 times, on every
// site. Both land every round, the later by committing on the other's
// snapshot; the table then holds both writers' rows, and every run
// verifies.
func TestDisjointWritersBothLand(t *testing.T) {
	t.Parallel() // processes of its own: runs beside other tests
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		const rounds = 20
		days := []string{"2026-01-01", "2026-01-02"}
		var runs []string
		for round := range rounds {
			barrier := t.TempDir()
			type writer struct {
				cmd      *exec.Cmd
				out, err bytes.Buffer
				cents    int64
			}
			ws := make([]*writer, 2)
			for i, day := range days {
				w := &writer{cents: int64(round*100 + i + 1)}
				in := filepath.Join(t.TempDir(), "in.ndjson")
				if err := retail.WriteNDJSON(in, []retail.DailyOrder{{OrderDate: day, Channel: "web", OrderCount: 1, AmountCents: w.cents}}); err != nil {
					t.Fatal(err)
				}
				w.cmd = s.command("publish", "-o", "json", "--table", "retail.daily_orders", "--partitions", "order_date="+day, in)
				if w.cmd.Env == nil {
					w.cmd.Env = os.Environ()
				}
				w.cmd.Env = append(w.cmd.Env, testCommitBarrier+"="+barrier+":2")
				w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.err
				if err := w.cmd.Start(); err != nil {
					t.Fatal(err)
				}
				ws[i] = w
			}
			var committed []int64
			for i, w := range ws {
				if err := w.cmd.Wait(); err != nil {
					t.Fatalf("round %d: writer of %s: %v: %s", round, days[i], err, w.err.String())
				}
				var res swap.Result
				if err := json.Unmarshal(w.out.Bytes(), &res); err != nil || res.Status != "published" {
					t.Fatalf("round %d: writer of %s: status %q (%v): %s", round, days[i], res.Status, err, w.out.String())
				}
				runs, committed = append(runs, res.Plan.RunID), append(committed, res.SnapshotID)
			}

			ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := cat.LoadTable(ctx, []string{"retail", "daily_orders"})
			if err != nil {
				t.Fatal(err)
			}
			head := tbl.CurrentSnapshot()
			if parent := *head.ParentSnapshotID; !(head.SnapshotID == committed[0] && parent == committed[1] || head.SnapshotID == committed[1] && parent == committed[0]) {
				t.Fatalf("round %d: main at %d (parent %d), want the two writers' snapshots %v one on the other", round, head.SnapshotID, parent, committed)
			}
			rows, err := retail.ReadDaily(ctx, tbl)
			_ = cat.Close()
			if err != nil {
				t.Fatal(err)
			}
			for i, day := range days {
				got := retail.Only(rows, day)
				if len(got) != 1 || got[0].AmountCents != ws[i].cents {
					t.Fatalf("round %d: %s holds %+v, want the writer's one row at %d cents", round, day, got, ws[i].cents)
				}
			}
		}
		for _, run := range runs {
			if code, _, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", run); code != 0 {
				t.Errorf("verify run %s: exit %d: %s", run, code, errs)
			}
		}
	})
}
