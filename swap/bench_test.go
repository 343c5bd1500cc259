package swap_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// The benchmark's table: orders keyed by order_id, partitioned by day.
var benchSpec = catalog.TableSpec{
	Columns: []catalog.ColumnSpec{
		{Name: "order_id", Type: "long", Required: true},
		{Name: "channel", Type: "string", Required: true},
		{Name: "order_date", Type: "date", Required: true},
		{Name: "amount_cents", Type: "long", Required: true},
	},
	Identifier: []string{"order_id"},
	Partition:  []catalog.PartitionSpec{{Column: "order_date"}},
	Additive:   []string{"amount_cents"},
	Checks:     map[string][]string{"amount_cents": {"non-negative"}},
}

const (
	benchPartitions = 8
	benchBatchRows  = 64 << 10
)

// benchRows is BENCH_ROWS, default one million.
func benchRows(b *testing.B) int {
	if v := os.Getenv("BENCH_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("BENCH_ROWS=%q: %v", v, err)
		}
		return n
	}
	return 1_000_000
}

// benchData generates rows spread evenly over the partitions, in batches,
// with the table's Arrow schema. Generation is not measured.
type benchData struct {
	schema *arrow.Schema
	days   []string
	byDay  map[string][]arrow.RecordBatch
	rows   int
}

func newBenchData(b *testing.B, schema *arrow.Schema, rows int, order rowOrder) *benchData {
	return newBenchDataWith(b, schema, rows, order, func(id int64) string { return []string{"web", "store", "app"}[id%3] })
}

// rowOrder is the order of order_id within a partition: sorted, as a query
// with ORDER BY gives, or shuffled.
type rowOrder int

const (
	sorted rowOrder = iota
	shuffled
)

// newBenchDataWith generates rows whose channel is channel(order_id).
func newBenchDataWith(b *testing.B, schema *arrow.Schema, rows int, order rowOrder, channel func(int64) string) *benchData {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	d := &benchData{schema: schema, byDay: map[string][]arrow.RecordBatch{}, rows: rows}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	perDay := rows / benchPartitions
	for p := range benchPartitions {
		day := start.AddDate(0, 0, p)
		key := day.Format(time.DateOnly)
		d.days = append(d.days, key)
		ids := make([]int64, perDay)
		for i := range ids {
			ids[i] = int64(p*perDay + i + 1)
		}
		if order == shuffled {
			rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		}
		for left := perDay; left > 0; {
			n := min(left, benchBatchRows)
			bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			for _, id := range ids[perDay-left : perDay-left+n] {
				bld.Field(0).(*array.Int64Builder).Append(id)
				bld.Field(1).(*array.StringBuilder).Append(channel(id))
				bld.Field(2).(*array.Date32Builder).Append(arrow.Date32FromTime(day))
				bld.Field(3).(*array.Int64Builder).Append(id * 7919 % 100_000)
			}
			d.byDay[key] = append(d.byDay[key], bld.NewRecordBatch())
			bld.Release()
			left -= n
		}
	}
	d.rows = perDay * benchPartitions
	return d
}

func (d *benchData) Open(_ context.Context, partition string) (array.RecordReader, error) {
	return array.NewRecordReader(d.schema, d.byDay[partition])
}

func (d *benchData) all() []arrow.RecordBatch {
	var out []arrow.RecordBatch
	for _, day := range d.days {
		out = append(out, d.byDay[day]...)
	}
	return out
}

