package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"
	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/testenv"
)

// ordersParquet is retail.daily_orders rows as a Parquet file, written by a
// plain pqarrow writer as engines write: no field ids, every column
// optional, though the table requires them.
func ordersParquet(t *testing.T, lines []string) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "order_date", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "channel", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "order_count", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "amount_cents", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	return parquetOf(t, sc, func(b *array.RecordBuilder) {
		for _, l := range lines {
			var day, count, amount int64
			f := strings.Split(l, ",")
			fmt.Sscanf(f[0], "2026-01-%d", &day)
			fmt.Sscan(f[2], &count)
			fmt.Sscan(f[3], &amount)
			b.Field(0).(*array.Date32Builder).Append(arrow.Date32(20454 + day - 1)) // 2026-01-01 is day 20454
			b.Field(1).(*array.StringBuilder).Append(f[1])
			b.Field(2).(*array.Int64Builder).Append(count)
			b.Field(3).(*array.Int64Builder).Append(amount)
		}
	})
}

// parquetOf writes the rows fill appends as a Parquet file with a plain
// pqarrow writer.
func parquetOf(t *testing.T, sc *arrow.Schema, fill func(*array.RecordBuilder)) []byte {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	fill(b)
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func putObject(t *testing.T, srv *testenv.S3, bucket, key string, data []byte) {
	t.Helper()
	if _, err := srv.Client.PutObject(context.Background(), bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}

func csvBytes(lines []string) []byte {
	return []byte(ordersHeader + "\n" + strings.Join(lines, "\n") + "\n")
}

// TestPublishFromS3 publishes Parquet and CSV objects named by a glob and a
// prefix, on a table whose warehouse is on MinIO too, and finds in the
// run's snapshot exactly the objects it read, with sizes and ETags, and the
// same content as the same rows published from local files.
func TestPublishFromS3(t *testing.T) {
	srv, warehouse, props := s3Props(t)
	_ = warehouse
	in := srv.NewBucket(t)
	lines := orderLines(9_000, 3)
	putObject(t, srv, in, "exports/part-0.parquet", ordersParquet(t, lines[:3000]))
	putObject(t, srv, in, "exports/part-1.parquet", ordersParquet(t, lines[3000:6000]))
	putObject(t, srv, in, "exports/notes.txt", []byte("not matched by the glob"))
	putObject(t, srv, in, "csv/part-2.csv", csvBytes(lines[6000:]))
	putObject(t, srv, in, "csv/_SUCCESS", nil)

	home := t.TempDir()
	config := writeCatalogConfig(t, home, props)
	schema := write(t, home, "daily_orders.yaml", schemaYAML)
	if code, _, errs := cli(t, home, "--config", config, "--catalog", "s3", "table", "create", "--schema", schema); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	const days = "order_date=2026-01-01..2026-01-03"
	code, out, errs := cli(t, home, "--config", config, "--catalog", "s3", "-o", "json", "publish", "--table", "retail.daily_orders", "--partitions", days,
		"s3://"+in+"/exports/*.parquet", "s3://"+in+"/csv/")
	if code != 0 {
		t.Fatalf("publish: exit %d: %s%s", code, out, errs)
	}
	var res struct {
		Plan struct {
			Inputs      []runrecord.Input `json:"inputs"`
			Fingerprint struct {
				Hash string `json:"hash"`
			} `json:"fingerprint"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, o := range res.Plan.Inputs {
		if o.Size <= 0 || o.ETag == "" {
			t.Errorf("input %+v lacks its size or ETag", o)
		}
		urls = append(urls, o.URL)
	}
	want := []string{"s3://" + in + "/exports/part-0.parquet", "s3://" + in + "/exports/part-1.parquet", "s3://" + in + "/csv/part-2.csv"}
	if strings.Join(urls, " ") != strings.Join(want, " ") {
		t.Errorf("the run read %v, want %v", urls, want)
	}
	// The snapshot records the same list.
	cat := openS3Catalog(t, props)
	tbl, err := cat.LoadTable(context.Background(), []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	// Read as lakeswap reads a run: from the summary, and the run file it
	// names where the detail outgrew the summary.
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec, ok, err := runrecord.NewLoader(fsys).Snapshot(tbl.CurrentSnapshot())
	if err != nil || !ok || rec.InputCount != 3 || rec.InputsHash != runrecord.InputsHash(res.Plan.Inputs) || len(rec.Inputs) != 3 {
		t.Errorf("snapshot records inputs %+v (count %d, hash %s)", rec.Inputs, rec.InputCount, rec.InputsHash)
	}
	// The same rows from a local file give the same content.
	local := writeCSVLines(t, filepath.Join(t.TempDir(), "all.csv"), lines)
	if got := publishedFingerprint(t, days, local); !strings.HasSuffix(got, res.Plan.Fingerprint.Hash) {
		t.Errorf("local publish %s, S3 publish %s", got, res.Plan.Fingerprint.Hash)
	}
	// A glob matching nothing is a usage error.
	if code, _, errs := cli(t, home, "--config", config, "--catalog", "s3", "publish", "--table", "retail.daily_orders", "--partitions", days,
		"s3://"+in+"/exports/*.csv.gz"); code != exitUsage || !strings.Contains(errs, "matches no file") {
		t.Errorf("glob matching nothing: exit %d: %s", code, errs)
	}
}

// TestObjectsReadAsListed: an object written under the prefix after the
// listing is not read, and an object rewritten after it is refused, never
// read in its new form.
func TestObjectsReadAsListed(t *testing.T) {
	srv, _, props := s3Props(t)
	in := srv.NewBucket(t)
	lines := orderLines(100, 1)
	putObject(t, srv, in, "day/a.csv", csvBytes(lines[:50]))
	putObject(t, srv, in, "day/b.csv", csvBytes(lines[50:]))
	ctx := context.Background()
	store, err := inputStore(ctx, props, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	objs, err := source.ListObjects(ctx, store, "s3://"+in+"/day/")
	if err != nil || len(objs) != 2 {
		t.Fatalf("listed %v, err %v", objs, err)
	}
	putObject(t, srv, in, "day/c.csv", csvBytes(orderLines(200, 1)[100:])) // lands after the listing
	read := func() (int64, []source.Object, error) {
		byURL := map[string]source.Object{}
		var files []string
		for _, o := range objs {
			byURL[o.URL] = o
			files = append(files, o.URL)
		}
		src, err := source.ReadFiles(ctx, ordersContract(t), ordersContract(t).Partition.Declared([]string{"2026-01-01"}), files, source.Options{Store: store, Objects: byURL, SpillDir: t.TempDir()})
		if err != nil {
			return 0, nil, err
		}
		defer src.Release()
		rr, _ := src.Open(ctx, "2026-01-01")
		defer rr.Release()
		var rows int64
		for rr.Next() {
			rows += rr.RecordBatch().NumRows()
		}
		return rows, src.Objects(), nil
	}
	rows, read1, err := read()
	if err != nil || rows != 100 || len(read1) != 2 {
		t.Errorf("read %d rows from %v, err %v; want the 100 rows of the two listed objects", rows, read1, err)
	}
	putObject(t, srv, in, "day/b.csv", csvBytes(lines[50:60])) // rewritten after the listing
	if rows, _, err := read(); !errors.Is(err, s3store.ErrChanged) {
		t.Errorf("a rewritten object: %d rows, err %v; want ErrChanged", rows, err)
	}
}

// s3Props are the properties of an SQLite catalog whose warehouse is a
// fresh MinIO bucket, with the server's credentials in the AWS environment.
func s3Props(t *testing.T) (*testenv.S3, string, map[string]string) {
	t.Helper()
	srv := serverEnv(t)
	bucket := srv.NewBucket(t)
	return srv, bucket, map[string]string{
		"type": "sql", "warehouse": "s3://" + bucket + "/warehouse",
		s3store.PropEndpoint: srv.Endpoint, s3store.PropRegion: srv.Region,
		"sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri": "file:" + filepath.Join(t.TempDir(), "catalog.db") + "?_pragma=busy_timeout(10000)",
	}
}

// writeCatalogConfig writes a lakeswap.yaml defining the catalog "s3".
func writeCatalogConfig(t *testing.T, dir string, props map[string]string) string {
	t.Helper()
	var yaml strings.Builder
	yaml.WriteString("catalog:\n  s3:\n")
	for k, v := range props {
		fmt.Fprintf(&yaml, "    %s: %q\n", k, v)
	}
	return write(t, dir, "catalog.yaml", yaml.String())
}

func openS3Catalog(t *testing.T, props map[string]string) *s3Loader {
	t.Helper()
	ctx, cat, _, err := openPublisher(context.Background(), catalog.Config{Name: "s3", Props: props, Source: "test"}, noLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return &s3Loader{ctx: ctx, cat: cat}
}

// s3Loader loads tables with the AWS configuration in its context.
type s3Loader struct {
	ctx context.Context
	cat *catalog.Catalog
}

func (l *s3Loader) LoadTable(_ context.Context, ident table.Identifier) (*table.Table, error) {
	return l.cat.LoadTable(l.ctx, ident)
}

// ordersContract is retail.daily_orders' contract.
func ordersContract(t *testing.T) *contract.Contract {
	t.Helper()
	c, err := retail.Contract()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAdoptOnS3 adopts Parquet objects another engine wrote under the
// table's location on MinIO, named by their prefix, and verifies the run.
func TestAdoptOnS3(t *testing.T) {
	srv, _, props := s3Props(t)
	home := t.TempDir()
	config := writeCatalogConfig(t, home, props)
	schema := write(t, home, "daily_orders.yaml", schemaYAML)
	if code, _, errs := cli(t, home, "--config", config, "--catalog", "s3", "table", "create", "--schema", schema); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	loader := openS3Catalog(t, props)
	tbl, err := loader.LoadTable(context.Background(), []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(tbl.Location(), "s3://"), "/")
	var days [2][]string // the engine wrote a file a day
	for i, l := range orderLines(2_000, 2) {
		days[i%2] = append(days[i%2], l)
	}
	putObject(t, srv, bucket, key+"/data/engine-1/part-0.parquet", ordersParquet(t, days[0]))
	putObject(t, srv, bucket, key+"/data/engine-1/part-1.parquet", ordersParquet(t, days[1]))
	putObject(t, srv, bucket, key+"/data/engine-1/_SUCCESS", nil)
	code, out, errs := cli(t, home, "--config", config, "--catalog", "s3", "-o", "json", "publish", "--adopt", "--table", "retail.daily_orders",
		"--partitions", twoDays, "s3://"+bucket+"/"+key+"/data/engine-1/")
	if code != 0 {
		t.Fatalf("adopt: exit %d: %s%s", code, out, errs)
	}
	var res struct {
		Plan struct {
			RunID string `json:"run_id"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := cli(t, home, "--config", config, "--catalog", "s3", "verify", "--table", "retail.daily_orders", "--run", res.Plan.RunID); code != 0 {
		t.Errorf("verify: exit %d: %s%s", code, out, errs)
	}
}

// TestS3InputWithoutCatalogEndpoint: on the embedded catalog, whose
// properties name no S3 endpoint, an s3:// input is read through the AWS
// chain with AWS_ENDPOINT_URL_S3 naming the store, in a real process with
// the machine's environment, and published.
func TestS3InputWithoutCatalogEndpoint(t *testing.T) {
	srv := testenv.MinIO(t)
	in := srv.NewBucket(t)
	putObject(t, srv, in, "exports/day.csv", csvBytes(orderLines(300, 2)))
	home := newHome(t)
	before := metadataLocation(t, home)
	cmd := exec.Command(lakeswapBinary(t), "--home", home, "--config", os.DevNull, "publish", "--allow-implausible",
		"--table", "retail.daily_orders", "--partitions", twoDays, "s3://"+in+"/exports/day.csv")
	cmd.Env = append(append(os.Environ(), srv.Env()...), "AWS_ENDPOINT_URL_S3="+srv.Endpoint, "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("publish of an s3:// input with no catalog endpoint: %v\n%s", err, out)
	}
	if after := metadataLocation(t, home); after == before {
		t.Errorf("exit 0, but the metadata location stayed %s", before)
	}
}
