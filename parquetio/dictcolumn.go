package parquetio

import (
	"bytes"
	"encoding/base64"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A column of few distinct values is handed to the Parquet writer as an
// Arrow dictionary (indices into the values seen so far) instead of as
// values. arrow-go's dictionary encoder looks every value up in a hash
// table, and for strings converts each to an interface and allocates;
// given indices, it copies them. The file is the same: a dictionary page
// and RLE-coded indices, and the Arrow schema it records is the table's,
// so every reader sees the column as before.

// maxDictValues bounds the values a column's dictionary collects. A column
// that turns out to hold more than its first batch suggested is then given
// each batch's own dictionary, which the Parquet writer writes plain.
const maxDictValues = 1 << 15

// maxDictRestarts bounds the row groups a file starts early because a
// column's dictionary grew: values first seen after the first batch are
// rare, and a few more row groups cost readers little.
const maxDictRestarts = 4

// linearDictValues is the dictionary size up to which a value is looked up
// by comparing it with each, which beats hashing it.
const linearDictValues = 8

// dictColumn turns one column's batches into dictionary arrays.
type dictColumn interface {
	// encode returns col as a dictionary array, and whether values joined
	// a dictionary that earlier batches used. The array shares col's
	// validity bitmap and the column's scratch indices, so it is valid
	// until the next call.
	encode(col arrow.Array) (arrow.Array, bool)
	// dictType is the Arrow type of the arrays encode returns.
	dictType() arrow.DataType
}

// newDictColumn returns a dictColumn for a column f, or nil for one that
// arrow-go's own encoder is left to. An optional integer column is left:
// arrow-go v18.8.0 takes the zero under a null index into its min/max
// statistics (Int32Statistics.UpdateFromArrow reads raw values), and a
// wrong minimum makes readers skip files that hold what they look for.
func newDictColumn(f arrow.Field) dictColumn {
	t := f.Type
	if f.Nullable && t.ID() != arrow.STRING {
		return nil
	}
	switch t.ID() {
	case arrow.STRING:
		return &dictionary[string]{
			typ:    &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: t},
			reader: func(col arrow.Array) func(int) string { return col.(*array.String).Value },
			own:    strings.Clone, // a batch's strings are released with it
			array:  newStrings,
		}
	case arrow.INT32, arrow.DATE32:
		return newFixedDict[int32](t)
	case arrow.INT64:
		return newFixedDict[int64](t)
	}
	return nil
}

func newFixedDict[T int32 | int64](t arrow.DataType) *dictionary[T] {
	return &dictionary[T]{
		typ: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: t},
		reader: func(col arrow.Array) func(int) T {
			vals := arrow.GetValues[T](col.Data(), 1)
			return func(i int) T { return vals[i] }
		},
		own: func(v T) T { return v },
		array: func(values []T) arrow.Array {
			data := array.NewData(t, len(values), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.GetBytes(values))}, nil, 0, 0)
			defer data.Release()
			return array.MakeFromData(data)
		},
	}
}

// dictionary is a dictColumn whose dictionary only grows, so that batch
// after batch the Parquet writer meets the same dictionary and keeps the
// indices as they are.
type dictionary[T comparable] struct {
	typ    *arrow.DictionaryType
	reader func(arrow.Array) func(int) T // a batch's value at a row
	own    func(T) T                     // a copy that outlives the batch
	array  func([]T) arrow.Array         // the dictionary as Arrow

	index  map[T]int32
	values []T
	dict   arrow.Array // values as Arrow; rebuilt when one is added
	idx    []int32     // scratch, reused for every batch
	full   bool        // past maxDictValues: batches get their own dictionary
}

func (d *dictionary[T]) encode(col arrow.Array) (arrow.Array, bool) {
	used := len(d.values) > 0 && !d.full
	if d.full || d.index == nil {
		// When full, a dictionary of this batch alone, which the writer,
		// seeing it change, stores plain.
		d.index, d.values = map[T]int32{}, d.values[:0]
	}
	off, n := col.Data().Offset(), col.Len()
	if cap(d.idx) < off+n {
		d.idx = make([]int32, off+n)
	}
	idx := d.idx[:off+n]
	value := d.reader(col)
	nulls := col.NullN() > 0
	added := false
	var last T
	lastIdx := int32(-1)
	for i := range n {
		if nulls && col.IsNull(i) {
			idx[off+i] = 0
			continue
		}
		v := value(i)
		// Runs of one value are common (sorted or clustered rows).
		if lastIdx >= 0 && v == last {
			idx[off+i] = lastIdx
			continue
		}
		k, ok := d.lookup(v)
		if !ok {
			v = d.own(v)
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
		// The values are copied: the slice grows under earlier arrays.
		d.dict = d.array(append([]T(nil), d.values...))
	}
	if len(d.values) > maxDictValues {
		d.full = true
	}
	indices := array.NewData(arrow.PrimitiveTypes.Int32, n,
		[]*memory.Buffer{col.Data().Buffers()[0], memory.NewBufferBytes(arrow.GetBytes(idx))},
		nil, col.NullN(), off)
	defer indices.Release()
	ind := array.NewInt32Data(indices)
	defer ind.Release()
	return array.NewDictionaryArray(d.typ, ind, d.dict), used && added && !d.full
}

func (d *dictionary[T]) lookup(v T) (int32, bool) {
	if len(d.values) <= linearDictValues {
		for k, w := range d.values {
			if w == v {
				return int32(k), true
			}
		}
		return 0, false
	}
	k, ok := d.index[v]
	return k, ok
}

func newStrings(values []string) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(values, nil)
	return b.NewStringArray()
}

// dictSchema is schema with the columns that have a dictColumn typed as
// their dictionaries, carrying schema itself as the Arrow schema the file
// records.
func dictSchema(schema *arrow.Schema, dicts []dictColumn) *arrow.Schema {
	fields := schema.Fields()
	for i := range fields {
		if dicts[i] != nil {
			fields[i].Type = dicts[i].dictType()
		}
	}
	md := schema.Metadata()
	keys, vals := append([]string(nil), md.Keys()...), append([]string(nil), md.Values()...)
	keys = append(keys, "ARROW:schema")
	vals = append(vals, base64.StdEncoding.EncodeToString(serializeSchema(schema)))
	meta := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(fields, &meta)
}

func (d *dictionary[T]) dictType() arrow.DataType { return d.typ }

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

// serializeSchema writes a schema as the Arrow IPC stream of no batches
// that Parquet's ARROW:schema metadata holds, as arrow-go's own writer does
// (through arrow/flight, which a schema does not need).
func serializeSchema(schema *arrow.Schema) []byte {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	_ = w.Close() // writing to memory cannot fail
	return buf.Bytes()
}
