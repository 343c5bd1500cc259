package source_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
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
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/verify"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the Parquet inputs of testdata/bad-input")

// Corpus is the bad-input corpus: one folder a case, each with one input
// file and expect.json, the finding reading and validating it must report.
// cmd/lakeswap publishes one of its cases, for the exit code and the
// table left as it was.
const Corpus = "testdata/bad-input"

// expectation is a bad-input case's expect.json.
type expectation struct {
	Where   string `json:"where"`   // the finding's where ends with this
	Column  string `json:"column"`  // the finding's column
	Message string `json:"message"` // a part of the finding's message
}

// TestBadInputCorpus reads every case as a publish does (the input
// readers, then the validation every staged row passes) and checks that
// each is refused with its finding, naming the file, row and column.
func TestBadInputCorpus(t *testing.T) {
	if *updateCorpus {
		writeParquetCases(t)
	}
	c := typedContract(t)
	cases, err := os.ReadDir(Corpus)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cs := range cases {
		if !cs.IsDir() {
			continue
		}
		n++
		t.Run(cs.Name(), func(t *testing.T) {
			dir := filepath.Join(Corpus, cs.Name())
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
			got, err := readAndValidate(t.Context(), c, inputs[0])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(got, func(f verify.Finding) bool {
				return strings.HasSuffix(f.Where, want.Where) && f.Column == want.Column && strings.Contains(f.Message, want.Message)
			}) {
				t.Errorf("findings %+v lack %+v", got, want)
			}
		})
	}
	if n < 20 {
		t.Errorf("the corpus holds %d cases; expected at least 20", n)
	}
}

// readAndValidate reads an input for partition day=2026-01-01 and passes
// its rows through the validation a stage runs, returning what either
// found: a refused input as the finding a publish reports of it.
func readAndValidate(ctx context.Context, c *contract.Contract, file string) ([]verify.Finding, error) {
	const day = "2026-01-01"
	src, err := source.ReadFiles(ctx, c, c.Partition.Declared([]string{day}), []string{file}, source.Options{})
	var input *source.InputError
	if errors.As(err, &input) {
		f := verify.Finding{Kind: verify.KindInput, Column: input.Column, Message: input.Err.Error(), Where: input.File}
		if input.Line > 0 {
			f.Where = fmt.Sprintf("%s:%d", input.File, input.Line)
		}
		return []verify.Finding{f}, nil
	}
	if err != nil {
		return nil, err
	}
	defer src.Release()
	found := src.Stray()
	rr, err := src.Open(ctx, day)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	acc := verify.NewAccumulator(c, day, func(row int64) string { return src.Locate(day, row) })
	for rr.Next() {
		rec, ok := acc.Conform(rr.RecordBatch())
		if !ok {
			continue
		}
		err := acc.Add(rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	return append(found, acc.Findings(false).List...), nil
}

// typedContract is the contract of the corpus's table, from its schema.
func typedContract(t *testing.T) *contract.Contract {
	t.Helper()
	spec, err := catalog.ReadTableSpec(filepath.Join(Corpus, "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc, part, props, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	meta, err := table.NewMetadata(sc, part, table.UnsortedSortOrder, "file:///nowhere", props)
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Of(meta)
	if err != nil {
		t.Fatal(err)
	}
	return c
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
		dir := filepath.Join(Corpus, c.name)
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
