package swap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
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

func newBenchData(b *testing.B, schema *arrow.Schema, rows int) *benchData {
	b.Helper()
	d := &benchData{schema: schema, byDay: map[string][]arrow.RecordBatch{}, rows: rows}
	channels := []string{"web", "store", "app"}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id := int64(0)
	perDay := rows / benchPartitions
	for p := range benchPartitions {
		day := start.AddDate(0, 0, p)
		key := day.Format(time.DateOnly)
		d.days = append(d.days, key)
		for left := perDay; left > 0; {
			n := min(left, benchBatchRows)
			bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			for range n {
				id++
				bld.Field(0).(*array.Int64Builder).Append(id)
				bld.Field(1).(*array.StringBuilder).Append(channels[id%3])
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
// single-threaded staging time.
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
	first := newTable("probe")
	contract, err := swap.ContractOf(first.Metadata())
	if err != nil {
		b.Fatal(err)
	}
	data := newBenchData(b, contract.Arrow, rows)
	pub := &swap.Publisher{Catalog: cat}
	// Warm up once, unmeasured: the first staging in a process pays for
	// fresh heap and encoder pools, which a long backfill pays once.
	newTable("warmup")
	if _, _, err := pub.Stage(ctx, swap.Request{Table: table.Identifier{"bench", "warmup"}, Partitions: data.days, Source: data}); err != nil {
		b.Fatal(err)
	}
	rate := func(d time.Duration) float64 { return float64(data.rows) / d.Seconds() }

	for i := 0; i < b.N; i++ {
		// lakeswap staging, one writer per core.
		tbl := fmt.Sprintf("stage_%d", i)
		newTable(tbl)
		t0 := time.Now()
		plan, _, err := pub.Stage(ctx, swap.Request{Table: table.Identifier{"bench", tbl}, Partitions: data.days, Source: data})
		stage := time.Since(t0)
		if err != nil || plan.Refused() {
			b.Fatalf("stage: %v %v", err, plan.Findings)
		}

		// The whole publish: stage, commit, read back and verify.
		tbl = fmt.Sprintf("publish_%d", i)
		newTable(tbl)
		t0 = time.Now()
		if _, err := pub.Publish(ctx, swap.Request{Table: table.Identifier{"bench", tbl}, Partitions: data.days, Source: data}); err != nil {
			b.Fatal(err)
		}
		publish := time.Since(t0)

		// Staging on one core, and the fingerprint alone, for its share.
		tbl = fmt.Sprintf("serial_%d", i)
		newTable(tbl)
		t0 = time.Now()
		if _, _, err := pub.Stage(ctx, swap.Request{Table: table.Identifier{"bench", tbl}, Partitions: data.days, Source: data, Parallelism: 1}); err != nil {
			b.Fatal(err)
		}
		serial := time.Since(t0)
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
		fingerprint := time.Since(t0)

		// One plain pqarrow writer, default properties but zstd.
		t0 = time.Now()
		plainWrite(b, filepath.Join(home, fmt.Sprintf("plain_%d.parquet", i)), data)
		plain := time.Since(t0)

		// iceberg-go's own Append of the same rows.
		appendTbl := newTable(fmt.Sprintf("append_%d", i))
		rr, err := array.NewRecordReader(data.schema, data.all())
		if err != nil {
			b.Fatal(err)
		}
		t0 = time.Now()
		if _, err := appendTbl.Append(ctx, rr, nil); err != nil {
			b.Fatal(err)
		}
		appendTime := time.Since(t0)
		rr.Release()

		b.ReportMetric(rate(stage), "stage-rows/s")
		b.ReportMetric(rate(publish), "publish-rows/s")
		b.ReportMetric(rate(serial), "stage-1core-rows/s")
		b.ReportMetric(rate(plain), "pqarrow-rows/s")
		b.ReportMetric(rate(appendTime), "append-rows/s")
		b.ReportMetric(100*fingerprint.Seconds()/serial.Seconds(), "fingerprint-%-of-1core-stage")
	}
	b.ReportMetric(float64(data.rows), "rows")
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
