package swap_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap/audit"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

func wrongAmounts(rows []retail.DailyOrder) []retail.DailyOrder {
	out := slices.Clone(rows)
	for i := range out {
		out[i].AmountCents *= 10
	}
	return out
}

func TestRollbackRestoresPreviousSnapshot(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
		good := e.mustPublish(fixture(t, retail.AfterBatch2), fixtureRange...)
		want := e.daily()
		bad := e.mustPublish(wrongAmounts(fixture(t, retail.AfterBatch2)), fixtureRange...)
		if _, c := group(e.daily(), "2026-01-02", "web"); c != 190000 {
			t.Fatalf("bad publish reads %d cents, want 190000", c)
		}

		res, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: bad.Plan.RunID})
		if err != nil {
			t.Fatalf("rollback: %v", err)
		}
		if head := e.table().CurrentSnapshot().SnapshotID; head != good.SnapshotID || res.ToSnapshotID != good.SnapshotID {
			t.Errorf("main at %d (result says %d) after rollback, want the good publish's %d", head, res.ToSnapshotID, good.SnapshotID)
		}
		if !res.Verified || res.Fingerprint != good.Plan.Fingerprint.Hash {
			t.Errorf("restored fingerprint %s (verified %v), want %s", res.Fingerprint, res.Verified, good.Plan.Fingerprint.Hash)
		}
		if got := e.daily(); !slices.Equal(got, want) {
			t.Errorf("rows after rollback %v, want %v", got, want)
		}
		// Retried, as an orchestrator does: said, with when, and not done
		// twice.
		meta := e.table().MetadataLocation()
		again, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: bad.Plan.RunID})
		if err != nil || !again.AlreadyRolledBack || again.RolledBackAt == nil || again.ToSnapshotID != good.SnapshotID || !again.Verified {
			t.Errorf("second rollback of the same run: %+v, %v; want already rolled back to %d, verified", again, err, good.SnapshotID)
		}
		if e.table().MetadataLocation() != meta {
			t.Error("a second rollback of the same run committed")
		}
	})
}

func TestRollbackRefusesWhenMainMovedOn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		e.mustPublish(fixture(t, retail.AfterBatch2), fixtureRange...)
		bad := e.mustPublish(wrongAmounts(fixture(t, retail.AfterBatch2)), fixtureRange...)
		later := e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-09", Channel: "app", OrderCount: 1, AmountCents: 1}}, "2026-01-09")

		_, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: bad.Plan.RunID})
		if !errors.Is(err, outcome.ErrRollbackRefused) {
			t.Fatalf("rollback behind a later commit: err = %v, want outcome.ErrRollbackRefused", err)
		}
		if head := e.table().CurrentSnapshot().SnapshotID; head != later.SnapshotID {
			t.Errorf("a refused rollback moved main to %d", head)
		}

		if _, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: bad.Plan.RunID, Force: true}); err != nil {
			t.Fatalf("forced rollback: %v", err)
		}
		if head := e.table().CurrentSnapshot().SnapshotID; head != bad.Plan.BaseSnapshotIDValue() {
			t.Errorf("forced rollback left main at %d, want the bad run's base %d", head, bad.Plan.BaseSnapshotIDValue())
		}
	})
}

func TestVerifyRunRecomputes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		res := e.mustPublish(fixture(t, retail.AfterBatch2), fixtureRange...)
		v, err := audit.Of(e.pub.Catalog).VerifyRun(e.ctx, e.ident, res.Plan.RunID, 0)
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		if !v.OK || v.Computed != res.Plan.Fingerprint.Hash || v.Rows != 5 || !v.Sums["amount_cents"].Equal(exact.Of(39000)) {
			t.Errorf("verify = %+v, want ok with %s, 5 rows, 39000 cents", v, res.Plan.Fingerprint.Hash)
		}
	})
}

func TestHistoryRecordsRuns(t *testing.T) {
	e := newEnv(t)
	res := e.mustPublish(fixture(t, retail.AfterBatch2), fixtureRange...)
	main, _, err := history.Of(e.pub.Catalog).History(e.ctx, e.ident)
	if err != nil {
		t.Fatal(err)
	}
	if len(main) != 1 {
		t.Fatalf("history has %d entries, want 1", len(main))
	}
	h := main[0]
	if h.RunID != res.Plan.RunID || h.Rows != 5 || !h.Sums["amount_cents"].Equal(exact.Of(39000)) || !h.Sums["order_count"].Equal(exact.Of(6)) ||
		h.Fingerprint != res.Plan.Fingerprint.Hash || !slices.Equal(h.Partitions, []string{"order_date=2026-01-01", "order_date=2026-01-02"}) || h.Source != "test" {
		t.Errorf("history entry %+v does not record the run %s", h, res.Plan.RunID)
	}
}
