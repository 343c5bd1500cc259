package main

import (
	"iter"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/swap"
)

// morRows builds a batch of (d, id, n) rows in the arrow form of schema
// sc, each cell "2026-01-02/3": a day of January 2026 and an id.
func morRows(t *testing.T, sc *arrow.Schema, n int64, cells ...string) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, c := range cells {
		day, id, _ := strings.Cut(c, "/")
		d, err := time.Parse(time.DateOnly, day)
		if err != nil {
			t.Fatal(err)
		}
		b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(d))
		var v int64
		for _, r := range id {
			v = v*10 + int64(r-'0')
		}
		b.Field(1).(*array.Int64Builder).Append(v)
		if len(sc.Fields()) > 2 {
			b.Field(2).(*array.Int64Builder).Append(n)
		}
	}
	return b.NewRecordBatch()
}

// mor commits one change to eng.NAME through iceberg-go, as a
// merge-on-read engine would.
func mor(t *testing.T, s *site, name string, change func(*table.Transaction) error) {
	t.Helper()
	ctx, tbl, done := engineTable(t, s, name)
	defer done()
	tx := tbl.NewTransaction()
	if err := change(tx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// deleteFiles lists the delete files main's head applies, by the day of
// the data file each applies to.
func deleteFiles(t *testing.T, s *site, name string) map[string][]string {
	t.Helper()
	ctx, tbl, done := engineTable(t, s, name)
	defer done()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, task := range tasks {
		day := arrow.Date32(task.File.Partition()[1000].(iceberg.Date)).FormattedString()
		for _, f := range append(slices.Clone(task.DeleteFiles), task.EqualityDeleteFiles...) {
			if !slices.Contains(out[day], f.FilePath()) {
				out[day] = append(out[day], f.FilePath())
			}
		}
	}
	return out
}

// TestMergeOnReadTable: a table an engine writes merge-on-read, with
// equality deletes in two days and a position delete in another. On every
// site, by route: a SQL job reading the table; a rerun (the base is read
// with its deletes applied, so the rows a reader sees commit nothing); a
// publish in batches (a replaced day's delete files go out with its data
// files, a day the run does not declare keeps its deletes); a scoped
// rollback after another writer's commit (the rows written back); plan
// then apply, refused once another writer deletes in the planned day and
// not for a delete elsewhere; verify of runs and of the table. Each step
// is checked against iceberg-go's delete-applying scan.
func TestMergeOnReadTable(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		sc := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
			iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
		createEngineTable(t, s, "cdc", sc, spec)
		const tbl = "eng.cdc"
		asArrow, err := table.SchemaToArrowSchema(sc, nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, sc.Field(0), sc.Field(1)), nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		mor(t, s, "cdc", func(tx *table.Transaction) error {
			if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
				return err
			}
			rec := morRows(t, asArrow, 10, "2026-01-01/1", "2026-01-01/2", "2026-01-01/3",
				"2026-01-02/1", "2026-01-02/2", "2026-01-02/3", "2026-01-03/1", "2026-01-03/2", "2026-01-03/3")
			defer rec.Release()
			rr, err := array.NewRecordReader(asArrow, []arrow.RecordBatch{rec})
			if err != nil {
				return err
			}
			return tx.Append(t.Context(), rr, nil)
		})
		eqDelete := func(cells ...string) {
			mor(t, s, "cdc", func(tx *table.Transaction) error {
				rec := morRows(t, keys, 0, cells...)
				return tx.CommitEqualityDeletes(t.Context(), []int{1, 2}, iter.Seq2[arrow.RecordBatch, error](func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }), nil)
			})
		}
		eqDelete("2026-01-01/1", "2026-01-03/3")
		mor(t, s, "cdc", func(tx *table.Transaction) error { // a position delete
			return tx.Delete(t.Context(), iceberg.NewAnd(iceberg.EqualTo(iceberg.Reference("d"), iceberg.Date(arrow.Date32FromTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)))),
				iceberg.EqualTo(iceberg.Reference("id"), int64(2))), nil)
		})
		seen := []string{"d=2026-01-01 id=2 n=10", "d=2026-01-01 id=3 n=10", "d=2026-01-02 id=1 n=10", "d=2026-01-02 id=3 n=10", "d=2026-01-03 id=1 n=10", "d=2026-01-03 id=2 n=10"}
		if got := view(t, s, "cdc", "d", "id", "n"); !slices.Equal(got, seen) {
			t.Fatalf("the engine's table reads as %v, want %v", got, seen)
		}
		if dels := deleteFiles(t, s, "cdc"); len(dels["2026-01-01"]) == 0 || len(dels["2026-01-02"]) == 0 || len(dels["2026-01-03"]) == 0 {
			t.Fatalf("the engine's deletes: %v, want some in each day", dels)
		}
		s.must("table", "set", "--table", tbl, "grain=d,id", "additive=n")
		if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"rows": 6`) {
			t.Errorf("verify --table of the merge-on-read table: %s", out)
		}
		// A job reading the table reads what a reader sees: the copy it
		// publishes holds the rows left after the deletes.
		createEngineTable(t, s, "cdc_copy", sc, spec)
		s.must("table", "set", "--table", "eng.cdc_copy", "grain=d,id", "additive=n")
		job := write(t, t.TempDir(), "copy.yaml", "table: eng.cdc_copy\nsources:\n  cdc: {table: eng.cdc}\n"+
			"sql: SELECT d, id, n FROM cdc WHERE d BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)\n")
		s.must("publish", "--job", job, "--allow-implausible", "--partitions", "d=2026-01-01..2026-01-03")
		if got := view(t, s, "cdc_copy", "d", "id", "n"); !slices.Equal(got, seen) {
			t.Errorf("a job reading the merge-on-read table copied %v, want %v", got, seen)
		}
		rows := func(n int64, cells ...string) string {
			var b strings.Builder
			for _, c := range cells {
				day, id, _ := strings.Cut(c, "/")
				b.WriteString(`{"d":"` + day + `","id":` + id + `,"n":` + strconv.FormatInt(n, 10) + "}\n")
			}
			return write(t, t.TempDir(), "in.ndjson", b.String())
		}

		// The rows a reader sees, given again: nothing to commit.
		meta := s.metadata(tbl)
		s.must("publish", "--table", tbl, "--partitions", "d=2026-01-01..2026-01-02", rows(10, "2026-01-01/2", "2026-01-01/3", "2026-01-02/1", "2026-01-02/3"))
		if s.metadata(tbl) != meta {
			t.Errorf("the rows the table shows with its deletes applied committed a snapshot")
		}

		// Publish, a batch a day: the two days' deletes go with their data
		// files; the third day's stay.
		out := s.must("publish", "--run-id", "fix", "--batch", "1", "--table", tbl, "--partitions", "d=2026-01-01..2026-01-02", rows(20, "2026-01-01/1", "2026-01-01/2", "2026-01-02/2", "2026-01-02/4"))
		if !strings.Contains(out, "d=2026-01-01") {
			t.Errorf("publish printed: %s", out)
		}
		want := []string{"d=2026-01-01 id=1 n=20", "d=2026-01-01 id=2 n=20", "d=2026-01-02 id=2 n=20", "d=2026-01-02 id=4 n=20", "d=2026-01-03 id=1 n=10", "d=2026-01-03 id=2 n=10"}
		if got := view(t, s, "cdc", "d", "id", "n"); !slices.Equal(got, want) {
			t.Errorf("after the publish the reader sees %v, want %v", got, want)
		}
		dels := deleteFiles(t, s, "cdc")
		if len(dels["2026-01-01"]) != 0 || len(dels["2026-01-02"]) != 0 || len(dels["2026-01-03"]) == 0 {
			t.Errorf("after the publish the deletes are %v: want none in the days replaced, day 3's kept", dels)
		}
		if code, out, errs := s.cli("verify", "--table", tbl, "--run", "fix"); code != 0 {
			t.Errorf("verify of the run: exit %d: %s%s", code, out, errs)
		}

		// Another writer's commit, then a scoped rollback of the run: the
		// two days show again what they showed before it, written back as
		// new files (their old files and deletes cannot be put back with
		// the sequence numbers they had).
		mor(t, s, "cdc", func(tx *table.Transaction) error {
			rec := morRows(t, asArrow, 40, "2026-01-04/1")
			defer rec.Release()
			rr, err := array.NewRecordReader(asArrow, []arrow.RecordBatch{rec})
			if err != nil {
				return err
			}
			return tx.Append(t.Context(), rr, nil)
		})
		before := s.files()
		s.must("rollback", "--scoped", "--table", tbl, "--run", "fix")
		want = append(slices.Clone(seen), "d=2026-01-04 id=1 n=40")
		if got := view(t, s, "cdc", "d", "id", "n"); !slices.Equal(got, want) {
			t.Errorf("after the scoped rollback the reader sees %v, want %v", got, want)
		}
		restaged := 0
		for _, f := range s.files() {
			if slices.Contains(before, f) || !strings.HasSuffix(f, ".parquet") {
				continue
			}
			if !strings.Contains(f, "run-rollback-fix-") {
				t.Errorf("the scoped rollback wrote %s, outside a folder of its own", f)
			}
			restaged++
		}
		if restaged < 2 {
			t.Errorf("the scoped rollback wrote %d data files, want one a day at least", restaged)
		}
		if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) {
			t.Errorf("verify --table after the scoped rollback: %s", out)
		}
		if code, out, errs := s.cli("verify", "--table", tbl, "--run", "rollback-fix"); code != 0 {
			t.Errorf("verify of the rollback: exit %d: %s%s", code, out, errs)
		}

		// Plan then apply the third day: its equality delete applied in
		// the plan's base, then gone with its files.
		plan := t.TempDir() + "/p.json"
		shown := s.must("plan", "--run-id", "day3", "--out", plan, "--table", tbl, "--partitions", "d=2026-01-03", rows(30, "2026-01-03/1", "2026-01-03/2"))
		if !strings.Contains(shown, "d=2026-01-03") {
			t.Errorf("plan printed: %s", shown)
		}
		pf, err := swap.ReadPlan(plan)
		if err != nil {
			t.Fatal(err)
		}
		if got := pf.Plan.Partitions[0]; got.OldFingerprint.Rows != 2 || len(got.OldDeletes) == 0 {
			t.Errorf("the plan's base of day 3: %d rows, delete files %v; want the 2 rows a reader sees and its delete files named", got.OldFingerprint.Rows, got.OldDeletes)
		}
		// Another writer deletes in day 4, which the plan leaves alone, and
		// in day 3, which it replaces: the plan no longer holds.
		eqDelete("2026-01-04/1")
		eqDelete("2026-01-03/2")
		main := s.mainState(tbl)
		if code, _, errs := s.cli("apply", plan, "--approve", pf.PlanID); code != exitConflict || s.mainState(tbl) != main {
			t.Fatalf("apply after another writer's delete in the planned day: exit %d: %s", code, errs)
		}
		s.must("discard", plan)
		plan = t.TempDir() + "/again.json"
		s.must("plan", "--run-id", "day3", "--out", plan, "--table", tbl, "--partitions", "d=2026-01-03", rows(30, "2026-01-03/1", "2026-01-03/2"))
		if pf, err = swap.ReadPlan(plan); err != nil {
			t.Fatal(err)
		}
		if got := pf.Plan.Partitions[0].OldFingerprint.Rows; got != 1 {
			t.Errorf("the plan made again reads %d rows in day 3, want the 1 left after both deletes", got)
		}
		s.must("apply", plan, "--approve", pf.PlanID)
		want = []string{"d=2026-01-01 id=2 n=10", "d=2026-01-01 id=3 n=10", "d=2026-01-02 id=1 n=10", "d=2026-01-02 id=3 n=10", "d=2026-01-03 id=1 n=30", "d=2026-01-03 id=2 n=30"}
		if got := view(t, s, "cdc", "d", "id", "n"); !slices.Equal(got, want) {
			t.Errorf("after apply the reader sees %v, want %v", got, want)
		}
		if dels := deleteFiles(t, s, "cdc"); len(dels["2026-01-03"]) != 0 || len(dels["2026-01-04"]) == 0 {
			t.Errorf("after apply the deletes are %v: want day 3's gone, day 4's kept", dels)
		}
	})
}
