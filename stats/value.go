package stats

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// value is one column value in a domain where all of a column's values
// compare: int64 (integers, dates, times, timestamps, booleans), float64
// (float and double), string (bytes of strings, binaries, fixed, uuid) or
// decimal128.Num (a decimal's unscaled value).
type value = any

// compare orders two values of one domain; -0.0 orders below 0.0.
func compare(a, b value) int {
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		case x == 0 && y == 0:
			sx, sy := math.Signbit(x), math.Signbit(y)
			switch {
			case sx && !sy:
				return -1
			case !sx && sy:
				return 1
			}
		}
		return 0
	case string:
		return bytes.Compare([]byte(x), []byte(b.(string)))
	case decimal128.Num:
		return x.Cmp(b.(decimal128.Num))
	}
	panic(fmt.Sprintf("stats: no order for %T", a))
}

// isNaN says whether v is a float NaN, which no bound holds.
func isNaN(v value) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

// fromLiteral is an Iceberg value (a bound decoded, or a partition value
// as a manifest entry holds it) in its domain; ok is false for a null or a
// type lakeswap does not order.
func fromLiteral(v any) (value, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case iceberg.Literal:
		return fromLiteral(x.Any())
	case bool:
		if x {
			return int64(1), true
		}
		return int64(0), true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case iceberg.Date:
		return int64(x), true
	case iceberg.Time:
		return int64(x), true
	case iceberg.Timestamp:
		return int64(x), true
	case iceberg.TimestampNano:
		return int64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case string:
		return x, true
	case []byte:
		return string(x), true
	case uuid.UUID:
		return string(x[:]), true
	case iceberg.Decimal:
		return decimal128.Num(x.Val), true
	case decimal128.Num:
		return x, true
	}
	return nil, false
}

// fromBound decodes a bound as Iceberg's single-value serialization writes
// it for a column of type typ.
func fromBound(typ iceberg.Type, b []byte) (value, bool) {
	lit, err := iceberg.LiteralFromBytes(typ, b)
	if err != nil {
		return nil, false
	}
	return fromLiteral(lit)
}

// bound is v as a bound of a column of type typ: Iceberg's single-value
// serialization.
func bound(typ iceberg.Type, v value) ([]byte, error) {
	switch t := typ.(type) {
	case iceberg.BooleanType:
		return iceberg.NewLiteral(v.(int64) != 0).MarshalBinary()
	case iceberg.Int32Type:
		return iceberg.NewLiteral(int32(v.(int64))).MarshalBinary()
	case iceberg.Int64Type:
		return iceberg.NewLiteral(v.(int64)).MarshalBinary()
	case iceberg.DateType:
		return iceberg.NewLiteral(iceberg.Date(v.(int64))).MarshalBinary()
	case iceberg.TimeType:
		return iceberg.NewLiteral(iceberg.Time(v.(int64))).MarshalBinary()
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return iceberg.NewLiteral(iceberg.Timestamp(v.(int64))).MarshalBinary()
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return iceberg.NewLiteral(iceberg.TimestampNano(v.(int64))).MarshalBinary()
	case iceberg.Float32Type:
		return iceberg.NewLiteral(float32(v.(float64))).MarshalBinary()
	case iceberg.Float64Type:
		return iceberg.NewLiteral(v.(float64)).MarshalBinary()
	case iceberg.StringType, iceberg.BinaryType, iceberg.FixedType, iceberg.UUIDType:
		return []byte(v.(string)), nil
	case iceberg.DecimalType:
		return iceberg.NewLiteral(iceberg.Decimal{Val: v.(decimal128.Num), Scale: t.Scale()}).MarshalBinary()
	}
	return nil, fmt.Errorf("no bound of type %s", typ)
}

// display is v as a person reads a value of a column of type typ.
func display(typ iceberg.Type, v value) string {
	const max = 40
	switch t := typ.(type) {
	case iceberg.StringType:
		s := v.(string)
		if utf8.RuneCountInString(s) > max {
			r := []rune(s)
			s = string(r[:max]) + "..."
		}
		return strconv.Quote(s)
	case iceberg.BinaryType, iceberg.FixedType:
		s := v.(string)
		if len(s) > max/2 {
			return "0x" + hex.EncodeToString([]byte(s[:max/2])) + "..."
		}
		return "0x" + hex.EncodeToString([]byte(s))
	case iceberg.UUIDType:
		if u, err := uuid.FromBytes([]byte(v.(string))); err == nil {
			return u.String()
		}
	case iceberg.DecimalType:
		return v.(decimal128.Num).ToString(int32(t.Scale()))
	case iceberg.BooleanType:
		return strconv.FormatBool(v.(int64) != 0)
	case iceberg.DateType:
		return iceberg.Date(v.(int64)).ToTime().Format("2006-01-02")
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return iceberg.Timestamp(v.(int64)).ToTime().UTC().Format("2006-01-02T15:04:05.999999Z")
	case iceberg.Float32Type, iceberg.Float64Type:
		f := v.(float64)
		if f == 0 && math.Signbit(f) {
			return "-0.0"
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// numFromBigEndian reads a decimal's unscaled value as Parquet and Iceberg
// store it in bytes: big-endian two's complement.
func numFromBigEndian(b []byte) decimal128.Num {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return decimal128.FromBigInt(n)
}

// WidenZeros widens a data file's zero bounds of float and double columns
// (a lower bound 0.0 becomes -0.0, an upper -0.0 becomes 0.0), returning
// new maps and whether any changed. Iceberg orders -0.0 below 0.0, while
// SQL finds -0.0 for "= 0.0": a file of -0.0 bounded by [-0.0, -0.0]
// would be skipped by a filter "x = 0.0" that matches its rows, and a
// file of 0.0 bounded by [0.0, 0.0] by "x = -0.0". Exact bounds, as Iceberg
// Java writes them, are right by Iceberg's order: the checks take them.
func WidenZeros(schema *iceberg.Schema, lower, upper map[int][]byte) (map[int][]byte, map[int][]byte, bool) {
	changed := false
	widen := func(bounds map[int][]byte, neg bool) map[int][]byte {
		out := make(map[int][]byte, len(bounds))
		for id, b := range bounds {
			out[id] = b
			f, ok := schema.FindFieldByID(id)
			if !ok {
				continue
			}
			switch f.Type.(type) {
			case iceberg.Float32Type, iceberg.Float64Type:
			default:
				continue
			}
			v, ok := fromBound(f.Type, b)
			if x, isF := v.(float64); !ok || !isF || x != 0 || math.Signbit(x) == neg {
				continue
			}
			zero := 0.0
			if neg {
				zero = math.Copysign(0, -1)
			}
			if nb, err := bound(f.Type, zero); err == nil {
				out[id], changed = nb, true
			}
		}
		return out
	}
	lo, hi := widen(lower, true), widen(upper, false)
	return lo, hi, changed
}
