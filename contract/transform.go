package contract

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// The transforms beyond the calendar and the identity of a date, string or
// integer (bucket, truncate, identity on the other primitive types) are
// computed here the one way: a row's value as iceberg-go holds it
// (sourceValues), the transform iceberg-go applies (apply: its murmur3
// bucket and its truncate), and one text for the result (human), used for
// rows and for the partition values a manifest records alike, so the two
// can never disagree.

// timestampLayout is Iceberg's own text of a timestamp partition value.
const timestampLayout = "2006-01-02T15:04:05.999999"

// generic reports whether p's values are made by the path in this file.
func (p Partitioner) generic() bool {
	switch p.tr.(type) {
	case iceberg.BucketTransform, iceberg.TruncateTransform:
		return true
	case iceberg.IdentityTransform:
		switch p.Type.(type) {
		case iceberg.DateType, iceberg.StringType, iceberg.Int32Type, iceberg.Int64Type:
			return false
		}
		return true
	}
	return false
}

// bucketCount is the N of bucket[N], or 0.
func (p Partitioner) bucketCount() int {
	if b, ok := p.tr.(iceberg.BucketTransform); ok {
		return b.NumBuckets
	}
	return 0
}

// truncateWidth is the W of truncate[W], or 0.
func (p Partitioner) truncateWidth() int {
	if t, ok := p.tr.(iceberg.TruncateTransform); ok {
		return t.Width
	}
	return 0
}

// sourceValues returns each row's value as iceberg-go holds a value of the
// column's type, nil for a null.
func sourceValues(arr arrow.Array) (func(row int) any, error) {
	var v func(row int) any
	switch a := arr.(type) {
	case *array.Boolean:
		v = func(r int) any { return a.Value(r) }
	case *array.Int32:
		v = func(r int) any { return a.Value(r) }
	case *array.Int64:
		v = func(r int) any { return a.Value(r) }
	case *array.Float32:
		v = func(r int) any { return a.Value(r) }
	case *array.Float64:
		v = func(r int) any { return a.Value(r) }
	case *array.Date32:
		v = func(r int) any { return iceberg.Date(a.Value(r)) }
	case *array.Time64:
		per := int64(a.DataType().(*arrow.Time64Type).Unit.Multiplier() / time.Microsecond)
		if per == 0 {
			return nil, fmt.Errorf("a time column in nanoseconds cannot be partitioned by its value exactly")
		}
		v = func(r int) any { return iceberg.Time(int64(a.Value(r)) * per) }
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		if unit == arrow.Nanosecond {
			return nil, fmt.Errorf("a timestamp column in nanoseconds cannot be partitioned by its value exactly")
		}
		per := int64(unit.Multiplier() / time.Microsecond) // microseconds a unit
		v = func(r int) any { return iceberg.Timestamp(int64(a.Value(r)) * per) }
	case *array.Decimal128:
		scale := int(a.DataType().(*arrow.Decimal128Type).Scale)
		v = func(r int) any { return iceberg.Decimal{Val: a.Value(r), Scale: scale} }
	case *array.String:
		v = func(r int) any { return a.Value(r) }
	case *array.Binary:
		v = func(r int) any { return a.Value(r) }
	case *array.FixedSizeBinary:
		v = func(r int) any { return a.Value(r) }
	case *extensions.UUIDArray:
		v = func(r int) any { return a.Value(r) }
	default:
		return nil, fmt.Errorf("a column of arrow type %s cannot be partitioned by lakeswap", arr.DataType())
	}
	return func(r int) any {
		if arr.IsNull(r) {
			return nil
		}
		return v(r)
	}, nil
}

// apply is the partition transform on a value as sourceValues gives it.
func (p Partitioner) apply() (func(any) any, error) {
	switch t := p.tr.(type) {
	case iceberg.BucketTransform:
		hash := t.Transformer(p.Type)
		return func(v any) any {
			if b := hash(v); b.Valid {
				return b.Val
			}
			return nil
		}, nil
	case iceberg.TruncateTransform:
		return t.Transformer(p.Type)
	}
	return func(v any) any { return v }, nil
}

