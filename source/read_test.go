package source_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/source"
)

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32},
}, nil)

func TestReadInputFormats(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "in.csv")
	ndjsonPath := filepath.Join(dir, "in.ndjson")
	os.WriteFile(csvPath, []byte("id,name,day\n1,a,2026-01-01\n2,,2026-01-01\n"), 0o644)
	os.WriteFile(ndjsonPath, []byte("{\"id\":1,\"name\":\"a\",\"day\":\"2026-01-01\"}\n\n{\"id\":2,\"name\":null,\"day\":\"2026-01-01\"}\n"), 0o644)

	// The same rows as Parquet, written by the staging writer.
	w := parquetio.NewWriter(icebergio.LocalFS{}, "file://"+dir, schema, parquetio.Options{})
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", ""}, []bool{true, false})
	b.Field(2).(*array.Date32Builder).AppendValues([]arrow.Date32{20454, 20454}, nil)
	rec := b.NewRecordBatch()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{csvPath, ndjsonPath, strings.TrimPrefix(files[0].Path, "file://")} {
		batches, err := readAll(path, schema)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(batches) != 1 || batches[0].Rec.NumRows() != 2 {
			t.Fatalf("%s: %d batches", path, len(batches))
		}
		got := batches[0].Rec
		if got.Column(0).(*array.Int64).Value(1) != 2 || got.Column(2).(*array.Date32).Value(0) != 20454 {
			t.Errorf("%s: read %v", path, got)
		}
		wantNull := !strings.HasSuffix(path, ".csv") // an empty CSV string field is an empty string
		if got.Column(1).IsNull(1) != wantNull {
			t.Errorf("%s: second name null = %v, want %v", path, got.Column(1).IsNull(1), wantNull)
		}
		if strings.HasSuffix(path, ".ndjson") && batches[0].Line[1] != 3 {
			t.Errorf("ndjson row 2 is on line %d, want 3 (blank lines count)", batches[0].Line[1])
		}
	}
}

func TestReadInputNamesTheBadValue(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"in.csv":    "id,name,day\n1,a,2026-01-01\n2,b,2026-13-01\n",
		"in.ndjson": "{\"id\":1,\"name\":\"a\",\"day\":\"2026-01-01\"}\n{\"id\":2,\"name\":\"b\",\"day\":\"2026-13-01\"}\n",
	}
	for name, content := range cases {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(content), 0o644)
		_, err := readAll(path, schema)
		var ie *source.InputError
		if !errors.As(err, &ie) || ie.Line != 3-boolInt(name == "in.ndjson") || ie.Column != "day" {
			t.Errorf("%s: err = %v, want an InputError at the second row, column day", name, err)
		}
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// readAll reads an input file into memory, as batches.
func readAll(path string, schema *arrow.Schema) ([]source.Batch, error) {
	var out []source.Batch
	err := source.ReadInput(context.Background(), path, schema, func(b source.Batch) error {
		b.Rec.Retain()
		out = append(out, b)
		return nil
	})
	return out, err
}

// TestParquetInputOfEquivalentTypes: large strings, as Polars writes them,
// and instants in any time zone are read as the table's strings and UTC
// instants, values unchanged.
func TestParquetInputOfEquivalentTypes(t *testing.T) {
	want := arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	}, nil)
	written := arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.LargeString},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, written)
	b.Field(0).(*array.LargeStringBuilder).AppendValues([]string{"a", "München"}, nil)
	b.Field(1).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1769902200000000, 1}, nil)
	rec := b.NewRecordBatch()
	path := filepath.Join(t.TempDir(), "polars.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	if err := pqarrow.WriteTable(array.NewTableFromRecords(written, []arrow.RecordBatch{rec}), f, 1024, nil, props); err != nil {
		t.Fatal(err)
	}
	rr, err := parquetio.Open(context.Background(), icebergio.LocalFS{}, path)
	if err != nil {
		t.Fatal(err)
	}
	if fileTypes := rr.Schema(); !arrow.TypeEqual(fileTypes.Field(0).Type, written.Field(0).Type) || !arrow.TypeEqual(fileTypes.Field(1).Type, written.Field(1).Type) {
		t.Fatalf("the file reads as %s, not as written", fileTypes)
	}
	rr.Release()
	batches, err := readAll(path, want)
	if err != nil || len(batches) != 1 {
		t.Fatalf("read: %d batches, %v", len(batches), err)
	}
	got := batches[0].Rec
	if !got.Schema().Equal(want) || got.Column(0).(*array.String).Value(1) != "München" || got.Column(1).(*array.Timestamp).Value(0) != 1769902200000000 {
		t.Errorf("read %v", got)
	}
}

// TestInexactFloatIsRefusedByName: a CSV or NDJSON value a float or double
// column would store rounded is refused naming the file, line and column,
// on every CSV reader the build has.
func TestInexactFloatIsRefusedByName(t *testing.T) {
	floats := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	}, nil)
	dir := t.TempDir()
	for name, c := range map[string]struct{ text, want string }{
		"double.csv":    {"x,y\n0.1,1.10\n9007199254740993,1\n", ":3: column x: value \"9007199254740993\": 9007199254740993 cannot be stored exactly as a 64-bit float"},
		"float.csv":     {"x,y\n1e300,0.1\n1,16777217\n", ":3: column y: value \"16777217\": 16777217 cannot be stored exactly as a 32-bit float"},
		"float.ndjson":  {"{\"x\":1,\"y\":0.1}\n{\"x\":1,\"y\":0.1000000001}\n", ":2: column y: value \"0.1000000001\": 0.1000000001 cannot be stored exactly"},
		"double.ndjson": {"{\"x\":9007199254740993}\n", ":1: column x: value \"9007199254740993\""},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readAll(path, floats)
		if err == nil || !strings.Contains(err.Error(), name+c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
