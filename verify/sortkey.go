package verify

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// sortKeys encodes rows' grains so that comparing two encodings byte by
// byte compares the keys in the grain's order: column by column, nulls
// first, numbers, dates and times by value, text and bytes by their bytes.
// Two keys encode alike exactly when the fingerprint's canonical encoding
// holds them alike (NaNs are one value, -0 and 0 two). A grain holding a
// struct, list or map has no such order: its keys are the canonical
// encoding, equal as exactly, in an order of no meaning but the same on
// every read. Both sides of a comparison are read in the contract's
// schema, so a column has one Arrow type on both.
type sortKeys struct {
	cols    []int
	types   []iceberg.Type
	ordered bool
	canon   rowBuffer
	buf     []byte
	off     []int
}

func newSortKeys(types []iceberg.Type, cols []int) *sortKeys {
	k := &sortKeys{cols: cols, types: types, ordered: true}
	for _, c := range cols {
		if !isPrimitive(types[c]) {
			k.ordered = false
		}
	}
	return k
}

func isPrimitive(t iceberg.Type) bool {
	switch t.(type) {
	case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType:
		return false
	}
	return true
}

// fill encodes the keys of n rows of cols, indexed by the contract's
// fields.
func (k *sortKeys) fill(cols []arrow.Array, n int) error {
	if !k.ordered {
		return k.canon.fill(k.types, cols, k.cols, n)
	}
	k.buf, k.off = k.buf[:0], append(k.off[:0], 0)
	for r := range n {
		for _, c := range k.cols {
			var err error
			if k.buf, err = appendOrdered(k.buf, cols[c], r); err != nil {
				return &ColumnError{Column: c, Err: err}
			}
		}
		k.off = append(k.off, len(k.buf))
	}
	return nil
}

// row is row r's key, valid until the next fill.
func (k *sortKeys) row(r int) []byte {
	if !k.ordered {
		return k.canon.row(r)
	}
	return k.buf[k.off[r]:k.off[r+1]]
}

func (k *sortKeys) release() { k.canon.release() }

// appendOrdered appends value r of arr in an encoding whose byte order is
// the values' order.
func appendOrdered(dst []byte, arr arrow.Array, r int) ([]byte, error) {
	if arr.IsNull(r) {
		return append(dst, 0), nil
	}
	dst = append(dst, 1)
	switch a := arr.(type) {
	case *array.Boolean:
		if a.Value(r) {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case *array.Int32:
		return binary.BigEndian.AppendUint32(dst, uint32(a.Value(r))^1<<31), nil
	case *array.Date32:
		return binary.BigEndian.AppendUint32(dst, uint32(a.Value(r))^1<<31), nil
	case *array.Int64:
		return binary.BigEndian.AppendUint64(dst, uint64(a.Value(r))^1<<63), nil
	case *array.Time64:
		return binary.BigEndian.AppendUint64(dst, uint64(a.Value(r))^1<<63), nil
	case *array.Timestamp:
		return binary.BigEndian.AppendUint64(dst, uint64(a.Value(r))^1<<63), nil
	case *array.Float32:
		v := a.Value(r)
		bits := math.Float32bits(v)
		if v != v {
			bits = canonicalNaN32
		}
		if bits&(1<<31) != 0 {
			bits = ^bits
		} else {
			bits |= 1 << 31
		}
		return binary.BigEndian.AppendUint32(dst, bits), nil
	case *array.Float64:
		v := a.Value(r)
		bits := math.Float64bits(v)
		if v != v {
			bits = canonicalNaN64
		}
		if bits&(1<<63) != 0 {
			bits = ^bits
		} else {
			bits |= 1 << 63
		}
		return binary.BigEndian.AppendUint64(dst, bits), nil
	case *array.Decimal128:
		v := a.Value(r)
		dst = binary.BigEndian.AppendUint64(dst, uint64(v.HighBits())^1<<63)
		return binary.BigEndian.AppendUint64(dst, v.LowBits()), nil
	case *array.FixedSizeBinary:
		return append(dst, a.Value(r)...), nil
	case array.ExtensionArray: // a uuid
		return appendOrdered(dst[:len(dst)-1], a.Storage(), r)
	case *array.String:
		return appendEscaped(dst, a.Value(r)), nil
	case *array.LargeString:
		return appendEscaped(dst, a.Value(r)), nil
	case *array.Binary:
		return appendEscaped(dst, a.Value(r)), nil
	case *array.LargeBinary:
		return appendEscaped(dst, a.Value(r)), nil
	}
	return dst, fmt.Errorf("a grain column of Arrow type %s has no order", arr.DataType())
}

// appendEscaped writes text or bytes so that a shorter value that begins a
// longer one sorts first: each 0 byte is written 0 0xFF, and the value
// ends with 0 0.
func appendEscaped[T string | []byte](dst []byte, v T) []byte {
	for i := range len(v) {
		if v[i] == 0 {
			dst = append(dst, 0, 0xFF)
			continue
		}
		dst = append(dst, v[i])
	}
	return append(dst, 0, 0)
}
