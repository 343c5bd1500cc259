package contract_test

import (
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
)

// TestHourAndYear: an hour partition's value is Iceberg's own
// (2026-01-31-05), floored for times before 1970 too; a year's is YYYY;
// ranges step by the transform; hour applies to timestamps only.
func TestHourAndYear(t *testing.T) {
	hour, err := contract.NewPartitioner(0, "ts", iceberg.PrimitiveTypes.TimestampTz, "hour")
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	defer b.Release()
	for _, s := range []string{"2026-01-31T05:59:59.999999Z", "2026-01-31T06:00:00Z", "1969-12-31T23:30:00Z"} {
		tm, _ := time.Parse(time.RFC3339Nano, s)
		b.Append(arrow.Timestamp(tm.UnixMicro()))
	}
	arr := b.NewArray()
	defer arr.Release()
	val, err := hour.ValueFunc(arr)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range arr.Len() {
		v, _ := val(i)
		got = append(got, v)
	}
	if want := []string{"2026-01-31-05", "2026-01-31-06", "1969-12-31-23"}; !slices.Equal(got, want) {
		t.Errorf("hour values %v, want %v", got, want)
	}
	if r, err := hour.Range("2026-01-31-22", "2026-02-01-01"); err != nil || !slices.Equal(r, []string{"2026-01-31-22", "2026-01-31-23", "2026-02-01-00", "2026-02-01-01"}) {
		t.Errorf("hour range %v, %v", r, err)
	}
	if err := hour.ParseValue("2026-01-31"); err == nil {
		t.Error("a day taken as an hour")
	}
	year, err := contract.NewPartitioner(0, "d", iceberg.PrimitiveTypes.Date, "year")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := year.Range("2024", "2026"); err != nil || !slices.Equal(r, []string{"2024", "2025", "2026"}) {
		t.Errorf("year range %v, %v", r, err)
	}
	if _, err := contract.NewPartitioner(0, "d", iceberg.PrimitiveTypes.Date, "hour"); err == nil {
		t.Error("hour of a date accepted")
	}
}
