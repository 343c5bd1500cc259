package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

const ordersCSV = "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,100\n2026-01-01,shop,1,100\n"

// sumAmounts reads files and adds up amount_cents, or returns the error.
func sumAmounts(t *testing.T, files ...string) (int64, error) {
	t.Helper()
	src, err := ReadFiles(context.Background(), ordersContract(t), ordersContract(t).Partition.Declared([]string{"2026-01-01"}), files, Options{SpillDir: t.TempDir()})
	if err != nil {
		return 0, err
	}
	defer src.Release()
	rr, err := src.Open(context.Background(), "2026-01-01")
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var sum int64
	for rr.Next() {
		for _, v := range rr.RecordBatch().Column(3).(interface{ Int64Values() []int64 }).Int64Values() {
			sum += v
		}
	}
	return sum, rr.Err()
}

// TestCompressedInputIsChecked: a gzip member whose data no longer matches
// its checksum, and a zstd frame cut before its checksum, are refused,
// never read as far as they go.
func TestCompressedInputIsChecked(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.NoCompression) // stored: the text is in the file as is
	w.Write([]byte(ordersCSV))
	w.Close()
	bad := bytes.Replace(gz.Bytes(), []byte("web,1,100"), []byte("web,1,900"), 1)
	if bytes.Equal(bad, gz.Bytes()) {
		t.Fatal("the stored gzip does not hold the text")
	}
	badGz := filepath.Join(dir, "flipped.csv.gz")
	os.WriteFile(badGz, bad, 0o644)

	var zs bytes.Buffer
	zw, _ := zstd.NewWriter(&zs)
	zw.Write([]byte(ordersCSV))
	zw.Close()
	cutZst := filepath.Join(dir, "cut.csv.zst")
	os.WriteFile(cutZst, zs.Bytes()[:zs.Len()-4], 0o644)
	goodZst := filepath.Join(dir, "good.csv.zst")
	os.WriteFile(goodZst, zs.Bytes(), 0o644)

	for _, f := range []string{badGz, cutZst} {
		if sum, err := sumAmounts(t, f); err == nil || !strings.Contains(err.Error(), filepath.Base(f)) {
			t.Errorf("%s: read %d cents, err %v; want a refusal naming the file", filepath.Base(f), sum, err)
		}
	}
	if sum, err := sumAmounts(t, goodZst); err != nil || sum != 200 {
		t.Errorf("good.csv.zst: %d cents, err %v; want 200", sum, err)
	}
}

// TestTildeIsAFolderName: an input under a folder named ~ is that file, not
// one under the home folder.
func TestTildeIsAFolderName(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	os.WriteFile(filepath.Join(home, "day.csv"), []byte(strings.Replace(ordersCSV, "1,100", "1,99999", 1)), 0o644)
	os.Mkdir(filepath.Join(work, "~"), 0o755)
	os.WriteFile(filepath.Join(work, "~", "day.csv"), []byte(ordersCSV), 0o644)
	t.Chdir(work)
	files, err := ListInputs([]string{"~"})
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := sumAmounts(t, files...); err != nil || sum != 200 {
		t.Errorf("~/day.csv: %d cents, err %v; want the 200 of ./~/day.csv", sum, err)
	}
}
