package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/swap"
)

// BenchmarkInputRowOrder publishes the same rows from a CSV file sorted by
// partition and from one whose every line switches partition, through the
// CLI's path (read, split by partition, stage, commit, verify), and reports
// the peak live heap of each. BENCH_INPUT_ROWS sets the rows (default 2M).
//
//	go test -run '^$' -bench BenchmarkInputRowOrder -benchtime 3x ./cmd/lakeswap/
func BenchmarkInputRowOrder(b *testing.B) {
	rows := 2_000_000
	if v, err := strconv.Atoi(os.Getenv("BENCH_INPUT_ROWS")); err == nil && v > 0 {
		rows = v
	}
	dir := b.TempDir()
	for _, order := range []string{"sorted", "alternating"} {
		in := filepath.Join(dir, order+".csv")
		writeOrdersCSV(b, in, rows, order == "alternating")
		b.Run(order, func(b *testing.B) {
			ctx := context.Background()
			home := b.TempDir()
			cat := openHome(b, home)
			spec, err := catalog.ReadTableSpec(write(b, home, "schema.yaml", schemaYAML))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := catalog.CreateTable(ctx, cat, []string{"retail", "daily_orders"}, spec); err != nil {
				b.Fatal(err)
			}
			pub := &swap.Publisher{Catalog: cat}
			var peak uint64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				runtime.GC()
				stop := sampleHeap(&peak)
				b.StartTimer()
				_, err := backfill.Files{Selectors: []string{twoDays}, Paths: []string{in}}.Run(ctx, pub, swap.Request{Table: []string{"retail", "daily_orders"}}, pub.Publish)
				b.StopTimer()
				stop()
				b.StartTimer()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// writeOrdersCSV writes rows of two days, each row its own channel, either
// all of the first day then all of the second, or alternating line by line.
func writeOrdersCSV(tb testing.TB, path string, rows int, alternate bool) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "order_date,channel,order_count,amount_cents")
	for i := range rows {
		day := 1 + i*2/rows
		if alternate {
			day = 1 + i%2
		}
		fmt.Fprintf(w, "2026-01-0%d,c%d,1,%d\n", day, i, i%1000)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// sampleHeap records the largest live heap seen until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > *peak {
				*peak = v
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
