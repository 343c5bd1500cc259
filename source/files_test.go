package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/retail"
)

// ordersContract is retail.daily_orders' contract.
func ordersContract(t testing.TB) *contract.Contract {
	t.Helper()
	c, err := retail.Contract()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAlternatingInputIsGroupedPerBatch: rows that switch partition on every
// line are regrouped once per input batch, not kept as a slice per run of
// rows (which took gigabytes for two million rows), spilled in batches of
// a batch's worth, and still read back in input order, located at their
// lines.
func TestAlternatingInputIsGroupedPerBatch(t *testing.T) {
	var b strings.Builder
	b.WriteString("order_date,channel,order_count,amount_cents\n")
	const rows = 200_000
	for i := range rows {
		fmt.Fprintf(&b, "2026-01-0%d,c%d,1,%d\n", 1+i%2, i, i)
	}
	in := filepath.Join(t.TempDir(), "alternating.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := ReadFiles(context.Background(), ordersContract(t), ordersContract(t).Partition.Declared([]string{"2026-01-01", "2026-01-02"}), []string{in}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Release()
	batches := (rows + inputBatchRows - 1) / inputBatchRows
	for _, day := range []string{"2026-01-01", "2026-01-02"} {
		rr, err := src.Open(context.Background(), day)
		if err != nil {
			t.Fatal(err)
		}
		got, line, n := int64(0), src.Locate(day, 2), 0
		for rr.Next() {
			got += rr.RecordBatch().NumRows()
			n++
		}
		rr.Release()
		if n > batches {
			t.Errorf("partition %s is read back as %d batches; want at most one per input batch (%d)", day, n, batches)
		}
		if got != rows/2 {
			t.Errorf("partition %s reads %d rows, want %d", day, got, rows/2)
		}
		if want := map[string]string{"2026-01-01": ":4", "2026-01-02": ":5"}[day]; !strings.HasSuffix(line, want) {
			t.Errorf("row 2 of %s located at %s, want line %s", day, line, want)
		}
	}
}

// TestSpilledRowsReadBackAsHeld: rows that went to disk under a small
// memory limit come back as the same rows, in the same order, at the same
// lines as rows held in memory.
func TestSpilledRowsReadBackAsHeld(t *testing.T) {
	var b strings.Builder
	b.WriteString("order_date,channel,order_count,amount_cents\n")
	const rows = 400_000
	for i := range rows {
		fmt.Fprintf(&b, "2026-01-0%d,c%d,1,%d\n", 1+(i*7)%3, i, i)
	}
	in := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	days := []string{"2026-01-01", "2026-01-02", "2026-01-03"}
	read := func(limit int64) (map[string]string, bool) {
		spillDir := t.TempDir()
		src, err := ReadFiles(context.Background(), ordersContract(t), ordersContract(t).Partition.Declared(days), []string{in}, Options{MemoryLimit: limit, SpillDir: spillDir})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Release()
		out := map[string]string{}
		for _, day := range days {
			rr, err := src.Open(context.Background(), day)
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			for rr.Next() {
				ch := rr.RecordBatch().Column(1).(interface{ Value(int) string })
				for i := range int(rr.RecordBatch().NumRows()) {
					sb.WriteString(ch.Value(i))
					sb.WriteByte(' ')
				}
			}
			out[day] = sb.String() + src.Locate(day, 1) + src.Locate(day, rows/3)
			rr.Release()
			if again, err := src.Open(context.Background(), day); err == nil {
				again.Release()
				t.Errorf("partition %s opened again after it was read to the end and its rows freed", day)
			}
		}
		spilled := false
		for _, p := range src.spill.parts {
			spilled = spilled || p.onDisk
		}
		return out, spilled
	}
	held, heldSpilled := read(1 << 30)
	spilled, didSpill := read(16 << 20)
	if heldSpilled || !didSpill {
		t.Fatalf("spilled with 1 GiB: %v, with 16 MiB: %v; want only the second", heldSpilled, didSpill)
	}
	for _, day := range days {
		if held[day] != spilled[day] {
			t.Errorf("partition %s reads otherwise once spilled", day)
		}
	}
}