// BenchmarkPublish stages and publishes generated partitions and reports, in
// the same run, rows/s for lakeswap's staging (write, validation and
// fingerprint), for one plain pqarrow writer of the same batches, and for
// iceberg-go's own Append of the same rows, plus the fingerprint's share of
// single-threaded staging time. Staging and Append run on rows sorted by
// their key and on the same rows shuffled; staging also on a table that
// stores near-unique integers as deltas (lakeswap.parquet.delta-integers).
func BenchmarkPublish(b *testing.B) {
	ctx := context.Background()
	rows := benchRows(b)
	home := b.TempDir()
	cfg, err := catalog.Resolve(catalog.Settings{Home: home, ConfigFile: os.DevNull, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	newTable := func(name string) *table.Table {
		tbl, err := catalog.CreateTable(ctx, cat, table.Identifier{"bench", name}, benchSpec)
		if err != nil {
			b.Fatal(err)
		}
		return tbl
	}
	deltaSpec := benchSpec
	deltaSpec.Properties = map[string]string{contract.PropDeltaIntegers: "true"}
	first := newTable("probe")
	contract, err := contract.Of(first.Metadata())
	if err != nil {
		b.Fatal(err)
	}
	data := newBenchData(b, contract.Arrow, rows, sorted)
	unsorted := newBenchData(b, contract.Arrow, rows, shuffled)
	pub := &swap.Publisher{Catalog: cat}
	// Warm up once, unmeasured: the first staging in a process pays for
	// fresh heap and encoder pools, which a long backfill pays once.
	newTable("warmup")
	if _, err := pub.Stage(ctx, swap.Request{Table: table.Identifier{"bench", "warmup"}, Partitions: data.days, Source: data}); err != nil {
		b.Fatal(err)
	}
	stageTime := func(name string, spec catalog.TableSpec, d *benchData) time.Duration {
		if _, err := catalog.CreateTable(ctx, cat, table.Identifier{"bench", name}, spec); err != nil {
			b.Fatal(err)
		}
		settle()
		t0 := time.Now()
		plan, err := pub.Stage(ctx, swap.Request{Table: table.Identifier{"bench", name}, Partitions: d.days, Source: d})
		elapsed := time.Since(t0)
		if err != nil || plan.Refused() {
			b.Fatalf("stage %s: %v %v", name, err, plan.Findings)
		}
		return elapsed
	}
	// Totals over every iteration: one iteration of a million rows is noisy
	// on a shared two-core machine.
	var stage, stageUnsorted, stageDelta, stageDeltaUnsorted, publish, serial, fingerprint, plain, appendTime, appendUnsorted time.Duration
	var stageGCs int
	var stagedBytes int64
	var stageAlloc uint64
	for i := 0; i < b.N; i++ {
		// lakeswap staging, one writer per core.
		tbl := fmt.Sprintf("stage_%d", i)
		newTable(tbl)
		settle()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		gc0, alloc0 := ms.NumGC, ms.TotalAlloc
		t0 := time.Now()
		plan, err := pub.Stage(ctx, swap.Request{Table: table.Identifier{"bench", tbl}, Partitions: data.days, Source: data})
		stage += time.Since(t0)
		runtime.ReadMemStats(&ms)
		stageGCs += int(ms.NumGC - gc0)
		stageAlloc += ms.TotalAlloc - alloc0
		if err != nil || plan.Refused() {
			b.Fatalf("stage: %v %v", err, plan.Findings)
		}
		for _, pp := range plan.Partitions {
			for _, f := range pp.NewFiles {
				stagedBytes += f.Bytes
			}
		}

		// The same rows with order_id shuffled in each partition; both
		// orders again on a table that stores near-unique integers as
		// deltas.
		stageUnsorted += stageTime(fmt.Sprintf("unsorted_%d", i), benchSpec, unsorted)
		stageDelta += stageTime(fmt.Sprintf("delta_%d", i), deltaSpec, data)
		stageDeltaUnsorted += stageTime(fmt.Sprintf("delta_unsorted_%d", i), deltaSpec, unsorted)

		// The whole publish: stage, commit, read back and verify.
		tbl = fmt.Sprintf("publish_%d", i)
		newTable(tbl)
		settle()
		t0 = time.Now()
		if _, err := pub.Publish(ctx, swap.Request{Table: table.Identifier{"bench", tbl}, Partitions: data.days, Source: data}); err != nil {
			b.Fatal(err)
		}
		publish += time.Since(t0)

		// Staging on one core, and the fingerprint alone, for its share.
		tbl = fmt.Sprintf("serial_%d", i)
		newTable(tbl)
		settle()
		t0 = time.Now()
		if _, err := pub.Stage(ctx, swap.Request{Table: table.Identifier{"bench", tbl}, Partitions: data.days, Source: data, Parallelism: 1}); err != nil {
			b.Fatal(err)
		}
		serial += time.Since(t0)
		settle()
		t0 = time.Now()
		for _, day := range data.days {
			acc := verify.NewAccumulator(contract, day, nil)
			for _, rec := range data.byDay[day] {
				if err := acc.Add(rec); err != nil {
					b.Fatal(err)
				}
			}
			_ = acc.Result()
		}
		fingerprint += time.Since(t0)

		// One plain pqarrow writer, default properties but zstd.
		settle()
		t0 = time.Now()
		plainWrite(b, filepath.Join(home, fmt.Sprintf("plain_%d.parquet", i)), data)
		plain += time.Since(t0)

		// iceberg-go's own Append of the same rows, sorted and shuffled.
		appendTime += appendAll(b, newTable(fmt.Sprintf("append_%d", i)), data)
		appendUnsorted += appendAll(b, newTable(fmt.Sprintf("append_unsorted_%d", i)), unsorted)
	}
	rate := func(d time.Duration) float64 { return float64(data.rows) * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(stage), "stage-rows/s")
	b.ReportMetric(rate(stageUnsorted), "stage-unsorted-rows/s")
	b.ReportMetric(rate(stageDelta), "stage-delta-rows/s")
	b.ReportMetric(rate(stageDeltaUnsorted), "stage-delta-unsorted-rows/s")
	b.ReportMetric(rate(publish), "publish-rows/s")
	b.ReportMetric(rate(serial), "stage-1core-rows/s")
	b.ReportMetric(rate(plain), "pqarrow-rows/s")
	b.ReportMetric(rate(appendTime), "append-rows/s")
	b.ReportMetric(rate(appendUnsorted), "append-unsorted-rows/s")
	b.ReportMetric(100*fingerprint.Seconds()/serial.Seconds(), "fingerprint-%-of-1core-stage")
	// The targets, as ratios of the same run's rates: staging against one
	// plain pqarrow writer and against Append, on the same rows.
	b.ReportMetric(plain.Seconds()/stage.Seconds(), "stage/pqarrow-x")
	b.ReportMetric(appendTime.Seconds()/stage.Seconds(), "stage/append-x")
	b.ReportMetric(appendUnsorted.Seconds()/stageUnsorted.Seconds(), "stage/append-unsorted-x")
	b.ReportMetric(float64(data.rows), "rows")
	// Allocation drives collections, and a collection empties the pools
	// that Parquet's compressors and lakeswap's buffers are recycled from.
	b.ReportMetric(float64(stageAlloc)/float64(b.N)/float64(data.rows), "stage-alloc-B/row")
	b.ReportMetric(float64(stageGCs)/float64(b.N), "stage-gcs")
	b.ReportMetric(float64(stagedBytes)/float64(b.N)/float64(data.rows), "staged-B/row")
}

// settle collects the garbage the previous step left, so that no measured
// step pays for another's: at 10M rows a collection over the generated
// data, running beside the first staging, took it from 8.5M to 5M rows/s.
func settle() { runtime.GC() }

// appendAll times iceberg-go's Append of every row of d to tbl.
func appendAll(b *testing.B, tbl *table.Table, d *benchData) time.Duration {
	rr, err := array.NewRecordReader(d.schema, d.all())
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	settle()
	t0 := time.Now()
	if _, err := tbl.Append(context.Background(), rr, nil); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

func plainWrite(b *testing.B, path string, d *benchData) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(d.schema, f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)),
		pqarrow.DefaultWriterProps())
	if err != nil {
		b.Fatal(err)
	}
	for _, rec := range d.all() {
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStageS3 stages generated partitions to MinIO on loopback through
// lakeswap's S3 store (Parquet encoding, validation, fingerprint, checked
// conditional multipart uploads) and, in the same run, PUTs the same bytes
// as plain multipart uploads with the same client, reporting MB/s of both.
func BenchmarkStageS3(b *testing.B) {
	srv, bucket, props := s3Catalog(b)
	if v := os.Getenv("BENCH_S3_PARTS_IN_FLIGHT"); v != "" {
		props[s3store.PropPartsInFlight] = v
	}
	if n, err := strconv.Atoi(os.Getenv("BENCH_S3_PART_MIB")); err == nil && n > 0 {
		props[s3store.PropPartSize] = strconv.Itoa(n << 20)
	}
	// Parts sized as a publish under --memory-limit 1GiB on two cores
	// sizes them, where the variables above leave them.
	props = s3store.FitUploads(props, 1<<30/4/2)
	ctx, store, err := s3store.Attach(context.Background(), props)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.Open(ctx, catalog.Config{Name: "bench", Props: props, Source: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	newTable := func(name string) {
		if _, err := catalog.CreateTable(ctx, cat, table.Identifier{"bench", name}, benchSpec); err != nil {
			b.Fatal(err)
		}
	}
	newTable("probe")
	probe, _ := cat.LoadTable(ctx, table.Identifier{"bench", "probe"})
	contract, _ := contract.Of(probe.Metadata())
	// Channels that never repeat keep the files large enough (about 16
	// bytes a row) for the upload, not the request latency, to dominate.
	data := newBenchDataWith(b, contract.Arrow, 2*benchRows(b), sorted, func(id int64) string {
		return strconv.FormatUint(uint64(id)*0x9E3779B97F4A7C15, 36)
	})
	pub := &swap.Publisher{Catalog: cat, StagingIO: store.StagingIO()}
	// The same rows staged to local files, in the same run, for the ratio.
	localCfg, err := catalog.Resolve(catalog.Settings{Home: b.TempDir(), ConfigFile: os.DevNull, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	local, err := catalog.Open(context.Background(), localCfg)
	if err != nil {
		b.Fatal(err)
	}
	defer local.Close()
	localPub := &swap.Publisher{Catalog: local}

	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("s3_%d", i)
		if _, err := catalog.CreateTable(context.Background(), local, table.Identifier{"bench", name}, benchSpec); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if plan, err := localPub.Stage(context.Background(), swap.Request{Table: table.Identifier{"bench", name}, Partitions: data.days, Source: data}); err != nil || plan.Refused() {
			b.Fatalf("stage locally: %v", err)
		}
		localStage := time.Since(t0)

		newTable(name)
		t0 = time.Now()
		// BENCH_S3_PARALLELISM stages that many partitions at once (0: one a core).
		par, _ := strconv.Atoi(os.Getenv("BENCH_S3_PARALLELISM"))
		plan, err := pub.Stage(ctx, swap.Request{Table: table.Identifier{"bench", name}, Partitions: data.days, Source: data, Parallelism: par})
		stage := time.Since(t0)
		if err != nil || plan.Refused() {
			b.Fatalf("stage: %v", err)
		}
		var files [][]byte
		var bytesStaged int64
		for _, pp := range plan.Partitions {
			for _, f := range pp.NewFiles {
				obj, err := srv.Client.GetObject(ctx, bucket, strings.TrimPrefix(f.Path, "s3://"+bucket+"/"), minio.GetObjectOptions{})
				if err != nil {
					b.Fatal(err)
				}
				raw, err := io.ReadAll(obj)
				if err != nil {
					b.Fatal(err)
				}
				files = append(files, raw)
				bytesStaged += int64(len(raw))
			}
		}

		t0 = time.Now()
		for j, raw := range files {
			plainPut(b, ctx, store.Client(), bucket, fmt.Sprintf("plain/%d/%d", i, j), raw)
		}
		plain := time.Since(t0)

		mb := float64(bytesStaged) / (1 << 20)
		b.ReportMetric(mb/stage.Seconds(), "stage-MB/s")
		b.ReportMetric(mb/plain.Seconds(), "plain-put-MB/s")
		b.ReportMetric(float64(data.rows)/stage.Seconds(), "stage-rows/s")
		b.ReportMetric(float64(data.rows)/localStage.Seconds(), "local-stage-rows/s")
		b.ReportMetric(localStage.Seconds()/stage.Seconds(), "s3/local-x")
		b.ReportMetric(mb/stage.Seconds()/(mb/plain.Seconds()), "stage/plain-put-x")
		b.ReportMetric(mb, "MB")
	}
}

// plainPut uploads raw as a multipart upload in 16 MiB parts, with no
// checksum, condition or check: the baseline of the S3 path.
func plainPut(b *testing.B, ctx context.Context, c *s3.Client, bucket, key string, raw []byte) {
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		b.Fatal(err)
	}
	var parts []types.CompletedPart
	for n, off := int32(1), 0; off < len(raw) || n == 1; n++ {
		end := min(off+s3store.DefaultPartSize, len(raw))
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(raw[off:end])})
		if err != nil {
			b.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
		off = end
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		b.Fatal(err)
	}
}
