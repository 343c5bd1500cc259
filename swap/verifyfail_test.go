package swap_test

import (
	"errors"
	"net/url"
	"os"
	"testing"

	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/internal/retail"
)

// damage replaces the first committed file of the run with the file of an
// earlier publish that holds other rows, as storage corruption or a
// concurrent overwrite would.
func damage(t *testing.T, with string) func(*swap.Plan) {
	return func(plan *swap.Plan) {
		target := localPath(t, plan.Partitions[0].NewFiles[0].Path)
		raw, err := os.ReadFile(localPath(t, with))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
		swap.SetAfterCommit(e.pub, damage(t, other.Plan.Partitions[0].NewFiles[0].Path))

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
