package swap_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/gc"
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
	res, err := e.pub.GC(e.ctx, gc.Request{Table: e.ident, Yes: true, Now: time.Now().Add(30 * time.Minute)})
	if err != nil || len(res.Items) != 0 {
		t.Fatalf("gc within the retention: %+v, %v; want nothing removed", res, err)
	}
	later := time.Now().Add(2 * time.Hour)
	meta := e.table().MetadataLocation()
	res, err = e.pub.GC(e.ctx, gc.Request{Table: e.ident, Now: later})
	if err != nil || len(res.Items) != 3 || e.table().MetadataLocation() != meta {
		t.Fatalf("dry run past the retention: %+v, %v; want the three tags (two runs, one target) listed and the table unchanged", res, err)
	}
	if _, err := e.pub.GC(e.ctx, gc.Request{Table: e.ident, Yes: true, Now: later}); err != nil {
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
	left := leaveStaged(t, e, "left-1")
	if len(left) != 2 {
		t.Fatalf("left files: %v, want one a partition", left)
	}
	// A day later, as gc sees it: the attempt's hold (it could not be
	// removed either) was last refreshed a day ago.
	now := time.Now().Add(25 * time.Hour)
	age := func(path string, d time.Duration) {
		if err := os.Chtimes(path, now.Add(-d), now.Add(-d)); err != nil {
			t.Fatal(err)
		}
	}
	age(left[0], 48*time.Hour)
	age(left[1], time.Hour)
	res, err := e.pub.GC(e.ctx, gc.Request{Table: e.ident, Yes: true, Now: now})
	if err != nil || len(res.Items) != 1 || res.Items[0].Kind != "hold" || res.Young != 2 {
		t.Fatalf("gc of an attempt active an hour ago: %+v, %v; want both files kept, and only the stale hold removed", res, err)
	}
	age(left[1], 25*time.Hour)
	res, err = e.pub.GC(e.ctx, gc.Request{Table: e.ident, Yes: true, Now: now})
	if err != nil || len(res.Items) != 2 || len(e.runFiles("left-1")) != 0 {
		t.Fatalf("gc of an attempt idle for a day: %+v, %v; left %v; want both files removed", res, err, e.runFiles("left-1"))
	}
	if got := len(e.daily()); got != len(fixture(t, retail.AfterBatch1)) {
		t.Errorf("the table reads %d rows after gc", got)
	}
}

// TestGCKeepsARunningPublish: gc with a grace period shorter than a
// publish has been running leaves the publish's files, because the publish
// refreshes its hold while it runs; the publish then commits.
func TestGCKeepsARunningPublish(t *testing.T) {
	defer swap.SetHoldRefresh(10 * time.Millisecond)()
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	var during *gc.Result
	e.pub.BeforeCommit = func(ctx context.Context, plan *swap.Plan) error {
		// The staged files are older than the grace now; the hold,
		// refreshed every 10ms, is not. The grace leaves the refresher a
		// second, which a loaded machine (the whole suite on two cores)
		// has been seen to need more than 100ms of.
		time.Sleep(1500 * time.Millisecond)
		var err error
		during, err = e.pub.GC(ctx, gc.Request{Table: e.ident, Grace: time.Second, Yes: true})
		return err
	}
	res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2)), RunID: "long-1"})
	if err != nil || res.Status != "published" {
		t.Fatalf("publish with gc running beside it: %v (gc: %+v)", err, during)
	}
	if during == nil || len(during.Items) != 0 || during.Kept != 2 {
		t.Errorf("gc during the publish: %+v, want its two files kept by its hold", during)
	}
	if got := withoutHolds(e.allFiles()); !slices.Equal(got, e.allFiles()) {
		t.Errorf("the publish left its hold: %v", e.allFiles())
	}
}

// TestGCRefusesASharedDataPath: a table whose data files are written
// outside its location (write.data.path) may share that path with other
// tables, whose files this table's snapshots do not reference: gc refuses
// it rather than take their files for strays.
func TestGCRefusesASharedDataPath(t *testing.T) {
	e := newEnv(t)
	tx := e.table().NewTransaction()
	if err := tx.SetProperties(map[string]string{"write.data.path": "file://" + filepath.Join(e.home, "shared-data")}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	if _, err := e.pub.GC(e.ctx, gc.Request{Table: e.ident, Yes: true, Now: time.Now().Add(48 * time.Hour)}); err == nil || !strings.Contains(err.Error(), "outside the table's location") {
		t.Errorf("gc of a table with a shared data path: %v, want refused", err)
	}
}

// TestGCKeepsAnUnreadableHold: a hold that cannot be read (cut short, or a
// read that failed) says nothing of its attempt, whose files are kept.
func TestGCKeepsAnUnreadableHold(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2)), RunID: "held-1"})
	if err != nil {
		t.Fatal(err)
	}
	holds, _ := filepath.Glob(filepath.Join(e.home, "warehouse", "*", "*", "lakeswap", "holds", "held-1-*.json"))
	if len(holds) != 1 {
		t.Fatalf("holds of the plan: %v", holds)
	}
	if err := os.WriteFile(holds[0], []byte(`{"run_id":"hel`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Past the plan retention, a readable hold would go with its files.
	res, err := e.pub.GC(e.ctx, gc.Request{Table: e.ident, Yes: true, Now: time.Now().Add(10 * 24 * time.Hour)})
	if err != nil || len(res.Items) != 0 || res.Kept != 2 {
		t.Fatalf("gc with an unreadable hold: %+v, %v; want the plan's two files kept", res, err)
	}
	if _, err := e.pub.Apply(e.ctx, swap.ApplyOptions{}, plan); err != nil {
		t.Errorf("apply the plan after gc: %v", err)
	}
}

// onFirstLoad runs once, as the catalog answers its first load.
type onFirstLoad struct {
	swap.Catalog
	once sync.Once
	fn   func()
}

func (c *onFirstLoad) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	c.once.Do(c.fn)
	return tbl, err
}

