package verify_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/verify"
)

// diff compares old rows with new ones, each in batches of two rows, the
// way a plan reads them.
func diff(t *testing.T, old, new []retail.DailyOrder) verify.Changes {
	t.Helper()
	c, err := retail.Contract()
	if err != nil {
		t.Fatal(err)
	}
	d := verify.NewDiffer(c)
	ch, err := d.Compare(context.Background(), rowsOf(old), rowsOf(new))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestChangesAtTheGrain(t *testing.T) {
	day := func(channel string, orders, cents int64) retail.DailyOrder {
		return retail.DailyOrder{OrderDate: "2026-01-01", Channel: channel, OrderCount: orders, AmountCents: cents}
	}
	old := []retail.DailyOrder{day("web", 2, 17000), day("app", 1, 3500), day("store", 1, 7000), day("phone", 1, 100)}
	new := []retail.DailyOrder{day("web", 1, 5000), day("app", 1, 3500), day("kiosk", 3, 900)}
	got := diff(t, old, new)
	want := verify.Changes{Added: 1, Removed: 2, Changed: 1,
		AddedKeys: []string{"channel=kiosk"}, RemovedKeys: []string{"channel=phone", "channel=store"}, ChangedKeys: []string{"channel=web"},
		Values: []verify.KeyChange{
			{Kind: "added", Key: "channel=kiosk", Columns: []verify.ValueChange{{Column: "order_count", New: "3"}, {Column: "amount_cents", New: "900"}}},
			{Kind: "removed", Key: "channel=phone", Columns: []verify.ValueChange{{Column: "order_count", Old: "1"}, {Column: "amount_cents", Old: "100"}}},
			{Kind: "removed", Key: "channel=store", Columns: []verify.ValueChange{{Column: "order_count", Old: "1"}, {Column: "amount_cents", Old: "7000"}}},
			// Both columns of web changed; app, the same, is not named.
			{Kind: "changed", Key: "channel=web", Columns: []verify.ValueChange{{Column: "order_count", Old: "2", New: "1"}, {Column: "amount_cents", Old: "17000", New: "5000"}}},
		}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("changes %+v, want %+v", got, want)
	}

	if got := diff(t, old, old); got.Added+got.Removed+got.Changed != 0 || got.RemovedKeys != nil {
		t.Errorf("the same rows compare as %+v", got)
	}

	// Many of each, read in reverse: a few keys are named, the first in
	// grain order, and every one is counted.
	var many, moved []retail.DailyOrder
	for i := 49; i >= 0; i-- {
		many = append(many, day(fmt.Sprintf("c%02d", i), 1, int64(i)))
		moved = append(moved, day(fmt.Sprintf("d%02d", i), 1, int64(i)))
	}
	got = diff(t, many, moved)
	if got.Added != 50 || got.Removed != 50 || got.Changed != 0 || len(got.AddedKeys) != verify.ExampleKeys || len(got.RemovedKeys) != verify.ExampleKeys {
		t.Errorf("50 keys replaced by 50 others compare as %+v", got)
	}
	if !slices.Equal(got.RemovedKeys, []string{"channel=c00", "channel=c01", "channel=c02"}) {
		t.Errorf("removed keys named %v, want the first three in grain order", got.RemovedKeys)
	}
}

// A partition whose keys pass the memory a comparison holds is compared
// all the same: its sorted keys wait on disk, every change is counted, the
// keys named are the first in grain order and their values are right.
func TestChangesPastMemory(t *testing.T) {
	c, err := retail.Contract()
	if err != nil {
		t.Fatal(err)
	}
	const n = 120_000
	row := func(i int, cents int64) retail.DailyOrder {
		return retail.DailyOrder{OrderDate: "2026-01-01", Channel: fmt.Sprintf("c%06d", i), OrderCount: 1, AmountCents: cents}
	}
	var old, new []retail.DailyOrder
	for i := range n {
		old = append(old, row(i, int64(i)))
		switch {
		case i%100 == 7: // removed
		case i%100 == 8: // changed
			new = append(new, row(i, int64(i)+1))
		default:
			new = append(new, row(i, int64(i)))
		}
	}
	for i := range n / 100 { // added
		new = append(new, row(n+i, 5))
	}
	// Neither side in grain order.
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(old), func(i, j int) { old[i], old[j] = old[j], old[i] })
	slices.Reverse(new)
	side := func(rows []retail.DailyOrder) verify.Rows {
		return func(fn func(arrow.RecordBatch) (bool, error)) error {
			for i := 0; i < len(rows); i += 4096 {
				rec := retail.Record(rows[i:min(i+4096, len(rows))])
				done, err := fn(rec)
				rec.Release()
				if err != nil || done {
					return err
				}
			}
			return nil
		}
	}
	dir := t.TempDir()
	d := verify.NewDiffer(c)
	d.Memory, d.SpillDir = 1, dir // the least: a run every 30,000 keys or so
	got, err := d.Compare(context.Background(), side(old), side(new))
	if err != nil {
		t.Fatal(err)
	}
	if d.Written == 0 {
		t.Fatal("nothing waited on disk: the test does not reach the sort past memory")
	}
	if got.Added != n/100 || got.Removed != n/100 || got.Changed != n/100 {
		t.Fatalf("added %d, removed %d, changed %d; want %d of each", got.Added, got.Removed, got.Changed, n/100)
	}
	if want := []string{"channel=c000007", "channel=c000107", "channel=c000207"}; !slices.Equal(got.RemovedKeys, want) {
		t.Errorf("removed keys %v, want %v", got.RemovedKeys, want)
	}
	if want := []string{"channel=c120000", "channel=c120001", "channel=c120002"}; !slices.Equal(got.AddedKeys, want) {
		t.Errorf("added keys %v, want %v", got.AddedKeys, want)
	}
	last := got.Values[len(got.Values)-1]
	if want := (verify.KeyChange{Kind: "changed", Key: "channel=c000208", Columns: []verify.ValueChange{{Column: "amount_cents", Old: "208", New: "209"}}}); fmt.Sprint(last) != fmt.Sprint(want) {
		t.Errorf("last key named %+v, want %+v", last, want)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the comparison left %d files on disk", len(left))
	}
}

