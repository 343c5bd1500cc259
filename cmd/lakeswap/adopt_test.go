package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
)

// tableFolder is the local folder of retail.daily_orders in a home.
func tableFolder(t *testing.T, home string) string {
	t.Helper()
	tbl, err := openHome(t, home).LoadTable(context.Background(), []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(tbl.Location(), "file://")
}

// writeWithLakeswap writes rows with lakeswap's own Parquet writer (field
// ids, the table's Arrow schema) into dir.
func writeWithLakeswap(t *testing.T, c *contract.Contract, dir string, lines []string) string {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
	defer b.Release()
	for _, l := range lines {
		f := strings.Split(l, ",")
		var day int32
		var count, amount int64
		if _, err := fmt.Sscan(f[0][8:], &day); err != nil {
			t.Fatal(err)
		}
		fmt.Sscan(f[2], &count)
		fmt.Sscan(f[3], &amount)
		b.Field(0).(*array.Date32Builder).Append(arrow.Date32(20454 + day - 1))
		b.Field(1).(*array.StringBuilder).Append(f[1])
		b.Field(2).(*array.Int64Builder).Append(count)
		b.Field(3).(*array.Int64Builder).Append(amount)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w := parquetio.NewWriter(icebergio.LocalFS{}, dir, c.Arrow, parquetio.Options{})
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	files, err := w.Close()
	if err != nil || len(files) != 1 {
		t.Fatalf("wrote %v, err %v", files, err)
	}
	return files[0].Path
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAdopt publishes files another engine wrote under the table's location
// (a plain pqarrow file without field ids and one of lakeswap's writer) as
// they are, and refuses by name a file with rows of two partitions, one
// outside the table's location, one a snapshot already references and one
// of another schema, each time leaving the table and the files as they were.
func TestAdopt(t *testing.T) {
	home := newHome(t)
	folder := tableFolder(t, home)
	lines := orderLines(4_000, 2)
	var day1, day2 []string
	for _, l := range lines {
		if strings.HasPrefix(l, "2026-01-01") {
			day1 = append(day1, l)
		} else {
			day2 = append(day2, l)
		}
	}
	// iceberg-go gives a table a name mapping when it creates it; without
	// one, adopting a file without field ids must add it.
	cat := openHome(t, home)
	tbl0, err := cat.LoadTable(context.Background(), []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl0.NewTransaction()
	if err := tx.RemoveProperties([]string{table.DefaultNameMappingKey}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(folder, "data", "engine-run-7")
	plain := writeFile(t, filepath.Join(out, "part-0.parquet"), ordersParquet(t, day1))
	own := strings.TrimPrefix(writeWithLakeswap(t, ordersContract(t), "file://"+filepath.Join(out, "own"), day2), "file://")

	code, outJSON, errs := cli(t, home, "-o", "json", "publish", "--adopt", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", twoDays, out)
	if code != 0 {
		t.Fatalf("adopt: exit %d: %s%s", code, outJSON, errs)
	}
	var res struct {
		RunID string `json:"run_id"`
		Plan  struct {
			RunID       string `json:"run_id"`
			Fingerprint struct {
				Rows int64  `json:"rows"`
				Hash string `json:"hash"`
			} `json:"fingerprint"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(outJSON), &res); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%d rows, %s", res.Plan.Fingerprint.Rows, res.Plan.Fingerprint.Hash)
	if want := publishedFingerprint(t, twoDays, writeCSVLines(t, filepath.Join(t.TempDir(), "same.csv"), lines)); got != want {
		t.Errorf("adopted %s, the same rows staged %s", got, want)
	}
	tbl, err := openHome(t, home).LoadTable(context.Background(), []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tbl.Metadata().Properties()[table.DefaultNameMappingKey]; !ok {
		t.Error("adopting a file without field ids left the table without a name mapping")
	}
	live := liveFiles(t, tbl)
	for _, f := range []string{plain, own} {
		if !live["file://"+f] {
			t.Errorf("%s is not among the table's files %v: it was not adopted as it is", f, live)
		}
	}
	if code, outV, errs := cli(t, home, "verify", "--table", "retail.daily_orders", "--run", res.Plan.RunID); code != 0 {
		t.Errorf("verify: exit %d: %s%s", code, outV, errs)
	}

	other := t.TempDir()
	mixed := writeFile(t, filepath.Join(folder, "data", "engine-run-8", "mixed.parquet"), ordersParquet(t, lines[:10]))
	outside := writeFile(t, filepath.Join(other, "outside.parquet"), ordersParquet(t, day1[:10]))
	wide := writeFile(t, filepath.Join(folder, "data", "engine-run-9", "wide.parquet"), widerParquet(t))
	staged := writeFile(t, filepath.Join(folder, "data", "order_date=2026-01-01", "run-job-7-0a1b2c3d", "part-00000.parquet"), ordersParquet(t, day1[:10]))
	partial := writeFile(t, filepath.Join(folder, "data", "engine-run-10", "partial.parquet"), partialIDsParquet(t))
	link := filepath.Join(folder, "data", "engine-run-11", "link.parquet")
	alias := filepath.Join(folder, "data", "engine-run-11", "alias.parquet")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(plain, alias); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ file, says string }{
		"rows of two partitions":        {mixed, "outside"},
		"outside the location":          {outside, "outside the table's location"},
		"already referenced":            {plain, "already references"},
		"another schema":                {wide, "columns"},
		"another run's staging":         {staged, "lakeswap stages a run into"},
		"ids on some columns":           {partial, "ids on every column or on none"},
		"a link to a file outside":      {link, "symbolic link"},
		"a link to a file of the table": {alias, "symbolic link"},
	} {
		t.Run(name, func(t *testing.T) {
			before, files := metadataLocation(t, home), warehouseFiles(t, home)
			code, out, errs := cli(t, home, "-o", "json", "publish", "--adopt", "--table", "retail.daily_orders", "--partitions", twoDays, tc.file)
			if code != exitRefused || !strings.Contains(out, tc.file) || !strings.Contains(out, tc.says) {
				t.Errorf("exit %d, want %d naming %s and saying %q:\n%s%s", code, exitRefused, tc.file, tc.says, out, errs)
			}
			if metadataLocation(t, home) != before || strings.Join(warehouseFiles(t, home), " ") != strings.Join(files, " ") {
				t.Error("a refused adoption changed the table or its files")
			}
			if _, err := os.Stat(tc.file); err != nil {
				t.Errorf("the refused file is gone: %v", err)
			}
		})
	}
}

// partialIDsParquet is a file whose first two columns carry Iceberg field
// ids and the others none.
func partialIDsParquet(t *testing.T) []byte {
	t.Helper()
	id := func(n string) arrow.Metadata { return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{n}) }
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "order_date", Type: arrow.FixedWidthTypes.Date32, Metadata: id("1")},
		{Name: "channel", Type: arrow.BinaryTypes.String, Metadata: id("2")},
		{Name: "order_count", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount_cents", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	return parquetOf(t, sc, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Date32Builder).Append(20454)
		b.Field(1).(*array.StringBuilder).Append("web")
		b.Field(2).(*array.Int64Builder).Append(1)
		b.Field(3).(*array.Int64Builder).Append(100)
	})
}

// widerParquet is a file with a column the table lacks.
func widerParquet(t *testing.T) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "order_date", Type: arrow.FixedWidthTypes.Date32},
		{Name: "channel", Type: arrow.BinaryTypes.String},
		{Name: "order_count", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount_cents", Type: arrow.PrimitiveTypes.Int64},
		{Name: "coupon", Type: arrow.BinaryTypes.String},
	}, nil)
	return parquetOf(t, sc, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Date32Builder).Append(20454)
		b.Field(1).(*array.StringBuilder).Append("web")
		b.Field(2).(*array.Int64Builder).Append(1)
		b.Field(3).(*array.Int64Builder).Append(100)
		b.Field(4).(*array.StringBuilder).Append("SAVE10")
	})
}

// liveFiles lists the data files of a table's current snapshot.
func liveFiles(t *testing.T, tbl *table.Table) map[string]bool {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := tbl.CurrentSnapshot().Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range manifests {
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			out[e.DataFile().FilePath()] = true
		}
	}
	return out
}

// TestAdoptRefusesWrongFooterStatistics: a file whose own Parquet
// statistics leave out a value it holds (its footer's min of channel
// raised above the least channel) is refused by name before anything is
// committed: readers that skip row groups by them would lose its rows, and
// no manifest can mend a footer.
func TestAdoptRefusesWrongFooterStatistics(t *testing.T) {
	home := newHome(t)
	folder := tableFolder(t, home)
	lines := []string{"2026-01-01,app,1,100", "2026-01-01,web,2,200", "2026-01-01,store,1,50"}
	path := strings.TrimPrefix(writeWithLakeswap(t, ordersContract(t), "file://"+filepath.Join(folder, "data", "engine-run-9"), lines), "file://")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The footer is the thrift-encoded metadata before its 4-byte length
	// and "PAR1"; only there is "app" raised to "apq".
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	footer := len(data) - 8 - n
	patched := append(slices.Clone(data[:footer]), bytes.ReplaceAll(data[footer:], []byte("app"), []byte("apq"))...)
	if bytes.Equal(patched, data) {
		t.Fatal("the footer names no min of app to raise")
	}
	writeFile(t, path, patched)
	meta := metadataLocation(t, home)
	code, out, errs := cli(t, home, "publish", "--adopt", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", path)
	if code != exitRefused || !strings.Contains(out+errs, "its Parquet statistics leave out rows it holds") || !strings.Contains(out+errs, `"apq"`) {
		t.Fatalf("adopt of a file with a wrong footer: exit %d, want 3 naming it:\n%s%s", code, out, errs)
	}
	if metadataLocation(t, home) != meta {
		t.Error("the refused adopt committed")
	}
}
