package source

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"github.com/lakeswap/lakeswap/verify"
)

// A SQL engine's result holds the table's values in the engine's own
// Arrow shapes: a struct's fields and a list's element named and marked
// nullable its way, a uuid as its text, a fixed value as plain bytes.
// conformable and conform take those shapes for the table's types with
// every value as it is; anything else is for the SQL to cast.

// conformable says whether a result column of type got holds values of
// the table's type want as they are.
func conformable(got, want arrow.DataType) bool {
	if arrow.TypeEqual(got, want) || sameInstants(got, want) {
		return true
	}
	switch w := want.(type) {
	case *arrow.StructType:
		g, ok := got.(*arrow.StructType)
		if !ok || g.NumFields() != w.NumFields() {
			return false
		}
		for _, wf := range w.Fields() {
			i, ok := g.FieldIdx(wf.Name)
			if !ok || !conformable(g.Field(i).Type, wf.Type) {
				return false
			}
		}
		return true
	case *arrow.ListType:
		g, ok := got.(*arrow.ListType)
		return ok && conformable(g.Elem(), w.Elem())
	case *arrow.MapType:
		g, ok := got.(*arrow.MapType)
		return ok && conformable(g.KeyType(), w.KeyType()) && conformable(g.ItemType(), w.ItemType())
	case *extensions.UUIDType:
		return got.ID() == arrow.STRING
	case *arrow.FixedSizeBinaryType:
		return got.ID() == arrow.BINARY
	}
	return false
}

// conform returns col, a result column conformable to want, as want's
// type: the same values, or an error naming the first row (from 1) a
// value of which the table's type cannot hold as it is (a uuid's text
// that is not one, bytes of another length than a fixed column's, a null
// in a required field). The result is the caller's to release.
func conform(col arrow.Array, want arrow.Field) (arrow.Array, int, error) {
	got := col.DataType()
	if arrow.TypeEqual(got, want.Type) {
		col.Retain()
		return col, 0, nil
	}
	if sameInstants(got, want.Type) { // an instant labelled with another zone
		return array.MakeFromData(array.NewData(want.Type, col.Len(), col.Data().Buffers(), nil, col.NullN(), col.Data().Offset())), 0, nil
	}
	switch w := want.Type.(type) {
	case *arrow.StructType:
		return conformStruct(col.(*array.Struct), w)
	case *arrow.ListType:
		l := col.(*array.List)
		elems, bad, err := conform(l.ListValues(), w.ElemField())
		if err != nil {
			return nil, rowOf(l, bad), fmt.Errorf("element: %w", err)
		}
		defer elems.Release()
		if r := requiredNull(l, elems, w.ElemField()); r > 0 {
			return nil, r, fmt.Errorf("a null element, and the list's elements are required")
		}
		return rebuilt(w, col, elems), 0, nil
	case *arrow.MapType:
		m := col.(*array.Map)
		entries, bad, err := conform(m.ListValues(), arrow.Field{Name: "entries", Type: w.Elem()})
		if err != nil {
			return nil, rowOf(m, bad), err
		}
		defer entries.Release()
		return rebuilt(w, col, entries), 0, nil
	case *extensions.UUIDType:
		s := col.(*array.String)
		b := extensions.NewUUIDBuilder(memory.DefaultAllocator)
		defer b.Release()
		for r := range s.Len() {
			if s.IsNull(r) {
				b.AppendNull()
				continue
			}
			u, err := uuid.Parse(s.Value(r))
			if err != nil || len(s.Value(r)) != 36 {
				return nil, r + 1, fmt.Errorf("value %q is not a uuid (8-4-4-4-12 hex digits)", s.Value(r))
			}
			b.Append(u)
		}
		return b.NewArray(), 0, nil
	case *arrow.FixedSizeBinaryType:
		bin := col.(*array.Binary)
		b := array.NewFixedSizeBinaryBuilder(memory.DefaultAllocator, w)
		defer b.Release()
		for r := range bin.Len() {
			if bin.IsNull(r) {
				b.AppendNull()
				continue
			}
			if v := bin.Value(r); len(v) != w.ByteWidth {
				return nil, r + 1, fmt.Errorf("value holds %d bytes, the column holds exactly %d", len(v), w.ByteWidth)
			}
			b.Append(bin.Value(r))
		}
		return b.NewArray(), 0, nil
	}
	return nil, 0, fmt.Errorf("type %s does not hold the table's %s", got, want.Type)
}

// conformStruct is conform of a struct, its fields taken by name.
func conformStruct(st *array.Struct, want *arrow.StructType) (arrow.Array, int, error) {
	got := st.DataType().(*arrow.StructType)
	children := make([]arrow.ArrayData, want.NumFields())
	defer func() {
		for _, c := range children {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, wf := range want.Fields() {
		at, _ := got.FieldIdx(wf.Name)
		c, bad, err := conform(st.Field(at), wf)
		if err != nil {
			return nil, bad, fmt.Errorf("field %s: %w", wf.Name, err)
		}
		if !wf.Nullable && c.NullN() > 0 {
			for r := range c.Len() {
				if c.IsNull(r) && st.IsValid(r) {
					c.Release()
					return nil, r + 1, fmt.Errorf("field %s is null, and it is required", wf.Name)
				}
			}
		}
		children[i] = c.Data()
		children[i].Retain()
		c.Release()
	}
	data := array.NewData(want, st.Len(), []*memory.Buffer{verify.Validity(st)}, children, st.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data), 0, nil
}

// rebuilt is a list or map col with its child replaced by child.
func rebuilt(want arrow.DataType, col, child arrow.Array) arrow.Array {
	d := col.Data()
	data := array.NewData(want, d.Len(), d.Buffers(), []arrow.ArrayData{child.Data()}, d.NullN(), d.Offset())
	defer data.Release()
	return array.MakeFromData(data)
}

// rowOf is the row (from 1) of a list or map whose child value i (from 1)
// is, or 0.
func rowOf(l array.ListLike, i int) int {
	for r := range l.Len() {
		if start, end := l.ValueOffsets(r); int64(i-1) >= start && int64(i-1) < end {
			return r + 1
		}
	}
	return 0
}

// requiredNull is the row (from 1) of a list holding a null element where
// its elements are required, or 0.
func requiredNull(l *array.List, elems arrow.Array, elem arrow.Field) int {
	if elem.Nullable || elems.NullN() == 0 {
		return 0
	}
	for i := range elems.Len() {
		if elems.IsNull(i) {
			if r := rowOf(l, i+1); r > 0 {
				return r
			}
		}
	}
	return 0
}
