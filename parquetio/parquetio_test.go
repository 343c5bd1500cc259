package parquetio_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/stats"
)

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32},
}, nil)

func batch(t *testing.T, from, n int) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d-%x", i, i*2654435761))
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32(20454))
	}
	return b.NewRecordBatch()
}

// writeBatches writes n batches of rows each (batch's rows, in order) to
// a fresh prefix and returns the files written.
func writeBatches(t *testing.T, opts parquetio.Options, n, rows int) []parquetio.File {
	t.Helper()
	recs := make([]arrow.RecordBatch, n)
	for i := range n {
		recs[i] = batch(t, i*rows, rows)
		defer recs[i].Release()
	}
	return writeRecords(t, prefix(t), schema, opts, recs...)
}

// writeRecords writes recs, of schema sc, to the prefix and returns the
// files written; the caller keeps its references to recs.
func writeRecords(t *testing.T, prefix string, sc *arrow.Schema, opts parquetio.Options, recs ...arrow.RecordBatch) []parquetio.File {
	t.Helper()
	w := parquetio.NewWriter(icebergio.LocalFS{}, prefix, sc, opts)
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func prefix(t *testing.T) string { return "file://" + filepath.Join(t.TempDir(), "data", "run-x") }

// openFooter opens a written file's Parquet metadata, closed with the test.
func openFooter(t *testing.T, f parquetio.File) *file.Reader {
	t.Helper()
	rdr, err := file.OpenParquetFile(strings.TrimPrefix(f.Path, "file://"), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdr.Close() })
	return rdr
}

func TestWriterRollsAndReadsBack(t *testing.T) {
	ctx := context.Background()
	const batches, rows = 20, 5000
	files := writeBatches(t, parquetio.Options{TargetFileSize: 64 << 10}, batches, rows)
	if len(files) < 2 {
		t.Fatalf("%d files at a 64 KiB target, want the writer to roll", len(files))
	}
	var total int64
	next := int64(0)
	for i, f := range files {
		if !strings.HasSuffix(f.Path, fmt.Sprintf("/part-%05d.parquet", i)) {
			t.Errorf("file %d is %s", i, f.Path)
		}
		info, err := os.Stat(strings.TrimPrefix(f.Path, "file://"))
		if err != nil || info.Size() != f.Bytes {
			t.Errorf("%s: stat %v, size %d, writer says %d", f.Path, err, info.Size(), f.Bytes)
		}
		rr, err := parquetio.Open(ctx, icebergio.LocalFS{}, f.Path)
		if err != nil {
			t.Fatal(err)
		}
		for rr.Next() {
			ids := rr.RecordBatch().Column(0).(*array.Int64)
			for _, id := range ids.Int64Values() {
				if id != next {
					t.Fatalf("read id %d, want %d", id, next)
				}
				next++
			}
			total += rr.RecordBatch().NumRows()
		}
		rr.Release()
	}
	if total != batches*rows {
		t.Errorf("read back %d rows, wrote %d", total, batches*rows)
	}
}

func TestWriterNeverOverwrites(t *testing.T) {
	p := prefix(t)
	for i, want := range []error{nil, parquetio.ErrExists} {
		w := parquetio.NewWriter(icebergio.LocalFS{}, p, schema, parquetio.Options{})
		rec := batch(t, 0, 10)
		err := w.Write(rec)
		rec.Release()
		if err == nil {
			_, err = w.Close()
		}
		if !errors.Is(err, want) {
			t.Fatalf("write %d to the same prefix: err = %v, want %v", i+1, err, want)
		}
		if want != nil && !strings.Contains(err.Error(), "part-00000.parquet") {
			t.Errorf("refusal %q does not name the file", err)
		}
	}
}

// TestWriterEncodingsPerColumn: a near-unique integer column is written
// plain, or delta-encoded when asked; a near-unique string plain; a
// repeating column with a dictionary. Values come back exactly, negative
// and extreme ones too.
func TestWriterEncodingsPerColumn(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(fmt.Sprintf("delta=%v", delta), func(t *testing.T) { testEncodings(t, delta) })
	}
}

