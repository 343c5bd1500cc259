package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
)

// TestFrozenPartitions, by publish and by plan then apply: once the table
// freezes January (lakeswap.freeze-after P1M+7D, long past), a run that
// changes its days is refused naming them, and commits nothing (a plan
// staged before the freeze is refused when applied after it); the same
// content again is not a change, and passes; --restate-frozen --reason
// changes them, the plan marking them frozen, and the run records the
// decision, which history shows.
func TestFrozenPartitions(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.must("table", "create", "--schema", write(t, s.home, "daily_orders.yaml", schemaYAML))
	s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t))
	if code, _, errs := s.cli("table", "set", "--table", "retail.daily_orders", "freeze-after=P1X"); code != exitUsage || !strings.Contains(errs, "P1M+7D") {
		t.Errorf("table set freeze-after=P1X: exit %d: %s; want refused with the form", code, errs)
	}
	// A plan staged before the table froze January is judged again when
	// applied.
	rows, err := retail.Daily(retail.AfterBatch2)
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(t.TempDir(), "batch2.ndjson")
	if err := retail.WriteNDJSON(changed, rows); err != nil {
		t.Fatal(err)
	}
	early := filepath.Join(t.TempDir(), "early.json")
	s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", early, changed)
	var earlyPlan swap.PlanFile
	if err := json.Unmarshal(mustRead(t, early), &earlyPlan); err != nil {
		t.Fatal(err)
	}
	s.must("table", "set", "--table", "retail.daily_orders", "freeze-after=P1M+7D")
	if code, _, errs := s.cli("apply", early, "--approve", earlyPlan.PlanID); code != exitRefused || !strings.Contains(errs, "after the plan was staged") {
		t.Errorf("a plan staged before the freeze, applied after: exit %d: %s; want refused", code, errs)
	}
	if out := s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t)); !strings.Contains(out, "unchanged") {
		t.Errorf("the frozen days' own content again: %s; want unchanged", out)
	}

	meta := s.metadata("daily_orders")
	code, _, errs := s.cli("publish", "--table", "retail.daily_orders", "--partitions", twoDays, changed)
	if code != exitRefused || !strings.Contains(errs, "order_date=2026-01-01 is frozen since 2026-02-08") || !strings.Contains(errs, "--restate-frozen") {
		t.Errorf("a change to frozen days: exit %d: %s; want refused naming them", code, errs)
	}
	if code, _, errs := s.cli("publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--restate-frozen", changed); code != exitUsage || !strings.Contains(errs, "--reason") {
		t.Errorf("--restate-frozen without a reason: exit %d: %s", code, errs)
	}
	if s.metadata("daily_orders") != meta {
		t.Fatal("a refused change to frozen days committed")
	}

	// Planned: the plan marks the frozen days; applied, the run records the
	// decision.
	planFile := filepath.Join(t.TempDir(), "plan.json")
	out := s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--run-id", "restate-jan", "--out", planFile,
		"--restate-frozen", "--reason", "late refunds, approved by finance", "--decided-by", "ana", changed)
	if !strings.Contains(out, "order_date=2026-01-02 (frozen)") || !strings.Contains(out, "allowed (--restate-frozen)") {
		t.Errorf("the plan does not mark the frozen days:\n%s", out)
	}
	var pf swap.PlanFile
	if err := json.Unmarshal(mustRead(t, planFile), &pf); err != nil {
		t.Fatal(err)
	}
	s.must("apply", planFile, "--approve", pf.PlanID)
	out = s.must("history", "--table", "retail.daily_orders", "-o", "json")
	if !strings.Contains(out, `"decided_by": "ana"`) || !strings.Contains(out, "late refunds, approved by finance") {
		t.Errorf("history -o json does not record the restatement:\n%s", out)
	}
	if out := s.must("history", "--table", "retail.daily_orders"); !strings.Contains(out, "run restate-jan restated frozen partitions order_date=2026-01-01..02 (2), decided by ana: late refunds, approved by finance") {
		t.Errorf("history does not show the restatement:\n%s", out)
	}
}

// TestFrozenPartitionsOfSeveralFields: a table partitioned by day(ts) and
// region freezes by its day field: a change to a January 2020 day of a
// region is refused naming it, another region's unfrozen day is not; a
// freeze on a table with no date or time field is refused when set, never
// silently skipped.
func TestFrozenPartitionsOfSeveralFields(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.must("table", "create", "--schema", write(t, s.home, "ev.yaml", `table: app.ev
columns:
  - {name: id, type: long, required: true}
  - {name: ts, type: timestamptz, required: true}
  - {name: region, type: string, required: true}
  - {name: n, type: long, required: true}
identifier: [id]
partition: [{column: ts, transform: day}, {column: region, transform: identity}]
`))
	in := write(t, s.home, "ev.ndjson", `{"id":1,"ts":"2020-01-01T10:00:00Z","region":"eu","n":1}
{"id":2,"ts":"2020-01-01T11:00:00Z","region":"us","n":2}
`)
	s.must("publish", "--table", "app.ev", "--partitions", "ts=2020-01-01", "--partitions", "region=eu,us", in)
	s.must("table", "set", "--table", "app.ev", "freeze-after=P1M+7D")
	changed := write(t, s.home, "changed.ndjson", `{"id":1,"ts":"2020-01-01T10:00:00Z","region":"eu","n":5}
`)
	meta := s.metadata("app.ev")
	code, _, errs := s.cli("publish", "--table", "app.ev", "--partitions", "ts=2020-01-01", "--partitions", "region=eu", changed)
	if code != exitRefused || !strings.Contains(errs, "ts=2020-01-01/region=eu is frozen since 2020-02-08") {
		t.Errorf("a change to a frozen day of a two-field table: exit %d: %s; want refused naming it", code, errs)
	}
	if s.metadata("app.ev") != meta {
		t.Fatal("a refused change to a frozen partition committed")
	}
	s.must("table", "create", "--schema", write(t, s.home, "items.yaml", itemsYAML))
	if code, _, errs := s.cli("table", "set", "--table", "shop.items", "freeze-after=P1M+7D"); code != exitUsage || !strings.Contains(errs, "no partition field of a date or time") {
		t.Errorf("freeze-after on a table partitioned by a string: exit %d: %s; want refused", code, errs)
	}
}
