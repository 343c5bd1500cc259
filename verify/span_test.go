package verify

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
)

// TestOwnershipFindsEveryStrayRow: rows outside the owned partition, and a
// null partition value, are each named by their row number across batches,
// also when a batch is a slice; rows inside raise nothing.
func TestOwnershipFindsEveryStrayRow(t *testing.T) {
	sc := iceberg.NewSchemaWithIdentifiers(0, []int{1},
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "qty", Type: iceberg.PrimitiveTypes.Int32},
	)
	part, err := contract.NewPartitioner(1, "qty", iceberg.PrimitiveTypes.Int32, "identity")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.NewContract(sc, []string{"id"}, nil, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(id int64, qtys ...*int32) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
		defer b.Release()
		vals, valid := make([]int32, len(qtys)), make([]bool, len(qtys))
		for i, q := range qtys {
			b.Field(0).(*array.Int64Builder).Append(id)
			id++
			// A null keeps the owned value underneath, which a check of
			// raw values alone would pass.
			vals[i], valid[i] = 7, q != nil
			if q != nil {
				vals[i] = *q
			}
		}
		b.Field(1).(*array.Int32Builder).AppendValues(vals, valid)
		return b.NewRecordBatch()
	}
	q := func(v int32) *int32 { return &v }
	// The first batch is rows 2-6 of a larger one.
	whole := batch(0, q(9), q(9), q(7), q(7), q(8), nil, q(7), q(9))
	defer whole.Release()
	first := whole.NewSlice(2, 7)
	defer first.Release()
	second := batch(100, q(6), q(7))
	defer second.Release()

	acc := NewAccumulator(c, "7", nil)
	if !acc.spanOK {
		t.Fatal("an int partition has no raw span; the test would not exercise it")
	}
	for _, rec := range []arrow.RecordBatch{first, second} {
		if err := acc.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, f := range acc.Findings(false).List {
		if f.Kind == KindOutside {
			got = append(got, fmt.Sprintf("row %d: %s", f.Row, f.Message))
		}
	}
	want := []string{
		"row 3: row belongs to qty=8, outside the partition qty=7 this run owns",
		"row 4: row belongs to qty=null, outside the partition qty=7 this run owns",
		"row 6: row belongs to qty=6, outside the partition qty=7 this run owns",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ownership findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
