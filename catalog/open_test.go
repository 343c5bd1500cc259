package catalog_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
)

// TestLostCompareAndSwapIsAConflict: two writers plan against the same
// snapshot; the second commit must be a definite conflict, not an unknown
// outcome, and must leave the first commit in place.
func TestLostCompareAndSwapIsAConflict(t *testing.T) {
	ctx := context.Background()
	cfg, err := catalog.Resolve(catalog.Settings{Home: t.TempDir(), ConfigFile: os.DevNull, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	ident := table.Identifier{"ns", "t"}
	spec := catalog.TableSpec{Columns: []catalog.ColumnSpec{{Name: "a", Type: "long", Required: true}}, Identifier: []string{"a"}}
	tbl, err := catalog.CreateTable(ctx, cat, ident, spec)
	if err != nil {
		t.Fatal(err)
	}

	if tbl, err = tbl.Append(ctx, longs(t, 1), nil); err != nil {
		t.Fatal(err)
	}

	first, second := tbl.NewTransaction(), tbl.NewTransaction()
	for i, tx := range []*table.Transaction{first, second} {
		if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
			t.Fatal(err)
		}
		if err := tx.Append(ctx, longs(t, int64(i+10)), iceberg.Properties{"writer": []string{"first", "second"}[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := first.Commit(ctx); err != nil {
		t.Fatalf("first commit: %v", err)
	}
	before := cat.Commits()
	_, err = second.Commit(ctx)
	if !errors.Is(err, catalog.ErrConflict) || !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("second commit: err = %v, want a conflict", err)
	}
	t.Logf("lost compare-and-swap: %v (%d catalog calls)", err, cat.Commits()-before)
	now, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if w := now.CurrentSnapshot().Summary.Properties["writer"]; w != "first" {
		t.Errorf("after the conflict main's snapshot is by %q, want the first commit intact", w)
	}
}

func longs(t *testing.T, v int64) array.RecordReader {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(v)
	rec := b.NewRecordBatch()
	defer rec.Release()
	rr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	return rr
}
