//go:build !noduckdb

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/rawevents"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

// BenchmarkRetailJob runs the shipped orders_fact job over generated raw
// order events (BENCH_JOB_EVENTS, default 10M, as Parquet, over 30 days;
// one order in ten has a second version and one event in fifty is a
// redelivery) and publishes its facts: the job's SQL (dedupe, newest
// version wins), the split by partition, staging and the commit. It
// reports events/s.
//
//	go test -run '^$' -bench BenchmarkRetailJob -benchtime 1x ./cmd/lakeswap/
func BenchmarkRetailJob(b *testing.B) {
	events := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("BENCH_JOB_EVENTS")); err == nil && v > 0 {
		events = v
	}
	ctx := context.Background()
	dir := b.TempDir()
	if err := rawevents.Write(filepath.Join(dir, "raw", "events.parquet"), events); err != nil {
		b.Fatal(err)
	}
	for _, f := range []string{"orders_fact.sql", "orders_fact.table.yaml"} {
		copyInto(b, filepath.Join("..", "..", "examples", "retail", f), filepath.Join(dir, f))
	}
	jobFile := write(b, dir, "orders_fact.yaml", `table: retail.orders_fact
sources:
  raw_events: {path: raw/events.parquet}
sql_file: orders_fact.sql
rejects:
  - {reason: order_id is null, when: "order_id IS NULL OR order_id = ''"}
  - {reason: amount_cents < 0, when: "amount_cents < 0"}
  - {reason: channel is not valid, when: "channel NOT IN ('web', 'store', 'app')"}
`)
	j, err := job.Load(jobFile)
	if err != nil {
		b.Fatal(err)
	}
	var facts int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		home := b.TempDir()
		cat := openHome(b, home)
		spec, err := catalog.ReadTableSpec(filepath.Join(dir, "orders_fact.table.yaml"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := catalog.CreateTable(ctx, cat, []string{"retail", "orders_fact"}, spec); err != nil {
			b.Fatal(err)
		}
		pub := &swap.Publisher{Catalog: cat}
		in := source.Options{MemoryLimit: backfill.DefaultMemoryLimit()}
		b.StartTimer()
		res, err := j.Run(ctx, pub, swap.Request{Table: []string{"retail", "orders_fact"}, RunID: fmt.Sprint("bench-", i)},
			job.RunOptions{Partitions: []string{"order_date=2026-01-01..2026-01-30"}, RejectsFile: filepath.Join(home, "rejects.ndjson"), Inputs: in}, pub.Publish)
		if err != nil {
			b.Fatal(err)
		}
		facts = res.Plan.Fingerprint.Rows
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(facts), "facts")
}
