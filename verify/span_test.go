package verify

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// TestRawSpanAgreesWithValueFunc: the ownership check accepts a row by its
// raw value alone when the value lies in the partition's span, so the span
// must hold exactly the raw values that ValueFunc maps to the partition:
// at both edges, before 1970, in every timestamp unit, for each transform.
func TestRawSpanAgreesWithValueFunc(t *testing.T) {
	ts := func(u arrow.TimeUnit) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: "UTC"} }
	for _, tc := range []struct {
		typ       arrow.DataType
		ice       iceberg.Type
		transform string
		values    []string
	}{
		{arrow.FixedWidthTypes.Date32, iceberg.PrimitiveTypes.Date, "identity", []string{"2026-01-01", "1970-01-01", "1969-12-31", "1900-03-01"}},
		{arrow.FixedWidthTypes.Date32, iceberg.PrimitiveTypes.Date, "day", []string{"2026-02-28"}},
		{arrow.FixedWidthTypes.Date32, iceberg.PrimitiveTypes.Date, "month", []string{"2026-02", "1969-12", "2024-02"}},
		{ts(arrow.Microsecond), iceberg.PrimitiveTypes.TimestampTz, "day", []string{"2026-01-01", "1969-12-31", "1970-01-01"}},
		{ts(arrow.Microsecond), iceberg.PrimitiveTypes.TimestampTz, "month", []string{"2026-01", "1969-12"}},
		{ts(arrow.Nanosecond), iceberg.PrimitiveTypes.TimestampTz, "day", []string{"2026-03-29", "1969-12-31"}},
		{ts(arrow.Millisecond), iceberg.PrimitiveTypes.TimestampTz, "month", []string{"2026-12"}},
		{ts(arrow.Second), iceberg.PrimitiveTypes.TimestampTz, "day", []string{"2000-02-29"}},
		{arrow.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int32, "identity", []string{"-5", "0", "7"}},
		{arrow.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.Int64, "identity", []string{"123456789012", "-1"}},
	} {
		p, err := NewPartitioner(0, "c", tc.ice, tc.transform)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for _, value := range tc.values {
			lo, hi, ok := p.rawSpan(tc.typ, value)
			if !ok {
				t.Fatalf("%s %s %s: no span", tc.typ, tc.transform, value)
			}
			var raws []int64
			for _, edge := range []int64{lo, hi} {
				for d := int64(-2); d <= 2; d++ {
					raws = append(raws, edge+d)
				}
			}
			for range 200 {
				raws = append(raws, lo-(hi-lo)*2+rng.Int64N((hi-lo)*5))
			}
			col := rawColumn(tc.typ, raws)
			valueOf, err := p.ValueFunc(col)
			if err != nil {
				t.Fatal(err)
			}
			for r, raw := range raws {
				got, _ := valueOf(r)
				if in := lo <= raw && raw < hi; in != (got == value) {
					t.Errorf("%s %s: raw %d maps to %s; inside the span [%d, %d) of %s: %v", tc.typ, tc.transform, raw, got, lo, hi, value, in)
				}
			}
			col.Release()
		}
	}
	// Strings have no span: every row is judged by its value.
	p, _ := NewPartitioner(0, "c", iceberg.PrimitiveTypes.String, "identity")
	if _, _, ok := p.rawSpan(arrow.BinaryTypes.String, "web"); ok {
		t.Error("a string partition has a raw span")
	}
}

func rawColumn(typ arrow.DataType, raws []int64) arrow.Array {
	b := array.NewBuilder(memory.DefaultAllocator, typ)
	defer b.Release()
	for _, v := range raws {
		switch b := b.(type) {
		case *array.Date32Builder:
			b.Append(arrow.Date32(v))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v))
		case *array.Int32Builder:
			b.Append(int32(v))
		case *array.Int64Builder:
			b.Append(v)
		}
	}
	return b.NewArray()
}

// TestOwnershipFindsEveryStrayRow: rows outside the owned partition, and a
// null partition value, are each named by their row number across batches,
// also when a batch is a slice; rows inside raise nothing.
func TestOwnershipFindsEveryStrayRow(t *testing.T) {
	sc := iceberg.NewSchemaWithIdentifiers(0, []int{1},
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "qty", Type: iceberg.PrimitiveTypes.Int32},
	)
	part, err := NewPartitioner(1, "qty", iceberg.PrimitiveTypes.Int32, "identity")
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewContract(sc, []string{"id"}, nil, nil, part)
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
