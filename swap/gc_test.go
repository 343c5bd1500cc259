package swap_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
)

// TestGCExpiresRunTags: a run's tags keep its snapshots for the retention
// the publisher gave, measured from the publish; past it, gc's dry run
// lists them and gc removes them, and nothing else.
func TestGCExpiresRunTags(t *testing.T) {
	e := newEnv(t)
	e.pub.RollbackRetention = time.Hour
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	mustPublishAs(e, "tagged-1", fixture(t, retail.AfterBatch2), fixtureRange...)
	refs := func() []string {
		var out []string
		for name := range e.table().Metadata().Refs() {
			out = append(out, name)
		}
		return out
	}
	if got := strings.Join(refs(), ","); !strings.Contains(got, swap.RollbackTag("tagged-1")) || !strings.Contains(got, swap.RunTag("tagged-1")) {
		t.Fatalf("refs after a publish: %s, want both of its tags", got)
	}
	res, err := e.pub.GC(e.ctx, swap.GCRequest{Table: e.ident, Yes: true, Now: time.Now().Add(30 * time.Minute)})
	if err != nil || len(res.Items) != 0 {
		t.Fatalf("gc within the retention: %+v, %v; want nothing removed", res, err)
	}
	later := time.Now().Add(2 * time.Hour)
	meta := e.table().MetadataLocation()
	res, err = e.pub.GC(e.ctx, swap.GCRequest{Table: e.ident, Now: later})
	if err != nil || len(res.Items) != 3 || e.table().MetadataLocation() != meta {
		t.Fatalf("dry run past the retention: %+v, %v; want the three tags (two runs, one target) listed and the table unchanged", res, err)
	}
	if _, err := e.pub.GC(e.ctx, swap.GCRequest{Table: e.ident, Yes: true, Now: later}); err != nil {
		t.Fatal(err)
	}
	if got := refs(); len(got) != 1 || got[0] != "main" {
		t.Errorf("refs after gc: %v, want main alone", got)
	}
	if rows := e.daily(); len(rows) != len(fixture(t, retail.AfterBatch2)) {
		t.Errorf("gc changed the table's rows: %d", len(rows))
	}
}