// human is the text of a partition value: Iceberg's own text of it (a
// bucket's number, a truncated or identity value as written, a timestamp
// as 2026-01-31T05:00:00 with +00:00 for one with a zone), a decimal with
// every digit of its scale, bytes as base64. v is what apply gives or
// what a manifest records.
func (p Partitioner) human(v any) string {
	if v == nil {
		return NullPartition
	}
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		switch p.Type.(type) {
		case iceberg.TimestampType, iceberg.TimestampTzType:
			return p.human(iceberg.Timestamp(x))
		}
		return strconv.FormatInt(x, 10)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case uuid.UUID:
		return x.String()
	case iceberg.Date:
		return x.ToTime().Format(time.DateOnly)
	case iceberg.Time:
		return time.UnixMicro(int64(x)).UTC().Format("15:04:05.999999")
	case iceberg.Timestamp:
		s := x.ToTime().Format(timestampLayout)
		if _, tz := p.Type.(iceberg.TimestampTzType); tz {
			s += "+00:00"
		}
		return s
	case iceberg.Decimal:
		return decimalText(x.Val.BigInt(), x.Scale)
	case iceberg.DecimalLiteral:
		return decimalText(x.Val.BigInt(), x.Scale)
	case *big.Rat:
		scale := 0
		if d, ok := p.Type.(iceberg.DecimalType); ok {
			scale = d.Scale()
		}
		n := new(big.Int).Mul(x.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		return decimalText(n.Quo(n, x.Denom()), scale)
	}
	return fmt.Sprint(v)
}

// decimalText writes an unscaled value at scale with every digit of the
// scale: 1230 at scale 2 is 12.30, -5 is -0.05.
func decimalText(unscaled *big.Int, scale int) string {
	neg := unscaled.Sign() < 0
	digits := new(big.Int).Abs(unscaled).String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// parseGeneric reads a partition value written as human writes it and
// returns it as the value the table's manifests record. It refuses a text
// human would not have written for any row: another spelling of a value,
// a bucket out of range, a value truncate would have cut.
func (p Partitioner) parseGeneric(value string) (any, error) {
	if n := p.bucketCount(); n > 0 {
		b, err := strconv.ParseInt(value, 10, 32)
		if err != nil || b < 0 || b >= int64(n) || strconv.FormatInt(b, 10) != value {
			return nil, p.want(value)
		}
		return int32(b), nil
	}
	var v any
	switch typ := p.Type.(type) {
	case iceberg.BooleanType:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return nil, p.want(value)
		}
		v = b
	case iceberg.Int32Type:
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil {
			return nil, p.want(value)
		}
		v = int32(n)
	case iceberg.Int64Type:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return nil, p.want(value)
		}
		v = n
	case iceberg.Float32Type:
		f, err := strconv.ParseFloat(value, 32)
		if err != nil {
			return nil, p.want(value)
		}
		v = float32(f)
	case iceberg.Float64Type:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, p.want(value)
		}
		v = f
	case iceberg.StringType:
		v = value
	case iceberg.BinaryType:
		b, err := base64.StdEncoding.DecodeString(value)
		if err != nil {
			return nil, p.want(value)
		}
		v = b
	case iceberg.FixedType:
		b, err := base64.StdEncoding.DecodeString(value)
		if err != nil || len(b) != typ.Len() {
			return nil, p.want(value)
		}
		v = b
	case iceberg.UUIDType:
		u, err := uuid.Parse(value)
		if err != nil {
			return nil, p.want(value)
		}
		v = u
	case iceberg.DateType:
		t, err := time.Parse(time.DateOnly, value)
		if err != nil {
			return nil, p.want(value)
		}
		v = iceberg.Date(t.Unix() / 86400)
	case iceberg.TimeType:
		t, err := time.Parse("15:04:05.999999", value)
		if err != nil {
			return nil, p.want(value)
		}
		v = iceberg.Time(t.Sub(t.Truncate(24 * time.Hour)).Microseconds())
	case iceberg.TimestampType, iceberg.TimestampTzType:
		text := value
		if _, tz := typ.(iceberg.TimestampTzType); tz {
			var ok bool
			if text, ok = strings.CutSuffix(value, "+00:00"); !ok {
				return nil, p.want(value)
			}
		}
		t, err := time.Parse(timestampLayout, text)
		if err != nil {
			return nil, p.want(value)
		}
		v = iceberg.Timestamp(t.UnixMicro())
	case iceberg.DecimalType:
		d, err := parseDecimal(value, typ)
		if err != nil {
			return nil, p.want(value)
		}
		v = d
	default:
		return nil, fmt.Errorf("partition column %s has type %s, which lakeswap does not partition by", p.Name, p.Type)
	}
	if p.human(v) != value {
		return nil, p.want(value)
	}
	if w := p.truncateWidth(); w > 0 {
		cut, err := p.apply()
		if err != nil {
			return nil, err
		}
		if c := cut(v); p.human(c) != value {
			return nil, fmt.Errorf("partition value %q of %s is not a value truncate[%d] gives (that would be %q); %s", value, p.Name, w, p.human(c), p.Form())
		}
	}
	return v, nil
}

