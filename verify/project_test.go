package verify_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/verify"
)

// TestProjectEvolvedFile: a file written under an earlier schema is read
// as the table's: by field id (a column renamed since is found), an int
// widened since to a long, a column added since as nulls; a required
// column the file lacks is an error.
func TestProjectEvolvedFile(t *testing.T) {
	sc := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "qty", Type: iceberg.PrimitiveTypes.Int64, Required: true}, // renamed from n, widened
		iceberg.NestedField{ID: 3, Name: "note", Type: iceberg.PrimitiveTypes.String})               // added
	part, _ := contract.NewPartitioner(0, "day", iceberg.PrimitiveTypes.Date, "identity")
	c, err := contract.NewContract(sc, nil, []string{"qty"}, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	id := func(n string) arrow.Metadata { return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{n}) }
	old := arrow.NewSchema([]arrow.Field{
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Metadata: id("1")},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Metadata: id("2")},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, old)
	defer b.Release()
	b.Field(0).(*array.Date32Builder).AppendValues([]arrow.Date32{20454, 20454}, nil)
	b.Field(1).(*array.Int32Builder).AppendValues([]int32{7, -2}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	acc := verify.NewAccumulator(c, "2026-01-01", nil)
	got, err := acc.Project(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	qty, ok := got.Column(1).(*array.Int64)
	if !ok || qty.Value(0) != 7 || qty.Value(1) != -2 || got.Column(2).NullN() != 2 {
		t.Fatalf("projected %v", got)
	}
	if err := acc.Add(got); err != nil || !acc.Result().Sums["qty"].Equal(exact.Of(5)) {
		t.Errorf("the projected rows: %v, sums %v", err, acc.Result().Sums)
	}

	// A required column the file does not have.
	lacking := arrow.NewSchema([]arrow.Field{{Name: "day", Type: arrow.FixedWidthTypes.Date32, Metadata: id("1")}}, nil)
	lb := array.NewRecordBuilder(memory.DefaultAllocator, lacking)
	defer lb.Release()
	lb.Field(0).(*array.Date32Builder).Append(20454)
	lrec := lb.NewRecordBatch()
	defer lrec.Release()
	if _, err := verify.NewAccumulator(c, "2026-01-01", nil).Project(lrec); err == nil || !strings.Contains(err.Error(), "qty") {
		t.Errorf("a file without a required column: %v", err)
	}
}
