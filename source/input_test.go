package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestParseDecimalIsExact: a value the column holds exactly is read
// exactly, in any spelling; anything it would round or overflow is refused.
func TestParseDecimalIsExact(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // unscaled, or "" for a refusal
	}{
		{"1.25", "125"}, {"-1.25", "-125"}, {"+1.25", "125"}, {"1.250000", "125"}, {"1.2", "120"}, {"1", "100"},
		{".5", "50"}, {"5.", "500"}, {"0", "0"}, {"-0.00", "0"}, {"12345678.99", "1234567899"}, {"1.5e2", "15000"},
		{"125e-2", "125"}, {"0.00e5", "0"}, {"000001.10", "110"},
		{"1.005", ""}, {"0.001", ""}, {"123456789.00", ""}, {"1e8", ""}, {"1e999999", ""}, {"1e-999999", ""},
		{"", ""}, {".", ""}, {"1/3", ""}, {"0x10", ""}, {"1.2.3", ""}, {"NaN", ""}, {"1 ", ""}, {"e5", ""},
	} {
		got, err := parseDecimal(tc.in, 10, 2)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("parseDecimal(%q) = %s, want a refusal", tc.in, got.BigInt())
		case tc.want != "" && (err != nil || got.BigInt().String() != tc.want):
			t.Errorf("parseDecimal(%q) = %s, %v; want %s", tc.in, got.BigInt(), err, tc.want)
		}
	}
}

// TestParseTimestamp: a zone-less column takes the date and time as
// written and refuses an offset; a timestamptz column takes instants and
// refuses a value without one; nothing finer than the unit is truncated.
func TestParseTimestamp(t *testing.T) {
	local := &arrow.TimestampType{Unit: arrow.Microsecond}
	utc := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	const jan31 = int64(1769902200) * 1_000_000 // 2026-01-31T23:30:00 as written, or in UTC
	for _, tc := range []struct {
		in   string
		typ  *arrow.TimestampType
		want int64
		err  string
	}{
		{"2026-01-31T23:30:00", local, jan31, ""},
		{"2026-01-31 23:30:00", local, jan31, ""},
		{"2026-01-31T23:30:00.000001", local, jan31 + 1, ""},
		{"2026-01-31T23:30:00-05:00", local, 0, "has an offset"},
		{"2026-01-31T23:30:00Z", local, 0, "has an offset"},
		{"2026-01-31T23:30:00Z", utc, jan31, ""},
		{"2026-02-01T00:30:00+01:00", utc, jan31, ""},
		{"2026-01-31T18:30:00-05:00", utc, jan31, ""},
		{"2026-01-31T23:30:00", utc, 0, "has no offset"},
		{"2026-01-31T23:30:00.0000001Z", utc, 0, "finer than"},
		{"2026-01-31T23:30:00.0000001", local, 0, "finer than"},
		{"2026-01-31", local, 0, "not an ISO 8601"},
		{"yesterday", utc, 0, "not an ISO 8601"},
	} {
		got, err := parseTimestamp(tc.in, tc.typ)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseTimestamp(%q, %s) = %d, %v; want an error saying %q", tc.in, tc.typ, got, err, tc.err)
			}
			continue
		}
		if err != nil || int64(got) != tc.want {
			t.Errorf("parseTimestamp(%q, %s) = %d, %v; want %d", tc.in, tc.typ, got, err, tc.want)
		}
	}
}

// TestReadInputStopsWhenCancelled: a cancelled context stops a read at the
// next check, not at the end of the file.
func TestReadInputStopsWhenCancelled(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("day,id\n")
	const rows = 4 * inputBatchRows
	for i := range rows {
		fmt.Fprintf(&b, "2026-01-01,%d\n", i)
	}
	path := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "day", Type: arrow.FixedWidthTypes.Date32}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	read := int64(0)
	err := ReadInput(ctx, path, sc, func(b Batch) error {
		read += b.Rec.NumRows()
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || read != inputBatchRows {
		t.Errorf("read %d of %d rows, then %v; want one batch, then context.Canceled", read, rows, err)
	}
}

// TestLongNDJSONLine: a line over the limit is reported as itself, not as
// the line before it.
func TestLongNDJSONLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.ndjson")
	content := `{"day":"2026-01-01","id":1}` + "\n" + `{"day":"2026-01-01","id":2,"pad":"` + strings.Repeat("x", maxLine) + "\"}\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "day", Type: arrow.FixedWidthTypes.Date32}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	err := ReadInput(context.Background(), path, sc, func(Batch) error { return nil })
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 2 || !strings.Contains(err.Error(), "longer than 64 MiB") {
		t.Errorf("err = %v, want line 2 named as longer than 64 MiB", err)
	}
}

