package verify

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// Project reads a batch of one of the table's own files as the contract's
// schema, as every Iceberg reader reads a file written under an earlier
// schema: columns are matched by field id (by name in a file that has no
// ids), a column added since is null, an int or float widened since is
// read as the wider type, a decimal's precision widened likewise. The
// result must be released. A column the contract requires that the file
// lacks, or a type that does not widen to the contract's, is an error.
func (a *Accumulator) Project(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	return ProjectTo(rec, a.c.Arrow, a.c.Fields)
}

// ProjectTo reads rec, a batch of a table's data file, as want, the Arrow
// schema of the table's fields (with their field ids), as Project does.
func ProjectTo(rec arrow.RecordBatch, want *arrow.Schema, fields []iceberg.NestedField) (arrow.RecordBatch, error) {
	sc := rec.Schema()
	byID := map[int]int{}
	for i, f := range sc.Fields() {
		if id, ok := fieldID(f); ok {
			byID[id] = i
		}
	}
	n := int(rec.NumRows())
	cols := make([]arrow.Array, len(want.Fields()))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, wf := range want.Fields() {
		at, found := -1, false
		if len(byID) > 0 {
			at, found = byID[fields[i].ID]
		} else if idx := sc.FieldIndices(wf.Name); len(idx) == 1 {
			at, found = idx[0], true
		}
		switch {
		case !found && fields[i].Required:
			return nil, fmt.Errorf("column %s (field %d) is required and the file has no column of that field", wf.Name, fields[i].ID)
		case !found:
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, wf.Type, n)
		default:
			col, err := project(rec.Column(at), wf)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", wf.Name, err)
			}
			cols[i] = col
		}
	}
	return array.NewRecordBatch(want, cols, int64(n)), nil
}

// fieldID is the Iceberg field id Parquet carries for an Arrow field; a
// file written without ids reads as -1, no id.
func fieldID(f arrow.Field) (int, bool) {
	v, ok := f.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(v)
	return id, err == nil && id >= 0
}

// project returns col as the table's field want: a struct's fields
// matched by field id (by name where the file has none), a field added
// since as nulls and one dropped since left out, a list's elements and a
// map's keys and values projected alike, and a primitive widened. The
// result is the caller's to release.
func project(col arrow.Array, want arrow.Field) (arrow.Array, error) {
	if arrow.TypeEqual(col.DataType(), want.Type, arrow.CheckMetadata()) {
		col.Retain() // the same fields, ids included
		return col, nil
	}
	switch wt := want.Type.(type) {
	case *arrow.StructType:
		st, ok := col.(*array.Struct)
		if !ok {
			break
		}
		return projectStruct(st, wt)
	case *arrow.ListType:
		if ll, ok := col.(*array.LargeList); ok { // as pyarrow's large types write it
			small, err := compute.CastArray(context.Background(), ll, compute.SafeCastOptions(arrow.ListOfField(ll.DataType().(*arrow.LargeListType).ElemField())))
			if err != nil {
				return nil, err
			}
			defer small.Release()
			return project(small, want)
		}
		l, ok := col.(*array.List)
		if !ok {
			break
		}
		elems, err := project(l.ListValues(), wt.ElemField())
		if err != nil {
			return nil, fmt.Errorf("element: %w", err)
		}
		defer elems.Release()
		d := l.Data()
		data := array.NewData(wt, d.Len(), d.Buffers(), []arrow.ArrayData{elems.Data()}, d.NullN(), d.Offset())
		defer data.Release()
		return array.MakeFromData(data), nil
	case arrow.ExtensionType:
		// A uuid written as plain 16 bytes, as engines that do not mark
		// one write it.
		if arrow.TypeEqual(col.DataType(), wt.StorageType()) {
			return array.NewExtensionArrayWithStorage(wt, col), nil
		}
	case *arrow.MapType:
		m, ok := col.(*array.Map)
		if !ok {
			break
		}
		entries, err := project(m.ListValues(), arrow.Field{Name: "entries", Type: wt.Elem()})
		if err != nil {
			return nil, err
		}
		defer entries.Release()
		d := m.Data()
		data := array.NewData(wt, d.Len(), d.Buffers(), []arrow.ArrayData{entries.Data()}, d.NullN(), d.Offset())
		defer data.Release()
		return array.MakeFromData(data), nil
	}
	return widen(context.Background(), col, want.Type)
}

