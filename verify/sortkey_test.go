package verify

import (
	"bytes"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// Each type's values, written in ascending order, encode in ascending
// byte order, null first; equal values encode alike.
func TestSortKeysOrder(t *testing.T) {
	mem := memory.NewGoAllocator()
	build := func(dt arrow.DataType, fill func(array.Builder)) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		b.AppendNull()
		fill(b)
		return b.NewArray()
	}
	cases := []struct {
		name string
		typ  iceberg.Type
		arr  arrow.Array
	}{
		{"int", iceberg.PrimitiveTypes.Int32, build(arrow.PrimitiveTypes.Int32, func(b array.Builder) {
			b.(*array.Int32Builder).AppendValues([]int32{math.MinInt32, -2, -1, 0, 1, math.MaxInt32}, nil)
		})},
		{"long", iceberg.PrimitiveTypes.Int64, build(arrow.PrimitiveTypes.Int64, func(b array.Builder) {
			b.(*array.Int64Builder).AppendValues([]int64{math.MinInt64, -300, -1, 0, 255, 256, math.MaxInt64}, nil)
		})},
		{"double", iceberg.PrimitiveTypes.Float64, build(arrow.PrimitiveTypes.Float64, func(b array.Builder) {
			b.(*array.Float64Builder).AppendValues([]float64{math.Inf(-1), -2.5, -1e-300, math.Copysign(0, -1), 0, 1e-300, 3, math.Inf(1), math.NaN()}, nil)
		})},
		{"float", iceberg.PrimitiveTypes.Float32, build(arrow.PrimitiveTypes.Float32, func(b array.Builder) {
			b.(*array.Float32Builder).AppendValues([]float32{float32(math.Inf(-1)), -1, 0, 0.5, float32(math.NaN())}, nil)
		})},
		{"decimal", iceberg.DecimalTypeOf(10, 2), build(&arrow.Decimal128Type{Precision: 10, Scale: 2}, func(b array.Builder) {
			for _, v := range []int64{-19099, -1, 0, 1910, 19099} {
				b.(*array.Decimal128Builder).Append(decimal128.FromI64(v))
			}
		})},
		{"text", iceberg.PrimitiveTypes.String, build(arrow.BinaryTypes.String, func(b array.Builder) {
			b.(*array.StringBuilder).AppendValues([]string{"", "\x00", "\x00\x00", "\x00a", "a", "a\x00", "ab", "b", "é"}, nil)
		})},
		{"date", iceberg.PrimitiveTypes.Date, build(arrow.FixedWidthTypes.Date32, func(b array.Builder) {
			b.(*array.Date32Builder).AppendValues([]arrow.Date32{-1, 0, 20454}, nil)
		})},
		{"bool", iceberg.PrimitiveTypes.Bool, build(arrow.FixedWidthTypes.Boolean, func(b array.Builder) {
			b.(*array.BooleanBuilder).AppendValues([]bool{false, true}, nil)
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.arr.Release()
			k := newSortKeys([]iceberg.Type{tc.typ}, []int{0})
			if err := k.fill([]arrow.Array{tc.arr}, tc.arr.Len()); err != nil {
				t.Fatal(err)
			}
			for r := 1; r < tc.arr.Len(); r++ {
				if bytes.Compare(k.row(r-1), k.row(r)) >= 0 {
					t.Errorf("%s sorts at or after %s", tc.arr.ValueStr(r-1), tc.arr.ValueStr(r))
				}
			}
		})
	}
}

// A two-column grain sorts by its first column, then its second; a value
// of the first that begins another does not run into the second.
func TestSortKeysColumns(t *testing.T) {
	mem := memory.NewGoAllocator()
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"a", "a", "ab"}, nil)
	s := sb.NewArray()
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{-5, 2, -9}, nil)
	i := ib.NewArray()
	defer s.Release()
	defer i.Release()
	k := newSortKeys([]iceberg.Type{iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.Int64}, []int{0, 1})
	if err := k.fill([]arrow.Array{s, i}, 3); err != nil {
		t.Fatal(err)
	}
	if bytes.Compare(k.row(0), k.row(1)) >= 0 || bytes.Compare(k.row(1), k.row(2)) >= 0 {
		t.Errorf("(a,-5) (a,2) (ab,-9) do not sort in that order")
	}
}
