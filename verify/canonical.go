package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/verify/internal/rowhash"
)

// Type tags of the canonical row encoding (docs/fingerprint.md). A tag is
// written before every value so that a column whose type changes changes the
// hash even where the bytes of the value would not.
const (
	tagNull        byte = 0x00
	tagBool        byte = 0x01
	tagInt         byte = 0x02
	tagLong        byte = 0x03
	tagFloat       byte = 0x04
	tagDouble      byte = 0x05
	tagString      byte = 0x06
	tagBinary      byte = 0x07
	tagDate        byte = 0x08
	tagTimestamp   byte = 0x09
	tagTimestampTz byte = 0x0A
	tagDecimal     byte = 0x0B
	tagTime        byte = 0x0C
	// v2's types (docs/fingerprint.md): a table holding none of them is
	// fingerprinted as v1, byte for byte.
	tagUUID          byte = 0x0D
	tagFixed         byte = 0x0E
	tagTimestampNs   byte = 0x0F
	tagTimestampTzNs byte = 0x10
	tagStruct        byte = 0x11
	tagList          byte = 0x12
	tagMap           byte = 0x13
)

// canonicalNaN bits: every NaN hashes alike, whatever its payload.
const (
	canonicalNaN32 uint32 = 0x7fc00000
	canonicalNaN64 uint64 = 0x7ff8000000000000
)

func timestampToMicros(unit arrow.TimeUnit) func(int64) int64 {
	switch unit {
	case arrow.Second:
		return func(v int64) int64 { return v * 1_000_000 }
	case arrow.Millisecond:
		return func(v int64) int64 { return v * 1_000 }
	case arrow.Nanosecond:
		return func(v int64) int64 { return v / 1_000 }
	default:
		return func(v int64) int64 { return v }
	}
}

// rowBuffer holds the canonical encodings of a batch's rows: row r is
// buf[off[r]:cur[r]]. It is filled column by column, in tight loops per
// type, so that hashing a row is one call on a slice of it. Rows lie back to
// back, or, when blocks is set and every row of the batch fits, one per
// padded SHA-256 block (padded), ready for rowhash.Add.
type rowBuffer struct {
	buf    []byte
	off    []int
	cur    []int
	blocks bool
	padded bool
	// encoded holds, per column of a v2 type whose values have no one
	// width (struct, list, map), each row's encoding: encoded[c].row(r).
	encoded map[int]*encodedColumn
	// span, when not nil, marks where the encodings of the columns at
	// idx[span.from:span.to] lie in each row, so that a grain of
	// neighbouring columns is read from the rows' encoding rather than
	// encoded a second time.
	span *columnSpan
}

// columnSpan is the columns at idx[from:to]; row r's encoding of them is
// buf[lo[r]:hi[r]].
type columnSpan struct {
	from, to int
	lo, hi   []int
}

// spanned is row r's encoding of the span's columns.
func (b *rowBuffer) spanned(r int) []byte { return b.buf[b.span.lo[r]:b.span.hi[r]] }

// encodedColumn is one column's values, each encoded with its tag.
type encodedColumn struct {
	buf []byte
	off []int // row r is buf[off[r]:off[r+1]]
}

func (e *encodedColumn) ValueLen(r int) int { return e.off[r+1] - e.off[r] }

func (b *rowBuffer) row(r int) []byte { return b.buf[b.off[r]:b.cur[r]] }

// rowPool recycles the buffers of finished partitions: a backfill stages
// many, and fresh buffers of a batch's rows cost zeroing and collection.
var rowPool sync.Pool // of *rowBuffer

// release hands the buffers to the next partition; b stays usable.
func (b *rowBuffer) release() {
	if b.buf != nil {
		rowPool.Put(&rowBuffer{buf: b.buf, off: b.off, cur: b.cur})
	}
	b.buf, b.off, b.cur = nil, nil, nil
}

// ColumnError is a value of the column at index Column that cannot be
// encoded: a map holding a key twice, a type the fingerprint lacks.
type ColumnError struct {
	Column int
	Err    error
}

func (e *ColumnError) Error() string { return fmt.Sprintf("column %d: %v", e.Column, e.Err) }
func (e *ColumnError) Unwrap() error { return e.Err }

