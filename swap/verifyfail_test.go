package swap_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
)

// damagingCatalog lets a commit land, then replaces the first file the run
// committed with the file of an earlier publish that holds other rows, as
// storage corruption or a concurrent overwrite would.
type damagingCatalog struct {
	swap.Catalog
	t    *testing.T
	with string
	plan *swap.Plan // the plan being committed, as BeforeCommit saw it
}

func (d *damagingCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	meta, loc, err := d.Catalog.CommitTable(ctx, ident, reqs, ups)
	if err == nil && d.plan != nil {
		raw, rerr := os.ReadFile(localPath(d.t, d.with))
		if rerr == nil {
			rerr = os.WriteFile(localPath(d.t, d.plan.Partitions[0].NewFiles[0].Path), raw, 0o644)
		}
		if rerr != nil {
			d.t.Fatal(rerr)
		}
		d.plan = nil
	}
	return meta, loc, err
}

func localPath(t *testing.T, loc string) string {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

func TestVerifyFailureRollsBack(t *testing.T) {
	for _, keep := range []bool{false, true} {
		e := newEnv(t)
		other := e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-01", Channel: "web", OrderCount: 9, AmountCents: 9}}, "2026-01-01")
		base := e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
		damaging := &damagingCatalog{Catalog: e.cat, t: t, with: other.Plan.Partitions[0].NewFiles[0].Path}
		e.pub.Catalog = damaging
		e.pub.BeforeCommit = func(_ context.Context, plan *swap.Plan) error { damaging.plan = plan; return nil }

		res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange,
			Source: retail.NewSource(fixture(t, retail.AfterBatch2)), NoAutoRollback: keep})
		if !errors.Is(err, swap.ErrVerifyFailed) {
			t.Fatalf("keep=%v: err = %v, want ErrVerifyFailed", keep, err)
		}
		if len(res.Mismatches) == 0 || res.Mismatches[0].Partition != "order_date=2026-01-01" {
			t.Errorf("keep=%v: mismatches %+v, want one naming order_date=2026-01-01", keep, res.Mismatches)
		}
		head := e.table().CurrentSnapshot().SnapshotID
		switch {
		case !keep && (head != base.SnapshotID || res.Status != "rolled-back"):
			t.Errorf("after a failed verification main is at %d (status %s), want rolled back to %d", head, res.Status, base.SnapshotID)
		case keep && (head != res.SnapshotID || res.Status != "verify-failed"):
			t.Errorf("with NoAutoRollback main is at %d (status %s), want the run's %d", head, res.Status, res.SnapshotID)
		}
	}
}
