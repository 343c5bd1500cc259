package stats

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

func TestCompareOrdersZerosAndBytes(t *testing.T) {
	neg := math.Copysign(0, -1)
	for _, c := range []struct {
		a, b value
		want int
	}{
		{neg, 0.0, -1}, {0.0, neg, 1}, {neg, neg, 0}, {math.Inf(-1), neg, -1},
		{"", "a", -1}, {"é", "z", 1}, {"\x00", "", 1},
		{int64(math.MinInt64), int64(0), -1},
	} {
		if got := compare(c.a, c.b); got != c.want {
			t.Errorf("compare(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestTruncatedBoundsHoldTheValue(t *testing.T) {
	long := "abcdefghijklmnopqrstuvwxyz"
	lo, hi := truncateString([]byte(long), false), truncateString([]byte(long), true)
	if string(lo) != long[:16] || string(hi) != long[:15]+"q" {
		t.Errorf("bounds of %q: %q %q", long, lo, hi)
	}
	if hi := truncateBytes(bytes.Repeat([]byte{0xff}, 20), true); hi != nil {
		t.Errorf("no upper bound holds twenty 0xff bytes cut to sixteen, got %x", hi)
	}
	if got := truncateString([]byte("日本"), true); string(got) != "日本" {
		t.Errorf("a short string is its own bound, got %q", got)
	}
}

// TestPatchListKeepsEveryField: a manifest list patched with a summary
// reads back with that summary and every other field as written; an
// empty bound stays an empty bound.
func TestPatchListKeepsEveryField(t *testing.T) {
	lb, ub := []byte("b"), []byte("c")
	mf := iceberg.NewManifestFile(2, "s3://b/m0.avro", 1234, 0, 77).SequenceNum(5, 4).AddedFiles(2).ExistingFiles(1).AddedRows(10).ExistingRows(3).
		Partitions([]iceberg.FieldSummary{{LowerBound: &lb, UpperBound: &ub}}).Build()
	var buf bytes.Buffer
	seq, parent := int64(6), int64(76)
	if err := iceberg.WriteManifestList(2, &buf, 78, &parent, &seq, 0, []iceberg.ManifestFile{mf}); err != nil {
		t.Fatal(err)
	}
	empty, nan := []byte{}, false
	fixed := []iceberg.FieldSummary{{ContainsNull: true, ContainsNaN: &nan, LowerBound: &empty, UpperBound: &ub}}
	out, err := PatchList(buf.Bytes(), map[string]ListFix{"s3://b/m0.avro": {Partitions: fixed}}, map[string][]byte{"snapshot-id": []byte("79")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := iceberg.ReadManifestList(bytes.NewReader(out))
	if err != nil || len(got) != 1 {
		t.Fatalf("read back: %v %v", got, err)
	}
	g := got[0]
	if g.FilePath() != mf.FilePath() || g.Length() != 1234 || g.SequenceNum() != 5 || g.MinSequenceNum() != 4 || g.SnapshotID() != 77 ||
		g.AddedDataFiles() != 2 || g.ExistingDataFiles() != 1 || g.AddedRows() != 10 || g.ExistingRows() != 3 {
		t.Errorf("fields changed: %+v", g)
	}
	p := g.Partitions()[0]
	if !p.ContainsNull || p.LowerBound == nil || len(*p.LowerBound) != 0 || string(*p.UpperBound) != "c" {
		t.Errorf("summary reads back as %+v", p)
	}
}

// TestPatchManifestKeepsPartitionsAndSequenceNumbers: a manifest of a
// table partitioned by a day, a timestamp and a decimal, with entries
// added, existing and deleted, patched for one file's bounds, reads back
// with every partition value, status and sequence number as written.
func TestPatchManifestKeepsPartitionsAndSequenceNumbers(t *testing.T) {
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		iceberg.NestedField{ID: 3, Name: "price", Type: iceberg.DecimalTypeOf(9, 2), Required: true},
		iceberg.NestedField{ID: 4, Name: "n", Type: iceberg.PrimitiveTypes.Int64})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "ts_hour", Transform: iceberg.HourTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1002, Name: "price", Transform: iceberg.IdentityTransform{}})
	price := iceberg.Decimal{Val: decimal128.FromI64(1230), Scale: 2}
	part := map[int]any{1000: iceberg.Date(20454), 1001: int32(490905), 1002: price}
	var entries []iceberg.ManifestEntry
	for i, status := range []iceberg.ManifestEntryStatus{iceberg.EntryStatusADDED, iceberg.EntryStatusEXISTING, iceberg.EntryStatusDELETED} {
		b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, fmt.Sprintf("s3://b/f%d.parquet", i), iceberg.ParquetFile,
			part, map[int]string{1000: "date", 1002: "decimal"}, map[int]int{1002: 4}, 10, 100)
		if err != nil {
			t.Fatal(err)
		}
		lo, _ := iceberg.NewLiteral(int64(5)).MarshalBinary()
		df := b.LowerBoundValues(map[int][]byte{4: lo}).NullValueCounts(map[int]int64{4: 0}).ValueCounts(map[int]int64{4: 10}).Build()
		snap, seq, fseq := int64(40+i), int64(3+i), int64(3+i)
		entries = append(entries, iceberg.NewManifestEntry(status, &snap, &seq, &fseq, df))
	}
	var buf bytes.Buffer
	if _, err := iceberg.WriteManifest("s3://b/m.avro", &buf, 2, spec, schema, 42, entries); err != nil {
		t.Fatal(err)
	}
	three, _ := iceberg.NewLiteral(int64(3)).MarshalBinary()
	out, err := PatchManifest(buf.Bytes(), map[string]Metrics{"s3://b/f1.parquet": {4: {Values: 10, Nulls: 2, Lower: three}}})
	if err != nil {
		t.Fatal(err)
	}
	mf := iceberg.NewManifestFile(2, "s3://b/m.avro", int64(len(out)), 0, 42).SequenceNum(5, 3).Build()
	got, err := iceberg.ReadManifest(mf, bytes.NewReader(out), false)
	if err != nil || len(got) != 3 {
		t.Fatalf("read back %d entries: %v", len(got), err)
	}
	for i, e := range got {
		want := entries[i]
		if e.Status() != want.Status() || e.SnapshotID() != want.SnapshotID() || e.SequenceNum() != want.SequenceNum() || *e.FileSequenceNum() != *want.FileSequenceNum() {
			t.Errorf("entry %d: status %v snapshot %d seq %d, want %v %d %d", i, e.Status(), e.SnapshotID(), e.SequenceNum(), want.Status(), want.SnapshotID(), want.SequenceNum())
		}
		p := e.DataFile().Partition()
		if fmt.Sprint(p[1000]) != fmt.Sprint(part[1000]) || fmt.Sprint(p[1001]) != fmt.Sprint(part[1001]) || fmt.Sprint(p[1002]) != fmt.Sprint(part[1002]) {
			t.Errorf("entry %d: partition %v, want %v", i, p, part)
		}
		lo, nulls := e.DataFile().LowerBoundValues()[4], e.DataFile().NullValueCounts()[4]
		if i == 1 && (!bytes.Equal(lo, three) || nulls != 2) {
			t.Errorf("the patched file reads back lower %x nulls %d", lo, nulls)
		}
		if i != 1 && (bytes.Equal(lo, three) || nulls != 0) {
			t.Errorf("entry %d changed: lower %x nulls %d", i, lo, nulls)
		}
	}
}

// TestExactZeroBoundsAreRight: bounds exact in Iceberg's order, as Iceberg
// Java writes them (0.0 for a file whose least value is 0.0), are no
// finding; nor are the widened ones lakeswap writes; a bound that leaves
// out the file's -0.0 is.
func TestExactZeroBoundsAreRight(t *testing.T) {
	neg := math.Copysign(0, -1)
	b := func(f float64) []byte { v, _ := iceberg.NewLiteral(f).MarshalBinary(); return v }
	for _, c := range []struct {
		min, max, lower, upper float64
		wrong                  bool
	}{
		{0, 2.5, 0, 2.5, false},
		{neg, neg, neg, neg, false},
		{0, 0, neg, 0, false},
		{neg, 1, 0, 1, true},
		{0, 0, 0, neg, true},
	} {
		col := &Column{ID: 1, Name: "x", Type: iceberg.PrimitiveTypes.Float64, Values: 2, Min: c.min, Max: c.max}
		bld, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, "f.parquet", iceberg.ParquetFile, nil, nil, nil, 2, 10)
		if err != nil {
			t.Fatal(err)
		}
		df := bld.LowerBoundValues(map[int][]byte{1: b(c.lower)}).UpperBoundValues(map[int][]byte{1: b(c.upper)}).Build()
		got := CheckFile(df, &File{Path: "f.parquet", Rows: 2, Columns: map[int]*Column{1: col}})
		if (len(got) > 0) != c.wrong {
			t.Errorf("rows %v..%v, bounds %v..%v: findings %v, want wrong=%v", c.min, c.max, c.lower, c.upper, got, c.wrong)
		}
	}
}
