package source

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
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

// BenchmarkWideCSV reads 2,000 rows of a 300-column table through
// lakeswap's own CSV reader (a ';' delimiter keeps the file from the
// engine): each field is placed by one lookup of its column, where a
// search of the schema's names made the read grow with the square of
// the columns (1.7 s against 0.45 s for 10,000 rows).
func BenchmarkWideCSV(b *testing.B) {
	const cols, rows = 300, 2000
	var fields []arrow.Field
	var csv strings.Builder
	for i := range cols {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("column_%03d", i), Type: arrow.BinaryTypes.String, Nullable: true})
		if i > 0 {
			csv.WriteString(";")
		}
		csv.WriteString(fields[i].Name)
	}
	csv.WriteString("\n")
	for r := range rows {
		for i := range cols {
			if i > 0 {
				csv.WriteString(";")
			}
			fmt.Fprintf(&csv, "v%d", r)
		}
		csv.WriteString("\n")
	}
	path := filepath.Join(b.TempDir(), "wide.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	schema := arrow.NewSchema(fields, nil)
	b.SetBytes(int64(csv.Len()))
	for b.Loop() {
		if err := ReadInputWith(context.Background(), path, schema, CSVOptions{Delimiter: ';'}, func(Batch) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
