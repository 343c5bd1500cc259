package swap_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
)

// The scenarios of Iceberg Java's TestReplacePartitions, with another writer
// committing between lakeswap's plan and its commit: a change in another
// partition is rebased over, one in a planned partition, a rollback of main
// and a schema change are conflicts that commit nothing.
func TestConcurrentCommits(t *testing.T) {
	elsewhere := []retail.DailyOrder{{OrderDate: "2026-01-05", Channel: "store", OrderCount: 3, AmountCents: 300}}
	cases := []struct {
		name  string
		other func(e *env)
		// conflict is what the refusal says; "" means rebased.
		conflict string
	}{
		{"publish to another partition", func(e *env) { e.mustPublish(elsewhere, "2026-01-05") }, ""},
		{"append to another partition", func(e *env) { e.appendRows(elsewhere) }, ""},
		{"publish of the same run id to another partition", func(e *env) { mustPublishAs(e, "backfill-1", elsewhere, "2026-01-05") }, "another attempt of run backfill-1"},
		{"publish to a planned partition", func(e *env) {
			e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-02", Channel: "web", OrderCount: 5, AmountCents: 5}}, "2026-01-02")
		}, "added data file"},
		{"append to a planned partition", func(e *env) {
			e.appendRows([]retail.DailyOrder{{OrderDate: "2026-01-01", Channel: "fax", OrderCount: 1, AmountCents: 1}})
		}, "(append, "},
		{"removal of a planned partition's file", func(e *env) { e.removeFiles("2026-01-02") }, "removed data file"},
		{"main rolled back", func(e *env) {
			tx := e.table().NewTransaction()
			if err := tx.RollbackToSnapshot(*e.table().CurrentSnapshot().ParentSnapshotID); err != nil {
				e.t.Fatal(err)
			}
			if _, err := tx.Commit(e.ctx); err != nil {
				e.t.Fatal(err)
			}
		}, "no longer descends from the plan's base"},
		{"schema change", func(e *env) {
			tx := e.table().NewTransaction()
			if err := tx.UpdateSchema(true, false).AddColumn([]string{"note"}, iceberg.PrimitiveTypes.String, "", false, nil).Commit(); err != nil {
				e.t.Fatal(err)
			}
			if _, err := tx.Commit(e.ctx); err != nil {
				e.t.Fatal(err)
			}
		}, "schema, partition spec or contract changed"},
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				e := newEnvOn(t, b)
				e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
				e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-03", Channel: "app", OrderCount: 7, AmountCents: 700}}, "2026-01-03")
				var metaBefore string
				var filesBefore []string
				src := &hookSource{Source: retail.NewSource(fixture(t, retail.AfterBatch2)), before: func() {
					c.other(e)
					metaBefore, filesBefore = e.table().MetadataLocation(), withoutHolds(e.allFiles())
				}}
				res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: src, RunID: "backfill-1", Parallelism: 1})
				if c.conflict != "" {
					if !errors.Is(err, outcome.ErrConflict) || !strings.Contains(err.Error(), c.conflict) {
						t.Fatalf("err = %v, want a conflict saying %q", err, c.conflict)
					}
					if got := e.table().MetadataLocation(); got != metaBefore {
						t.Errorf("metadata moved from %s to %s on a conflict", metaBefore, got)
					}
					if got := e.allFiles(); !slices.Equal(got, filesBefore) {
						t.Errorf("files changed on a conflict:\nbefore %v\nafter  %v", filesBefore, got)
					}
					return
				}
				if err != nil {
					t.Fatalf("publish beside another partition's commit: %v", err)
				}
				rows := e.daily()
				if n, _ := group(rows, "2026-01-05", "store"); n != 3 {
					t.Errorf("the other writer's partition reads %d orders, want 3", n)
				}
				want := fixture(t, retail.AfterBatch2)
				for _, day := range fixtureRange {
					if got, w := retail.Only(rows, day), retail.Only(want, day); !slices.Equal(got, w) {
						t.Errorf("%s = %+v, want %+v", day, got, w)
					}
				}
				tbl := e.table()
				head := tbl.CurrentSnapshot()
				if head.SnapshotID != res.SnapshotID {
					t.Fatalf("main at %d, the run committed %d", head.SnapshotID, res.SnapshotID)
				}
				rec, _ := runrecord.Read(head.Summary.Properties)
				if rec.PlannedBaseSnapshotID == nil || rec.BaseSnapshotID == nil || *rec.BaseSnapshotID != *head.ParentSnapshotID || *rec.PlannedBaseSnapshotID == *rec.BaseSnapshotID {
					t.Errorf("record: base %v, planned base %v, want the other commit %d as base and the planned one beside it", rec.BaseSnapshotID, rec.PlannedBaseSnapshotID, *head.ParentSnapshotID)
				}
				if _, err := audit.Of(e.pub.Catalog).VerifyRun(e.ctx, e.ident, "backfill-1", 0); err != nil {
					t.Errorf("verify the rebased run: %v", err)
				}
			})
		}
	})
}

// appendRows appends rows as another engine's job would, through
// iceberg-go's append.
func (e *env) appendRows(rows []retail.DailyOrder) {
	e.t.Helper()
	rr, err := retail.NewSource(rows).Open(e.ctx, rows[0].OrderDate)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rr.Release()
	tx := e.table().NewTransaction()
	if err := tx.Append(e.ctx, rr, nil); err != nil {
		e.t.Fatal(err)
	}
	if _, err := tx.Commit(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

// removeFiles removes a partition's data files, as a delete by another
// engine would.
func (e *env) removeFiles(day string) {
	e.t.Helper()
	tbl := e.table()
	fsys, err := tbl.FS(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	var gone []iceberg.DataFile
	manifests, err := tbl.CurrentSnapshot().Manifests(fsys)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range manifests {
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, en := range entries {
			if df := en.DataFile(); strings.Contains(df.FilePath(), "order_date="+day) {
				gone = append(gone, df)
			}
		}
	}
	tx := tbl.NewTransaction()
	if err := tx.ReplaceDataFilesWithDataFiles(e.ctx, gone, nil, nil); err != nil {
		e.t.Fatal(err)
	}
	if _, err := tx.Commit(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}
