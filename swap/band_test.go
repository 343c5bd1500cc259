package swap_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
)

// bandDay is n groups of one day whose amounts sum to sum.
func bandDay(date string, n int, sum int64) []retail.DailyOrder {
	rows := make([]retail.DailyOrder, n)
	for i := range rows {
		rows[i] = retail.DailyOrder{OrderDate: date, Channel: fmt.Sprintf("c%04d", i), OrderCount: 1}
	}
	if n > 0 {
		rows[0].AmountCents = sum
	}
	return rows
}

// TestBandJudgesWhatAPersonWould: a sign flip, a negative sum growing in
// magnitude, a sum growing from zero, and a small partition growing past
// the band are each refused without --allow-implausible, with the
// metadata location unchanged, and committed with it. A new partition and
// a small one swinging within 100 rows are not judged.
func TestBandJudgesWhatAPersonWould(t *testing.T) {
	e := newEnv(t)
	spec := retail.Spec()
	spec.Table, spec.Checks = "retail.signed_orders", nil
	ident := table.Identifier{"retail", "signed_orders"}
	if _, err := catalog.CreateTable(e.ctx, e.cat, ident, spec); err != nil {
		t.Fatal(err)
	}
	publish := func(rows []retail.DailyOrder, allow bool, day string) error {
		_, err := e.pub.Publish(e.ctx, swap.Request{Table: ident, Partitions: []string{day}, Source: retail.NewSource(rows), SourceName: "test", AllowImplausible: allow})
		return err
	}
	for i, c := range []struct {
		name          string
		before, after []retail.DailyOrder
		refused       string // "" when not judged
	}{
		{"sign flip", bandDay("2026-01-01", 200, -200), bandDay("2026-01-01", 200, 200), "sum of amount_cents -200 -> 200 (-1.00x, its sign flipped)"},
		{"negative by magnitude", bandDay("2026-01-01", 200, -100), bandDay("2026-01-01", 200, -300), "sum of amount_cents -100 -> -300 (3.00x)"},
		{"growth from zero", bandDay("2026-01-01", 200, 0), bandDay("2026-01-01", 200, 500), "sum of amount_cents 0 -> 500 (from zero)"},
		{"small grows past the band", bandDay("2026-01-01", 99, 99), bandDay("2026-01-01", 5000, 99), "rows 99 -> 5,000 (50.51x)"},
		{"a small partition swings", bandDay("2026-01-01", 5, 5), bandDay("2026-01-01", 60, 5), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			day := dayAfter("2026-01-01", i)
			for j := range c.before {
				c.before[j].OrderDate = day
			}
			for j := range c.after {
				c.after[j].OrderDate = day
			}
			if err := publish(c.before, false, day); err != nil { // a new partition is not judged
				t.Fatal(err)
			}
			loc := e.tableNamed(ident).MetadataLocation()
			err := publish(c.after, false, day)
			if c.refused == "" {
				if err != nil {
					t.Fatalf("not judged, but: %v", err)
				}
				return
			}
			if !errors.Is(err, outcome.ErrRefused) || !strings.Contains(err.Error(), c.refused) {
				t.Fatalf("want refused with %q, got %v", c.refused, err)
			}
			if got := e.tableNamed(ident).MetadataLocation(); got != loc {
				t.Fatalf("a refused run moved the table: %s -> %s", loc, got)
			}
			res, err := e.pub.Publish(e.ctx, swap.Request{Table: ident, Partitions: []string{day}, Source: retail.NewSource(c.after), SourceName: "test", AllowImplausible: true})
			if err != nil {
				t.Fatalf("with --allow-implausible: %v", err)
			}
			if !slices.Contains(res.Plan.Checks, swap.Check{Name: "plausible band", Result: swap.Overridden, By: "--allow-implausible", At: "stage"}) {
				t.Errorf("the run's checks say %+v, want the band allowed", res.Plan.Checks)
			}
			if got := e.tableNamed(ident).MetadataLocation(); got == loc {
				t.Fatal("allowed, but nothing committed")
			}
		})
	}
}
