package rollback_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

var daily = table.Identifier{"retail", "daily_orders"}

// ledgerOn creates the retail daily table on the embedded catalog and
// returns a publisher and a ledger of it.
func ledgerOn(t *testing.T) (*catalog.Catalog, *swap.Publisher, *rollback.Runner) {
	t.Helper()
	cfg, err := catalog.Resolve(catalog.Settings{Home: t.TempDir(), Getenv: func(string) string { return "" }, ConfigFile: os.DevNull})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	if _, err := catalog.CreateTable(context.Background(), cat, daily, retail.Spec()); err != nil {
		t.Fatal(err)
	}
	return cat, &swap.Publisher{Catalog: cat}, &rollback.Runner{Catalog: cat, Guards: []rollback.Guard{rollback.Frozen, rollback.ReleaseShares}}
}

// publish publishes a stage of the retail fixture as run runID.
func publish(t *testing.T, pub *swap.Publisher, runID, stage string, partitions ...string) *swap.Result {
	t.Helper()
	rows, err := retail.Daily(stage)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pub.Publish(context.Background(), swap.Request{Table: daily, RunID: runID, Partitions: partitions, Source: retail.NewSource(rows), SourceName: "test", AllowImplausible: true})
	if err != nil {
		t.Fatalf("publish %s: %v", runID, err)
	}
	return res
}

func head(t *testing.T, cat *catalog.Catalog) *table.Snapshot {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), daily)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.CurrentSnapshot()
}

// TestRollbackPointsMainBack: a full rollback of the last run points main
// at the snapshot it replaced and checks the fingerprint recorded before
// the run; a rollback of a run main moved past is refused unless forced,
// and a scoped one keeps the later commit.
func TestRollbackPointsMainBack(t *testing.T) {
	ctx := context.Background()
	cat, pub, ledger := ledgerOn(t)
	first := publish(t, pub, "first", retail.AfterBatch1, "2026-01-01", "2026-01-02")
	publish(t, pub, "second", retail.AfterBatch2, "2026-01-01", "2026-01-02")
	res, err := ledger.Rollback(ctx, rollback.Request{Table: daily, RunID: "second"})
	if err != nil || !res.Verified || res.ToSnapshotID != first.SnapshotID || head(t, cat).SnapshotID != first.SnapshotID {
		t.Fatalf("rollback of the last run: %+v, %v; want main at %d, verified", res, err, first.SnapshotID)
	}

	publish(t, pub, "third", retail.AfterBatch2, "2026-01-01")
	later := publish(t, pub, "later", retail.AfterBatch2, "2026-01-02")
	_, err = ledger.Rollback(ctx, rollback.Request{Table: daily, RunID: "third"})
	if !errors.Is(err, outcome.ErrRollbackRefused) || head(t, cat).SnapshotID != later.SnapshotID {
		t.Fatalf("rollback of a run main moved past: %v; want refused, main unmoved", err)
	}
	res, err = ledger.Rollback(ctx, rollback.Request{Table: daily, RunID: "third", Scoped: true})
	if err != nil || !res.Scoped || head(t, cat).SnapshotID == later.SnapshotID {
		t.Fatalf("scoped rollback: %+v, %v", res, err)
	}
	if s := runrecord.Find(tblMeta(t, cat), "later"); s == nil || !table.IsAncestorOf(head(t, cat).SnapshotID, s.SnapshotID, tblMeta(t, cat).SnapshotByID) {
		t.Error("the scoped rollback dropped the later commit from main")
	}
}

func tblMeta(t *testing.T, cat *catalog.Catalog) table.Metadata {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), daily)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.Metadata()
}

// TestRollbackOfFrozenPartitions: once the table freezes January, a full
// rollback of a run of its days is refused, a scoped one too unless it
// restates them with a reason, which the rollback's snapshot records.
func TestRollbackOfFrozenPartitions(t *testing.T) {
	ctx := context.Background()
	cat, pub, ledger := ledgerOn(t)
	publish(t, pub, "first", retail.AfterBatch1, "2026-01-01", "2026-01-02")
	publish(t, pub, "second", retail.AfterBatch2, "2026-01-01", "2026-01-02")
	tbl, err := cat.LoadTable(ctx, daily)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(map[string]string{contract.PropFreezeAfter: "P1M+7D"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before := head(t, cat).SnapshotID
	for _, req := range []rollback.Request{{Table: daily, RunID: "second"}, {Table: daily, RunID: "second", Scoped: true}} {
		if _, err := ledger.Rollback(ctx, req); !errors.Is(err, outcome.ErrRollbackRefused) || head(t, cat).SnapshotID != before {
			t.Errorf("rollback (scoped %v) of frozen days: %v; want refused, main unmoved", req.Scoped, err)
		}
	}
	res, err := ledger.Rollback(ctx, rollback.Request{Table: daily, RunID: "second", Scoped: true, RestateFrozen: "wrong refunds", DecidedBy: "ana"})
	if err != nil || !res.Verified {
		t.Fatalf("scoped rollback with a reason: %+v, %v", res, err)
	}
	rec, ok := runrecord.Read(head(t, cat).Summary.Properties)
	if !ok || rec.Restated == nil || rec.Restated.Reason != "wrong refunds" || rec.Restated.DecidedBy != "ana" || !slices.Equal(rec.Restated.Partitions, []string{"order_date=2026-01-01", "order_date=2026-01-02"}) {
		t.Errorf("the rollback records %+v; want the frozen days restated by ana, with the reason", rec.Restated)
	}
}