// TestNothingFinerIsDropped: digits past the ninth, which time.Parse drops,
// and floats that would become zero are refused too.
func TestNothingFinerIsDropped(t *testing.T) {
	utc := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	for _, in := range []string{"2026-01-31T23:30:00.0000000009Z", "2026-01-31T23:30:00.1234560009999Z", "2026-01-31T23:30:00.0000001Z", "2026-01-31T23:30:00,1234560001Z"} {
		if _, err := parseTimestamp(in, utc); err == nil || !strings.Contains(err.Error(), "finer than") {
			t.Errorf("parseTimestamp(%q) = %v, want a refusal", in, err)
		}
	}
	if _, err := parseTimestamp("2026-01-31T23:30:00.123456000000Z", utc); err != nil {
		t.Errorf("trailing zeros past the unit: %v", err)
	}
	for _, in := range []string{"1e-400", "0.1e-330", "0x1p-1100", "0x10"} {
		if _, err := parseFloat(in, 64); err == nil {
			t.Errorf("parseFloat(%q) accepted what would be stored as zero", in)
		}
	}
	for _, in := range []string{"0", "0.000", "-0e5", "1e-300"} {
		if _, err := parseFloat(in, 64); err != nil {
			t.Errorf("parseFloat(%q): %v", in, err)
		}
	}
}

func TestLoneSurrogate(t *testing.T) {
	for raw, lone := range map[string]bool{
		`"\ud800"`: true, `"\udc00"`: true, `"\ud800x"`: true, `"\ud800\u0041"`: true, `"\\ufffd \ud800"`: true,
		`"\ud83d\ude00"`: false, `"\\ud800"`: false, `"\ufffd"`: false, `"plain"`: false, `"\\\ud800"`: true, `"\u00e9"`: false,
	} {
		if got := loneSurrogate([]byte(raw)); got != lone {
			t.Errorf("loneSurrogate(%s) = %v, want %v", raw, got, lone)
		}
	}
}

// TestCSVLineBreaksInValues: a quoted value's LF line break is read as
// written, in a file with LF or CRLF line ends; a CRLF inside a value, which
// the CSV reader would turn into LF, is refused.
func TestCSVLineBreaksInValues(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	for _, tc := range []struct {
		name, in string
		want     []string // nil: refused
	}{
		{"LF file", "id,s\n1,\"a\nb\"\n2,c\n", []string{"a\nb", "c"}},
		{"CRLF file, LF in a value", "id,s\r\n1,\"a\nb\"\r\n2,c\r\n", []string{"a\nb", "c"}},
		{"lone CR elsewhere", "id,s\n1,\"x\ry\"\n2,\"a\nb\"\n", []string{"x\ry", "a\nb"}},
		{"CRLF in a value", "id,s\r\n1,c\r\n2,\"a\r\nb\"\r\n", nil},
		{"CRLF in a value of an LF file", "id,s\n1,\"a\r\nb\"\n", nil},
		{"CRLF in the last value, no line end", "id,s\n1,\"a\r\nb\"", nil},
	} {
		var got []string
		err := readTextFrom(context.Background(), "in.csv", strings.NewReader(tc.in), sc, newCSVRows, func(b Batch) error {
			col := b.Rec.Column(1).(*array.String)
			for i := range col.Len() {
				got = append(got, col.Value(i))
			}
			return nil
		})
		switch {
		case tc.want == nil && (err == nil || !strings.Contains(err.Error(), "CRLF")):
			t.Errorf("%s: %q, %v; want a refusal", tc.name, got, err)
		case tc.want != nil && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// TestUnfitDecimals: a decimal with more digits than its precision is
// found, -2^127 (which has no absolute value in 128 bits) included.
func TestUnfitDecimals(t *testing.T) {
	dt := &arrow.Decimal128Type{Precision: 38, Scale: 0}
	b := array.NewDecimal128Builder(memory.DefaultAllocator, dt)
	defer b.Release()
	max38, _ := decimal128.FromString(strings.Repeat("9", 38), 38, 0)
	b.AppendValues([]decimal128.Num{max38, max38.Negate(), decimal128.New(math.MinInt64, 0)}, nil)
	col := b.NewArray()
	defer col.Release()
	if row, why := unfit(col); row != 2 || !strings.Contains(why, "precision 38") {
		t.Errorf("unfit = %d, %q; want row 2 (-2^127)", row, why)
	}
}

// TestEmptyInputs: an empty CSV says so; an NDJSON "" is an empty text,
// never a null, so it is refused for a column of another type.
func TestEmptyInputs(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	for _, tc := range []struct {
		name, in, err string
		open          opener
	}{
		{"empty CSV", "", "the file is empty", newCSVRows},
		{"a byte-order mark alone", "\ufeff", "the file is empty", newCSVRows},
		{"NDJSON empty text for a number", `{"id":"","s":"x"}`, `value "" is not a int64; write null`, newJSONRows},
	} {
		err := readTextFrom(context.Background(), "in", strings.NewReader(tc.in), sc, tc.open, func(Batch) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.err)
		}
	}
	var got []string
	err := readTextFrom(context.Background(), "in", strings.NewReader(`{"id":1,"s":""}`), sc, newJSONRows, func(b Batch) error {
		got = append(got, fmt.Sprintf("%v", b.Rec.Column(1).IsNull(0)))
		return nil
	})
	if err != nil || !slices.Equal(got, []string{"false"}) {
		t.Errorf("NDJSON \"\" in a string column: null %v, %v; want an empty text", got, err)
	}
}