// projectStruct is project of a struct.
func projectStruct(st *array.Struct, want *arrow.StructType) (arrow.Array, error) {
	got := st.DataType().(*arrow.StructType)
	byID, byName := map[int]int{}, map[string]int{}
	for i, f := range got.Fields() {
		if id, ok := fieldID(f); ok {
			byID[id] = i
		}
		byName[f.Name] = i
	}
	children := make([]arrow.Array, want.NumFields())
	defer func() {
		for _, c := range children {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, wf := range want.Fields() {
		at, found := -1, false
		if id, ok := fieldID(wf); ok && len(byID) > 0 {
			at, found = byID[id]
		} else {
			at, found = byName[wf.Name]
		}
		if !found {
			if !wf.Nullable {
				return nil, fmt.Errorf("field %s is required and the file has no field of it", wf.Name)
			}
			children[i] = array.MakeArrayOfNull(memory.DefaultAllocator, wf.Type, st.Len())
			continue
		}
		c, err := project(st.Field(at), wf)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", wf.Name, err)
		}
		children[i] = c
	}
	datas := make([]arrow.ArrayData, len(children))
	for i, c := range children {
		datas[i] = c.Data()
	}
	data := array.NewData(want, st.Len(), []*memory.Buffer{Validity(st)}, datas, st.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// Validity is a's validity bitmap starting at bit 0, as children sliced to
// a (Struct.Field gives them so) need beside them: a's own where a starts
// at its buffer's start, a copy where it is sliced, nil where no value is
// null. It is valid while a is.
func Validity(a arrow.Array) *memory.Buffer {
	switch {
	case a.NullN() == 0:
		return nil
	case a.Data().Offset() == 0:
		return a.Data().Buffers()[0]
	}
	bits := make([]byte, bitutil.BytesForBits(int64(a.Len())))
	bitutil.CopyBitmap(a.Data().Buffers()[0].Bytes(), a.Data().Offset(), a.Len(), bits, 0)
	return memory.NewBufferBytes(bits)
}

// ProjectColumn reads col, one column of a table's data file, as the
// table's field want, as ProjectTo does each column.
func ProjectColumn(col arrow.Array, want arrow.Field) (arrow.Array, error) { return project(col, want) }

// widen returns col as type want: itself when it has that type, else cast
// where Iceberg's type promotions allow (int to long, float to double, a
// decimal to a wider precision of its scale), which no value fails. The
// result is the caller's to release.
func widen(ctx context.Context, col arrow.Array, want arrow.DataType) (arrow.Array, error) {
	got := col.DataType()
	if arrow.TypeEqual(got, want) {
		col.Retain()
		return col, nil
	}
	if !promotes(got, want) && !large(got, want) {
		return nil, fmt.Errorf("the file has type %s, which does not widen to the table's %s", got, want)
	}
	return compute.CastArray(ctx, col, compute.SafeCastOptions(want))
}

// large says whether got is the large form of want (64-bit offsets), as a
// file written with pyarrow's large types is read: the same values.
func large(got, want arrow.DataType) bool {
	switch got.ID() {
	case arrow.LARGE_STRING:
		return want.ID() == arrow.STRING
	case arrow.LARGE_BINARY:
		return want.ID() == arrow.BINARY
	}
	return false
}

// promotes says whether Iceberg promotes a column of type got to want.
func promotes(got, want arrow.DataType) bool {
	switch {
	case got.ID() == arrow.INT32 && want.ID() == arrow.INT64, got.ID() == arrow.FLOAT32 && want.ID() == arrow.FLOAT64:
		return true
	case got.ID() == arrow.DECIMAL128 && want.ID() == arrow.DECIMAL128:
		g, w := got.(*arrow.Decimal128Type), want.(*arrow.Decimal128Type)
		return g.Scale == w.Scale && g.Precision <= w.Precision
	}
	return false
}
