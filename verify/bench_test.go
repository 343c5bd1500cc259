package verify_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/verify"
)

// BenchmarkAccumulator validates and fingerprints one partition of one
// million order rows (order_id, channel, order_date, amount_cents), the
// shape BenchmarkPublish stages; it isolates the fingerprint's cost. The
// rows come sorted by order_id, or shuffled, which the search for repeated
// grains cannot skip.
func BenchmarkAccumulator(b *testing.B) {
	sc := iceberg.NewSchemaWithIdentifiers(0, []int{1},
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "channel", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "order_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 4, Name: "amount_cents", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	part, _ := contract.NewPartitioner(2, "order_date", iceberg.PrimitiveTypes.Date, "identity")
	c, err := contract.NewContract(sc, []string{"order_id"}, []string{"amount_cents"},
		map[string][]contract.Check{"amount_cents": {contract.CheckNonNegative}}, part)
	if err != nil {
		b.Fatal(err)
	}
	const rows = 1_000_000
	ids := make([]int64, rows)
	for i := range ids {
		ids[i] = int64(i)
	}
	b.Run("sorted", func(b *testing.B) { benchAccumulator(b, c, ids) })
	rand.New(rand.NewPCG(7, 7)).Shuffle(rows, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	b.Run("shuffled", func(b *testing.B) { benchAccumulator(b, c, ids) })
}

func benchAccumulator(b *testing.B, c *contract.Contract, ids []int64) {
	const batch = 64 << 10
	rows := len(ids)
	day := arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	channels := []string{"web", "store", "app"}
	var recs []arrow.RecordBatch
	for start := 0; start < rows; start += batch {
		bld := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
		for i := start; i < min(start+batch, rows); i++ {
			bld.Field(0).(*array.Int64Builder).Append(ids[i])
			bld.Field(1).(*array.StringBuilder).Append(channels[i%3])
			bld.Field(2).(*array.Date32Builder).Append(day)
			bld.Field(3).(*array.Int64Builder).Append(int64(i * 7 % 100000))
		}
		recs = append(recs, bld.NewRecordBatch())
		bld.Release()
	}
	b.ResetTimer()
	for b.Loop() {
		acc := verify.NewAccumulator(c, "2026-01-01", nil)
		for _, rec := range recs {
			if err := acc.Add(rec); err != nil {
				b.Fatal(err)
			}
		}
		if acc.Result().Rows != int64(rows) {
			b.Fatal("rows")
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkDifferMemory compares a partition at the grain, old rows with
// new ones of which 1% changed, 1% were removed and 1% added, each side in
// an order other than the grain's, at 200,000 and 2,000,000 rows with 16
// MiB for the sorted keys: the peak of the heap should not grow with the
// rows (what passes the budget waits on disk, spilled-MB), and rows/s is
// over both sides.
func BenchmarkDifferMemory(b *testing.B) {
	sc := iceberg.NewSchemaWithIdentifiers(0, []int{1},
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "order_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 3, Name: "amount_cents", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	part, _ := contract.NewPartitioner(2, "order_date", iceberg.PrimitiveTypes.Date, "identity")
	c, err := contract.NewContract(sc, []string{"order_id"}, []string{"amount_cents"}, nil, part)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 64 << 10
	// side makes its rows batch by batch, as a file is read, the ids
	// scrambled (a multiplication modulo a prime) so that neither side is
	// in grain order.
	side := func(rows int, newSide bool) verify.Rows {
		return func(fn func(arrow.RecordBatch) (bool, error)) error {
			for start := 0; start < rows; start += batch {
				bld := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
				for i := start; i < min(start+batch, rows); i++ {
					id := int64(i) * 7919 % 2_147_483_647
					amount := int64(i % 1000)
					if newSide {
						switch i % 100 {
						case 1:
							continue
						case 2:
							amount++
						case 3:
							id = -id
						}
					}
					bld.Field(0).(*array.Int64Builder).Append(id)
					bld.Field(1).(*array.Date32Builder).Append(20454)
					bld.Field(2).(*array.Int64Builder).Append(amount)
				}
				rec := bld.NewRecordBatch()
				bld.Release()
				done, err := fn(rec)
				rec.Release()
				if err != nil || done {
					return err
				}
			}
			return nil
		}
	}
	for _, rows := range []int{200_000, 2_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			for b.Loop() {
				runtime.GC()
				peak, stop := heapPeak()
				t0 := time.Now()
				d := verify.NewDiffer(c)
				d.Memory, d.SpillDir = 16<<20, b.TempDir()
				ch, err := d.Compare(context.Background(), side(rows, false), side(rows, true))
				if err != nil {
					b.Fatal(err)
				}
				elapsed := time.Since(t0)
				stop()
				if ch.Changed != int64(rows/100) {
					b.Fatalf("changed %d, want %d", ch.Changed, rows/100)
				}
				b.ReportMetric(float64(*peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(float64(d.Written)/(1<<20), "spilled-MB")
				b.ReportMetric(2*float64(rows)/elapsed.Seconds(), "rows/s")
			}
		})
	}
}

// heapPeak samples the bytes of live heap objects every millisecond
// until stop, keeping the largest.
func heapPeak() (*uint64, func()) {
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(stopped)
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return &peak, func() { close(done); <-stopped }
}

// BenchmarkNestedFingerprint fingerprints 200,000 rows whose one other
// column is a list of ten longs, and a map of two entries: the cost of
// encoding nested values one by one.
func BenchmarkNestedFingerprint(b *testing.B) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "l", Type: &iceberg.ListType{ElementID: 3, Element: iceberg.PrimitiveTypes.Int64}},
		iceberg.NestedField{ID: 4, Name: "m", Type: &iceberg.MapType{KeyID: 5, KeyType: iceberg.PrimitiveTypes.String, ValueID: 6, ValueType: iceberg.PrimitiveTypes.Float64}})
	part, _ := contract.NewPartitioner(0, "day", iceberg.PrimitiveTypes.Date, "identity")
	c, err := contract.NewContract(sc, nil, nil, nil, part)
	if err != nil {
		b.Fatal(err)
	}
	const rows = 200_000
	bld := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
	defer bld.Release()
	day := arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	lb, mb := bld.Field(1).(*array.ListBuilder), bld.Field(2).(*array.MapBuilder)
	for r := range rows {
		bld.Field(0).(*array.Date32Builder).Append(day)
		lb.Append(true)
		for e := range 10 {
			lb.ValueBuilder().(*array.Int64Builder).Append(int64(r*10 + e))
		}
		mb.Append(true)
		kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder().(*array.Float64Builder)
		kb.Append("web")
		kb.Append("store")
		ib.Append(float64(r))
		ib.Append(1.5)
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	b.ResetTimer()
	for range b.N {
		acc := verify.NewFingerprinter(c, "2026-01-01")
		if err := acc.Add(rec); err != nil {
			b.Fatal(err)
		}
		acc.Result()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}
