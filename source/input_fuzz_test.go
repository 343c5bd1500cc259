package source

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// fuzzSchema has a column of every type text input takes.
var fuzzSchema = arrow.NewSchema([]arrow.Field{
	{Name: "day", Type: arrow.FixedWidthTypes.Date32},
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "price", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
	{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "at_tz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

// fuzzRead reads text input and checks what every reader promises: no
// panic, an error that is an *InputError or nothing, batches in the schema
// with one line number per row, rising.
func fuzzRead(t *testing.T, data []byte, open opener) {
	var rows int64
	last := int64(0)
	err := readTextFrom(context.Background(), "fuzz", bytes.NewReader(data), fuzzSchema, open, func(b Batch) error {
		if !b.Rec.Schema().Equal(fuzzSchema) || int64(len(b.Line)) != b.Rec.NumRows() {
			t.Fatalf("batch of %d rows with %d lines in schema %s", b.Rec.NumRows(), len(b.Line), b.Rec.Schema())
		}
		for _, l := range b.Line {
			if l <= last {
				t.Fatalf("line %d after line %d", l, last)
			}
			last = l
		}
		if s := b.Rec.Column(3).(*array.String); s.Len() > 0 {
			for i := range s.Len() {
				if s.IsValid(i) && !utf8.ValidString(s.Value(i)) {
					t.Fatalf("row %d: invalid UTF-8 %q stored", i, s.Value(i))
				}
			}
		}
		rows += b.Rec.NumRows()
		return nil
	})
	var ie *InputError
	if err != nil && !errors.As(err, &ie) {
		t.Fatalf("error %v (%T) is not an InputError", err, err)
	}
}

func FuzzCSVInput(f *testing.F) {
	f.Add([]byte("day,id,name,price,at,at_tz\n2026-01-01,1,a,1.25,2026-01-31T23:30:00,2026-01-31T23:30:00Z\n"))
	f.Add([]byte("\ufeffday,id\n2026-01-01,1\n\"2026-01-01,2\n"))
	f.Add([]byte("day,id,day\n2026-01-01,1,2026-01-02\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, newCSVRows) })
}

func FuzzNDJSONInput(f *testing.F) {
	f.Add([]byte(`{"day":"2026-01-01","id":1,"name":"a","price":1.25,"at":"2026-01-31T23:30:00","at_tz":"2026-01-31T23:30:00Z"}` + "\n"))
	f.Add([]byte(`{"day":"2026-01-01","id":1,"id":2}` + "\n"))
	f.Add([]byte(`{"day":"2026-01-01","id":1,"name":"\ud800"}` + "\n\n[1]\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, data, newJSONRows) })
}

// FuzzParquetInput: any bytes named .parquet are read or refused, never a
// panic, and what is read is in the schema.
func FuzzParquetInput(f *testing.F) {
	f.Add([]byte("PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = ReadInput(context.Background(), path, fuzzSchema, func(b Batch) error {
			if !b.Rec.Schema().Equal(fuzzSchema) {
				t.Fatalf("batch in schema %s", b.Rec.Schema())
			}
			return nil
		})
	})
}

// FuzzFloatRule: a text a float column takes has exactly the value
// stored, by exact rationals.
func FuzzFloatRule(f *testing.F) {
	for _, s := range []string{"0.1", "1.10", "9007199254740993", "16777217", "1e-400", "-0", "NaN", "0x1p-2", "1_0"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, double bool) {
		bits := 32
		if double {
			bits = 64
		}
		v, err := parseFloat(text, bits)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		q, ok := new(big.Rat).SetString(text)
		if !ok {
			t.Fatalf("parseFloat(%q) took a text that is no decimal", text)
		}
		stored, _ := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, bits))
		if q.Cmp(stored) != 0 {
			t.Fatalf("parseFloat(%q, %d) took it, but stores %s", text, bits, strconv.FormatFloat(v, 'g', -1, bits))
		}
	})
}

// FuzzFirstOtherType: any NDJSON is judged or refused, never a panic.
func FuzzFirstOtherType(f *testing.F) {
	f.Add([]byte("{\"v\":1}\n{\"v\":1.5}\n{\"v\":\"a\"}\n"))
	f.Add([]byte("{\"v\":9007199254740993}\n\n{\"v\":0.5}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in.ndjson")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = FirstOtherType(path, "in.ndjson", "v")
	})
}
