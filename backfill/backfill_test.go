package backfill_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/testenv"
)

var daily = []string{"retail", "daily_orders"}

// dailyTable is the embedded catalog (SQLite, a local warehouse) with the
// retail daily_orders table.
func dailyTable(t *testing.T) (context.Context, *catalog.Catalog, *swap.Publisher) {
	t.Helper()
	ctx := context.Background()
	cat := testenv.Embedded(t)
	if _, err := catalog.CreateTable(ctx, cat, daily, retail.Spec()); err != nil {
		t.Fatal(err)
	}
	return ctx, cat, &swap.Publisher{Catalog: cat}
}

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFilesPublishAndRerun: a backfill of a CSV file, unsorted, replaces
// the two days it names with its rows; the same file again commits
// nothing; the table holds the rows as given.
func TestFilesPublishAndRerun(t *testing.T) {
	ctx, cat, pub := dailyTable(t)
	in := write(t, "in.csv", "order_date,channel,order_count,amount_cents\n2026-01-02,web,3,300\n2026-01-01,store,1,5\n2026-01-01,web,2,20\n")
	files := backfill.Files{Selectors: []string{"order_date=2026-01-01..2026-01-02"}, Paths: []string{in}, Input: source.Options{MemoryLimit: 512 << 20}}
	res, err := files.Run(ctx, pub, swap.Request{Table: daily}, pub.Publish)
	if err != nil || res.Status != swap.StatusPublished {
		t.Fatalf("publish: %+v, %v", res, err)
	}
	if got := res.Plan.Fingerprint.Rows; got != 3 {
		t.Errorf("the run fingerprints %d rows, want 3", got)
	}
	if res.Plan.Source != source.Describe([]string{in}) {
		t.Errorf("the run records its source as %q", res.Plan.Source)
	}
	tbl, err := cat.LoadTable(ctx, daily)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := retail.ReadDaily(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	if orders, cents := retail.Totals(rows); len(rows) != 3 || orders != 6 || cents != 325 {
		t.Errorf("the table holds %d rows, %d orders, %d cents; want 3, 6, 325", len(rows), orders, cents)
	}
	head := tbl.CurrentSnapshot().SnapshotID
	again, err := files.Run(ctx, pub, swap.Request{Table: daily}, pub.Publish)
	if err != nil || again.Status != swap.StatusUnchanged {
		t.Fatalf("the same file again: %+v, %v; want unchanged", again, err)
	}
	if tbl, err = cat.LoadTable(ctx, daily); err != nil || tbl.CurrentSnapshot().SnapshotID != head {
		t.Errorf("the same file again moved main: %v", err)
	}
}

// TestFilesOutsideTheDays: a row of a day the run does not name is
// refused, naming the file, and the table is left as it was.
func TestFilesOutsideTheDays(t *testing.T) {
	ctx, cat, pub := dailyTable(t)
	in := write(t, "in.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,2,20\n2026-01-05,web,1,1\n")
	files := backfill.Files{Selectors: []string{"order_date=2026-01-01"}, Paths: []string{in}}
	_, err := files.Run(ctx, pub, swap.Request{Table: daily}, pub.Publish)
	if !errors.Is(err, outcome.ErrNotCommitted) {
		t.Fatalf("a row outside the run's days: %v, want a refusal that committed nothing", err)
	}
	tbl, lerr := cat.LoadTable(ctx, daily)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if tbl.CurrentSnapshot() != nil {
		t.Errorf("the refused run left snapshot %d", tbl.CurrentSnapshot().SnapshotID)
	}
}

// TestAdoptedTakesParquetOnly: adopting a CSV is refused as a request the
// caller must correct, before anything is read or staged.
func TestAdoptedTakesParquetOnly(t *testing.T) {
	ctx, cat, pub := dailyTable(t)
	in := write(t, "in.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,2,20\n")
	_, err := backfill.Adopted{Selectors: []string{"order_date=2026-01-01"}, Paths: []string{in}}.Run(ctx, pub, swap.Request{Table: daily}, pub.Publish)
	if !errors.Is(err, outcome.ErrInvalidRequest) {
		t.Fatalf("adopting a CSV: %v, want an invalid request", err)
	}
	if tbl, _ := cat.LoadTable(ctx, daily); tbl.CurrentSnapshot() != nil {
		t.Errorf("the refused adoption left a snapshot")
	}
}

// reads is a job of table that reads the given tables day by day.
func reads(table string, from ...string) *job.Job {
	j := &job.Job{Table: table, Sources: map[string]job.Source{"raw": {Path: "raw.csv"}}}
	for i, f := range from {
		j.Sources[string(rune('a'+i))] = job.Source{Table: f, Partitions: job.MapSame}
	}
	return j
}

func tables(jobs []*job.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Table)
	}
	return out
}