func testEncodings(t *testing.T, delta bool) {
	p := prefix(t)
	w := parquetio.NewWriter(icebergio.LocalFS{}, p, schema, parquetio.Options{DeltaIntegers: delta})
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	ids := []int64{math.MinInt64, math.MaxInt64, -1, 0}
	for i := range 5000 {
		ids = append(ids, int64(i)*7919-20_000)
	}
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", id))
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32(20454))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	rdr := openFooter(t, files[0])
	want := map[string]parquet.Encoding{
		"id":   parquet.Encodings.Plain,
		"name": parquet.Encodings.Plain,
		"day":  parquet.Encodings.RLEDict,
	}
	if delta {
		want["id"] = parquet.Encodings.DeltaBinaryPacked
	}
	rg := rdr.MetaData().RowGroup(0)
	for i := range rg.NumColumns() {
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		name := cc.PathInSchema().String()
		if !slices.Contains(cc.Encodings(), want[name]) {
			t.Errorf("column %s has encodings %v, want %v among them", name, cc.Encodings(), want[name])
		}
		if name == "id" && !delta && slices.Contains(cc.Encodings(), parquet.Encodings.DeltaBinaryPacked) {
			t.Errorf("column id is delta-encoded though not asked to be")
		}
	}
	rr, err := parquetio.Open(context.Background(), icebergio.LocalFS{}, files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var got []int64
	for rr.Next() {
		got = append(got, rr.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
	}
	if !slices.Equal(got, ids) {
		t.Errorf("ids read back differ from the ids written (%d and %d values)", len(got), len(ids))
	}
}

// TestWriterRepeatingValues: columns of few values (strings, dates, longs
// and ints, required and optional), written through lakeswap's own
// dictionaries or arrow-go's, read back value for value and null for null
// with the table's types, dictionary-encoded and with true min/max
// statistics: when batches are slices, when a value first appears in a
// later batch, and when a column turns out to hold many values.
func TestWriterRepeatingValues(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "code", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	// Each row is one key, -1 for nulls in the optional columns (key 0 in
	// the required ones); every column is a rising function of the key,
	// so the keys' range is each column's.
	few := func(from, n, values int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = (from + i) % values
			if (from+i)%7 == 3 {
				out[i] = -1
			}
		}
		return out
	}
	unique := func(from, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = 100 + from + i
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		batches [][]int
		dict    bool // every data page is dictionary-encoded
		groups  int  // row groups in the file
	}{
		{"few values", [][]int{few(0, 3000, 3), few(3000, 5000, 3)}, true, 1},
		// The dictionary grows: a new row group holds it whole.
		{"a new value later", [][]int{few(0, 3000, 3), few(3000, 2000, 4), few(5000, 2000, 3)}, true, 2},
		// Past maxDictValues a column is written plain.
		{"many values later", [][]int{few(0, 3000, 3), unique(0, 20_000), unique(20_000, 20_000), few(0, 100, 3)}, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := parquetio.NewWriter(icebergio.LocalFS{}, prefix(t), sc, parquetio.Options{})
			var keys []int
			for _, ks := range tc.batches {
				b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
				// Two rows more on each side, sliced off: the writer
				// must honour the batch's offset.
				for _, k := range append(append([]int{0, 1}, ks...), 2, 0) {
					if k < 0 {
						b.Field(0).AppendNull()
						b.Field(2).AppendNull()
					} else {
						b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("c%06d", k))
						b.Field(2).(*array.Int64Builder).Append(int64(k)*1000 - 3000)
					}
					b.Field(1).(*array.Date32Builder).Append(arrow.Date32(20454 + max(k, 0)))
					b.Field(3).(*array.Int32Builder).Append(int32(max(k, 0)))
				}
				full := b.NewRecordBatch()
				b.Release()
				rec := full.NewSlice(2, int64(len(ks)+2))
				if err := w.Write(rec); err != nil {
					t.Fatal(err)
				}
				rec.Release()
				full.Release()
				keys = append(keys, ks...)
			}
			files, err := w.Close()
			if err != nil {
				t.Fatal(err)
			}

			rr, err := parquetio.Open(context.Background(), icebergio.LocalFS{}, files[0].Path)
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			for c, f := range rr.Schema().Fields() {
				if want := sc.Field(c); f.Name != want.Name || !arrow.TypeEqual(f.Type, want.Type) {
					t.Fatalf("column %d reads back as %s %s, want %s %s", c, f.Name, f.Type, want.Name, want.Type)
				}
			}
			row := 0
			for rr.Next() {
				rec := rr.RecordBatch()
				for i := range int(rec.NumRows()) {
					k, k0 := keys[row], max(keys[row], 0)
					want := []string{fmt.Sprintf("c%06d", k), arrow.Date32(20454 + k0).FormattedString(),
						fmt.Sprint(int64(k)*1000 - 3000), fmt.Sprint(k0)}
					for c := range sc.NumFields() {
						col := rec.Column(c)
						switch {
						case k < 0 && sc.Field(c).Nullable && !col.IsNull(i):
							t.Fatalf("row %d: %s reads back as %s, wrote null", row, sc.Field(c).Name, col.ValueStr(i))
						case (k >= 0 || !sc.Field(c).Nullable) && col.ValueStr(i) != want[c]:
							t.Fatalf("row %d: %s reads back as %s, wrote %s", row, sc.Field(c).Name, col.ValueStr(i), want[c])
						}
					}
					row++
				}
			}
			if row != len(keys) {
				t.Fatalf("read back %d rows, wrote %d", row, len(keys))
			}

			rdr := openFooter(t, files[0])
			if g := rdr.NumRowGroups(); g != tc.groups {
				t.Errorf("%d row groups, want %d", g, tc.groups)
			}
			lo, hi, nulls := slices.Max(keys), -1, 0
			for _, k := range keys {
				if k < 0 {
					nulls++
				} else {
					lo = min(lo, k)
					hi = max(hi, k)
				}
			}
			for c := range sc.NumFields() {
				name := sc.Field(c).Name
				var gotLo, gotHi string
				var gotNulls int64
				for g := range rdr.NumRowGroups() {
					cc, err := rdr.MetaData().RowGroup(g).ColumnChunk(c)
					if err != nil {
						t.Fatal(err)
					}
					for _, es := range cc.EncodingStats() {
						if strings.HasPrefix(fmt.Sprint(es.PageType), "DATA_PAGE") && tc.dict && es.Encoding != parquet.Encodings.RLEDict {
							t.Errorf("row group %d: %s has a %s data page, want every page dictionary-encoded", g, name, es.Encoding)
						}
					}
					st, err := cc.Statistics()
					if err != nil {
						t.Fatal(err)
					}
					gotNulls += st.NullCount()
					l, h := statMinMax(st)
					if gotLo == "" || less(c, l, gotLo) {
						gotLo = l
					}
					if gotHi == "" || less(c, gotHi, h) {
						gotHi = h
					}
				}
				wantLo, wantNulls := statText(c, lo), nulls
				if !sc.Field(c).Nullable {
					wantLo, wantNulls = statText(c, 0), 0
				}
				if wantHi := statText(c, hi); gotLo != wantLo || gotHi != wantHi {
					t.Errorf("%s's statistics say min %s max %s, want %s %s", name, gotLo, gotHi, wantLo, wantHi)
				}
				if gotNulls != int64(wantNulls) {
					t.Errorf("%s's statistics count %d nulls, wrote %d", name, gotNulls, wantNulls)
				}
			}
		})
	}
}

