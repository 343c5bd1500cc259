package verify

import (
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
}

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
			return fmt.Errorf("column %d: %w", c, err)
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
	for _, c := range idx {
		b.put(types[c], cols[c], n)
	}
	return nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// width is the bytes after the tag of a fixed-width value, or -1 for a
// length-prefixed one.
func width(typ iceberg.Type, arr arrow.Array) (int, error) {
	ok := false
	w := 0
	switch typ.(type) {
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
		return 0, fmt.Errorf("iceberg type %s is not supported by fingerprint v1", typ)
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
		tag := tagTimestamp
		if _, tz := typ.(iceberg.TimestampTzType); tz {
			tag = tagTimestampTz
		}
		toMicros := timestampToMicros(a.DataType().(*arrow.TimestampType).Unit)
		for r, v := range a.TimestampValues() {
			if !null(r) {
				put64(buf, cur, r, tag, uint64(toMicros(int64(v))))
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
