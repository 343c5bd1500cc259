package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakeswap/lakeswap/verify"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the Parquet inputs of testdata/bad-input")

const corpus = "testdata/bad-input"

// expectation is a bad-input case's expect.json.
type expectation struct {
	Where   string `json:"where"`   // the finding's where ends with this
	Column  string `json:"column"`  // the finding's column
	Message string `json:"message"` // a part of the finding's message
}

// TestBadInputCorpus publishes every case under testdata/bad-input to a
// table that already holds a load, and checks that each is refused with
// its finding in the JSON error object and leaves the table and every file
// of its warehouse as they were.
func TestBadInputCorpus(t *testing.T) {
	if *updateCorpus {
		writeParquetCases(t)
	}
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", filepath.Join(corpus, "schema.yaml")); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	good := write(t, t.TempDir(), "good.csv", "day,id,qty,name,price,at,at_tz\n2026-01-01,1,1,a,1.25,2026-01-31T23:30:00,2026-01-31T23:30:00Z\n")
	if code, _, errs := cli(t, home, "publish", "--table", "shop.typed", "--partitions", "day=2026-01-01", good); code != 0 {
		t.Fatalf("first load: exit %d: %s", code, errs)
	}
	meta, files := typedMetadata(t, home), warehouseFiles(t, home)

	cases, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		n++
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join(corpus, c.Name())
			var want expectation
			raw, err := os.ReadFile(filepath.Join(dir, "expect.json"))
			if err == nil {
				err = json.Unmarshal(raw, &want)
			}
			if err != nil {
				t.Fatalf("expect.json: %v", err)
			}
			inputs, _ := filepath.Glob(filepath.Join(dir, "input.*"))
			if len(inputs) != 1 {
				t.Fatalf("case has %d input files, want one", len(inputs))
			}
			code, out, errs := cli(t, home, "-o", "json", "publish", "--table", "shop.typed", "--partitions", "day=2026-01-01", inputs[0])
			if code != exitRefused {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitRefused, errs)
			}
			var got jsonError
			dec := json.NewDecoder(strings.NewReader(out))
			if err := dec.Decode(&got); err != nil || dec.More() {
				t.Fatalf("stdout is not one JSON error object (%v):\n%s", err, out)
			}
			if got.Code != exitRefused || got.Kind != "refused" {
				t.Errorf("error object code %d kind %q, want %d refused", got.Code, got.Kind, exitRefused)
			}
			if !slices.ContainsFunc(got.Findings, func(f verify.Finding) bool {
				return strings.HasSuffix(f.Where, want.Where) && f.Column == want.Column && strings.Contains(f.Message, want.Message)
			}) {
				t.Errorf("findings %+v lack %+v", got.Findings, want)
			}
			if after := typedMetadata(t, home); after != meta {
				t.Errorf("table moved from %s to %s", meta, after)
			}
			if after := warehouseFiles(t, home); !slices.Equal(after, files) {
				t.Errorf("files changed:\nbefore %v\nafter  %v", files, after)
			}
		})
	}
	if n < 20 {
		t.Errorf("the corpus holds %d cases; expected at least 20", n)
	}
}

func typedMetadata(t *testing.T, home string) string {
	t.Helper()
	tbl, err := openHome(t, home).LoadTable(t.Context(), []string{"shop", "typed"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl.MetadataLocation()
}

// warehouseFiles lists every file under the home's warehouse.
func warehouseFiles(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(home, "warehouse"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// writeParquetCases writes the corpus's Parquet inputs (go test -run
// TestBadInputCorpus -update-corpus), which cannot be written by hand.
func writeParquetCases(t *testing.T) {
	fields := []arrow.Field{
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "at_tz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	}
	type pcase struct {
		name   string
		fields []arrow.Field
		names  []string
		want   expectation
	}
	extra := append(slices.Clone(fields), arrow.Field{Name: "color", Type: arrow.BinaryTypes.String, Nullable: true})
	nanos := slices.Clone(fields)
	nanos[5].Type = &arrow.TimestampType{Unit: arrow.Nanosecond}
	for _, c := range []pcase{
		{"parquet-extra-column", extra, []string{"a", "b"}, expectation{"input.parquet", "color", "not in the table schema"}},
		{"parquet-nanosecond-timestamp", nanos, []string{"a", "b"}, expectation{"input.parquet", "at", "timestamp[ns]"}},
		{"parquet-invalid-utf8", fields, []string{"a", "caf\xe9"}, expectation{"input.parquet:2", "name", "UTF-8"}},
		// The second row's price, 10^11 cents, has 12 digits: more than
		// decimal(10,2) holds, though Arrow carries it.
		{"parquet-decimal-beyond-precision", fields, []string{"a", "wide"}, expectation{"input.parquet:2", "price", "precision 10"}},
	} {
		sc := arrow.NewSchema(c.fields, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i, name := range c.names {
			b.Field(0).(*array.Date32Builder).Append(arrow.Date32(20454))
			b.Field(1).(*array.Int64Builder).Append(int64(i + 1))
			b.Field(2).AppendNull()
			b.Field(3).(*array.StringBuilder).Append(name)
			price := int64(125)
			if name == "wide" {
				price = 100_000_000_000
			}
			b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(price))
			b.Field(5).(*array.TimestampBuilder).Append(1)
			b.Field(6).AppendNull()
			for f := 7; f < len(c.fields); f++ {
				b.Field(f).AppendNull()
			}
		}
		rec := b.NewRecordBatch()
		dir := filepath.Join(corpus, c.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, "input.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if err := pqarrow.WriteTable(array.NewTableFromRecords(sc, []arrow.RecordBatch{rec}), f, 1024, nil, pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.MarshalIndent(c.want, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "expect.json"), append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
