package contract_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
)

// column builds a one-row arrow column holding v.
func column(t *testing.T, typ arrow.DataType, v any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, typ)
	defer b.Release()
	switch b := b.(type) {
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(v.(int64)))
	case *array.Date32Builder:
		b.Append(arrow.Date32FromTime(v.(time.Time)))
	case *array.Time64Builder:
		b.Append(arrow.Time64(v.(time.Duration).Microseconds()))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	default:
		t.Fatalf("no builder for %s", typ)
	}
	return b.NewArray()
}

func valueOf(t *testing.T, p contract.Partitioner, arr arrow.Array) string {
	t.Helper()
	f, err := p.ValueFunc(arr)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := f(0)
	if !ok {
		t.Fatal("null")
	}
	return v
}

// TestBucketSpecVectors: a bucket is Iceberg's: the spec's appendix gives
// the 32-bit murmur3 hash of one value of each type, and bucket[N] is
// (hash & MaxInt32) mod N; with N = MaxInt32 the bucket is the hash's low
// 31 bits, so each vector is checked whole.
func TestBucketSpecVectors(t *testing.T) {
	utc := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	stamp := time.Date(2017, 11, 16, 22, 31, 8, 0, time.UTC)
	for _, tc := range []struct {
		name string
		ice  iceberg.Type
		arr  arrow.DataType
		v    any
		hash int32
	}{
		{"int 34", iceberg.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32, int32(34), 2017239379},
		{"long 34", iceberg.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, int64(34), 2017239379},
		{"decimal(9,2) 14.20", iceberg.DecimalTypeOf(9, 2), &arrow.Decimal128Type{Precision: 9, Scale: 2}, int64(1420), -500754589},
		{"date 2017-11-16", iceberg.PrimitiveTypes.Date, arrow.FixedWidthTypes.Date32, time.Date(2017, 11, 16, 0, 0, 0, 0, time.UTC), -653330422},
		{"time 22:31:08", iceberg.PrimitiveTypes.Time, arrow.FixedWidthTypes.Time64us, 22*time.Hour + 31*time.Minute + 8*time.Second, -662762989},
		{"timestamp 2017-11-16T22:31:08", iceberg.PrimitiveTypes.Timestamp, &arrow.TimestampType{Unit: arrow.Microsecond}, stamp, -2047944441},
		{"timestamptz 2017-11-16T14:31:08-08:00", iceberg.PrimitiveTypes.TimestampTz, utc, stamp, -2047944441},
		{"string iceberg", iceberg.PrimitiveTypes.String, arrow.BinaryTypes.String, "iceberg", 1210000089},
		{"binary 00010203", iceberg.PrimitiveTypes.Binary, arrow.BinaryTypes.Binary, []byte{0, 1, 2, 3}, -188683207},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := contract.NewPartitioner(0, "c", tc.ice, "bucket[2147483647]")
			if err != nil {
				t.Fatal(err)
			}
			arr := column(t, tc.arr, tc.v)
			defer arr.Release()
			want := int64(tc.hash) & math.MaxInt32
			if got := valueOf(t, p, arr); got != itoa(want) {
				t.Errorf("bucket of %s = %s, want %d (the spec's hash %d)", tc.name, got, want, tc.hash)
			}
			// And the bucket of 16 that a table of 16 buckets records.
			p16, _ := contract.NewPartitioner(0, "c", tc.ice, "bucket[16]")
			if got := valueOf(t, p16, arr); got != itoa(want%16) {
				t.Errorf("bucket[16] of %s = %s, want %d", tc.name, got, want%16)
			}
		})
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestTruncateSpecVectors: the spec's appendix values of truncate[W].
func TestTruncateSpecVectors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ice   iceberg.Type
		arr   arrow.DataType
		width int
		v     any
		want  string
	}{
		{"int 1", iceberg.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32, 10, int32(1), "0"},
		{"int -1", iceberg.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32, 10, int32(-1), "-10"},
		{"long 1", iceberg.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, 10, int64(1), "0"},
		{"long -1", iceberg.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, 10, int64(-1), "-10"},
		{"decimal 10.65", iceberg.DecimalTypeOf(9, 2), &arrow.Decimal128Type{Precision: 9, Scale: 2}, 10, int64(1065), "10.60"},
		{"string iceberg", iceberg.PrimitiveTypes.String, arrow.BinaryTypes.String, 3, "iceberg", "ice"},
		{"binary 01020304", iceberg.PrimitiveTypes.Binary, arrow.BinaryTypes.Binary, 3, []byte{1, 2, 3, 4}, "AQID"},
		{"string of code points", iceberg.PrimitiveTypes.String, arrow.BinaryTypes.String, 2, "äöü", "äö"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := contract.NewPartitioner(0, "c", tc.ice, "truncate["+itoa(int64(tc.width))+"]")
			if err != nil {
				t.Fatal(err)
			}
			arr := column(t, tc.arr, tc.v)
			defer arr.Release()
			if got := valueOf(t, p, arr); got != tc.want {
				t.Errorf("truncate[%d] of %s = %q, want %q", tc.width, tc.name, got, tc.want)
			}
			if err := p.ParseValue(tc.want); err != nil {
				t.Errorf("the value %q a row gives is refused as a selector: %v", tc.want, err)
			}
		})
	}
}

