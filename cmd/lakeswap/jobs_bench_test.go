//go:build !noduckdb

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/lakeswap/lakeswap/catalog"
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
	generateEvents(b, filepath.Join(dir, "raw", "events.parquet"), events)
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
		in := source.Options{MemoryLimit: defaultMemoryLimit()}
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

// generateEvents writes n raw order events as Parquet, with DuckDB.
func generateEvents(tb testing.TB, path string, n int) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	eng, err := source.OpenSQLEngine(tb.TempDir(), 1<<30)
	if err != nil {
		tb.Fatal(err)
	}
	defer eng.Close()
	orders := n * 9 / 10
	q := fmt.Sprintf(`COPY (
		SELECT
			'e' || j AS event_id,
			'o' || (j %% %[2]d) AS order_id,
			['web', 'store', 'app'][1 + (j %% %[2]d) %% 3] AS channel,
			strftime(TIMESTAMP '2026-01-01' + to_seconds(((j %% %[2]d) * 2591) %% (30 * 86400)), '%%Y-%%m-%%dT%%H:%%M:%%SZ') AS order_ts,
			strftime(TIMESTAMP '2026-01-01' + to_seconds(((j %% %[2]d) * 2591) %% (30 * 86400) + j // %[2]d * 60), '%%Y-%%m-%%dT%%H:%%M:%%SZ') AS updated_at,
			1 + j // %[2]d AS source_version,
			(j * 7919) %% 100000 AS amount_cents,
			strftime(TIMESTAMP '2026-01-01' + to_seconds(((j %% %[2]d) * 2591) %% (30 * 86400) + 300 + i - j), '%%Y-%%m-%%dT%%H:%%M:%%SZ') AS ingested_at
		-- one event in fifty is the one before it delivered again
		FROM (SELECT i, CASE WHEN i %% 50 = 49 THEN i - 1 ELSE i END AS j FROM range(%[1]d) AS t(i))
	) TO %[3]s (FORMAT parquet)`, n, orders, source.SQLString(path))
	if err := eng.Exec(context.Background(), q); err != nil {
		tb.Fatal(err)
	}
}