// statText is how statMinMax gives column c's value for key k.
func statText(c, k int) string {
	switch c {
	case 0:
		return fmt.Sprintf("c%06d", k)
	case 1:
		return fmt.Sprint(20454 + k)
	case 2:
		return fmt.Sprint(int64(k)*1000 - 3000)
	}
	return fmt.Sprint(k)
}

func statMinMax(st metadata.TypedStatistics) (string, string) {
	switch s := st.(type) {
	case *metadata.ByteArrayStatistics:
		return string(s.Min()), string(s.Max())
	case *metadata.Int32Statistics:
		return fmt.Sprint(s.Min()), fmt.Sprint(s.Max())
	case *metadata.Int64Statistics:
		return fmt.Sprint(s.Min()), fmt.Sprint(s.Max())
	}
	return "?", "?"
}

// less orders column c's statistics texts: strings as text, numbers as
// numbers.
func less(c int, a, b string) bool {
	if c == 0 {
		return a < b
	}
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	return x < y
}

// TestWriterRecordsTheTableSchema: a file whose columns went through
// lakeswap's dictionaries records the same Arrow schema, field ids
// included, as one written as it came, so readers that trust the recorded
// schema see the table's types.
func TestWriterRecordsTheTableSchema(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})},
		{Name: "channel", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2"})},
	}, nil)
	recorded := func(channel func(int) string) string {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for i := range 100 {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(channel(i))
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		files := writeRecords(t, prefix(t), sc, parquetio.Options{}, rec)
		rdr := openFooter(t, files[0])
		kv := rdr.MetaData().KeyValueMetadata()
		if s := rdr.MetaData().Schema.Column(1); s.SchemaNode().FieldID() != 2 {
			t.Errorf("channel has field id %d in the Parquet schema, want 2", s.SchemaNode().FieldID())
		}
		if v := kv.FindValue("ARROW:schema"); v != nil {
			return *v
		}
		return ""
	}
	repeating := recorded(func(i int) string { return []string{"web", "store"}[i%2] })
	unique := recorded(func(i int) string { return fmt.Sprint("customer-", i) })
	if repeating == "" || unique == "" {
		t.Fatalf("ARROW:schema recorded: %q with a dictionary, %q without", repeating, unique)
	}
	if repeating != unique {
		t.Errorf("a file written through a dictionary records another Arrow schema:\n%s\nthan one written plain:\n%s", repeating, unique)
	}
}