// TestTransformSelectors: selectors name the source column and are checked
// against the transform: buckets as bucket:B within [0, N), truncated
// integers as multiples of W (a range steps by W), truncated strings no
// longer than W, identity values in Iceberg's own text of them.
func TestTransformSelectors(t *testing.T) {
	bucket, _ := contract.NewPartitioner(0, "user_id", iceberg.PrimitiveTypes.Int64, "bucket[16]")
	truncInt, _ := contract.NewPartitioner(0, "n", iceberg.PrimitiveTypes.Int32, "truncate[10]")
	truncStr, _ := contract.NewPartitioner(0, "sku", iceberg.PrimitiveTypes.String, "truncate[4]")
	stamp, _ := contract.NewPartitioner(0, "ts", iceberg.PrimitiveTypes.TimestampTz, "identity")
	local, _ := contract.NewPartitioner(0, "ts", iceberg.PrimitiveTypes.Timestamp, "identity")
	flag, _ := contract.NewPartitioner(0, "ok", iceberg.PrimitiveTypes.Bool, "identity")
	dec, _ := contract.NewPartitioner(0, "price", iceberg.DecimalTypeOf(9, 2), "identity")
	bucketStr, _ := contract.NewPartitioner(0, "sku", iceberg.PrimitiveTypes.String, "bucket[4]")
	// Fields named as their folders are (user_id_bucket=3, sku_trunc=AB).
	bucketField, truncField := bucket, truncStr
	bucketField.Field, truncField.Field = "user_id_bucket", "sku_trunc"
	for _, tc := range []struct {
		p    contract.Partitioner
		sel  string
		want string // values joined by |, or the error's text
	}{
		{bucket, "user_id=bucket:0..3", "0|1|2|3"},
		{bucket, "user_id=bucket:15,2", "15|2"},
		{bucket, "user_id=bucket:16", "does not fit"},
		{bucket, "user_id=3", "write buckets as bucket:B"},
		{bucket, "user_id=bucket:03", "does not fit"},
		{bucketStr, "sku=bucket:0..3", "0|1|2|3"},
		{bucketField, "user_id_bucket=0..2", "0|1|2"},
		{bucketField, "user_id=bucket:3", "3"},
		{bucketField, "user_id=3", "write buckets as bucket:B"},
		{truncField, "sku_trunc=AB", "AB"},
		{truncStr, "sku_trunc=AB", "partitioned by sku"},
		{truncInt, "n=-10..20", "-10|0|10|20"},
		{truncInt, "n=5", "not a value truncate[10] gives"},
		{truncStr, "sku=ABCD,AB", "AB|ABCD"},
		{truncStr, "sku=ABCDE", "not a value truncate[4] gives"},
		{stamp, "ts=2026-01-31T05:00:00+00:00", "2026-01-31T05:00:00+00:00"},
		{stamp, "ts=2026-01-31T05:00:00Z", "does not fit"},
		{stamp, "ts=2026-01-31T05:00:00.250000+00:00", "does not fit"},
		{stamp, "ts=2026-01-31T05:00:00.25+00:00", "2026-01-31T05:00:00.25+00:00"},
		{local, "ts=2026-01-31T05:00:00", "2026-01-31T05:00:00"},
		{local, "ts=2026-01-31T05:00:00+00:00", "does not fit"},
		{flag, "ok=true,false", "false|true"},
		{flag, "ok=1", "does not fit"},
		{dec, "price=12.30", "12.30"},
		{dec, "price=12.3", "does not fit"},
		{dec, "price=-0.05", "-0.05"},
	} {
		got, err := tc.p.ParseSelector(tc.sel)
		text := strings.Join(got, "|")
		if err != nil {
			text = err.Error()
		}
		if !strings.Contains(text, tc.want) {
			t.Errorf("%s (%s): got %q, want %q", tc.sel, tc.p.Transform, text, tc.want)
		}
	}
	if k := bucket.Key("3"); k != "user_id=bucket:3" {
		t.Errorf("a bucket's key is %q", k)
	}
}

// TestRawRoundTrips: the value a manifest records for a partition reads
// back as the same text (the check every staged file passes at commit).
func TestRawRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		ice       iceberg.Type
		transform string
		value     string
	}{
		{iceberg.PrimitiveTypes.Int64, "bucket[16]", "7"},
		{iceberg.PrimitiveTypes.String, "truncate[4]", "ABCD"},
		{iceberg.PrimitiveTypes.TimestampTz, "identity", "2026-01-31T05:00:00.25+00:00"},
		{iceberg.PrimitiveTypes.Bool, "identity", "false"},
		{iceberg.DecimalTypeOf(38, 4), "identity", "-12345678901234567890123456789012.3456"},
		{iceberg.PrimitiveTypes.Date, "day", "2026-01-31"},
		{iceberg.PrimitiveTypes.TimestampTz, "month", "1969-12"},
		{iceberg.PrimitiveTypes.TimestampTz, "hour", "2026-01-31-05"},
		{iceberg.PrimitiveTypes.Date, "year", "2026"},
	} {
		p, err := contract.NewPartitioner(0, "c", tc.ice, tc.transform)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := p.Raw(tc.value)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.transform, tc.value, err)
		}
		tr, _ := iceberg.ParseTransform(tc.transform)
		if got := tr.ToHumanStrType(tc.ice, raw); tc.transform != "identity" && !strings.HasPrefix(tc.transform, "truncate") && got != tc.value {
			// Iceberg's own text of the raw value is the same, where
			// Iceberg has one text for it.
			t.Errorf("%s %s: raw %v reads as %q in Iceberg", tc.transform, tc.value, raw, got)
		}
	}
}
