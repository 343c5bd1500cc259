package stats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/parquetio"
)

// Column is what a file's rows say of one column.
type Column struct {
	ID   int
	Name string
	Type iceberg.Type
	// Values counts every row's value, nulls and NaNs included, as an
	// Iceberg value count does.
	Values, Nulls, NaNs int64
	// Min and Max are the least and greatest value that is neither null
	// nor NaN, in Iceberg's units (microseconds for a timestamp); nil when
	// there is none.
	Min, Max value
}

// File is a Parquet file's exact figures: by column for its manifest
// entry, and by row group for its footer.
type File struct {
	Path    string
	Rows    int64
	Columns map[int]*Column // by field id
	Groups  []Group
}

// Group is one row group: what its footer records of each column, and what
// its rows hold, in the file's own units.
type Group struct {
	Columns []GroupColumn
}

// GroupColumn is a row group's column: the footer's statistics and the
// rows' own figures.
type GroupColumn struct {
	Col *Column // the column it belongs to (name and type)
	// What the footer records: min and max when HasMinMax, a null count
	// when HasNulls.
	HasMinMax, HasNulls bool
	RecMin, RecMax      value
	RecNulls            int64
	// What the rows hold.
	Nulls    int64
	Min, Max value
}

// Read reads a Parquet file whole and returns its exact figures for each
// top-level column of schema it holds (found by field id, else by name);
// nested columns are left out.
func Read(ctx context.Context, fsys icebergio.IO, path string, schema *iceberg.Schema) (*File, error) {
	return ReadMapped(ctx, fsys, path, schema, nil)
}

