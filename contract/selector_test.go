package contract_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
)

func partitioner(t testing.TB, typ iceberg.Type, transform string) contract.Partitioner {
	t.Helper()
	p, err := contract.NewPartitioner(0, "col", typ, transform)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParseSelector: every value is checked against the column's type and
// transform, ranges expand on dates, months and integers, and a string
// column's items are taken as written (quoted where they hold a comma or
// are empty).
func TestParseSelector(t *testing.T) {
	date := partitioner(t, iceberg.PrimitiveTypes.Date, "identity")
	month := partitioner(t, iceberg.PrimitiveTypes.TimestampTz, "month")
	day := partitioner(t, iceberg.PrimitiveTypes.Timestamp, "day")
	long := partitioner(t, iceberg.PrimitiveTypes.Int64, "identity")
	integer := partitioner(t, iceberg.PrimitiveTypes.Int32, "identity")
	str := partitioner(t, iceberg.PrimitiveTypes.String, "identity")
	for _, tc := range []struct {
		p    contract.Partitioner
		sel  string
		want []string // nil: refused
		msg  string   // the refusal names this
	}{
		{date, "col=2026-01-30..2026-02-01", []string{"2026-01-30", "2026-01-31", "2026-02-01"}, ""},
		// The short ends history writes read back.
		{date, "col=2026-03-04..05", []string{"2026-03-04", "2026-03-05"}, ""},
		{date, "col=2026-01-31..02-01", []string{"2026-01-31", "2026-02-01"}, ""},
		{day, "col=2026-03-04..05", []string{"2026-03-04", "2026-03-05"}, ""},
		{month, "col=2025-11..12", []string{"2025-11", "2025-12"}, ""},
		{long, "col=-3..1", []string{"-1", "-2", "-3", "0", "1"}, ""}, // a minus is no short end
		{date, "col=2026-03-04..5", nil, "YYYY-MM-DD"},
		{date, "col=2026-01-02,2026-01-01,2026-01-02", []string{"2026-01-01", "2026-01-02"}, ""},
		{date, "col=2026-13-01", nil, "YYYY-MM-DD"},
		{date, "col=2026/01/01", nil, "YYYY-MM-DD"},
		{date, "col=2026-1-1", nil, "YYYY-MM-DD"},
		{date, "col=2026-01-01,", nil, "stray comma"},
		{date, "col=,2026-01-01", nil, "stray comma"},
		{date, "col=", nil, "stray comma"},
		{date, "col=abc", nil, "col is a date column"},
		{date, "col=2026-01-02..2026-01-01", nil, "ends before it starts"},
		{date, "col=2026-01-01..", nil, "range end"},
		{date, "other=2026-01-01", nil, "partitioned by col"},
		{date, "2026-01-01", nil, "want col="},
		{month, "col=2025-12..2026-02", []string{"2025-12", "2026-01", "2026-02"}, ""},
		{month, "col=2026-01-01", nil, "YYYY-MM"},
		{day, "col=2026-01-01", []string{"2026-01-01"}, ""},
		{long, "col=-2..1", []string{"-1", "-2", "0", "1"}, ""},
		{long, "col=9223372036854775807", []string{"9223372036854775807"}, ""},
		{long, "col=9223372036854775808", nil, "whole number"},
		{long, "col=007", nil, "leading zeros"},
		{long, "col=+7", nil, "plus sign"},
		{long, "col=0..99999,100000..199999", nil, "more than 100000"},
		{long, "col=1..1000000", nil, "more than 100000"},
		{long, "col=2026-01-01..2026-01-02", nil, "whole number"},
		{integer, "col=99999999999", nil, "col is an int column"},
		{integer, "col=abc", nil, "col is an int column"},
		{str, `col=eu,us`, []string{"eu", "us"}, ""},
		{str, `col="a,b",""`, []string{"", "a,b"}, ""},
		{str, `col="say ""hi""",x`, []string{"say \"hi\"", "x"}, ""},
		{str, `col=..,a..b,C#`, []string{"..", "C#", "a..b"}, ""},
		{str, `col=eu,,us`, nil, "stray comma"},
		{str, `col="eu`, nil, "not closed"},
		{str, `col="eu"x`, nil, "followed by a comma"},
		{str, "col=\xff", nil, "UTF-8"},
	} {
		got, err := tc.p.ParseSelector(tc.sel)
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s %q: %v, %v; want a refusal saying %q", tc.p.Type, tc.sel, got, err, tc.msg)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s %q: %q, %v; want %q", tc.p.Type, tc.sel, got, err, tc.want)
		}
	}
}

// TestSelectorCountsDistinctValues: the cap on partitions counts each once.
func TestSelectorCountsDistinctValues(t *testing.T) {
	p := partitioner(t, iceberg.PrimitiveTypes.Int64, "identity")
	got, err := p.ParseSelector("col=1..60000,1..60000,5")
	if err != nil || len(got) != 60000 {
		t.Errorf("%d values, %v; want 60000", len(got), err)
	}
}

// FuzzParseSelector: any selector is refused or gives sorted, distinct
// values that each parse as values of the column.
func FuzzParseSelector(f *testing.F) {
	ps := []contract.Partitioner{
		partitioner(f, iceberg.PrimitiveTypes.Date, "identity"),
		partitioner(f, iceberg.PrimitiveTypes.TimestampTz, "month"),
		partitioner(f, iceberg.PrimitiveTypes.Int64, "identity"),
		partitioner(f, iceberg.PrimitiveTypes.Int32, "identity"),
		partitioner(f, iceberg.PrimitiveTypes.String, "identity"),
	}
	f.Add(uint8(0), "col=2026-01-01..2026-01-31")
	f.Add(uint8(1), "col=2026-01..2026-03,2025-12")
	f.Add(uint8(2), "col=-5..5,7")
	f.Add(uint8(4), `col="a,b","",c`)
	f.Fuzz(func(t *testing.T, which uint8, sel string) {
		p := ps[int(which)%len(ps)]
		values, err := p.ParseSelector(sel)
		if err != nil {
			return
		}
		if len(values) == 0 {
			t.Fatalf("%q: no values and no error", sel)
		}
		if !slices.IsSorted(values) || len(slices.Compact(slices.Clone(values))) != len(values) {
			t.Fatalf("%q: values %q not sorted and distinct", sel, values)
		}
		for _, v := range values {
			if err := p.ParseValue(v); err != nil {
				t.Fatalf("%q gave %q, which does not parse: %v", sel, v, err)
			}
		}
	})
}

// TestEmptyBinaryDeclarable: b” of an identity(binary) partition is
// declared as the empty value, quoted as a string's is; a value and the
// empty one together; an unquoted empty item stays a stray comma.
func TestEmptyBinaryDeclarable(t *testing.T) {
	p := partitioner(t, iceberg.PrimitiveTypes.Binary, "identity")
	for sel, want := range map[string][]string{`col=""`: {""}, `col="",eA==`: {"", "eA=="}, `col=eA==,""`: {"", "eA=="}} {
		got, err := p.ParseSelector(sel)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q, %v; want %q", sel, got, err, want)
		}
	}
	if _, err := p.ParseSelector("col=eA==,"); err == nil {
		t.Error("a stray comma after a binary value was taken for the empty value")
	}
	if _, err := partitioner(t, iceberg.PrimitiveTypes.Binary, "bucket[4]").ParseSelector(`col=""`); err == nil {
		t.Error(`a bucketed binary column took "" for a bucket`)
	}
}