// fill encodes columns idx of cols (n rows) whose Iceberg types are types.
func (b *rowBuffer) fill(types []iceberg.Type, cols []arrow.Array, idx []int, n int) error {
	if b.buf == nil {
		if p, ok := rowPool.Get().(*rowBuffer); ok {
			b.buf, b.off, b.cur = p.buf, p.off, p.cur
		}
	}
	b.off = grow(b.off, n+1)
	b.cur = grow(b.cur, n)
	clear(b.off)
	// Every row spends fixed bytes on the columns of one width and no
	// nulls; only the other columns are sized row by row.
	fixed := 0
	for _, c := range idx {
		w, err := width(types[c], cols[c])
		if err != nil {
			return &ColumnError{Column: c, Err: err}
		}
		if w == nested {
			e, err := b.encode(c, types[c], cols[c], n)
			if err != nil {
				return &ColumnError{Column: c, Err: err}
			}
			for r := range n {
				b.off[r+1] += e.ValueLen(r)
			}
			continue
		}
		if w >= 0 && cols[c].NullN() == 0 {
			fixed += 1 + w
			continue
		}
		addSizes(b.off[1:], cols[c], w)
	}
	b.padded = b.blocks && n > 0 && fixed+slices.Max(b.off[1:]) <= rowhash.MaxShort
	if b.padded {
		sizes := b.off[1:]
		for r := range n {
			b.cur[r] = fixed + sizes[r] // keep row r's size while off is rewritten
		}
		for r := range n + 1 {
			b.off[r] = r * rowhash.BlockSize
		}
		b.buf = grow(b.buf, n*rowhash.BlockSize)
		for r := range n {
			rowhash.Pad(b.buf[b.off[r]:b.off[r+1]], b.cur[r])
		}
	} else {
		for r := 1; r <= n; r++ {
			b.off[r] += b.off[r-1] + fixed
		}
		b.buf = grow(b.buf, b.off[n])
	}
	copy(b.cur, b.off[:n])
	for k, c := range idx {
		if b.span != nil && k == b.span.from {
			b.span.lo = append(b.span.lo[:0], b.cur[:n]...)
		}
		if e := b.encoded[c]; e != nil {
			for r := range n {
				b.cur[r] += copy(b.buf[b.cur[r]:], e.buf[e.off[r]:e.off[r+1]])
			}
		} else {
			b.put(types[c], cols[c], n)
		}
		if b.span != nil && k == b.span.to-1 {
			b.span.hi = append(b.span.hi[:0], b.cur[:n]...)
		}
	}
	return nil
}

