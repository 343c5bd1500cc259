package main

// Merge-on-read and evolved source tables where routes meet: a scoped
// rollback beside a partition a later commit changed, a job pinned to a
// snapshot before a rename or reading a renamed nested field, and a
// publish that leaves the field of an unrelated tuple with deletes open.

import (
	"os"
	"strings"
	"testing"

	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// grainIDTable: eng.NAME (d date, id long, n long) partitioned by d, grain
// id alone (records may move between days).
func grainIDTable(t *testing.T, name string) *cdcTable {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchemaWithIdentifiers(0, []int{2},
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, name, sc, spec)
	asArrow, _ := table.SchemaToArrowSchema(sc, nil, true, false)
	keys, _ := table.SchemaToArrowSchema(iceberg.NewSchema(0, sc.Field(0), sc.Field(1)), nil, true, false)
	h := &cdcTable{t: t, s: s, name: name, tbl: "eng." + name, sc: sc, asArr: asArrow, keys: keys}
	mor(t, s, name, func(tx *table.Transaction) error {
		return tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	})
	return h
}

// TestCDCScopedRollbackUnchangedPartitionGainedRows: run fix takes id 2
// out of day 1 and leaves day 2 unchanged; a later writer adds id 2 to day
// 2. A scoped rollback of fix would put id 2 back in day 1, twice in the
// table: the later commit's rows in day 2 refuse it (a later delete there
// alone would not).
func TestCDCScopedRollbackUnchangedPartitionGainedRows(t *testing.T) {
	h := grainIDTable(t, "dup")
	h.appendRows(10, "2026-01-01/1", "2026-01-01/2", "2026-01-02/3")
	h.s.must("table", "set", "--table", h.tbl, "additive=n")
	h.s.must("publish", "--run-id", "fix", "--allow-implausible", "--table", h.tbl, "--partitions", "d=2026-01-01..2026-01-02",
		h.rows(10, "2026-01-01/1", "2026-01-02/3"))
	h.expect("after fix", r("2026-01-01", 1, 10), r("2026-01-02", 3, 10))
	h.appendRows(20, "2026-01-02/2") // another writer moves id 2 into day 2
	code, o, e := h.s.cli("rollback", "--scoped", "--table", h.tbl, "--run", "fix")
	t.Logf("scoped rollback: exit %d\n%s%s", code, o, e)
	if code == 0 {
		t.Errorf("scoped rollback committed although it puts back id 2, which a later commit added to day 2; reader sees %v", h.view())
	}
}

// TestCDCJobPinnedBeforeRename: a job pinned to snapshot N of its source
// reads N's files under N's names; a rename made at the head after N does
// not refuse it, since every file of N was written under those names.
func TestCDCJobPinnedBeforeRename(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, h.s, "src", sc, spec)
	src := &cdcTable{t: t, s: h.s, name: "src", tbl: "eng.src", sc: sc, asArr: h.asArr, keys: h.keys}
	src.appendRows(5, "2026-01-01/1", "2026-01-02/3")
	_, tbl, done := engineTable(t, h.s, "src")
	pinned := tbl.CurrentSnapshot().SnapshotID
	done()
	mor(t, h.s, "src", func(tx *table.Transaction) error {
		return tx.UpdateSchema(true, false).RenameColumn([]string{"n"}, "amount").Commit()
	})
	job := write(t, t.TempDir(), "copy.yaml", "table: eng.cdc\nsources:\n  s: {table: eng.src, snapshot: "+itoa(pinned)+"}\n"+
		"sql: SELECT d, id, n FROM s WHERE d BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)\n")
	code, o, e := h.s.cli("publish", "--job", job, "--partitions", "d=2026-01-01..2026-01-02")
	if code != 0 {
		t.Errorf("a job pinned to a snapshot before a rename: exit %d\n%s%s", code, o, e)
	}
}

