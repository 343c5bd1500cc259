package swap_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"

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

// TestGCJudgesAttemptsWhole: an attempt that wrote a file within the grace
// period keeps its older files too (a backfill staging for longer than the
// grace period), and goes whole once all of it is older.
func TestGCJudgesAttemptsWhole(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	// A publish whose staged files could not be removed leaves them, as a
	// killed one would.
	stubborn := &swap.Publisher{Catalog: e.cat, StagingIO: func(_ context.Context, fsys icebergio.IO) (icebergio.WriteFileIO, error) {
		return noRemoveIO{fsys.(icebergio.WriteFileIO)}, nil
	}}
	stop := errors.New("stopped before the commit")
	stubborn.BeforeCommit = func(context.Context, *swap.Plan) error { return stop }
	if _, err := stubborn.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2)), RunID: "left-1"}); !errors.Is(err, stop) {
		t.Fatalf("publish: %v", err)
	}
	left := e.runFiles("left-1")
	if len(left) != 2 {
		t.Fatalf("left files: %v, want one a partition", left)
	}
	age := func(path string, d time.Duration) {
		if err := os.Chtimes(path, time.Now().Add(-d), time.Now().Add(-d)); err != nil {
			t.Fatal(err)
		}
	}
	age(left[0], 48*time.Hour)
	age(left[1], time.Hour)
	res, err := e.pub.GC(e.ctx, swap.GCRequest{Table: e.ident, Yes: true})
	if err != nil || len(res.Items) != 0 || res.Young != 2 {
		t.Fatalf("gc of an attempt active an hour ago: %+v, %v; want both files kept", res, err)
	}
	age(left[1], 25*time.Hour)
	res, err = e.pub.GC(e.ctx, swap.GCRequest{Table: e.ident, Yes: true})
	if err != nil || len(res.Items) != 2 || len(e.runFiles("left-1")) != 0 {
		t.Fatalf("gc of an attempt idle for a day: %+v, %v; left %v; want both files removed", res, err, e.runFiles("left-1"))
	}
	if got := len(e.daily()); got != len(fixture(t, retail.AfterBatch1)) {
		t.Errorf("the table reads %d rows after gc", got)
	}
}
