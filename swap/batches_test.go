package swap_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

var fourDays = []string{"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"}

// daysOf is two rows a day, scaled by mult.
func daysOf(mult int64, days ...string) []retail.DailyOrder {
	var out []retail.DailyOrder
	for i, d := range days {
		n := int64(i + 1)
		out = append(out, retail.DailyOrder{OrderDate: d, Channel: "web", OrderCount: mult * n, AmountCents: mult * 100 * n},
			retail.DailyOrder{OrderDate: d, Channel: "app", OrderCount: mult * (n + 1), AmountCents: mult * 100 * (n + 1)})
	}
	return out
}

func (e *env) publishBatched(runID string, batch int, rows []retail.DailyOrder, days ...string) (*swap.Result, error) {
	return e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: days, Source: retail.NewSource(rows), RunID: runID, Batch: batch})
}

// TestBatchedRunIDIsAnIdempotencyKey: a batched run's id says what the run
// committed, as an unbatched one's does. Run again after it was rolled
// back, whole or one batch, it is refused with the table unchanged, never
// reported as published; the same id for other partitions is refused; and
// status and rollback count only the batches main holds.
func TestBatchedRunIDIsAnIdempotencyKey(t *testing.T) {
	refused := func(t *testing.T, e *env, res *swap.Result, err error, says string) {
		t.Helper()
		if !errors.Is(err, outcome.ErrRefused) || !strings.Contains(err.Error(), says) {
			t.Fatalf("status %v, err %v; want refused saying %q", res.Status, err, says)
		}
	}
	t.Run("rolled back whole", func(t *testing.T) {
		e := newEnv(t)
		e.mustPublish(daysOf(1, fourDays...), fourDays...)
		if _, err := e.publishBatched("bf", 2, daysOf(10, fourDays...), fourDays...); err != nil {
			t.Fatal(err)
		}
		if _, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "bf"}); err != nil {
			t.Fatal(err)
		}
		meta := e.table().MetadataLocation()
		res, err := e.publishBatched("bf", 2, daysOf(10, fourDays...), fourDays...)
		refused(t, e, res, err, "which main no longer holds")
		if e.table().MetadataLocation() != meta {
			t.Error("the refused rerun changed the table")
		}
	})
	t.Run("last batch rolled back", func(t *testing.T) {
		e := newEnv(t)
		e.mustPublish(daysOf(1, fourDays...), fourDays...)
		res, err := e.publishBatched("bf", 2, daysOf(10, fourDays...), fourDays...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, SnapshotID: res.Batches[1].SnapshotID}); err != nil {
			t.Fatal(err)
		}
		st, err := history.Of(e.pub.Catalog).Status(e.ctx, e.ident, "bf")
		if err != nil || !st.Complete || st.OnMain || st.OnMainBatches != 1 || st.Batches != 2 {
			t.Errorf("status after the last batch was rolled back: %+v, %v; want both batches committed, 1 of 2 on main", st, err)
		}
		meta := e.table().MetadataLocation()
		again, err := e.publishBatched("bf", 2, daysOf(10, fourDays...), fourDays...)
		refused(t, e, again, err, "batch 2/2 of run bf was committed as snapshot")
		if e.table().MetadataLocation() != meta {
			t.Error("the refused resume changed the table")
		}
		// Rolling the run back undoes the batch main still holds.
		rb, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "bf"})
		if err != nil || rb.FromSnapshotID != res.Batches[0].SnapshotID || !rb.Verified {
			t.Fatalf("rollback of the run: %+v, %v; want batch 1 undone", rb, err)
		}
		if got := e.daily(); len(got) != len(daysOf(1, fourDays...)) || got[0].AmountCents > 1000 {
			t.Errorf("table after the rollback: %v, want the first load", got)
		}
	})
	t.Run("other partitions", func(t *testing.T) {
		e := newEnv(t)
		if _, err := e.publishBatched("bf", 1, daysOf(10, fourDays[:2]...), fourDays[:2]...); err != nil {
			t.Fatal(err)
		}
		res, err := e.publishBatched("bf", 1, daysOf(20, fourDays[2:]...), fourDays[2:]...)
		refused(t, e, res, err, "committed batch 1/2")
	})
}

