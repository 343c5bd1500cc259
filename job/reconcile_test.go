package job

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
)

// TestReconcileDecimal: a job's reconciliation query may give a decimal
// column's figure as DECIMAL of the column's own scale, read as its
// unscaled value; another scale, or a figure past 64 bits, is refused.
func TestReconcileDecimal(t *testing.T) {
	c := &contract.Contract{Fields: []iceberg.NestedField{{ID: 1, Name: "amount", Type: iceberg.DecimalTypeOf(12, 2)}}}
	if err := reconcilable(&arrow.Decimal128Type{Precision: 38, Scale: 2}, c, "amount"); err != nil {
		t.Errorf("DECIMAL(38,2) for a decimal(12,2) column: %v", err)
	}
	for _, bad := range []arrow.DataType{&arrow.Decimal128Type{Precision: 38, Scale: 3}, arrow.PrimitiveTypes.Float64} {
		if err := reconcilable(bad, c, "amount"); err == nil {
			t.Errorf("%s for a decimal(12,2) column accepted", bad)
		}
	}
	if err := reconcilable(&arrow.Decimal128Type{Precision: 38, Scale: 0}, c, "rows"); err == nil {
		t.Error("rows as a DECIMAL accepted")
	}
	b := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 38, Scale: 2})
	defer b.Release()
	b.Append(decimal128.FromI64(-1234))
	b.Append(decimal128.FromI64(math.MaxInt64).Add(decimal128.FromI64(1)))
	arr := b.NewArray()
	defer arr.Release()
	if v := unscaled(arr, 0); !v.Equal(exact.Of(-1234)) {
		t.Errorf("-12.34: %s", v)
	}
	if v := unscaled(arr, 1); v.String() != "9223372036854775808" {
		t.Errorf("a figure past 64 bits read as %s", v)
	}
}