// TestFormatValue: values as the table holds them, for a person: null as
// null, text quoted, a decimal at its scale, a timestamp with its zone.
func TestFormatValue(t *testing.T) {
	mem := memory.NewGoAllocator()
	db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 10, Scale: 2})
	db.Append(decimal128.FromI64(1910))
	db.AppendNull()
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	tb.Append(arrow.Timestamp(1767225600123456))
	lb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	lb.Append(arrow.Timestamp(1767225600000000))
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"", "web", "null", "we\u202eb"}, nil)
	dec, ts, local, str := db.NewArray(), tb.NewArray(), lb.NewArray(), sb.NewArray()
	for _, c := range []struct {
		col  arrow.Array
		row  int
		want string
	}{
		{dec, 0, "19.10"}, {dec, 1, "null"},
		{ts, 0, "2026-01-01T00:00:00.123456+00:00"}, {local, 0, "2026-01-01T00:00:00"},
		{str, 0, `""`}, {str, 1, `"web"`}, {str, 2, `"null"`},
		{str, 3, `"we\u202eb"`}, // a bidi override escaped, never reordering the line
	} {
		if got := verify.FormatValue(c.col, c.row); got != c.want {
			t.Errorf("%s row %d shows %s, want %s", c.col.DataType(), c.row, got, c.want)
		}
	}
}

// rowsOf reads rows in batches of two, as a side of a comparison.
func rowsOf(rows []retail.DailyOrder) verify.Rows {
	return func(fn func(arrow.RecordBatch) (bool, error)) error {
		for i := 0; i < len(rows); i += 2 {
			rec := retail.Record(rows[i:min(i+2, len(rows))])
			done, err := fn(rec)
			rec.Release()
			if err != nil || done {
				return err
			}
		}
		return nil
	}
}

// A table another engine wrote may break its grain: keys repeated on
// either side are still named, a key whose only change is how many rows
// hold it says so, and a second read that no longer finds a key leaves it
// unnamed, never a panic.
func TestChangesOfABrokenGrain(t *testing.T) {
	c, err := retail.Contract()
	if err != nil {
		t.Fatal(err)
	}
	day := func(channel string, cents int64) retail.DailyOrder {
		return retail.DailyOrder{OrderDate: "2026-01-01", Channel: channel, OrderCount: 1, AmountCents: cents}
	}
	compare := func(old, new verify.Rows) verify.Changes {
		t.Helper()
		got, err := verify.NewDiffer(c).Compare(context.Background(), old, new)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	got := compare(rowsOf(nil), rowsOf([]retail.DailyOrder{day("a", 1), day("a", 2), day("a", 3), day("a", 4), day("b", 1), day("c", 1)}))
	if got.Added != 6 || !slices.Equal(got.AddedKeys, []string{"channel=a", "channel=b", "channel=c"}) {
		t.Errorf("keys added, one of them four times: %+v", got)
	}

	twice := []retail.DailyOrder{day("web", 5), day("web", 5)}
	got = compare(rowsOf(twice), rowsOf(twice[:1]))
	want := []verify.KeyChange{{Kind: "changed", Key: "channel=web", Columns: []verify.ValueChange{{Column: verify.RowsColumn, Old: "2", New: "1"}}}}
	if got.Changed != 1 || fmt.Sprint(got.Values) != fmt.Sprint(want) {
		t.Errorf("a key held twice, then once: %+v", got)
	}

	reads := 0
	once := func(fn func(arrow.RecordBatch) (bool, error)) error {
		if reads++; reads > 1 {
			return nil
		}
		return rowsOf([]retail.DailyOrder{day("web", 7)})(fn)
	}
	got = compare(rowsOf([]retail.DailyOrder{day("web", 5)}), once)
	if got.Changed != 1 || len(got.ChangedKeys) != 0 || len(got.Values) != 0 {
		t.Errorf("a key the second read missed: %+v", got)
	}
}