// TestOpenColumns reads only the columns asked for, in their order, and
// refuses a name the file lacks.
func TestOpenColumns(t *testing.T) {
	dir := t.TempDir()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "b", Type: arrow.BinaryTypes.String},
		{Name: "c", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	b.Field(1).(*array.StringBuilder).Append("x")
	b.Field(2).(*array.Int64Builder).Append(3)
	rec := b.NewRecordBatch()
	defer rec.Release()
	files := writeRecords(t, "file://"+dir, sc, parquetio.Options{}, rec)
	rr, err := parquetio.OpenColumns(context.Background(), icebergio.LocalFS{}, files[0].Path, []parquetio.Column{{Name: "c"}, {Name: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	got := rr.RecordBatch()
	if got.NumCols() != 2 || got.ColumnName(0) != "c" && got.ColumnName(1) != "c" || got.Schema().HasField("a") {
		t.Errorf("read columns %v, want b and c only", got.Schema())
	}
	if _, err := parquetio.OpenColumns(context.Background(), icebergio.LocalFS{}, files[0].Path, []parquetio.Column{{Name: "nope"}}); err == nil {
		t.Error("a missing column was read")
	}
}

// TestWriterStatisticsHoldEveryValue: the footer's statistics of every
// column hold every value written, through lakeswap's dictionaries or
// plain: the empty string in a string column (arrow-go before v18.9.0 left it out of a
// dictionary-encoded column's min, so readers skipped the row group for
// s = ""), the empty binary, -0.0 and 0.0, NaN beside numbers, nulls.
func TestWriterStatisticsHoldEveryValue(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	for _, rows := range []int{8, 5000} { // few rows: dictionaries; many distinct: plain
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := range rows {
			switch {
			case i%4 == 0:
				b.Field(0).(*array.StringBuilder).Append("")
				b.Field(1).(*array.BinaryBuilder).Append([]byte{})
				b.Field(2).(*array.Float64Builder).Append(math.Copysign(0, -1))
			case i%4 == 1:
				b.Field(0).AppendNull()
				b.Field(1).AppendNull()
				b.Field(2).(*array.Float64Builder).Append(math.NaN())
			default:
				b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("x%d", i%(rows/4+1)))
				b.Field(1).(*array.BinaryBuilder).Append([]byte{0xff, byte(i)})
				b.Field(2).(*array.Float64Builder).Append(float64(i))
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		files := writeRecords(t, prefix(t), sc, parquetio.Options{}, rec)
		rec.Release()
		schema := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "s", Type: iceberg.PrimitiveTypes.String},
			iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.Binary},
			iceberg.NestedField{ID: 3, Name: "d", Type: iceberg.PrimitiveTypes.Float64})
		f, err := stats.Read(context.Background(), icebergio.LocalFS{}, files[0].Path, schema)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range stats.CheckFooter(f) {
			t.Errorf("%d rows: %s", rows, p.Finding)
		}
		if c := f.Columns[1]; c.Min != "" || c.Nulls != int64(rows/4) {
			t.Errorf("%d rows: s reads back min %q, %d nulls", rows, c.Min, c.Nulls)
		}
	}
}

// countingIO counts the reads a file opened through it is asked for at an
// offset: on an object store each is a request of its own.
type countingIO struct {
	icebergio.LocalFS
	readAts *int
}

func (c countingIO) Open(name string) (icebergio.File, error) {
	f, err := c.LocalFS.Open(name)
	if err != nil {
		return nil, err
	}
	return countingFile{f, c.readAts}, nil
}

type countingFile struct {
	icebergio.File
	readAts *int
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	*f.readAts++
	return f.File.ReadAt(p, off)
}

// TestSmallFileReadInOneRequest: a Parquet file of a few MiB is read whole
// by the request that opened it, not a request for its footer and one for
// each column chunk; a larger one is read by range. Both read back every
// row.
func TestSmallFileReadInOneRequest(t *testing.T) {
	for _, c := range []struct {
		rows     int
		byRanges bool
	}{{1000, false}, {400_000, true}} {
		files := writeBatches(t, parquetio.Options{Uncompressed: true}, 1, c.rows)
		var readAts int
		rr, err := parquetio.Open(context.Background(), countingIO{readAts: &readAts}, files[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for rr.Next() {
			rows += int(rr.RecordBatch().NumRows())
		}
		rr.Release()
		if rows != c.rows {
			t.Errorf("%d rows read back of %d", rows, c.rows)
		}
		if byRanges := readAts > 0; byRanges != c.byRanges {
			t.Errorf("a file of %d bytes was read with %d reads at an offset; want ranges: %v", files[0].Bytes, readAts, c.byRanges)
		}
	}
}

// exclusiveFS is a local file system that writes, as an object store's
// conditional write does, only where nothing is: a file already at the
// path is refused when the new one is closed.
type exclusiveFS struct{ icebergio.LocalFS }

func (exclusiveFS) CreatesExclusively() bool { return true }

func (e exclusiveFS) Create(name string) (icebergio.FileWriter, error) {
	if _, err := os.Stat(strings.TrimPrefix(name, "file://")); err == nil {
		return refusedWriter{name}, nil
	}
	return e.LocalFS.Create(name)
}

type refusedWriter struct{ name string }

func (refusedWriter) Write(p []byte) (int, error)         { return len(p), nil }
func (refusedWriter) ReadFrom(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }
func (w refusedWriter) Close() error                      { return fmt.Errorf("%s: %w", w.name, parquetio.ErrExists) }

// TestRefusedFileIsNotTheWriters: on a store that refuses a path taken
// (checked when the file is closed, not before), the refused path is not
// among the files the writer created, so that cleanup never removes the
// object the refusal protected.
func TestRefusedFileIsNotTheWriters(t *testing.T) {
	dir := prefix(t)
	taken := dir + "/part-00000.parquet"
	if err := os.MkdirAll(strings.TrimPrefix(dir, "file://"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(strings.TrimPrefix(taken, "file://"), []byte("another's"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := parquetio.NewWriter(exclusiveFS{}, dir, schema, parquetio.Options{})
	rec := batch(t, 0, 10)
	defer rec.Release()
	err := w.Write(rec)
	if err == nil {
		_, err = w.Close()
	}
	if !errors.Is(err, parquetio.ErrExists) {
		t.Fatalf("writing to a taken path: %v, want ErrExists", err)
	}
	if slices.Contains(w.Created(), taken) {
		t.Errorf("the writer lists %s, refused as another's, among the files it created: %v", taken, w.Created())
	}
}