// encode encodes each row's value of a nested column c, kept in
// b.encoded[c] until the next fill.
func (b *rowBuffer) encode(c int, typ iceberg.Type, arr arrow.Array, n int) (*encodedColumn, error) {
	if b.encoded == nil {
		b.encoded = map[int]*encodedColumn{}
	}
	e := b.encoded[c]
	if e == nil {
		e = &encodedColumn{}
		b.encoded[c] = e
	}
	e.buf, e.off = e.buf[:0], append(e.off[:0], 0)
	var err error
	for r := range n {
		if e.buf, err = appendValue(e.buf, typ, arr, r); err != nil {
			return nil, err
		}
		e.off = append(e.off, len(e.buf))
	}
	return e, nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// nested is the width of a struct, list or map column: its values are
// encoded one by one (appendValue).
const nested = -2

// width is the bytes after the tag of a fixed-width value, -1 for a
// length-prefixed one, or nested.
func width(typ iceberg.Type, arr arrow.Array) (int, error) {
	ok := false
	w := 0
	switch t := typ.(type) {
	case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType:
		return nested, nil
	case iceberg.UUIDType:
		ok = fixedBinary(arr, 16)
		w = 16
	case iceberg.FixedType:
		ok = fixedBinary(arr, t.Len())
		w = t.Len()
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		_, ok = arr.(*array.Timestamp)
		w = 8
	case iceberg.BooleanType:
		_, ok = arr.(*array.Boolean)
		w = 1
	case iceberg.Int32Type:
		_, ok = arr.(*array.Int32)
		w = 4
	case iceberg.Int64Type:
		_, ok = arr.(*array.Int64)
		w = 8
	case iceberg.Float32Type:
		_, ok = arr.(*array.Float32)
		w = 4
	case iceberg.Float64Type:
		_, ok = arr.(*array.Float64)
		w = 8
	case iceberg.DateType:
		_, ok = arr.(*array.Date32)
		w = 4
	case iceberg.TimeType:
		_, ok = arr.(*array.Time64)
		w = 8
	case iceberg.TimestampType, iceberg.TimestampTzType:
		_, ok = arr.(*array.Timestamp)
		w = 8
	case iceberg.DecimalType:
		_, ok = arr.(*array.Decimal128)
		w = 17
	case iceberg.StringType:
		switch arr.(type) {
		case *array.String, *array.LargeString:
			ok = true
		}
		w = -1
	case iceberg.BinaryType:
		switch arr.(type) {
		case *array.Binary, *array.LargeBinary:
			ok = true
		}
		w = -1
	default:
		return 0, fmt.Errorf("iceberg type %s is not supported by the fingerprint", typ)
	}
	if !ok {
		return 0, fmt.Errorf("arrow type %s cannot hold iceberg type %s", arr.DataType(), typ)
	}
	return w, nil
}

// addSizes adds each row's encoded size of one column to size[r].
func addSizes(size []int, arr arrow.Array, w int) {
	nulls := arr.NullN() > 0
	if w >= 0 {
		for r := range size {
			if nulls && arr.IsNull(r) {
				size[r]++
			} else {
				size[r] += 1 + w
			}
		}
		return
	}
	type lengths interface{ ValueLen(int) int }
	l := arr.(lengths)
	for r := range size {
		if nulls && arr.IsNull(r) {
			size[r]++
		} else {
			size[r] += 5 + l.ValueLen(r)
		}
	}
}

// put writes one column's values at each row's cursor, in a loop per
// fixed-width type so that no value costs a call.
func (b *rowBuffer) put(typ iceberg.Type, arr arrow.Array, n int) {
	nulls := arr.NullN() > 0
	buf, cur := b.buf, b.cur
	null := func(r int) bool {
		if nulls && arr.IsNull(r) {
			buf[cur[r]] = tagNull
			cur[r]++
			return true
		}
		return false
	}
	switch a := arr.(type) {
	case *array.Boolean:
		for r := range n {
			if !null(r) {
				buf[cur[r]] = tagBool
				buf[cur[r]+1] = 0
				if a.Value(r) {
					buf[cur[r]+1] = 1
				}
				cur[r] += 2
			}
		}
	case *array.Int32:
		for r, v := range a.Int32Values() {
			if !null(r) {
				put32(buf, cur, r, tagInt, uint32(v))
			}
		}
	case *array.Date32:
		for r, v := range a.Date32Values() {
			if !null(r) {
				put32(buf, cur, r, tagDate, uint32(v))
			}
		}
	case *array.Float32:
		for r, v := range a.Float32Values() {
			if !null(r) {
				bits := math.Float32bits(v)
				if v != v {
					bits = canonicalNaN32
				}
				put32(buf, cur, r, tagFloat, bits)
			}
		}
	case *array.Int64:
		for r, v := range a.Int64Values() {
			if !null(r) {
				put64(buf, cur, r, tagLong, uint64(v))
			}
		}
	case *array.Float64:
		for r, v := range a.Float64Values() {
			if !null(r) {
				bits := math.Float64bits(v)
				if v != v {
					bits = canonicalNaN64
				}
				put64(buf, cur, r, tagDouble, bits)
			}
		}
	case *array.Time64:
		div := int64(1)
		if a.DataType().(*arrow.Time64Type).Unit == arrow.Nanosecond {
			div = 1000
		}
		for r, v := range a.Time64Values() {
			if !null(r) {
				put64(buf, cur, r, tagTime, uint64(int64(v)/div))
			}
		}
	case *array.Timestamp:
		tag, scale := timestampTag(typ, a)
		for r, v := range a.TimestampValues() {
			if !null(r) {
				put64(buf, cur, r, tag, uint64(scale(int64(v))))
			}
		}
	case array.ExtensionArray: // a uuid
		b.put(typ, a.Storage(), n)
	case *array.FixedSizeBinary:
		tag := tagFixed
		if _, ok := typ.(iceberg.UUIDType); ok {
			tag = tagUUID
		}
		for r := range n {
			if !null(r) {
				p := cur[r]
				buf[p] = tag
				cur[r] = p + 1 + copy(buf[p+1:], a.Value(r))
			}
		}
	case *array.Decimal128:
		scale := byte(typ.(iceberg.DecimalType).Scale())
		for r := range n {
			if !null(r) {
				v := a.Value(r)
				p := cur[r]
				buf[p], buf[p+1] = tagDecimal, scale
				binary.BigEndian.PutUint64(buf[p+2:], uint64(v.HighBits()))
				binary.BigEndian.PutUint64(buf[p+10:], v.LowBits())
				cur[r] += 18
			}
		}
	case *array.String:
		putEach(buf, cur, n, tagString, null, a.Value)
	case *array.LargeString:
		putEach(buf, cur, n, tagString, null, a.Value)
	case *array.Binary:
		putEach(buf, cur, n, tagBinary, null, a.Value)
	case *array.LargeBinary:
		putEach(buf, cur, n, tagBinary, null, a.Value)
	}
}

// putEach writes the length-prefixed values of a string or binary column;
// the copy of each value costs more than the call that fetches it.
func putEach[T string | []byte](buf []byte, cur []int, n int, tag byte, null func(int) bool, value func(int) T) {
	for r := range n {
		if !null(r) {
			putBytes(buf, cur, r, tag, value(r))
		}
	}
}

func put32(buf []byte, cur []int, r int, tag byte, v uint32) {
	p := cur[r]
	buf[p] = tag
	binary.BigEndian.PutUint32(buf[p+1:], v)
	cur[r] = p + 5
}

func put64(buf []byte, cur []int, r int, tag byte, v uint64) {
	p := cur[r]
	buf[p] = tag
	binary.BigEndian.PutUint64(buf[p+1:], v)
	cur[r] = p + 9
}

func putBytes[T string | []byte](buf []byte, cur []int, r int, tag byte, v T) {
	p := cur[r]
	buf[p] = tag
	binary.BigEndian.PutUint32(buf[p+1:], uint32(len(v)))
	cur[r] = p + 5 + copy(buf[p+5:], v)
}

// fixedBinary says whether arr holds fixed-width binary values of n bytes,
// itself or as the storage of an extension type (a uuid).
func fixedBinary(arr arrow.Array, n int) bool {
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	a, ok := arr.(*array.FixedSizeBinary)
	return ok && a.DataType().(*arrow.FixedSizeBinaryType).ByteWidth == n
}

// timestampTag is the tag of a timestamp column of Iceberg type typ and
// how its stored values convert to the type's unit (microseconds, or
// nanoseconds for v3's timestamp_ns).
func timestampTag(typ iceberg.Type, a *array.Timestamp) (byte, func(int64) int64) {
	unit := a.DataType().(*arrow.TimestampType).Unit
	switch typ.(type) {
	case iceberg.TimestampNsType:
		return tagTimestampNs, timestampToNanos(unit)
	case iceberg.TimestampTzNsType:
		return tagTimestampTzNs, timestampToNanos(unit)
	case iceberg.TimestampTzType:
		return tagTimestampTz, timestampToMicros(unit)
	}
	return tagTimestamp, timestampToMicros(unit)
}

func timestampToNanos(unit arrow.TimeUnit) func(int64) int64 {
	var m int64
	switch unit {
	case arrow.Second:
		m = 1_000_000_000
	case arrow.Millisecond:
		m = 1_000_000
	case arrow.Microsecond:
		m = 1_000
	default:
		m = 1
	}
	return func(v int64) int64 { return v * m }
}

// appendValue appends the canonical encoding of arr's value at row r, of
// Iceberg type typ, to dst: one value at a time, as nested values (a
// struct's fields, a list's elements, a map's entries) are encoded.
func appendValue(dst []byte, typ iceberg.Type, arr arrow.Array, r int) ([]byte, error) {
	if arr.IsNull(r) {
		return append(dst, tagNull), nil
	}
	switch t := typ.(type) {
	case *iceberg.StructType:
		a, ok := arr.(*array.Struct)
		if !ok || a.NumField() != len(t.FieldList) {
			return nil, fmt.Errorf("arrow type %s cannot hold iceberg type %s", arr.DataType(), typ)
		}
		dst = append(dst, tagStruct)
		for i, f := range t.FieldList {
			var err error
			if dst, err = appendValue(dst, f.Type, a.Field(i), r); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case *iceberg.ListType:
		a, ok := arr.(array.ListLike)
		if !ok || arr.DataType().ID() == arrow.MAP {
			return nil, fmt.Errorf("arrow type %s cannot hold iceberg type %s", arr.DataType(), typ)
		}
		start, end := a.ValueOffsets(r)
		dst = binary.BigEndian.AppendUint32(append(dst, tagList), uint32(end-start))
		for i := start; i < end; i++ {
			var err error
			if dst, err = appendValue(dst, t.Element, a.ListValues(), int(i)); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case *iceberg.MapType:
		a, ok := arr.(*array.Map)
		if !ok {
			return nil, fmt.Errorf("arrow type %s cannot hold iceberg type %s", arr.DataType(), typ)
		}
		return appendMap(dst, t, a, r)
	}
	if _, err := width(typ, arr); err != nil {
		return nil, err
	}
	return appendPrimitive(dst, typ, arr, r), nil
}

// appendPrimitive appends the encoding of a primitive value, arr's at row
// r (not null), of a type width has checked arr holds: the bytes put
// writes for a column, one value at a time.
func appendPrimitive(dst []byte, typ iceberg.Type, arr arrow.Array, r int) []byte {
	switch a := arr.(type) {
	case *array.Boolean:
		if a.Value(r) {
			return append(dst, tagBool, 1)
		}
		return append(dst, tagBool, 0)
	case *array.Int32:
		return binary.BigEndian.AppendUint32(append(dst, tagInt), uint32(a.Value(r)))
	case *array.Date32:
		return binary.BigEndian.AppendUint32(append(dst, tagDate), uint32(a.Value(r)))
	case *array.Float32:
		bits := math.Float32bits(a.Value(r))
		if v := a.Value(r); v != v {
			bits = canonicalNaN32
		}
		return binary.BigEndian.AppendUint32(append(dst, tagFloat), bits)
	case *array.Int64:
		return binary.BigEndian.AppendUint64(append(dst, tagLong), uint64(a.Value(r)))
	case *array.Float64:
		bits := math.Float64bits(a.Value(r))
		if v := a.Value(r); v != v {
			bits = canonicalNaN64
		}
		return binary.BigEndian.AppendUint64(append(dst, tagDouble), bits)
	case *array.Time64:
		v := int64(a.Value(r))
		if a.DataType().(*arrow.Time64Type).Unit == arrow.Nanosecond {
			v /= 1000
		}
		return binary.BigEndian.AppendUint64(append(dst, tagTime), uint64(v))
	case *array.Timestamp:
		tag, scale := timestampTag(typ, a)
		return binary.BigEndian.AppendUint64(append(dst, tag), uint64(scale(int64(a.Value(r)))))
	case *array.Decimal128:
		v := a.Value(r)
		dst = append(dst, tagDecimal, byte(typ.(iceberg.DecimalType).Scale()))
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(dst, uint64(v.HighBits())), v.LowBits())
	case *array.String:
		return appendBytes(dst, tagString, a.Value(r))
	case *array.LargeString:
		return appendBytes(dst, tagString, a.Value(r))
	case *array.Binary:
		return appendBytes(dst, tagBinary, a.Value(r))
	case *array.LargeBinary:
		return appendBytes(dst, tagBinary, a.Value(r))
	case array.ExtensionArray: // a uuid
		return appendPrimitive(dst, typ, a.Storage(), r)
	case *array.FixedSizeBinary:
		if _, ok := typ.(iceberg.UUIDType); ok {
			return append(append(dst, tagUUID), a.Value(r)...)
		}
		return append(append(dst, tagFixed), a.Value(r)...)
	}
	return dst
}

func appendBytes[T string | []byte](dst []byte, tag byte, v T) []byte {
	return append(binary.BigEndian.AppendUint32(append(dst, tag), uint32(len(v))), v...)
}

// appendMap encodes a map's entries in the order of their keys' encodings,
// so that the same entries in any order encode alike. A key held twice
// (a Parquet file can hold one; a map cannot) is an error.
func appendMap(dst []byte, t *iceberg.MapType, a *array.Map, r int) ([]byte, error) {
	start, end := a.ValueOffsets(r)
	type entry struct{ key, kv []byte }
	entries := make([]entry, 0, end-start)
	for i := start; i < end; i++ {
		k, err := appendValue(nil, t.KeyType, a.Keys(), int(i))
		if err != nil {
			return nil, err
		}
		kv, err := appendValue(slices.Clip(k), t.ValueType, a.Items(), int(i))
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{k, kv})
	}
	slices.SortFunc(entries, func(x, y entry) int { return bytes.Compare(x.kv, y.kv) }) // no key's encoding is the start of another's
	dst = binary.BigEndian.AppendUint32(append(dst, tagMap), uint32(len(entries)))
	for i, e := range entries {
		if i > 0 && bytes.Equal(e.key, entries[i-1].key) {
			return nil, fmt.Errorf("a map holds the key %s twice", a.Keys().ValueStr(int(start)+keyIndex(a, start, end, e.key, t.KeyType)))
		}
		dst = append(dst, e.kv...)
	}
	return dst, nil
}

// keyIndex is the offset from start of the first entry whose key encodes
// as key.
func keyIndex(a *array.Map, start, end int64, key []byte, typ iceberg.Type) int {
	for i := start; i < end; i++ {
		if k, err := appendValue(nil, typ, a.Keys(), int(i)); err == nil && bytes.Equal(k, key) {
			return int(i - start)
		}
	}
	return 0
}
