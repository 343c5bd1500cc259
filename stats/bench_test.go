package stats_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/stats"
)

// BenchmarkRead measures what checking a file's statistics costs: rows/s
// of stats.Read over a file of a million rows of a day's orders (a key, a
// date, a channel of three values, two amounts), beside rows/s of reading
// the same file into Arrow and no more (parquetio.Open), in the same run.
func BenchmarkRead(b *testing.B) {
	const rows = 1 << 20
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "channel", Type: arrow.BinaryTypes.String},
		{Name: "cents", Type: arrow.PrimitiveTypes.Int64},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 3, Name: "channel", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 4, Name: "cents", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 5, Name: "price", Type: iceberg.PrimitiveTypes.Float64})
	w := parquetio.NewWriter(icebergio.LocalFS{}, "file://"+filepath.Join(b.TempDir(), "data"), sc, parquetio.Options{})
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	for i := range rows {
		bld.Field(0).(*array.Int64Builder).Append(int64(i) * 7919 % rows)
		bld.Field(1).(*array.Date32Builder).Append(20454)
		bld.Field(2).(*array.StringBuilder).Append([]string{"web", "store", "app"}[i%3])
		bld.Field(3).(*array.Int64Builder).Append(int64(i % 100000))
		if i%10 == 0 {
			bld.Field(4).AppendNull()
		} else {
			bld.Field(4).(*array.Float64Builder).Append(float64(i%1000) / 7)
		}
		if (i+1)%65536 == 0 {
			rec := bld.NewRecordBatch()
			if err := w.Write(rec); err != nil {
				b.Fatal(err)
			}
			rec.Release()
		}
	}
	bld.Release()
	files, err := w.Close()
	if err != nil {
		b.Fatal(err)
	}
	path := files[0].Path
	ctx := context.Background()
	var read, check time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rr, err := parquetio.Open(ctx, icebergio.LocalFS{}, path)
		if err != nil {
			b.Fatal(err)
		}
		for rr.Next() {
		}
		rr.Release()
		read += time.Since(t0)
		t0 = time.Now()
		f, err := stats.Read(ctx, icebergio.LocalFS{}, path, schema)
		if err != nil {
			b.Fatal(err)
		}
		check += time.Since(t0)
		if f.Rows != rows || len(stats.CheckFooter(f)) != 0 {
			b.Fatal(fmt.Sprintf("read %d rows, footer findings %v", f.Rows, stats.CheckFooter(f)))
		}
	}
	b.ReportMetric(float64(rows*b.N)/read.Seconds(), "read-rows/s")
	b.ReportMetric(float64(rows*b.N)/check.Seconds(), "stats-rows/s")
}
