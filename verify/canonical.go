package verify

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
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

// encoder appends the canonical encoding of one row's value to buf.
type encoder func(buf []byte, row int) []byte

// canonicalNaN bits: every NaN hashes alike, whatever its payload.
const (
	canonicalNaN32 uint32 = 0x7fc00000
	canonicalNaN64 uint64 = 0x7ff8000000000000
)

// newEncoder returns the encoder of an Arrow column holding values of the
// Iceberg type typ. It fails when the Arrow type cannot carry typ, so that a
// schema mismatch is reported rather than hashed.
func newEncoder(typ iceberg.Type, arr arrow.Array) (encoder, error) {
	withNull := func(enc encoder) encoder {
		if arr.NullN() == 0 {
			return enc
		}
		return func(buf []byte, row int) []byte {
			if arr.IsNull(row) {
				return append(buf, tagNull)
			}
			return enc(buf, row)
		}
	}
	mismatch := fmt.Errorf("arrow type %s cannot hold iceberg type %s", arr.DataType(), typ)

	switch typ.(type) {
	case iceberg.BooleanType:
		a, ok := arr.(*array.Boolean)
		if !ok {
			return nil, mismatch
		}
		return withNull(func(buf []byte, row int) []byte {
			if a.Value(row) {
				return append(buf, tagBool, 1)
			}
			return append(buf, tagBool, 0)
		}), nil
	case iceberg.Int32Type:
		a, ok := arr.(*array.Int32)
		if !ok {
			return nil, mismatch
		}
		return withNull(func(buf []byte, row int) []byte {
			return binary.BigEndian.AppendUint32(append(buf, tagInt), uint32(a.Value(row)))
		}), nil
	case iceberg.Int64Type:
		a, ok := arr.(*array.Int64)
		if !ok {
			return nil, mismatch
		}
		return withNull(func(buf []byte, row int) []byte {
			return binary.BigEndian.AppendUint64(append(buf, tagLong), uint64(a.Value(row)))
		}), nil
	case iceberg.Float32Type:
		a, ok := arr.(*array.Float32)
		if !ok {
			return nil, mismatch
		}
		return withNull(func(buf []byte, row int) []byte {
			v := a.Value(row)
			bits := math.Float32bits(v)
			if v != v {
				bits = canonicalNaN32
			}
			return binary.BigEndian.AppendUint32(append(buf, tagFloat), bits)
		}), nil
	case iceberg.Float64Type:
		a, ok := arr.(*array.Float64)
		if !ok {
			return nil, mismatch
		}
		return withNull(func(buf []byte, row int) []byte {
			v := a.Value(row)
			bits := math.Float64bits(v)
			if v != v {
				bits = canonicalNaN64
			}
			return binary.BigEndian.AppendUint64(append(buf, tagDouble), bits)
		}), nil
	case iceberg.StringType:
		switch a := arr.(type) {
		case *array.String:
			return withNull(func(buf []byte, row int) []byte { return appendBytes(buf, tagString, a.Value(row)) }), nil
		case *array.LargeString:
			return withNull(func(buf []byte, row int) []byte { return appendBytes(buf, tagString, a.Value(row)) }), nil
		}
		return nil, mismatch
	case iceberg.BinaryType:
		switch a := arr.(type) {
		case *array.Binary:
			return withNull(func(buf []byte, row int) []byte { return appendBytes(buf, tagBinary, a.Value(row)) }), nil
		case *array.LargeBinary:
			return withNull(func(buf []byte, row int) []byte { return appendBytes(buf, tagBinary, a.Value(row)) }), nil
		}
		return nil, mismatch
	case iceberg.DateType:
		a, ok := arr.(*array.Date32)
		if !ok {
			return nil, mismatch
		}
		return withNull(func(buf []byte, row int) []byte {
			return binary.BigEndian.AppendUint32(append(buf, tagDate), uint32(a.Value(row)))
		}), nil
	case iceberg.TimeType:
		a, ok := arr.(*array.Time64)
		if !ok {
			return nil, mismatch
		}
		unit := a.DataType().(*arrow.Time64Type).Unit
		return withNull(func(buf []byte, row int) []byte {
			us := int64(a.Value(row))
			if unit == arrow.Nanosecond {
				us /= 1000
			}
			return binary.BigEndian.AppendUint64(append(buf, tagTime), uint64(us))
		}), nil
	case iceberg.TimestampType, iceberg.TimestampTzType:
		a, ok := arr.(*array.Timestamp)
		if !ok {
			return nil, mismatch
		}
		tag := tagTimestamp
		if _, tz := typ.(iceberg.TimestampTzType); tz {
			tag = tagTimestampTz
		}
		toMicros := timestampToMicros(a.DataType().(*arrow.TimestampType).Unit)
		return withNull(func(buf []byte, row int) []byte {
			return binary.BigEndian.AppendUint64(append(buf, tag), uint64(toMicros(int64(a.Value(row)))))
		}), nil
	case iceberg.DecimalType:
		a, ok := arr.(*array.Decimal128)
		if !ok {
			return nil, mismatch
		}
		scale := byte(typ.(iceberg.DecimalType).Scale())
		return withNull(func(buf []byte, row int) []byte {
			v := a.Value(row)
			buf = append(buf, tagDecimal, scale)
			buf = binary.BigEndian.AppendUint64(buf, uint64(v.HighBits()))
			return binary.BigEndian.AppendUint64(buf, v.LowBits())
		}), nil
	}
	return nil, fmt.Errorf("iceberg type %s is not supported by fingerprint v1", typ)
}

func appendBytes[T string | []byte](buf []byte, tag byte, v T) []byte {
	buf = binary.BigEndian.AppendUint32(append(buf, tag), uint32(len(v)))
	return append(buf, v...)
}

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