// TestGCBesideAnApply: a plan whose files are days old is applied while gc
// runs, between gc's first look at the table and its look at the holds:
// gc removes nothing of it, and the table reads.
func TestGCBesideAnApply(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2)), RunID: "approved-1"})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, f := range e.runFiles("approved-1") {
		if err := os.Chtimes(localPath(t, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	collector := &swap.Publisher{Catalog: &onFirstLoad{Catalog: e.cat, fn: func() {
		if _, err := e.pub.Apply(e.ctx, swap.ApplyOptions{}, plan); err != nil {
			t.Errorf("apply: %v", err)
		}
	}}}
	res, err := collector.GC(e.ctx, gc.Request{Table: e.ident, Yes: true})
	if err != nil || len(res.Items) != 0 {
		t.Errorf("gc beside an apply: %+v, %v; want nothing removed", res, err)
	}
	if got, want := e.daily(), fixture(t, retail.AfterBatch2); len(got) != len(want) {
		t.Errorf("the table after gc: %v", got)
	}
}

// TestGCTellsAKilledPublish: a hold names the process that refreshes it;
// gc on the same host takes the hold of a process that has ended for a
// killed publish's, removes it at once, and judges its files by their age
// (--grace), where a live process's hold keeps them however old.
func TestGCTellsAKilledPublish(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	left := leaveStaged(t, e, "killed-1")
	holds, _ := filepath.Glob(filepath.Join(e.home, "warehouse", "*", "*", "lakeswap", "holds", "killed-1-*.json"))
	if len(left) != 2 || len(holds) != 1 {
		t.Fatalf("left files %v, holds %v", left, holds)
	}
	var rec map[string]any
	raw, err := os.ReadFile(holds[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if host, _ := os.Hostname(); rec["host"] != host || rec["pid"] != float64(os.Getpid()) {
		t.Fatalf("the hold names process %v on %v, want this one", rec["pid"], rec["host"])
	}
	for _, f := range left {
		old := time.Now().Add(-25 * time.Hour)
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// Held by a process that runs (this one): kept, old as they are.
	res, err := e.pub.GC(e.ctx, gc.Request{Table: e.ident, Yes: true})
	if err != nil || len(res.Items) != 0 || res.Kept != 2 {
		t.Fatalf("gc of files a live process holds: %+v, %v; want both kept", res, err)
	}
	// Held by a process that has ended (refreshed a minute ago).
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	rec["pid"] = ended.ProcessState.Pid()
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(holds[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = e.pub.GC(e.ctx, gc.Request{Table: e.ident, Yes: true})
	i := slices.IndexFunc(res.Items, func(it gc.Item) bool { return it.Kind == "hold" })
	if err != nil || len(res.Items) != 3 || i < 0 || !strings.Contains(res.Items[i].Note, "has ended") {
		t.Fatalf("gc of a killed publish's attempt: %+v, %v; want its hold (saying its process ended) and both files removed", res, err)
	}
	if got := e.runFiles("killed-1"); len(got) != 0 {
		t.Errorf("files left: %v", got)
	}
	if got := len(e.daily()); got != len(fixture(t, retail.AfterBatch1)) {
		t.Errorf("the table reads %d rows after gc", got)
	}
}

// leaveStaged runs a publish whose staged files and hold cannot be
// removed, stopped before its commit, as a killed one leaves them, and
// returns its staged files.
func leaveStaged(t *testing.T, e *env, runID string) []string {
	t.Helper()
	stubborn := &swap.Publisher{Catalog: e.cat, StagingIO: func(_ context.Context, fsys icebergio.IO) (icebergio.WriteFileIO, error) {
		return noRemoveIO{fsys.(icebergio.WriteFileIO)}, nil
	}}
	stop := errors.New("stopped before the commit")
	stubborn.BeforeCommit = func(context.Context, *swap.Plan) error { return stop }
	if _, err := stubborn.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2)), RunID: runID}); !errors.Is(err, stop) {
		t.Fatalf("publish: %v", err)
	}
	return e.runFiles(runID)
}
