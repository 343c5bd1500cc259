package stats

import (
	"bytes"
	"math"
	"testing"

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
