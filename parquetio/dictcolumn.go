package parquetio

import (
	"encoding/base64"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A string column of few distinct values is handed to the Parquet writer as
// an Arrow dictionary (indices into the values seen so far) instead of as
// strings. arrow-go's dictionary encoder hashes every string it is given
// through an interface and allocates for each; given indices, it copies
// them. The file is the same: a dictionary page and RLE-coded indices, and
// the Arrow schema it records still says string, so every reader sees the
// column as before.

// maxDictValues bounds the values a column's dictionary collects. A column
// that turns out to hold more than its first batch suggested is then given
// each batch's own dictionary, which the Parquet writer writes plain.
const maxDictValues = 1 << 15

// maxDictRestarts bounds the row groups a file starts early because a
// column's dictionary grew: values first seen after the first batch are
// rare, and a few more row groups cost readers little.
const maxDictRestarts = 4

var dictIndexType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// stringDict turns one string column's batches into dictionary arrays
// whose dictionary only grows, so that batch after batch the Parquet writer
// meets the same dictionary and keeps its indices as they are.
type stringDict struct {
	index  map[string]int32
	values []string
	dict   *array.String // values as an array; rebuilt when one is added
	idx    []int32       // scratch, reused for every batch
	full   bool          // past maxDictValues: batches get their own dictionary
}

func newStringDict() *stringDict { return &stringDict{index: map[string]int32{}} }

// encode returns col as a dictionary array, and whether values joined a
// dictionary that earlier batches used. The array shares col's validity
// bitmap and the dictionary's scratch indices, so it is valid until the
// next call.
func (d *stringDict) encode(col *array.String) (arrow.Array, bool) {
	used := len(d.values) > 0 && !d.full
	if d.full {
		// Too many values to keep: a dictionary of this batch alone, which
		// the writer, seeing it change, stores plain.
		d.index, d.values, d.dict = map[string]int32{}, nil, nil
	}
	off, n := col.Data().Offset(), col.Len()
	if cap(d.idx) < off+n {
		d.idx = make([]int32, off+n)
	}
	idx := d.idx[:off+n]
	added := false
	last, lastIdx := "", int32(-1)
	for i := range n {
		if col.IsNull(i) {
			idx[off+i] = 0
			continue
		}
		v := col.Value(i)
		// Runs of one value are common (sorted or clustered rows); a
		// comparison is cheaper than a map lookup.
		if lastIdx >= 0 && v == last {
			idx[off+i] = lastIdx
			continue
		}
		k, ok := d.index[v]
		if !ok {
			v = strings.Clone(v) // col's memory is released with the batch
			k = int32(len(d.values))
			d.index[v] = k
			d.values = append(d.values, v)
			added = true
		}
		idx[off+i], last, lastIdx = k, v, k
	}
	if added || d.dict == nil {
		if d.dict != nil {
			d.dict.Release()
		}
		d.dict = newStrings(d.values)
	}
	if len(d.values) > maxDictValues {
		d.full = true
	}
	grew := used && added && !d.full
	indices := array.NewData(arrow.PrimitiveTypes.Int32, n,
		[]*memory.Buffer{col.Data().Buffers()[0], memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(idx))},
		nil, col.NullN(), off)
	defer indices.Release()
	ind := array.NewInt32Data(indices)
	defer ind.Release()
	return array.NewDictionaryArray(dictIndexType, ind, d.dict), grew
}

func newStrings(values []string) *array.String {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(values, nil)
	return b.NewStringArray()
}

// dictSchema is schema with the columns marked in dict typed as string
// dictionaries, carrying schema itself as the Arrow schema the file records.
func dictSchema(schema *arrow.Schema, dict []*stringDict) *arrow.Schema {
	fields := schema.Fields()
	for i := range fields {
		if dict[i] != nil {
			fields[i].Type = dictIndexType
		}
	}
	md := schema.Metadata()
	keys, vals := append([]string(nil), md.Keys()...), append([]string(nil), md.Values()...)
	keys = append(keys, "ARROW:schema")
	vals = append(vals, base64.StdEncoding.EncodeToString(flight.SerializeSchema(schema, memory.DefaultAllocator)))
	meta := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(fields, &meta)
}

// flat says whether every column of schema is a primitive: the Arrow schema
// recorded in a file is then schema itself (pqarrow renames list elements).
func flat(schema *arrow.Schema) bool {
	for _, f := range schema.Fields() {
		if _, nested := f.Type.(arrow.NestedType); nested {
			return false
		}
	}
	return true
}
