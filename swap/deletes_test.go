package swap_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/gc"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

// lostAnswer lands the first commit once armed, then answers it as a
// conflict (a retried request meeting the version the first moved) and
// cannot be read for a while: the outcome is unknown to the caller.
type lostAnswer struct {
	swap.Catalog
	armed     bool
	failLoads int
}

func (c *lostAnswer) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	if !c.armed {
		return c.Catalog.CommitTable(ctx, ident, reqs, ups)
	}
	c.armed = false
	if _, _, err := c.Catalog.CommitTable(ctx, ident, reqs, ups); err != nil {
		return nil, "", err
	}
	c.failLoads = 6 // AnsweredRefused once, LookFor five times
	return nil, "", fmt.Errorf("%w: injected answer to a retried request", catalog.ErrConflict)
}

func (c *lostAnswer) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if c.failLoads > 0 {
		c.failLoads--
		return nil, errors.New("injected: catalog unreachable")
	}
	return c.Catalog.LoadTable(ctx, ident)
}

// morFixed: day 1 holds a merge-on-read delete, then run "fix" replaces
// day 1 (its data and delete files).
func morFixed(t *testing.T, e *env) {
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	tx := e.table().NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete(e.ctx, iceberg.EqualTo(iceberg.Reference("channel"), "app"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	rows := fixture(t, retail.AfterBatch2)
	if _, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, RunID: "fix", Partitions: []string{"2026-01-01"},
		Source: retail.NewSource(retail.Only(rows, "2026-01-01")), SourceName: "test"}); err != nil {
		t.Fatal(err)
	}
}

// TestScopedRollbackUnknownOutcomeKeepsRestaged: a scoped rollback that
// writes a partition's rows back (the partition held delete files), whose
// commit landed but whose answer was lost and the table could not be read
// (outcome unknown), keeps the files it wrote: main references them.
func TestScopedRollbackUnknownOutcomeKeepsRestaged(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs in the full tier (make test)")
	}
	e := newEnv(t)
	morFixed(t, e)
	lost := &lostAnswer{Catalog: e.cat, armed: true}
	e.pub.Catalog = lost
	_, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "fix", Scoped: true})
	t.Logf("rollback: %v", err)
	e.pub.Catalog = e.cat
	tbl := e.table()
	tasks, perr := tbl.Scan().PlanFiles(e.ctx)
	if perr != nil {
		t.Fatal(perr)
	}
	for _, task := range tasks {
		p := task.File.FilePath()
		if _, serr := os.Stat(strings.TrimPrefix(p, "file://")); serr != nil {
			t.Errorf("main (snapshot %d) references %s, which is gone: %v", tbl.CurrentSnapshot().SnapshotID, p, serr)
		}
	}
}

// TestRestagedFilesHeldFromGC: the files a scoped rollback writes back are
// held, as a publish's attempt is, until its commit: a gc that runs while
// the rollback is under way (the files' times set two hours back, as for a
// rollback of many partitions that took that long) leaves them, and main
// references no file that is gone.
func TestRestagedFilesHeldFromGC(t *testing.T) {
	e := newEnv(t)
	morFixed(t, e)
	other := &swap.Publisher{Catalog: e.cat}
	e.pub.Catalog = &beforeCommit{Catalog: e.cat, hook: func() {
		// The files written back two hours ago, as by a rollback of many
		// partitions still running.
		old := time.Now().Add(-2 * time.Hour)
		for _, f := range e.dataFiles() {
			if strings.Contains(f, "run-rollback-fix-") {
				if err := os.Chtimes(strings.TrimPrefix(f, "file://"), old, old); err != nil {
					t.Fatal(err)
				}
			}
		}
		res, err := other.GC(e.ctx, gc.Request{Table: e.ident, Grace: time.Hour, Yes: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			t.Logf("gc removed %s %s", it.Kind, it.Location)
		}
	}}
	if _, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "fix", Scoped: true}); err != nil {
		t.Logf("rollback: %v", err)
	}
	e.pub.Catalog = e.cat
	tbl := e.table()
	tasks, err := tbl.Scan().PlanFiles(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		p := task.File.FilePath()
		if _, serr := os.Stat(strings.TrimPrefix(p, "file://")); serr != nil {
			t.Errorf("main references %s, which is gone", p)
		}
	}
}

// TestSplitFileWithDeletes: a data file larger than the table's
// read.split.target-size (128 MiB by default; Spark writes 512 MiB files)
// is planned by iceberg-go as several tasks, one per range of row groups;
// a file with deletes is read through all of them (here forced small: a
// row a row group, a 1-byte target), by the plan's base and by a scoped
// rollback that writes its rows back.
func TestSplitFileWithDeletes(t *testing.T) {
	e := newEnv(t)
	tx := e.table().NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead,
		"write.parquet.row-group-limit": "1", "read.split.target-size": "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	day := "2026-01-01"
	e.appendRows([]retail.DailyOrder{{OrderDate: day, Channel: "a", OrderCount: 1, AmountCents: 10},
		{OrderDate: day, Channel: "b", OrderCount: 2, AmountCents: 20}, {OrderDate: day, Channel: "c", OrderCount: 3, AmountCents: 30},
		{OrderDate: day, Channel: "d", OrderCount: 4, AmountCents: 40}})
	tx = e.table().NewTransaction()
	if err := tx.Delete(e.ctx, iceberg.EqualTo(iceberg.Reference("channel"), "d"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	before := retail.Only(e.daily(), day)
	if len(before) != 3 {
		t.Fatalf("a reader sees %v, want 3 rows", before)
	}
	res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, RunID: "fix", Partitions: []string{day}, AllowImplausible: true,
		Source: retail.NewSource([]retail.DailyOrder{{OrderDate: day, Channel: "a", OrderCount: 9, AmountCents: 90}}), SourceName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Plan.Partitions[0].OldFingerprint.Rows; got != 3 {
		t.Errorf("the plan's base of %s: %d rows, a reader sees 3", day, got)
	}
	if _, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "fix", Scoped: true}); err != nil {
		t.Fatalf("scoped rollback: %v", err)
	}
	if after := retail.Only(e.daily(), day); len(after) != 3 {
		t.Errorf("after the scoped rollback a reader sees %v, before the run %v", after, before)
	}
}