// parseDecimal reads a decimal written with exactly its type's scale.
func parseDecimal(s string, t iceberg.DecimalType) (iceberg.Decimal, error) {
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if len(frac) != t.Scale() || whole == "" {
		return iceberg.Decimal{}, fmt.Errorf("want %d digits after the point", t.Scale())
	}
	n, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok || len(whole+frac) > 38 {
		return iceberg.Decimal{}, fmt.Errorf("not a decimal")
	}
	if neg {
		n.Neg(n)
	}
	return iceberg.Decimal{Val: decimal128.FromBigInt(n), Scale: t.Scale()}, nil
}

// Raw is the partition value a data file of the partition value records
// in the table's manifests, as iceberg-go takes it.
func (p Partitioner) Raw(value string) (any, error) {
	if p.generic() {
		return p.parseGeneric(value)
	}
	if layout, _, ok := p.dated(); ok {
		t, err := time.Parse(layout, value)
		if err != nil {
			return nil, p.want(value)
		}
		switch p.tr.(type) {
		case iceberg.YearTransform:
			return int32(t.Year() - 1970), nil
		case iceberg.MonthTransform:
			return int32((t.Year()-1970)*12 + int(t.Month()) - 1), nil
		case iceberg.HourTransform:
			return int32(t.Unix() / 3600), nil
		}
		return iceberg.Date(t.Unix() / 86400), nil
	}
	switch p.Type.(type) {
	case iceberg.Int32Type:
		n, err := strconv.ParseInt(value, 10, 32)
		return int32(n), err
	case iceberg.Int64Type:
		return strconv.ParseInt(value, 10, 64)
	}
	return value, nil
}

// genericValueFunc gives each row's partition value by the path above,
// remembering the text of the last few results (a bucket or a truncated
// prefix repeats across rows).
func (p Partitioner) genericValueFunc(arr arrow.Array) (func(row int) string, error) {
	src, err := sourceValues(arr)
	if err != nil {
		return nil, fmt.Errorf("partition column %s: %w", p.Name, err)
	}
	apply, err := p.apply()
	if err != nil {
		return nil, fmt.Errorf("partition column %s: %w", p.Name, err)
	}
	if p.bucketCount() > 0 {
		return memo(func(row int) int64 { return int64(apply(src(row)).(int32)) }, func(b int64) string { return strconv.FormatInt(b, 10) }), nil
	}
	return func(row int) string { return p.human(apply(src(row))) }, nil
}