// ReadMapped is Read for a table with a name mapping
// (schema.name-mapping.default): a column of a file written without field
// ids is found by the names the mapping gives its field, as every Iceberg
// reader finds it.
func ReadMapped(ctx context.Context, fsys icebergio.IO, path string, schema *iceberg.Schema, mapping iceberg.NameMapping) (*File, error) {
	f, closeFn, err := parquetio.OpenFile(fsys, path)
	if err != nil {
		return nil, err
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		_ = closeFn()
		return nil, fmt.Errorf("read parquet footer of %s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10, Parallel: true}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("read %s as arrow: %w", path, err)
	}
	asc, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("read %s as arrow: %w", path, err)
	}
	out := &File{Path: path, Rows: pf.NumRows(), Columns: map[int]*Column{}}
	type col struct {
		arrow, leaf int
		c           *Column
		scale       func(value) value
	}
	var cols []col
	for i, af := range asc.Fields() {
		nf, ok := fieldOf(schema, mapping, af)
		if !ok || !fr.Manifest.Fields[i].IsLeaf() || !supported(af.Type) {
			continue // a column no reader here orders is left as it is
		}
		c := &Column{ID: nf.ID, Name: nf.Name, Type: nf.Type}
		out.Columns[nf.ID] = c
		cols = append(cols, col{i, fr.Manifest.Fields[i].ColIndex, c, scaler(af.Type, nf.Type)})
	}
	if len(cols) == 0 {
		return out, nil
	}
	indices := make([]int, len(cols))
	for k, c := range cols {
		indices[k] = c.arrow
	}
	for rg := range pf.NumRowGroups() {
		g := Group{Columns: make([]GroupColumn, len(cols))}
		for k, c := range cols {
			gc := &g.Columns[k]
			gc.Col = c.c
			if err := recorded(pf.MetaData().RowGroup(rg), c.leaf, asc.Field(c.arrow).Type, gc); err != nil {
				return nil, fmt.Errorf("%s row group %d column %s: %w", path, rg, c.c.Name, err)
			}
		}
		rr, err := fr.GetRecordReader(ctx, leafIndices(fr, indices), []int{rg})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		for rr.Next() {
			rec := rr.RecordBatch()
			for k := range cols {
				if err := addColumn(rec.Column(k), &g.Columns[k]); err != nil {
					rr.Release()
					return nil, fmt.Errorf("read %s column %s: %w", path, cols[k].c.Name, err)
				}
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		for k, c := range cols {
			gc := &g.Columns[k]
			c.c.Nulls += gc.Nulls
			if gc.Min != nil {
				lo, hi := c.scale(gc.Min), c.scale(gc.Max)
				if c.c.Min == nil || compare(lo, c.c.Min) < 0 {
					c.c.Min = lo
				}
				if c.c.Max == nil || compare(hi, c.c.Max) > 0 {
					c.c.Max = hi
				}
			}
		}
		out.Groups = append(out.Groups, g)
	}
	for _, c := range cols {
		c.c.Values = out.Rows
	}
	return out, nil
}

// leafIndices are the Parquet leaf columns of the given top-level Arrow
// fields, which GetRecordReader takes.
func leafIndices(fr *pqarrow.FileReader, fields []int) []int {
	out := make([]int, len(fields))
	for k, i := range fields {
		out[k] = fr.Manifest.Fields[i].ColIndex
	}
	return out
}

// fieldOf finds the table's top-level column a file's column holds: by the
// field id the file records, else (a file written without ids) by name.
func fieldOf(schema *iceberg.Schema, mapping iceberg.NameMapping, af arrow.Field) (iceberg.NestedField, bool) {
	id, err := strconv.Atoi(fieldID(af))
	if err != nil || id < 0 {
		id = -1
		for _, m := range mapping {
			if m.FieldID != nil && slices.Contains(m.Names, af.Name) {
				id = *m.FieldID
			}
		}
	}
	if id >= 0 {
		for _, f := range schema.Fields() {
			if f.ID == id {
				_, prim := f.Type.(iceberg.PrimitiveType)
				return f, prim
			}
		}
		return iceberg.NestedField{}, false
	}
	for _, f := range schema.Fields() {
		if f.Name == af.Name {
			_, prim := f.Type.(iceberg.PrimitiveType)
			return f, prim
		}
	}
	return iceberg.NestedField{}, false
}

func fieldID(af arrow.Field) string {
	s, _ := af.Metadata.GetValue("PARQUET:field_id")
	return s
}

// scaler turns a file's value into Iceberg's units for the column: a
// timestamp or time stored in other units than the column's.
func scaler(at arrow.DataType, it iceberg.Type) func(value) value {
	var from int64 // nanoseconds a stored unit is
	switch t := at.(type) {
	case *arrow.TimestampType:
		from = int64(t.Unit.Multiplier())
	case *arrow.Time32Type:
		from = int64(t.Unit.Multiplier())
	case *arrow.Time64Type:
		from = int64(t.Unit.Multiplier())
	case *arrow.Date64Type:
		return func(v value) value { return floorDiv(v.(int64), 86_400_000) }
	default:
		return func(v value) value { return v }
	}
	to := int64(1000) // microseconds
	switch it.(type) {
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		to = 1
	}
	switch {
	case from == to:
		return func(v value) value { return v }
	case from > to:
		return func(v value) value { return v.(int64) * (from / to) }
	}
	return func(v value) value { return floorDiv(v.(int64), to/from) }
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// recorded reads what a row group's footer says of a leaf column into gc.
func recorded(rg *metadata.RowGroupMetaData, leaf int, at arrow.DataType, gc *GroupColumn) error {
	cc, err := rg.ColumnChunk(leaf)
	if err != nil {
		return err
	}
	if set, err := cc.StatsSet(); err != nil || !set {
		return err
	}
	st, err := cc.Statistics()
	if err != nil || st == nil {
		return err
	}
	gc.HasNulls, gc.RecNulls = st.HasNullCount(), st.NullCount()
	if !st.HasMinMax() {
		return nil
	}
	lo, hi, ok := footerMinMax(st, at)
	if ok && !isNaN(lo) && !isNaN(hi) {
		gc.HasMinMax, gc.RecMin, gc.RecMax = true, lo, hi
	}
	return nil
}

// footerMinMax is a footer's min and max in the domain of the column's
// values; ok is false for statistics no reader orders by (INT96).
func footerMinMax(st metadata.TypedStatistics, at arrow.DataType) (value, value, bool) {
	dec := at.ID() == arrow.DECIMAL128
	switch s := st.(type) {
	case *metadata.BooleanStatistics:
		b := func(v bool) value {
			if v {
				return int64(1)
			}
			return int64(0)
		}
		return b(s.Min()), b(s.Max()), true
	case *metadata.Int32Statistics:
		if dec {
			return decimal128.FromI64(int64(s.Min())), decimal128.FromI64(int64(s.Max())), true
		}
		return int64(s.Min()), int64(s.Max()), true
	case *metadata.Int64Statistics:
		if dec {
			return decimal128.FromI64(s.Min()), decimal128.FromI64(s.Max()), true
		}
		return s.Min(), s.Max(), true
	case *metadata.Float32Statistics:
		return float64(s.Min()), float64(s.Max()), true
	case *metadata.Float64Statistics:
		return s.Min(), s.Max(), true
	case *metadata.ByteArrayStatistics:
		if dec {
			return numFromBigEndian(s.Min()), numFromBigEndian(s.Max()), true
		}
		return string(s.Min()), string(s.Max()), true
	case *metadata.FixedLenByteArrayStatistics:
		if dec {
			return numFromBigEndian(s.Min()), numFromBigEndian(s.Max()), true
		}
		return string(s.Min()), string(s.Max()), true
	}
	return nil, nil, false
}

// addColumn takes a batch's column into a row group's figures: typed
// loops for the common types (a value boxed per row would cost more than
// the read), the getter for the rest.
func addColumn(a arrow.Array, gc *GroupColumn) error {
	gc.Nulls += int64(a.NullN())
	var lo, hi value
	switch x := a.(type) {
	case *array.Int64:
		lo, hi = extremes(x, x.Int64Values(), func(v int64) value { return v })
	case *array.Int32:
		lo, hi = extremes(x, x.Int32Values(), func(v int32) value { return int64(v) })
	case *array.Date32:
		lo, hi = extremes(x, x.Date32Values(), func(v arrow.Date32) value { return int64(v) })
	case *array.Timestamp:
		lo, hi = extremes(x, x.TimestampValues(), func(v arrow.Timestamp) value { return int64(v) })
	case *array.String:
		lo, hi = extremesFunc(x, x.Value, func(v string) value { return v })
	case *array.Float64:
		lo, hi = floatExtremes(x, x.Float64Values(), gc.Col)
	case *array.Float32:
		lo, hi = floatExtremes(x, x.Float32Values(), gc.Col)
	default:
		get, err := getter(a)
		if err != nil {
			return err
		}
		for i := range a.Len() {
			if a.IsNull(i) {
				continue
			}
			v := get(i)
			if isNaN(v) {
				gc.Col.NaNs++
				continue
			}
			if lo == nil || compare(v, lo) < 0 {
				lo = v
			}
			if hi == nil || compare(v, hi) > 0 {
				hi = v
			}
		}
	}
	if lo == nil {
		return nil
	}
	if gc.Min == nil || compare(lo, gc.Min) < 0 {
		gc.Min = lo
	}
	if gc.Max == nil || compare(hi, gc.Max) > 0 {
		gc.Max = hi
	}
	return nil
}

// floatExtremes is extremes for floats: NaN counted and left out, -0.0
// below 0.0.
func floatExtremes[T float32 | float64](a arrow.Array, vals []T, c *Column) (value, value) {
	var lo, hi float64
	found := false
	nulls := a.NullN() > 0
	for i, v := range vals {
		if nulls && a.IsNull(i) {
			continue
		}
		f := float64(v)
		switch {
		case f != f: // NaN
			c.NaNs++
		case !found:
			lo, hi, found = f, f, true
		case f < lo || f == 0 && lo == 0 && math.Signbit(f):
			lo = f
		case f > hi || f == 0 && hi == 0 && !math.Signbit(f):
			hi = f
		}
	}
	if !found {
		return nil, nil
	}
	return lo, hi
}

// extremes is the least and greatest non-null value of a column of
// ordered values; nil when every value is null.
func extremes[T int32 | int64 | arrow.Date32 | arrow.Timestamp](a arrow.Array, vals []T, box func(T) value) (value, value) {
	return extremesFunc(a, func(i int) T { return vals[i] }, box)
}

func extremesFunc[T int32 | int64 | arrow.Date32 | arrow.Timestamp | string](a arrow.Array, at func(int) T, box func(T) value) (value, value) {
	var lo, hi T
	found := false
	nulls := a.NullN() > 0
	for i := range a.Len() {
		if nulls && a.IsNull(i) {
			continue
		}
		v := at(i)
		if !found {
			lo, hi, found = v, v, true
			continue
		}
		if v < lo {
			lo = v
		} else if v > hi {
			hi = v
		}
	}
	if !found {
		return nil, nil
	}
	return box(lo), box(hi)
}

// supported says whether getter reads a column of type t.
func supported(t arrow.DataType) bool {
	switch x := t.(type) {
	case *arrow.DictionaryType:
		return supported(x.ValueType)
	case arrow.ExtensionType:
		return supported(x.StorageType())
	}
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64,
		arrow.TIMESTAMP, arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY,
		arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY, arrow.DECIMAL128:
		return true
	}
	return false
}

// getter reads an Arrow array's values in their domain, as stored.
func getter(a arrow.Array) (func(int) value, error) {
	switch x := a.(type) {
	case *array.Dictionary:
		inner, err := getter(x.Dictionary())
		if err != nil {
			return nil, err
		}
		return func(i int) value { return inner(x.GetValueIndex(i)) }, nil
	case array.ExtensionArray:
		return getter(x.Storage())
	case *array.Boolean:
		return func(i int) value {
			if x.Value(i) {
				return int64(1)
			}
			return int64(0)
		}, nil
	case *array.Int8:
		return func(i int) value { return int64(x.Value(i)) }, nil
	case *array.Int16:
		return func(i int) value { return int64(x.Value(i)) }, nil
	case *array.Int32:
		return func(i int) value { return int64(x.Value(i)) }, nil
	case *array.Int64:
		return func(i int) value { return x.Value(i) }, nil
	case *array.Date32:
		return func(i int) value { return int64(x.Value(i)) }, nil
	case *array.Date64:
		return func(i int) value { return int64(x.Value(i)) }, nil
	case *array.Time32:
		return func(i int) value { return int64(x.Value(i)) }, nil
	case *array.Time64:
		return func(i int) value { return int64(x.Value(i)) }, nil
	case *array.Timestamp:
		return func(i int) value { return int64(x.Value(i)) }, nil
	case *array.Float32:
		return func(i int) value { return float64(x.Value(i)) }, nil
	case *array.Float64:
		return func(i int) value { return x.Value(i) }, nil
	case *array.Float16:
		return func(i int) value { return float64(x.Value(i).Float32()) }, nil
	case *array.String:
		return func(i int) value { return x.Value(i) }, nil
	case *array.LargeString:
		return func(i int) value { return x.Value(i) }, nil
	case *array.Binary:
		return func(i int) value { return string(x.Value(i)) }, nil
	case *array.LargeBinary:
		return func(i int) value { return string(x.Value(i)) }, nil
	case *array.FixedSizeBinary:
		return func(i int) value { return string(x.Value(i)) }, nil
	case *array.Decimal128:
		return func(i int) value { return x.Value(i) }, nil
	}
	return nil, fmt.Errorf("no statistics for a column of type %s", a.DataType())
}