// TestOrder: a release's jobs stage after the tables they read, whatever
// order they were given in; a cycle, two tops and a table followed
// through partitions: all are refused as requests to correct.
func TestOrder(t *testing.T) {
	facts, dailyJob, monthly := reads("r.facts"), reads("r.daily", "r.facts"), reads("r.monthly", "r.daily", "r.facts")
	got, err := backfill.Order([]*job.Job{monthly, dailyJob, facts})
	if want := []string{"r.facts", "r.daily", "r.monthly"}; err != nil || !slices.Equal(tables(got), want) {
		t.Errorf("order: %v, %v; want %v", tables(got), err, want)
	}
	if top := backfill.Top([]*job.Job{monthly, facts, dailyJob}); top != facts {
		t.Errorf("top: %s, want r.facts", top.Table)
	}
	if top := backfill.Top(nil); top != nil {
		t.Errorf("top of no jobs: %s, want none", top.Table)
	}
	all := reads("r.all")
	all.Sources["f"] = job.Source{Table: "r.facts", Partitions: job.MapAll}
	for name, jobs := range map[string][]*job.Job{
		"cycle":          {reads("r.x", "r.y"), reads("r.y", "r.x")},
		"two tops":       {facts, reads("r.other")},
		"partitions all": {facts, all},
	} {
		if _, err := backfill.Order(jobs); !errors.Is(err, outcome.ErrInvalidRequest) {
			t.Errorf("%s: %v, want an invalid request", name, err)
		}
	}
}

// TestReleaseOfNoJobs: a release given no jobs is a request to correct,
// and stages nothing.
func TestReleaseOfNoJobs(t *testing.T) {
	ctx, _, pub := dailyTable(t)
	rel := pub.NewRelease("")
	err := backfill.Release{Partitions: []string{"order_date=2026-01-01"}}.Stage(ctx, pub, rel, swap.Request{})
	if !errors.Is(err, outcome.ErrInvalidRequest) {
		t.Errorf("a release of no jobs: %v, want an invalid request", err)
	}
}

// TestOverlappingRunsGiveTheRuntimeBack: two runs of one process hold the
// runtime's memory limit at once and end in either order; the runtime
// works to the smaller share while both hold, the other's while one does,
// and has its own limit back once neither does.
func TestOverlappingRunsGiveTheRuntimeBack(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	for _, firstEnds := range []bool{true, false} {
		a := backfill.HoldRuntime(400 << 20)
		b := backfill.HoldRuntime(800 << 20)
		if got := debug.SetMemoryLimit(-1); got != 300<<20 {
			t.Errorf("both held: the runtime's limit is %d MiB, want 300 (the smaller share)", got>>20)
		}
		first, second, left := a, b, int64(600<<20)
		if !firstEnds {
			first, second, left = b, a, 300<<20
		}
		first()
		first() // again: nothing more
		if got := debug.SetMemoryLimit(-1); got != left {
			t.Errorf("one held: the runtime's limit is %d MiB, want %d", got>>20, left>>20)
		}
		second()
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Errorf("none held: the runtime's limit is %d, want its own %d", got, before)
		}
	}
}
