package contract

import (
	"math/rand/v2"
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
			lo, hi, ok := p.RawSpan(tc.typ, value)
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
	if _, _, ok := p.RawSpan(arrow.BinaryTypes.String, "web"); ok {
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
