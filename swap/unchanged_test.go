package swap_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

// TestUnchangedPartitionKeepsItsFiles, on every backend: a run that
// declares two partitions, one of them staged exactly as it holds, replaces
// only the other: the unchanged partition's file is the same path before
// and after the commit, the run records it as unchanged, its staged file is
// gone, and the run verifies and rolls back scoped.
func TestUnchangedPartitionKeepsItsFiles(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		days := []string{"2026-01-01", "2026-01-02"}
		e.mustPublish(daysOf(1, days...), days...)
		dayFiles := func(day string) []string {
			var out []string
			for _, f := range e.dataFiles() {
				if strings.Contains(f, "order_date="+day+"/") {
					out = append(out, f)
				}
			}
			return out
		}
		day1 := dayFiles(days[0])
		rows := append(daysOf(1, days[0]), daysOf(3, days[1])...) // day 1 as it is, day 2 changed
		res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: days, Source: retail.NewSource(rows), RunID: "one-changed"})
		if err != nil || res.Status != "published" {
			t.Fatalf("publish: %+v, %v", res, err)
		}
		if got := dayFiles(days[0]); !slices.Equal(got, day1) {
			t.Errorf("the unchanged partition's files went from %v to %v", day1, got)
		}
		snap := e.table().CurrentSnapshot()
		rec, _ := runrecord.Read(snap.Summary.Properties)
		if !slices.Equal(rec.Unchanged, []string{"order_date=" + days[0]}) {
			t.Errorf("the run records %v as unchanged", rec.Unchanged)
		}
		if staged := e.runFiles("one-changed"); len(staged) != 1 || !strings.Contains(staged[0], days[1]) {
			t.Errorf("the run's files left in the warehouse: %v, want day 2's alone", staged)
		}
		if _, err := audit.Of(e.pub.Catalog).VerifyRun(e.ctx, e.ident, "one-changed", 0); err != nil {
			t.Errorf("verify: %v", err)
		}
		e.mustPublish(daysOf(5, "2026-01-03"), "2026-01-03")
		if _, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "one-changed", Scoped: true}); err != nil {
			t.Fatalf("scoped rollback: %v", err)
		}
		if got := dayFiles(days[0]); !slices.Equal(got, day1) {
			t.Errorf("after the rollback the unchanged partition holds %v", got)
		}
	})
}
