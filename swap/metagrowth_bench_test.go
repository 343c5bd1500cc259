package swap_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/swap"
)

// BenchmarkMetadataGrowth publishes BENCH_META_RUNS runs (default 10) of
// BENCH_META_PARTITIONS days each (default 3,650, ten years), one row a
// day, each run other amounts, and reports how many bytes metadata.json
// grows by a run, the first and the last publish's time, and the mean of
// the last five publishes against the first five's (last5/first5-x): a
// run's per-partition detail goes to its run file, and what a publish
// reads and writes is what it touches, so neither grows with the runs.
// Measured over 100 runs: the 100th took 3.52 s, the first 3.66 s.
//
//	go test -run '^$' -bench BenchmarkMetadataGrowth -benchtime 1x ./swap/
func BenchmarkMetadataGrowth(b *testing.B) {
	runs, days := envInt(b, "BENCH_META_RUNS", 10), envInt(b, "BENCH_META_PARTITIONS", 3650)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		cfg, err := catalog.Resolve(catalog.Settings{Home: b.TempDir(), ConfigFile: os.DevNull, Getenv: func(string) string { return "" }})
		if err != nil {
			b.Fatal(err)
		}
		cat, err := catalog.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		ident := table.Identifier{"bench", "years"}
		tbl, err := catalog.CreateTable(ctx, cat, ident, benchSpec)
		if err != nil {
			b.Fatal(err)
		}
		c, err := contract.Of(tbl.Metadata())
		if err != nil {
			b.Fatal(err)
		}
		pub := &swap.Publisher{Catalog: cat}
		var values []string
		start := time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)
		for d := range days {
			values = append(values, start.AddDate(0, 0, d).Format(time.DateOnly))
		}
		size := func() int64 {
			t, err := cat.LoadTable(ctx, ident)
			if err != nil {
				b.Fatal(err)
			}
			fi, err := os.Stat(strings.TrimPrefix(t.MetadataLocation(), "file://"))
			if err != nil {
				b.Fatal(err)
			}
			return fi.Size()
		}
		var first, last time.Duration
		var took []time.Duration // every publish's, for the first and last few
		var grew int64
		for r := range runs {
			before := size()
			t0 := time.Now()
			res, err := pub.Publish(ctx, swap.Request{Table: ident, Partitions: values, Source: oneRowADay{c.Arrow, int64(r + 1)},
				RunID: fmt.Sprint("run-", r), AllowImplausible: true})
			if err != nil || res.Status != swap.StatusPublished {
				b.Fatalf("run %d: %v", r, err)
			}
			took = append(took, time.Since(t0))
			if r < 2 || (r+1)%10 == 0 {
				b.Logf("run %d: %.2f s, metadata.json %d bytes", r+1, took[r].Seconds(), size())
			}
			if r == 0 {
				first = took[r]
			}
			last = took[r]
			if r > 0 { // the first run adds the table's first snapshot
				grew += size() - before
			}
		}
		b.ReportMetric(float64(grew)/float64(max(runs-1, 1)), "metadata-B/run")
		b.ReportMetric(first.Seconds(), "first-publish-s")
		b.ReportMetric(last.Seconds(), "last-publish-s")
		// A single publish's time varies by a fifth here; the mean of the
		// last five against the first five's shows growth with the history.
		k := min(5, runs/2)
		b.ReportMetric(meanSeconds(took[runs-k:])/meanSeconds(took[:k]), "last5/first5-x")
		b.ReportMetric(float64(size()), "metadata-B")
		cat.Close()
	}
}

func meanSeconds(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum.Seconds() / float64(max(len(ds), 1))
}

// oneRowADay is one order a day, of amount n.
type oneRowADay struct {
	schema *arrow.Schema
	n      int64
}

func (o oneRowADay) Open(_ context.Context, day string) (array.RecordReader, error) {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return nil, err
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, o.schema)
	defer bld.Release()
	bld.Field(0).(*array.Int64Builder).Append(int64(d.Unix() / 86400))
	bld.Field(1).(*array.StringBuilder).Append("web")
	bld.Field(2).(*array.Date32Builder).Append(arrow.Date32FromTime(d))
	bld.Field(3).(*array.Int64Builder).Append(o.n)
	rec := bld.NewRecordBatch()
	defer rec.Release()
	return array.NewRecordReader(o.schema, []arrow.RecordBatch{rec})
}

func envInt(b *testing.B, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("%s=%q: %v", name, v, err)
		}
		return n
	}
	return def
}
