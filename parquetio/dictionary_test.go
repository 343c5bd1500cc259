package parquetio

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestDictionaryPays: a column of few values is dictionary-encoded, a
// near-unique one is not, whatever its type.
func TestDictionaryPays(t *testing.T) {
	const n = 5000
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	channels := array.NewStringBuilder(memory.DefaultAllocator)
	names := array.NewStringBuilder(memory.DefaultAllocator)
	amounts := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 12, Scale: 2})
	for i := range n {
		ids.Append(int64(i))
		channels.Append([]string{"web", "store", "app"}[i%3])
		names.Append("customer-" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)))
		amounts.Append(decimal128.FromI64(int64(i % 7)))
	}
	for _, tc := range []struct {
		name string
		col  arrow.Array
		want bool
	}{
		{"unique ids", ids.NewArray(), false},
		{"three channels", channels.NewArray(), true},
		{"unique names", names.NewArray(), false},
		{"seven decimal amounts", amounts.NewArray(), true},
	} {
		if got := dictionaryPays(tc.col); got != tc.want {
			t.Errorf("%s: dictionaryPays = %v, want %v", tc.name, got, tc.want)
		}
		tc.col.Release()
	}
}