// TestDiscardAPlanAppliedInPart: a plan applied in batches whose second
// batch met a conflict is discarded: the files of the batch that was not
// committed go, the committed batch's stay, and the plan's hold goes.
func TestDiscardAPlanAppliedInPart(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(daysOf(1, fourDays...), fourDays...)
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fourDays, Source: retail.NewSource(daysOf(10, fourDays...)), RunID: "partly", Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	commits := 0
	e.pub.BeforeCommit = func(context.Context, *swap.Plan) error {
		if commits++; commits == 2 { // another writer takes a day of batch 2
			other := &swap.Publisher{Catalog: e.cat}
			if _, err := other.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: []string{"2026-01-03"}, Source: retail.NewSource(daysOf(5, fourDays...))}); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	}
	if _, err := e.pub.Apply(e.ctx, swap.ApplyOptions{}, plan); !errors.Is(err, outcome.ErrConflict) {
		t.Fatalf("apply: %v, want batch 2 in conflict", err)
	}
	e.pub.BeforeCommit = nil
	staged := e.runFiles("partly")
	said, err := e.pub.Discard(e.ctx, plan)
	if err != nil || !strings.Contains(said, "removed the 2 files") || !strings.Contains(said, "2 files a snapshot references") {
		t.Fatalf("discard: %q, %v", said, err)
	}
	if left := e.runFiles("partly"); len(left) != 2 || len(staged) != 4 {
		t.Errorf("files of run partly: %v before the discard, %v after; want batch 1's two kept", staged, left)
	}
	if holds := len(e.allFiles()) - len(withoutHolds(e.allFiles())); holds != 0 {
		t.Errorf("%d hold(s) left after the discard", holds)
	}
	if rows := e.daily(); len(rows) != 8 {
		t.Errorf("the table reads %d rows", len(rows))
	}
}

// TestScopedRollbackOfABatchedRun: a run committed in two batches, with
// another writer's commit to another partition between them and one after,
// is undone with --scoped in one commit: its four partitions hold their
// old fingerprints again, the other writer's partitions keep what it
// committed, and the table checks whole.
func TestScopedRollbackOfABatchedRun(t *testing.T) {
	e := newEnv(t)
	first := e.mustPublish(daysOf(1, fourDays...), fourDays...)
	commits := 0
	e.pub.BeforeCommit = func(context.Context, *swap.Plan) error {
		if commits++; commits == 2 { // between the batches
			other := &swap.Publisher{Catalog: e.cat}
			if _, err := other.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: []string{"2026-01-05"}, Source: retail.NewSource(daysOf(3, "2026-01-05"))}); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	}
	if _, err := e.publishBatched("bf", 2, daysOf(10, fourDays...), fourDays...); err != nil {
		t.Fatal(err)
	}
	e.pub.BeforeCommit = nil
	e.mustPublish(daysOf(7, "2026-01-06"), "2026-01-06") // after the run
	before := e.table().MetadataLocation()
	rb, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "bf", Scoped: true})
	if err != nil || !rb.Scoped || rb.Batches != 2 || !rb.Verified {
		t.Fatalf("scoped rollback of a batched run: %+v, %v", rb, err)
	}
	if e.table().MetadataLocation() == before {
		t.Fatal("the rollback committed nothing")
	}
	if rb.Fingerprint != first.Plan.Fingerprint.Hash {
		t.Errorf("the run's partitions fingerprint %s after the rollback, want the first load's %s", rb.Fingerprint, first.Plan.Fingerprint.Hash)
	}
	rows := e.daily()
	for _, day := range fourDays {
		if n, cents := group(rows, day, "web"); n > 10 || cents > 1000 {
			t.Errorf("%s/web holds %d orders, %d cents: not the first load's", day, n, cents)
		}
	}
	if n, _ := group(rows, "2026-01-05", "web"); n != 3 {
		t.Errorf("the commit between the batches is gone: 2026-01-05/web holds %d orders", n)
	}
	if n, _ := group(rows, "2026-01-06", "web"); n != 7 {
		t.Errorf("the commit after the run is gone: 2026-01-06/web holds %d orders", n)
	}
	if _, err := audit.Of(e.pub.Catalog).VerifyTable(e.ctx, e.ident, 0); err != nil {
		t.Errorf("verify the table: %v", err)
	}
}
