package source

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkSplit splits 1M rows of retail.daily_orders, over 30 days in
// random order, by partition into the spill: in batches of the CSV
// engine's size and of a Parquet reader's.
func BenchmarkSplit(b *testing.B) {
	const rows, days = 1 << 20, 30
	c := ordersContract(b)
	var values []string
	for d := range days {
		values = append(values, fmt.Sprintf("2026-01-%02d", d+1))
	}
	declared := c.Partition.Declared(values)
	for _, size := range []int{2048, 64 << 10} {
		batches := shuffledOrders(c.Arrow, rows, size, days)
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			b.SetBytes(rows * 40)
			for b.Loop() {
				src, _, err := newFiles(c, declared, Options{SpillDir: b.TempDir(), MemoryLimit: 8 << 30}, "the benchmark's")
				if err != nil {
					b.Fatal(err)
				}
				for _, bt := range batches {
					if err := src.split(context.Background(), c, declared, 0, bt); err != nil {
						b.Fatal(err)
					}
				}
				if err := src.spill.finish(); err != nil {
					b.Fatal(err)
				}
				src.Release()
			}
		})
		for _, bt := range batches {
			bt.Rec.Release()
		}
	}
}

// shuffledOrders is rows of orders in batches of size, each row's day
// drawn at random among days.
func shuffledOrders(schema *arrow.Schema, rows, size, days int) []Batch {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []Batch
	for lo := 0; lo < rows; lo += size {
		n := min(size, rows-lo)
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		lines := make([]int64, n)
		for r := range n {
			bld.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(arrow.Date32(20454).ToTime().AddDate(0, 0, rng.IntN(days))))
			bld.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("channel-%d", rng.IntN(7)))
			bld.Field(2).(*array.Int64Builder).Append(int64(rng.IntN(100)))
			bld.Field(3).(*array.Int64Builder).Append(int64(rng.IntN(1 << 30)))
			lines[r] = int64(lo + r + 2)
		}
		out = append(out, Batch{Rec: bld.NewRecordBatch(), File: "orders.csv", Line: lines})
		bld.Release()
	}
	return out
}
