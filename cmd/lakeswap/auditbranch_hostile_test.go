package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// commitUpdates commits updates to retail.daily_orders as another engine
// would, with no requirement.
func commitUpdates(t *testing.T, s *site, updates ...table.Update) {
	t.Helper()
	ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if _, _, err := cat.CommitTable(ctx, table.Identifier{"retail", "daily_orders"}, nil, updates); err != nil {
		t.Fatal(err)
	}
}

// dayInput is one row of a day for the retail table.
func dayInput(t *testing.T, day, cents string) string {
	return write(t, t.TempDir(), "day.ndjson", `{"order_date":"`+day+`","channel":"web","order_count":2,"amount_cents":`+cents+`}`+"\n")
}

// TestFastForwardedRunOutlivesExpiry: a run apply moved main to stays
// published once snapshot expiry has cut main's log before it (a later
// snapshot expired): status finds it, and its run id with other content
// is refused, not published twice.
func TestFastForwardedRunOutlivesExpiry(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.createDaily()
	file := filepath.Join(t.TempDir(), "p.json")
	s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", file, "--run-id", "ff", batch2Input(t))
	pf := planOf(t, file)
	s.must("apply", file, "--approve", pf.PlanID)
	if s.table("daily_orders").CurrentSnapshot().SnapshotID != pf.Plan.BranchSnapshotID {
		t.Fatal("apply did not move main to the branch's snapshot")
	}
	s.must("publish", "--allow-implausible", "--run-id", "later1", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-03", dayInput(t, "2026-01-03", "100"))
	mid := s.table("daily_orders").CurrentSnapshot().SnapshotID
	s.must("publish", "--allow-implausible", "--run-id", "later2", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-04", dayInput(t, "2026-01-04", "200"))
	commitUpdates(t, s, table.NewRemoveSnapshotsUpdate([]int64{mid}, false))
	if code, out, errs := s.cli("status", "--table", "retail.daily_orders", "--run", "ff"); code != 0 {
		t.Errorf("status of the fast-forwarded run after expiry: exit %d: %s%s", code, out, errs)
	}
	if code, _, errs := s.cli("publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--run-id", "ff", newHomeInput(t)); code != exitRefused {
		t.Errorf("its run id with other content: exit %d, want %d: %s", code, exitRefused, errs)
	}
}

// TestDiscardAfterAnotherEngineFastForwarded: an engine moved main to a
// plan's branch snapshot (Spark's fast_forward) and main moved on; discard
// of the plan removes the branch alone: main still reads every row, the
// snapshot and its manifests stay, verify --table passes.
func TestDiscardAfterAnotherEngineFastForwarded(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.createDaily()
	file := filepath.Join(t.TempDir(), "p.json")
	s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", file, batch2Input(t))
	pf := planOf(t, file)
	commitUpdates(t, s, table.NewSetSnapshotRefUpdate("main", pf.Plan.BranchSnapshotID, table.BranchRef, 0, 0, 0))
	s.must("publish", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-03", dayInput(t, "2026-01-03", "100"))
	before := mainView(t, s)
	files := s.content()
	if code, out, errs := s.cli("discard", file); code == 0 && s.table("daily_orders").Metadata().SnapshotByName(pf.Plan.Branch) != nil {
		t.Errorf("discard: exit %d, the branch kept: %s%s", code, out, errs)
	}
	meta := s.table("daily_orders").Metadata()
	if meta.SnapshotByID(pf.Plan.BranchSnapshotID) == nil {
		t.Error("discard removed a snapshot main descends from")
	}
	if got := mainView(t, s); !slices.Equal(got, before) {
		t.Errorf("after discard main reads\n%v\nwant\n%v", got, before)
	}
	if after := s.content(); !slices.Equal(after, files) {
		t.Errorf("discard removed files main reads:\n%v\nwant\n%v", after, files)
	}
	if code, out, errs := s.cli("verify", "--table", "retail.daily_orders"); code != 0 {
		t.Errorf("verify --table after discard: exit %d: %s%s", code, out, errs)
	}
}

// TestPlanOddRunIDsAndKeys: a run id holding a quote is a SQL literal the
// printed queries double it in; a grain key that is empty or holds a
// comma shows quoted, one key never reading as two; a second plan of a
// run another plan published removes its staged files when applied.
func TestPlanOddRunIDsAndKeys(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.createDaily()
	s.must("publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", dayInput(t, "2026-01-01", "100"))
	odd := write(t, t.TempDir(), "odd.ndjson", `{"order_date":"2026-01-01","channel":"web","order_count":2,"amount_cents":120}
{"order_date":"2026-01-01","channel":"","order_count":1,"amount_cents":10}
{"order_date":"2026-01-01","channel":"a, b","order_count":1,"amount_cents":10}
`)
	first, second := filepath.Join(t.TempDir(), "1.json"), filepath.Join(t.TempDir(), "2.json")
	out := s.must("plan", "--allow-implausible", "--run-id", "o'brien", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", "--out", first, odd)
	pf := planOf(t, first)
	for _, want := range []string{"VERSION AS OF 'lakeswap-plan-o''brien-", `channel="" (added)`, `channel="a, b" (added)`, "channel=web: amount_cents 100 -> 120"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan does not print %q:\n%s", want, out)
		}
	}
	s.must("plan", "--allow-implausible", "--run-id", "o'brien", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", "--out", second, odd)
	s.must("apply", second, "--approve", planOf(t, second).PlanID)
	if out := s.must("-o", "json", "apply", first, "--approve", pf.PlanID); !strings.Contains(out, "already-published") {
		t.Errorf("the first plan of a published run: %s", out)
	}
	if left := s.runFiles("o'brien"); slices.ContainsFunc(left, func(f string) bool { return strings.Contains(f, pf.Plan.Attempt) }) {
		t.Errorf("the first plan's staged files stayed: %v", left)
	}
}
