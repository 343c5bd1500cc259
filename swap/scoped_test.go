package swap_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

// TestScopedRollbackAfterExpiry, on every backend: snapshot expiry of
// everything older than now keeps a run's tagged rollback target and its
// own snapshot; a scoped rollback of that run after unrelated commits
// restores its partitions and keeps the other commits; one whose
// partitions a later commit touched is refused and changes nothing.
func TestScopedRollbackAfterExpiry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		batch1, batch2 := fixture(t, retail.AfterBatch1), fixture(t, retail.AfterBatch2)
		first := e.mustPublish(batch1, fixtureRange...)
		mustPublishAs(e, "backfill-b", batch2, fixtureRange...)
		e.appendRows([]retail.DailyOrder{{OrderDate: "2026-01-05", Channel: "app", OrderCount: 5, AmountCents: 50}})
		appended := e.table().CurrentSnapshot().SnapshotID
		e.appendRows([]retail.DailyOrder{{OrderDate: "2026-01-06", Channel: "app", OrderCount: 6, AmountCents: 60}})
		daily7 := []retail.DailyOrder{{OrderDate: "2026-01-07", Channel: "web", OrderCount: 7, AmountCents: 70}}
		mustPublishAs(e, "daily-7", daily7, "2026-01-07")

		tx := e.table().NewTransaction()
		if err := tx.ExpireSnapshots(table.WithOlderThan(0), table.WithRetainLast(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(e.ctx); err != nil {
			t.Fatal(err)
		}
		meta := e.table().Metadata()
		if meta.SnapshotByID(appended) != nil {
			t.Fatalf("expiry kept the untagged snapshot %d: the test expires nothing", appended)
		}
		if meta.SnapshotByID(first.SnapshotID) == nil || meta.SnapshotByName(swap.RollbackTag("backfill-b")) == nil || runrecord.Find(meta, "backfill-b") == nil {
			t.Fatal("expiry removed run backfill-b's rollback target or its snapshot, which its tags keep")
		}

		metaBefore, filesBefore := e.table().MetadataLocation(), e.allFiles()
		if _, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "backfill-b"}); !errors.Is(err, outcome.ErrRollbackRefused) || !strings.Contains(err.Error(), "--scoped") {
			t.Fatalf("a plain rollback behind later commits: %v, want refused, pointing at --scoped", err)
		}
		res, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "backfill-b", Scoped: true})
		if err != nil || !res.Verified || !res.Scoped {
			t.Fatalf("scoped rollback: %+v, %v", res, err)
		}
		rows := e.daily()
		for _, day := range fixtureRange {
			if got, want := retail.Only(rows, day), retail.Only(batch1, day); !slices.Equal(got, want) {
				t.Errorf("%s after the scoped rollback = %v, want the first load %v", day, got, want)
			}
		}
		for day, n := range map[string]int64{"2026-01-05": 5, "2026-01-06": 6, "2026-01-07": 7} {
			if got := retail.Only(rows, day); len(got) != 1 || got[0].OrderCount != n {
				t.Errorf("%s after the scoped rollback = %v, want the later commit's row kept", day, got)
			}
		}
		head := e.table().CurrentSnapshot()
		if rec, _ := runrecord.Read(head.Summary.Properties); head.SnapshotID != res.ToSnapshotID || rec.RunID != "rollback-backfill-b" {
			t.Errorf("main at %d recording %q, want the rollback's snapshot %d recording rollback-backfill-b", head.SnapshotID, rec.RunID, res.ToSnapshotID)
		}
		if _, err := audit.Of(e.pub.Catalog).VerifyRun(e.ctx, e.ident, "rollback-backfill-b", 0); err != nil {
			t.Errorf("verify the rollback: %v", err)
		}
		if st, err := history.Of(e.pub.Catalog).Status(e.ctx, e.ident, "backfill-b"); err != nil || !st.Landed || st.OnMain {
			t.Errorf("status of the run rolled back scoped: %+v, %v; want landed, and main no longer holding it", st, err)
		}
		if got := e.allFiles(); len(got) <= len(filesBefore) || e.table().MetadataLocation() == metaBefore {
			t.Errorf("the rollback wrote no metadata")
		}

		// Run daily-7's partition is touched by a later publish: a scoped
		// rollback of it would undo that one too.
		mustPublishAs(e, "daily-7-again", []retail.DailyOrder{{OrderDate: "2026-01-07", Channel: "web", OrderCount: 8, AmountCents: 80}}, "2026-01-07")
		metaBefore, filesBefore = e.table().MetadataLocation(), e.allFiles()
		_, err = e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "daily-7", Scoped: true})
		if says := "a later commit touched partition order_date=2026-01-07"; !errors.Is(err, outcome.ErrRollbackRefused) || !strings.Contains(err.Error(), says) {
			t.Errorf("scoped rollback of daily-7 under a later commit: %v, want refused saying %q", err, says)
		}
		// backfill-b was rolled back scoped already: a retry says so.
		again, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "backfill-b", Scoped: true})
		if err != nil || !again.AlreadyRolledBack || again.ToSnapshotID != res.ToSnapshotID {
			t.Errorf("scoped rollback of backfill-b again: %+v, %v; want already rolled back as snapshot %d", again, err, res.ToSnapshotID)
		}
		if e.table().MetadataLocation() != metaBefore || !slices.Equal(e.allFiles(), filesBefore) {
			t.Error("a refused scoped rollback changed the table or its files")
		}
	})
}

func mustPublishAs(e *env, runID string, rows []retail.DailyOrder, partitions ...string) *swap.Result {
	e.t.Helper()
	res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: partitions, Source: retail.NewSource(rows), RunID: runID})
	if err != nil {
		e.t.Fatalf("publish %s: %v", runID, err)
	}
	return res
}

// TestScopedRollbackOfTheFirstRun: a scoped rollback of the run that made
// the table's first snapshot takes its files out, leaving its partitions
// empty and later commits in place; a second one says it was done, and
// commits nothing.
func TestScopedRollbackOfTheFirstRun(t *testing.T) {
	e := newEnv(t)
	mustPublishAs(e, "first", fixture(t, retail.AfterBatch1), fixtureRange...)
	later := []retail.DailyOrder{{OrderDate: "2026-01-05", Channel: "app", OrderCount: 5, AmountCents: 50}}
	mustPublishAs(e, "later", later, "2026-01-05")
	res, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "first", Scoped: true})
	if err != nil || !res.Verified {
		t.Fatalf("scoped rollback of the first run: %+v, %v", res, err)
	}
	if got := e.daily(); !slices.Equal(got, later) {
		t.Errorf("table after the scoped rollback of the first run: %v, want the later run's rows alone", got)
	}
	meta := e.table().MetadataLocation()
	again, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "first", Scoped: true})
	if err != nil || !again.AlreadyRolledBack || !again.Verified || again.ToSnapshotID != res.ToSnapshotID {
		t.Errorf("a second scoped rollback: %+v, %v; want already rolled back, verified", again, err)
	}
	if e.table().MetadataLocation() != meta {
		t.Error("a second scoped rollback changed the table")
	}
}
