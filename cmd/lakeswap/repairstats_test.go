package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

const itemsYAML = `table: shop.items
columns:
  - {name: region, type: string, required: true}
  - {name: sku, type: string}
  - {name: n, type: long, required: true}
identifier: [region, n]
partition: [{column: region, transform: identity}]
`

// TestRepairStats: a table whose statistics other engines prune on were
// written wrong through iceberg-go's own API (a file's lower bound above its
// least value; a manifest holding partition the empty string summarised, as iceberg-go
// writes it, with no lower bound) loses rows to a filtered scan. verify
// --table names both (exit 6); repair-stats --dry-run commits nothing;
// repair-stats mends them in one replace snapshot that touches no data
// file, after which verify is clean and every filter plans the files.
func TestRepairStats(t *testing.T) {
	for _, name := range []string{"sqlite+local", "postgres+minio"} {
		t.Run(name, func(t *testing.T) { testRepairStats(t, newSite(t, name)) })
	}
}

func testRepairStats(t *testing.T, s *site) {
	ctx := context.Background()
	home := s.home
	cli := func(_ *testing.T, _ string, args ...string) (int, string, string) { return s.cli(args...) }
	schema := write(t, home, "items.yaml", itemsYAML)
	if code, _, errs := cli(t, home, "table", "create", "--schema", schema); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	in := write(t, home, "items.ndjson", `{"region":"eu","sku":"a","n":1}
{"region":"eu","sku":"","n":2}
{"region":"us","sku":"b","n":3}
{"region":"us","n":4}
`)
	if code, _, errs := cli(t, home, "publish", "--run-id", "first", "--table", "shop.items", "--partitions", "region=eu,us", in); code != 0 {
		t.Fatalf("publish: exit %d: %s", code, errs)
	}
	if code, out, errs := cli(t, home, "verify", "--table", "shop.items"); code != 0 {
		t.Fatalf("verify of lakeswap's own commit: exit %d: %s%s", code, out, errs)
	}

	ctx, cat, _, err := openPublisher(ctx, siteConfig(t, s), noLog())
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	ident := table.Identifier{"shop", "items"}
	load := func() *table.Table {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	// Another writer appends partition '' through iceberg-go.
	tbl := load()
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	b.Field(0).(*array.StringBuilder).Append("")
	b.Field(1).(*array.StringBuilder).Append("c")
	b.Field(2).(*array.Int64Builder).Append(5)
	rec := b.NewRecordBatch()
	rdr, err := array.NewRecordReader(asc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// And states region=us's file with a lower bound of n above its rows.
	var us iceberg.DataFile
	for _, task := range planned(t, tbl, nil) {
		if task.Partition()[1000] == "us" {
			us = task
		}
	}
	if us == nil {
		t.Fatal("no file of region=us")
	}
	lower := map[int][]byte{}
	for k, v := range us.LowerBoundValues() {
		lower[k] = v
	}
	lower[3], _ = iceberg.NewLiteral(int64(4)).MarshalBinary() // the file holds 3 and 4
	// The same rows under a path of their own (iceberg-go will not
	// delete and add one path in one commit).
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open(us.FilePath())
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	copied := strings.Replace(us.FilePath(), "/region=us/", "/region=us/other-engine/", 1)
	if err := fsys.(icebergio.WriteFileIO).WriteFile(copied, data); err != nil {
		t.Fatal(err)
	}
	bld, err := iceberg.NewDataFileBuilder(*tbl.Metadata().PartitionSpecByID(0), iceberg.EntryContentData, copied, iceberg.ParquetFile,
		map[int]any{1000: "us"}, nil, nil, us.Count(), us.FileSizeBytes())
	if err != nil {
		t.Fatal(err)
	}
	wrong := bld.ValueCounts(us.ValueCounts()).NullValueCounts(us.NullValueCounts()).LowerBoundValues(lower).UpperBoundValues(us.UpperBoundValues()).Build()
	tx = tbl.NewTransaction()
	if err := tx.ReplaceDataFilesWithDataFiles(ctx, []iceberg.DataFile{us}, []iceberg.DataFile{wrong}, nil); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	// What a filtered scan loses.
	eu, empty := iceberg.EqualTo(iceberg.Reference("region"), "eu"), iceberg.EqualTo(iceberg.Reference("region"), "")
	three := iceberg.EqualTo(iceberg.Reference("n"), int64(3))
	if n := len(planned(t, tbl, empty)); n != 0 {
		t.Fatalf("region = '' plans %d files before the repair; the test expects iceberg-go's summary of '' to hide it", n)
	}
	if n := len(planned(t, tbl, three)); n != 0 {
		t.Fatalf("n = 3 plans %d files before the repair", n)
	}
	code, out, _ := cli(t, home, "verify", "--table", "shop.items")
	if code != exitVerifyFailed || !strings.Contains(out, "column n: lower bound 4, but the file holds 3") || !strings.Contains(out, "partition summary: has no bounds") {
		t.Fatalf("verify --table: exit %d, want 6 naming both:\n%s", code, out)
	}

	files := func(tbl *table.Table) []string {
		var out []string
		for _, f := range planned(t, tbl, nil) {
			out = append(out, f.FilePath())
		}
		slices.Sort(out)
		return out
	}
	before, metaBefore := files(tbl), tbl.MetadataLocation()
	if code, out, _ := cli(t, home, "repair-stats", "--table", "shop.items", "--dry-run"); code != exitVerifyFailed || load().MetadataLocation() != metaBefore {
		t.Fatalf("repair-stats --dry-run: exit %d (want 6), committed: %v\n%s", code, load().MetadataLocation() != metaBefore, out)
	}
	code, out, errs := cli(t, home, "-o", "json", "repair-stats", "--table", "shop.items")
	if code != 0 {
		t.Fatalf("repair-stats: exit %d:\n%s%s", code, out, errs)
	}
	var res struct {
		Status     string `json:"status"`
		Committed  string `json:"committed_snapshot_id"`
		Rewritten  int    `json:"manifests_rewritten"`
		Summaries  int    `json:"summaries_corrected"`
		FilesFixed int    `json:"files_corrected"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Status != "repaired" || res.Rewritten != 1 || res.FilesFixed != 1 || res.Summaries < 1 {
		t.Fatalf("repair-stats -o json: %v %+v\n%s", err, res, out)
	}
	tbl = load()
	head := tbl.CurrentSnapshot()
	if head.Summary.Operation != table.OpReplace || head.Summary.Properties["total-records"] != "5" {
		t.Errorf("the repair's snapshot: %+v", head.Summary)
	}
	if after := files(tbl); !slices.Equal(after, before) {
		t.Errorf("data files after the repair %v, before %v", after, before)
	}
	if n := len(planned(t, tbl, eu)); n != 1 {
		t.Errorf("region = 'eu' plans %d files after the repair, want 1", n)
	}
	if n := len(planned(t, tbl, three)); n != 1 {
		t.Errorf("n = 3 plans %d files after the repair, want 1", n)
	}
	if n := len(planned(t, tbl, empty)); n != 1 {
		t.Errorf("region = '' plans %d files after the repair, want 1", n)
	}
	if code, out, errs := cli(t, home, "verify", "--table", "shop.items"); code != 0 {
		t.Errorf("verify after the repair: exit %d:\n%s%s", code, out, errs)
	}
	if code, out, errs := cli(t, home, "verify", "--table", "shop.items", "--run", "first"); code != 0 {
		t.Errorf("verify --run of the first run after the repair: exit %d:\n%s%s", code, out, errs)
	}
	// Nothing left to repair: nothing committed.
	meta := tbl.MetadataLocation()
	if code, out, _ := cli(t, home, "repair-stats", "--table", "shop.items"); code != 0 || load().MetadataLocation() != meta {
		t.Errorf("a second repair-stats: exit %d, committed %v:\n%s", code, load().MetadataLocation() != meta, out)
	}
	if code, out, errs := cli(t, home, "history", "--table", "shop.items"); code != 0 {
		t.Errorf("history after the repair: exit %d:\n%s%s", code, out, errs)
	}
}

// planned lists the files iceberg-go's scan planning reads for a filter
// (every file for nil).
func planned(t *testing.T, tbl *table.Table, filter iceberg.BooleanExpression) []iceberg.DataFile {
	t.Helper()
	var opts []table.ScanOption
	if filter != nil {
		opts = append(opts, table.WithRowFilter(filter))
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []iceberg.DataFile
	for _, task := range tasks {
		out = append(out, task.File)
	}
	return out
}

// TestStatisticsOnEverySite: on every conformance site (REST included),
// a table partitioned by a string that holds the empty string and whose other columns
// hold the empty string, nulls, -0.0 and extremes publishes with statistics every
// engine can prune on: verify --table finds none wrong, repair-stats has
// nothing to do, and a filter on each partition plans its file.
func TestStatisticsOnEverySite(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--schema", write(t, s.home, "items.yaml", itemsYAML+`
`))
		in := write(t, s.home, "items.ndjson", `{"region":"","sku":"","n":-9223372036854775808}
{"region":"","sku":"a","n":2}
{"region":"eu","sku":"","n":3}
{"region":"eu","n":4}
{"region":"us","sku":"zz","n":9223372036854775807}
`)
		s.must("publish", "--table", "shop.items", "--partitions", `region="",eu,us`, in)
		if code, out, errs := s.cli("verify", "--table", "shop.items"); code != 0 {
			t.Fatalf("verify --table: exit %d\n%s%s", code, out, errs)
		}
		meta := s.metadata("shop.items")
		if code, out, errs := s.cli("repair-stats", "--table", "shop.items"); code != 0 || !strings.Contains(out, "0 wrong figures") || s.metadata("shop.items") != meta {
			t.Fatalf("repair-stats on a clean table: exit %d, committed %v\n%s%s", code, s.metadata("shop.items") != meta, out, errs)
		}
		ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
		if err != nil {
			t.Fatal(err)
		}
		defer cat.Close()
		tbl, err := cat.LoadTable(ctx, table.Identifier{"shop", "items"})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []iceberg.BooleanExpression{
			iceberg.EqualTo(iceberg.Reference("region"), ""), iceberg.EqualTo(iceberg.Reference("region"), "eu"),
			iceberg.EqualTo(iceberg.Reference("region"), "us"), iceberg.EqualTo(iceberg.Reference("sku"), ""),
			iceberg.IsNull(iceberg.Reference("sku")), iceberg.EqualTo(iceberg.Reference("n"), int64(math.MinInt64)),
		} {
			if n := len(planned(t, tbl, f)); n == 0 {
				t.Errorf("%s plans no file", f)
			}
		}
	})
}

// TestStatisticsOfAnUnreadableFile: a data file the table references that
// cannot be read is one finding of verify --table (exit 6), the rest of the
// table still checked; repair-stats lists it among what it cannot correct
// (exit 6) and commits nothing else for it.
func TestStatisticsOfAnUnreadableFile(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", write(t, home, "items.yaml", itemsYAML)); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	in := write(t, home, "items.ndjson", "{\"region\":\"eu\",\"n\":1}\n{\"region\":\"us\",\"n\":2}\n")
	if code, _, errs := cli(t, home, "publish", "--run-id", "items-1", "--table", "shop.items", "--partitions", "region=eu,us", in); code != 0 {
		t.Fatalf("publish: exit %d: %s", code, errs)
	}
	var eu string
	_ = filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.Contains(p, "/region=eu/") && strings.HasSuffix(p, ".parquet") {
			eu = p
		}
		return nil
	})
	if eu == "" || os.Remove(eu) != nil {
		t.Fatalf("no file of region=eu to remove (%q)", eu)
	}
	code, out, errs := cli(t, home, "verify", "--table", "shop.items")
	if code != exitVerifyFailed || !strings.Contains(out, "cannot be read") {
		t.Errorf("verify --table with a file gone: exit %d, want 6 naming it:\n%s%s", code, out, errs)
	}
	code, out, errs = cli(t, home, "repair-stats", "--table", "shop.items")
	if code != exitVerifyFailed || !strings.Contains(out+errs, "cannot be read") {
		t.Errorf("repair-stats with a file gone: exit %d, want 6 naming it:\n%s%s", code, out, errs)
	}
	// verify --run says the same fact with the same code, for a file gone
	// and for one that does not decode.
	code, out, errs = cli(t, home, "verify", "--table", "shop.items", "--run", "items-1")
	if code != exitVerifyFailed || !strings.Contains(errs, "partition region=eu") || !strings.Contains(errs, "cannot be read") {
		t.Errorf("verify --run with a file gone: exit %d, want 6 naming it:\n%s%s", code, out, errs)
	}
	if err := os.WriteFile(eu, []byte("PAR1 not a parquet file PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = cli(t, home, "verify", "--table", "shop.items", "--run", "items-1")
	if code != exitVerifyFailed || !strings.Contains(errs, "cannot be read") {
		t.Errorf("verify --run with a file that does not decode: exit %d, want 6:\n%s%s", code, out, errs)
	}
	if code, out, errs = cli(t, home, "verify", "--table", "shop.items"); code != exitVerifyFailed {
		t.Errorf("verify --table with a file that does not decode: exit %d, want 6:\n%s%s", code, out, errs)
	}
}

// TestRepairStatsOfDeletes: an engine writes a table merge-on-read through
// iceberg-go and deletes a row of the empty partition: iceberg-go summarises the
// delete manifest with no bounds, so a scan filtered on r = "" skips the
// delete manifest and reads the deleted row back. verify --table names the
// summary; repair-stats mends it, after which the filtered scan applies
// the delete.
func TestRepairStatsOfDeletes(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "r", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	createEngineTable(t, s, "dels", sc, iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "r", Transform: iceberg.IdentityTransform{}}))
	asArrow, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	change := func(f func(*table.Transaction) error) {
		ctx, tbl, done := engineTable(t, s, "dels")
		defer done()
		tx := tbl.NewTransaction()
		if err := f(tx); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	change(func(tx *table.Transaction) error {
		if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
			return err
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, asArrow)
		defer b.Release()
		for i, r := range []string{"", "", "eu"} {
			b.Field(0).(*array.StringBuilder).Append(r)
			b.Field(1).(*array.Int64Builder).Append(int64(i + 1))
		}
		rec := b.NewRecordBatch()
		rr, err := array.NewRecordReader(asArrow, []arrow.RecordBatch{rec})
		if err != nil {
			return err
		}
		return tx.Append(t.Context(), rr, nil)
	})
	change(func(tx *table.Transaction) error {
		// By id alone: a filter on r = '' would itself skip the manifest.
		return tx.Delete(t.Context(), iceberg.EqualTo(iceberg.Reference("id"), int64(1)), nil)
	})
	deletesFor := func() int {
		ctx, tbl, done := engineTable(t, s, "dels")
		defer done()
		tasks, err := tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("r"), ""))).PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, task := range tasks {
			n += len(task.DeleteFiles)
		}
		return n
	}
	if n := deletesFor(); n != 0 {
		t.Fatalf("r = '' plans %d delete files before the repair; the test expects iceberg-go's summary of '' to hide the delete", n)
	}
	code, out, errs := s.cli("verify", "--table", "eng.dels")
	if code != exitVerifyFailed || !strings.Contains(out, "partition summary") {
		t.Fatalf("verify --table: exit %d, want 6 naming the delete manifest's summary:\n%s%s", code, out, errs)
	}
	if code, out, errs := s.cli("repair-stats", "--table", "eng.dels"); code != 0 {
		t.Fatalf("repair-stats: exit %d:\n%s%s", code, out, errs)
	}
	if n := deletesFor(); n != 1 {
		t.Errorf("r = '' plans %d delete files after the repair, want 1", n)
	}
	if code, out, errs := s.cli("verify", "--table", "eng.dels"); code != 0 {
		t.Errorf("verify after the repair: exit %d:\n%s%s", code, out, errs)
	}
}
