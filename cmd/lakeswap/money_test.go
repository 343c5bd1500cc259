package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/swap"
)

const moneyYAML = `table: shop.payments
columns:
  - {name: day, type: date, required: true}
  - {name: id, type: long, required: true}
  - {name: amount, type: "decimal(12,2)", required: true}
identifier: [day, id]
partition: [{column: day, transform: identity}]
additive: [amount]
checks: {amount: [non-negative]}
`

// TestMoneyTable: a decimal(12,2) column is additive. Its sum is exact, the
// unscaled value at the column's scale (12.34 adds 1234), in the
// fingerprint and the run record, and shown at its scale where a person
// approves it (publish, plan), on every site: publish, verify, history,
// plan then apply, rollback back to the first fingerprint.
func TestMoneyTable(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--schema", write(t, s.home, "payments.yaml", moneyYAML))
		first := write(t, t.TempDir(), "first.ndjson", `{"day":"2026-01-01","id":1,"amount":12.34}
{"day":"2026-01-01","id":2,"amount":"0.66"}
{"day":"2026-01-02","id":3,"amount":9999999999.99}
`)
		out := s.must("publish", "--run-id", "money-1", "--table", "shop.payments", "--partitions", "day=2026-01-01..2026-01-02", first)
		if !strings.Contains(out, "sums amount=10,000,000,012.99,") { // 12.34 + 0.66 + 9999999999.99, at the column's scale
			t.Fatalf("publish of a money table does not give its exact sums: %s", out)
		}
		s.must("verify", "--table", "shop.payments", "--run", "money-1")
		if h := s.must("history", "--table", "shop.payments"); !strings.Contains(h, "amount=10,000,000,012.99") { // at the column's scale, as publish prints it
			t.Errorf("history of a money table: %s", h)
		}
		meta := s.metadata("shop.payments")
		second := write(t, t.TempDir(), "second.ndjson", `{"day":"2026-01-01","id":1,"amount":"12.35"}
{"day":"2026-01-01","id":2,"amount":"0.66"}
`)
		plan := filepath.Join(t.TempDir(), "plan.json")
		out = s.must("plan", "--run-id", "money-2", "--out", plan, "--table", "shop.payments", "--partitions", "day=2026-01-01", second)
		if !strings.Contains(out, "13.00 -> 13.01 (+0.01)") {
			t.Errorf("plan of a money table: %s", out)
		}
		pf, err := swap.ReadPlan(plan)
		if err != nil {
			t.Fatal(err)
		}
		s.must("apply", plan, "--approve", pf.PlanID)
		s.must("verify", "--table", "shop.payments", "--run", "money-2")
		if s.metadata("shop.payments") == meta {
			t.Fatal("apply did not commit")
		}
		if out := s.must("rollback", "--table", "shop.payments", "--run", "money-2"); !strings.Contains(out, "as recorded before the run") {
			t.Errorf("rollback of a money table: %s", out)
		}
		// A value the column cannot hold exactly is refused, not rounded.
		bad := write(t, t.TempDir(), "bad.ndjson", `{"day":"2026-01-01","id":1,"amount":"12.345"}
`)
		if code, _, errs := s.cli("publish", "--table", "shop.payments", "--partitions", "day=2026-01-01", bad); code != exitRefused || !strings.Contains(errs, "12.345") {
			t.Errorf("a third decimal place: exit %d: %s", code, errs)
		}
	})
}

func TestScaled(t *testing.T) {
	for _, c := range []struct {
		v     int64
		scale int
		want  string
	}{{1234, 2, "12.34"}, {-5, 2, "-0.05"}, {0, 2, "0.00"}, {-1233, 2, "-12.33"}, {7, 0, "7"}, {100, 3, "0.100"}, {-9223372036854775808, 2, "-92,233,720,368,547,758.08"}, {123456, 0, "123,456"}, {-100000, 2, "-1,000.00"}} {
		if got := scaled(exact.Of(c.v), c.scale); got != c.want {
			t.Errorf("scaled(%d, %d) = %s, want %s", c.v, c.scale, got, c.want)
		}
	}
	huge, _ := exact.Parse("-999999999999999999999999999999999999990")
	if got := scaled(huge, 18); got != "-999,999,999,999,999,999,999.999999999999999990" {
		t.Errorf("a decimal(38,18) sum of ten maxima shows as %s", got)
	}
}