func itoa(v int64) string {
	var b []byte
	if v == 0 {
		return "0"
	}
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	return string(b)
}

// TestCDCResolveLeavesUnselectedTuples: a publish that leaves a field
// open reads, to find tuples whose rows are all deleted, only the tuples
// its selection names: a damaged data file of a tuple it does not name
// (day 2, with a position delete) does not stop it.
func TestCDCResolveLeavesUnselectedTuples(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "n", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, "mf", sc, spec)
	asArrow, _ := table.SchemaToArrowSchema(sc, nil, true, false)
	h := &cdcTable{t: t, s: s, name: "mf", tbl: "eng.mf", sc: sc, asArr: asArrow}
	mor(t, s, "mf", func(tx *table.Transaction) error {
		return tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	})
	h.appendRows(10, "2026-01-01/1", "2026-01-02/1", "2026-01-02/2")
	h.posDelete("2026-01-02", 2) // a position delete in tuple (2026-01-02, 10)
	s.must("table", "set", "--table", h.tbl, "grain=d,id,n")
	// Break that tuple's data file (the selection below does not name it).
	ctx, tbl, done := engineTable(t, s, "mf")
	tasks, err := tbl.Scan().PlanFiles(ctx)
	done()
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if len(task.DeleteFiles) > 0 {
			p := strings.TrimPrefix(task.File.FilePath(), "file://")
			t.Logf("truncating %s", p)
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, b[:8], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, o, e := s.cli("publish", "--table", h.tbl, "--partitions", "d=2026-01-01", "--allow-implausible", h.rows(10, "2026-01-01/1", "2026-01-01/5"))
	if code != 0 {
		t.Errorf("publish of day 1 read a tuple of day 2: exit %d\n%s%s", code, o, e)
	}
}

// TestCDCJobNestedRename: a struct field renamed after files were written
// is read by field id, as a column is: the file written before the rename
// is read through a copy under the new name.
func TestCDCJobNestedRename(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "s", Required: true, Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "a", Type: iceberg.PrimitiveTypes.Int64, Required: true}}}})
	createEngineTable(t, h.s, "nsrc", sc, *iceberg.UnpartitionedSpec)
	asArrow, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	add := func(as *arrow.Schema, id, v int64) {
		mor(t, h.s, "nsrc", func(tx *table.Transaction) error {
			b := array.NewRecordBuilder(memory.DefaultAllocator, as)
			defer b.Release()
			b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
			b.Field(1).(*array.Int64Builder).Append(id)
			sb := b.Field(2).(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int64Builder).Append(v)
			rec := b.NewRecordBatch()
			defer rec.Release()
			rr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
			if err != nil {
				return err
			}
			return tx.Append(t.Context(), rr, nil)
		})
	}
	add(asArrow, 1, 7)
	mor(t, h.s, "nsrc", func(tx *table.Transaction) error {
		return tx.UpdateSchema(true, false).RenameColumn([]string{"s", "a"}, "b").Commit()
	})
	_, tb, done := engineTable(t, h.s, "nsrc")
	asArrow2, err := table.SchemaToArrowSchema(tb.Schema(), nil, true, false)
	done()
	if err != nil {
		t.Fatal(err)
	}
	add(asArrow2, 2, 8)
	job := write(t, t.TempDir(), "copy.yaml", "table: eng.cdc\nsources:\n  s: {table: eng.nsrc}\n"+
		"sql: SELECT d, id, s.s.b AS n FROM s WHERE d BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)\n")
	h.s.must("publish", "--job", job, "--partitions", "d=2026-01-01")
	var day []string
	for _, row := range h.view() {
		if strings.Contains(row, "2026-01-01") {
			day = append(day, row)
		}
	}
	if want := []string{r("2026-01-01", 1, 7), r("2026-01-01", 2, 8)}; !slices.Equal(day, want) {
		t.Errorf("a struct field renamed after files were written reads %v, want %v (by field id)", day, want)
	}
}
