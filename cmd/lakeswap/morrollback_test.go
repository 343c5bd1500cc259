package main

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestScopedRollbackBesideUnchangedDeletes: grain id (not the partition
// column); run fix changes day 1 and leaves day 2, which holds a position
// delete, as it was; another writer appends a day 5. A scoped rollback of
// fix puts back day 1 and leaves day 2 alone, reading day 2's files with
// its delete applied (not the delete file as data) when it looks for the
// keys a later commit added elsewhere. On every site.
func TestScopedRollbackBesideUnchangedDeletes(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		sc := iceberg.NewSchemaWithIdentifiers(0, []int{2},
			iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
			iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
		createEngineTable(t, s, "cdc2", sc, spec)
		const tbl = "eng.cdc2"
		asArrow, err := table.SchemaToArrowSchema(sc, nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		appendRows := func(n int64, cells ...string) {
			mor(t, s, "cdc2", func(tx *table.Transaction) error {
				rec := morRows(t, asArrow, n, cells...)
				defer rec.Release()
				rr, err := array.NewRecordReader(asArrow, []arrow.RecordBatch{rec})
				if err != nil {
					return err
				}
				return tx.Append(t.Context(), rr, nil)
			})
		}
		mor(t, s, "cdc2", func(tx *table.Transaction) error {
			return tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
		})
		appendRows(10, "2026-01-01/1", "2026-01-01/2", "2026-01-02/3", "2026-01-02/4")
		mor(t, s, "cdc2", func(tx *table.Transaction) error { // a position delete in day 2
			return tx.Delete(t.Context(), iceberg.EqualTo(iceberg.Reference("id"), int64(4)), nil)
		})
		if dels := deleteFiles(t, s, "cdc2"); len(dels["2026-01-02"]) == 0 {
			t.Fatalf("no delete in day 2: %v", dels)
		}
		s.must("table", "set", "--table", tbl, "additive=n")
		// Day 1 changes, day 2 is given as a reader sees it (unchanged).
		s.must("publish", "--run-id", "fix", "--allow-implausible", "--table", tbl, "--partitions", "d=2026-01-01..2026-01-02",
			write(t, t.TempDir(), "in.ndjson", `{"d":"2026-01-01","id":1,"n":20}
{"d":"2026-01-01","id":2,"n":20}
{"d":"2026-01-02","id":3,"n":10}
`))
		appendRows(50, "2026-01-05/9")
		want := []string{"d=2026-01-01 id=1 n=10", "d=2026-01-01 id=2 n=10", "d=2026-01-02 id=3 n=10", "d=2026-01-05 id=9 n=50"}
		code, out, errs := s.cli("rollback", "--scoped", "--table", tbl, "--run", "fix")
		if code != 0 {
			t.Errorf("scoped rollback: exit %d: %s%s", code, out, errs)
		}
		if got := view(t, s, "cdc2", "d", "id", "n"); !slices.Equal(got, want) {
			t.Errorf("after the scoped rollback the reader sees %v, want %v", got, want)
		}
	})
}
