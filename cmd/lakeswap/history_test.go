package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/history"
)

// firstBackfill is the example the README walks a newcomer through.
var firstBackfill = filepath.Join("..", "..", "examples", "first-backfill")

// TestHistoryOfARunAndItsRollback: history shows a run's partitions as a
// range, its sums at their decimal scale, the table's rows after each
// snapshot, and a rollback (which commits no snapshot) as an event; its
// filters keep what they name. Reading history changes nothing.
func TestHistoryOfARunAndItsRollback(t *testing.T) {
	home := t.TempDir()
	weekAndFix(t, home)
	if code, _, errs := cli(t, home, "rollback", "--table", "shop.daily_sales", "--run", "fix-lisbon"); code != 0 {
		t.Fatalf("rollback: exit %d: %s", code, errs)
	}
	cat := openHome(t, home)
	tbl, err := cat.LoadTable(context.Background(), []string{"shop", "daily_sales"})
	if err != nil {
		t.Fatal(err)
	}
	before := tbl.MetadataLocation()
	week := tbl.CurrentSnapshot().SnapshotID

	code, out, errs := cli(t, home, "history", "--table", "shop.daily_sales")
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	for _, want := range [][]string{
		{"rollback", "fix-lisbon", "main set back from "},
		{"append", "week-1", "sale_date=2026-01-01..07 (7)", " 21 ", "orders=2,466 revenue=71,410.50", "c199bdb847d8"},
		{"overwrite", "fix-lisbon", "sale_date=2026-01-03..04 (2)", " 6 ", " 21 ", "orders=549 revenue=15,195.73"},
	} {
		if !anyLineHasAll(lines, want) {
			t.Errorf("history has no line with all of %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "rollback") > strings.Index(out, "week-1") {
		t.Errorf("history lists the rollback after the run it went back to, want newest first:\n%s", out)
	}

	// show and report of the run undone say so first.
	if _, shown, _ := cli(t, home, "show", "--table", "shop.daily_sales", "--run", "fix-lisbon"); !strings.HasPrefix(shown, "ROLLED BACK: run fix-lisbon was rolled back at ") ||
		!strings.Contains(strings.SplitN(shown, "\n", 2)[0], fmt.Sprintf("set back to snapshot %d", week)) {
		t.Errorf("show of a run rolled back does not open saying so:\n%s", shown)
	}
	var shownJSON history.RunView
	if _, js, _ := cli(t, home, "show", "--table", "shop.daily_sales", "--run", "fix-lisbon", "-o", "json"); json.Unmarshal([]byte(js), &shownJSON) != nil ||
		shownJSON.RolledBack == nil || shownJSON.RolledBack.To != week || shownJSON.RolledBack.Scoped || shownJSON.RolledBack.Time.IsZero() {
		t.Errorf("show -o json of a run rolled back: %+v", shownJSON.RolledBack)
	}
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := cli(t, home, "report", "--table", "shop.daily_sales", "--run", "fix-lisbon", "--out", page); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if raw, _ := os.ReadFile(page); !strings.Contains(string(raw), `<p id="rolled-back" class="warning">ROLLED BACK: run fix-lisbon was rolled back at `) {
		t.Error("the report of a run rolled back does not say so at the top")
	}
	if _, shown, _ := cli(t, home, "show", "--table", "shop.daily_sales", "--run", "week-1"); strings.Contains(shown, "ROLLED BACK") {
		t.Errorf("show of a run main holds says it was rolled back:\n%s", shown)
	}

	var res historyResult
	code, js, _ := cli(t, home, "history", "--table", "shop.daily_sales", "-o", "json")
	if err := json.Unmarshal([]byte(js), &res); code != 0 || err != nil {
		t.Fatalf("history -o json: exit %d, %v: %s", code, err, js)
	}
	if len(res.Rollbacks) != 1 || res.Rollbacks[0].To != week || len(res.Off) != 1 || res.Rollbacks[0].From != res.Off[0].SnapshotID {
		t.Errorf("history -o json: rollbacks %+v, off main %+v: want one rollback from fix-lisbon's snapshot to %d", res.Rollbacks, res.Off, week)
	}
	if len(res.Main) != 1 || res.Main[0].TableRows == nil || *res.Main[0].TableRows != 21 || res.Scales["revenue"] != 2 {
		t.Errorf("history -o json: main %+v, scales %v: want week-1 with 21 table rows, revenue at scale 2", res.Main, res.Scales)
	}

	for _, c := range []struct {
		args      []string
		main, off int
		rollbacks int
	}{
		{[]string{"--run", "fix-lisbon"}, 0, 1, 1},
		{[]string{"--run", "week-1"}, 1, 0, 0},
		{[]string{"--partition", "sale_date=2026-01-04"}, 1, 1, 0},
		{[]string{"--partition", "sale_date=2026-01-09"}, 0, 0, 0},
		{[]string{"--since", "2h"}, 1, 1, 1},
		{[]string{"--since", "2999-01-01"}, 0, 0, 0},
		{[]string{"--limit", "1"}, 1, 1, 1},
	} {
		var res historyResult
		code, js, errs := cli(t, home, append([]string{"history", "--table", "shop.daily_sales", "-o", "json"}, c.args...)...)
		if err := json.Unmarshal([]byte(js), &res); code != 0 || err != nil {
			t.Fatalf("history %q: exit %d, %v: %s", c.args, code, err, errs)
		}
		if len(res.Main) != c.main || len(res.Off) != c.off || len(res.Rollbacks) != c.rollbacks {
			t.Errorf("history %q: %d on main, %d off, %d rollbacks; want %d, %d, %d", c.args, len(res.Main), len(res.Off), len(res.Rollbacks), c.main, c.off, c.rollbacks)
		}
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--limit", "-1"}} {
		if code, _, errs := cli(t, home, append([]string{"history", "--table", "shop.daily_sales"}, bad...)...); code != 2 || !strings.Contains(errs, bad[0]) {
			t.Errorf("history %q: exit %d, want 2 (usage) naming %s: %s", bad, code, bad[0], errs)
		}
	}
	if tbl, err = cat.LoadTable(context.Background(), []string{"shop", "daily_sales"}); err != nil || tbl.MetadataLocation() != before {
		t.Errorf("history changed the table: metadata %s, was %s (%v)", tbl.MetadataLocation(), before, err)
	}
}

// weekAndFix makes the README's first backfill in a home: the table, the
// week (run week-1) and Lisbon's two days corrected (run fix-lisbon).
func weekAndFix(t *testing.T, home string) {
	t.Helper()
	ex := func(name string) string { return filepath.Join(firstBackfill, name) }
	for _, args := range [][]string{
		{"table", "create", "--schema", ex("daily_sales.yaml")},
		{"publish", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-01..2026-01-07", "--run-id", "week-1", ex("sales.csv")},
		{"publish", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-03..2026-01-04", "--run-id", "fix-lisbon", ex("sales-fixed.csv")},
	} {
		if code, _, errs := cli(t, home, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, errs)
		}
	}
}

func anyLineHasAll(lines []string, parts []string) bool {
	for _, l := range lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestHistoryFitsTheTerminal: a run's partitions are cut to fit the
// terminal's width, never below 12 characters of them.
func TestHistoryFitsTheTerminal(t *testing.T) {
	header := []string{"A", "PARTITIONS", "B"}
	rows := [][]string{{"x", strings.Repeat("p", 100), "y"}}
	fitColumn(header, rows, 1, 60)
	if got := len(rows[0][1]); got != 100-(106-60) || !strings.HasSuffix(rows[0][1], "...") {
		t.Errorf("cut to %d characters (%q), want %d ending in ...", got, rows[0][1], 100-(106-60))
	}
	rows = [][]string{{"x", strings.Repeat("p", 100), "y"}}
	fitColumn(header, rows, 1, 10)
	if got := len(rows[0][1]); got != 12 {
		t.Errorf("cut to %d characters, want at least 12", got)
	}
	rows = [][]string{{"x", strings.Repeat("p", 100), "y"}}
	fitColumn(header, rows, 1, 0)
	if got := len(rows[0][1]); got != 100 {
		t.Errorf("cut to %d characters where the width is unknown, want all 100", got)
	}
}

// TestStatusCountsWhatMainStillHolds: a run one of whose partitions a
// later run replaced is said to be held in part, with the count and the
// partition, not "no longer held".
func TestStatusCountsWhatMainStillHolds(t *testing.T) {
	home := t.TempDir()
	ex := func(name string) string { return filepath.Join(firstBackfill, name) }
	one := write(t, t.TempDir(), "one.csv", "sale_date,store,orders,revenue\n2026-01-04,berlin,1,1.00\n2026-01-04,lisbon,1,1.00\n2026-01-04,oslo,1,1.00\n")
	for _, args := range [][]string{
		{"table", "create", "--schema", ex("daily_sales.yaml")},
		{"publish", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-01..2026-01-07", "--run-id", "week-1", ex("sales.csv")},
		{"publish", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-04", "--run-id", "fix-4th", one},
	} {
		if code, _, errs := cli(t, home, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, errs)
		}
	}
	code, out, errs := cli(t, home, "status", "--table", "shop.daily_sales", "--run", "week-1")
	if want := "main holds it in part: 1 of its 7 partitions replaced since (sale_date=2026-01-04)"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("status: exit %d, want %q:\n%s%s", code, want, out, errs)
	}
	var st statusView
	_, js, _ := cli(t, home, "status", "--table", "shop.daily_sales", "--run", "week-1", "-o", "json")
	if err := json.Unmarshal([]byte(js), &st); err != nil || st.Status != "partly-on-main" || st.OnMain || st.Partitions != 7 || len(st.Replaced) != 1 || st.Replaced[0] != "sale_date=2026-01-04" {
		t.Errorf("status -o json: %v: %s", err, js)
	}
}

// TestShowRun: show --run reads a run back partition by partition; its
// figures add up to what history records of the run, its before is what
// the run replaced, and the files it names are the table's.
func TestShowRun(t *testing.T) {
	home := t.TempDir()
	weekAndFix(t, home)
	var v history.RunView
	code, js, errs := cli(t, home, "show", "--table", "shop.daily_sales", "--run", "fix-lisbon", "-o", "json")
	if err := json.Unmarshal([]byte(js), &v); code != 0 || err != nil {
		t.Fatalf("show -o json: exit %d, %v: %s%s", code, err, js, errs)
	}
	var h historyResult
	if _, js, _ := cli(t, home, "history", "--table", "shop.daily_sales", "--run", "fix-lisbon", "-o", "json"); json.Unmarshal([]byte(js), &h) != nil || len(h.Main) != 1 {
		t.Fatalf("history --run fix-lisbon: %s", js)
	}
	run := h.Main[0]
	var rows int64
	sums := map[string]exact.Sum{}
	for _, p := range v.Partitions {
		rows += p.After.Rows
		for k, n := range p.After.Sums {
			sums[k] = sums[k].Add(n)
		}
		if p.Before.Rows != 3 || p.After.Rows != 3 || len(p.Removed) != 1 || len(p.Added) != 1 {
			t.Errorf("partition %s: %+v", p.Partition, p)
		}
		for _, f := range p.Added {
			if _, err := os.Stat(strings.TrimPrefix(f, "file://")); err != nil {
				t.Errorf("show names an added file the table does not hold: %v", err)
			}
		}
	}
	if len(v.Partitions) != 2 || rows != run.Rows || !sums["orders"].Equal(run.Sums["orders"]) || !sums["revenue"].Equal(run.Sums["revenue"]) || v.Fingerprint != run.Fingerprint {
		t.Errorf("show: %d partitions, %d rows, sums %v, fingerprint %s; history records %d rows, sums %v, fingerprint %s",
			len(v.Partitions), rows, sums, v.Fingerprint, run.Rows, run.Sums, run.Fingerprint)
	}
	if !slices.Contains(v.Checks, "schema=passed") || !slices.Contains(v.Checks, "ownership=passed") || !slices.Contains(v.Checks, "build twice=not applicable (built once)") {
		t.Errorf("show: the run's checks %q, want schema and ownership passed, build twice not run", v.Checks)
	}
	if !v.Partitions[0].Before.Sums["orders"].Equal(exact.Of(307)) || !v.Partitions[1].Before.Sums["orders"].Equal(exact.Of(377)) {
		t.Errorf("show: before, orders %s and %s, want the week's 307 and 377", v.Partitions[0].Before.Sums["orders"], v.Partitions[1].Before.Sums["orders"])
	}
	if code, _, errs := cli(t, home, "show", "--table", "shop.daily_sales", "--run", "nope"); code != exitError || !strings.Contains(errs, "no snapshot of shop.daily_sales records run nope") {
		t.Errorf("show of a run that does not exist: exit %d: %s", code, errs)
	}
}

// TestDiff: diff names its snapshots by run id, tag or id, and lists the
// partitions whose files differ, with the same figures show gives the run
// that made the difference and the keys that changed at the grain; the
// same snapshot twice differs nowhere.
func TestDiff(t *testing.T) {
	home := t.TempDir()
	weekAndFix(t, home)
	var show history.RunView
	_, js, _ := cli(t, home, "show", "--table", "shop.daily_sales", "--run", "fix-lisbon", "-o", "json")
	if err := json.Unmarshal([]byte(js), &show); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"week-1", swap.RollbackTag("fix-lisbon")} {
		var d history.DiffView
		code, js, errs := cli(t, home, "diff", "--table", "shop.daily_sales", from, "fix-lisbon", "-o", "json")
		if err := json.Unmarshal([]byte(js), &d); code != 0 || err != nil {
			t.Fatalf("diff %s fix-lisbon: exit %d, %v: %s%s", from, code, err, js, errs)
		}
		if len(d.Partitions) != 2 || d.Partitions[0].Partition != "sale_date=2026-01-03" || d.Partitions[0].After.Hash != show.Partitions[0].After.Hash ||
			d.Partitions[1].Before.Hash != show.Partitions[1].Before.Hash || len(d.Partitions[1].Added) != 1 {
			t.Errorf("diff %s fix-lisbon: %+v\nshow: %+v", from, d.Partitions, show.Partitions)
		}
		for _, p := range d.Partitions {
			if ch := p.Changes; ch == nil || ch.Added != 0 || ch.Removed != 0 || ch.Changed != 1 || len(ch.ChangedKeys) != 1 || ch.ChangedKeys[0] != "store=lisbon" {
				t.Errorf("diff %s fix-lisbon, %s at the grain: %+v, want store=lisbon changed alone", from, p.Partition, p.Changes)
			}
		}
	}
	code, out, _ := cli(t, home, "diff", "--table", "shop.daily_sales", "fix-lisbon", "fix-lisbon")
	if code != 0 || !strings.Contains(out, "0 partitions changed") {
		t.Errorf("diff of a snapshot with itself: exit %d: %s", code, out)
	}
	if code, _, errs := cli(t, home, "diff", "--table", "shop.daily_sales", "nope", "fix-lisbon"); code != exitError || !strings.Contains(errs, `"nope" is no snapshot id, tag, branch or run id`) {
		t.Errorf("diff from nothing: exit %d: %s", code, errs)
	}
}

// TestRollbackOverLaterRuns: a rollback of a run with another on top of
// it (--force) names both runs it took off main, and history --run finds
// it by either; off main is newest first, as main is; show of a run
// committed in batches gives the run's own fingerprint, as publish printed
// it, not its last batch's.
func TestRollbackOverLaterRuns(t *testing.T) {
	home := t.TempDir()
	ex := func(name string) string { return filepath.Join(firstBackfill, name) }
	five := write(t, t.TempDir(), "five.csv", "sale_date,store,orders,revenue\n2026-01-05,berlin,1,1.00\n2026-01-05,lisbon,1,1.00\n2026-01-05,oslo,1,1.00\n")
	var printed string
	for _, args := range [][]string{
		{"table", "create", "--schema", ex("daily_sales.yaml")},
		{"publish", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-01..2026-01-07", "--run-id", "week-1", "--batch", "2", ex("sales.csv")},
		{"publish", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-03..2026-01-04", "--run-id", "z", ex("sales-fixed.csv")},
		{"publish", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-05", "--run-id", "w", "--allow-implausible", five},
		{"rollback", "--table", "shop.daily_sales", "--run", "z", "--force"},
	} {
		code, out, errs := cli(t, home, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, errs)
		}
		if slices.Contains(args, "week-1") {
			printed = out
		}
	}
	var h historyResult
	_, js, _ := cli(t, home, "history", "--table", "shop.daily_sales", "-o", "json")
	if err := json.Unmarshal([]byte(js), &h); err != nil || len(h.Rollbacks) != 1 || !slices.Equal(h.Rollbacks[0].Runs, []string{"w", "z"}) {
		t.Fatalf("history: %v, rollbacks %+v, want one taking off w and z", err, h.Rollbacks)
	}
	for i := 1; i < len(h.Off); i++ {
		if h.Off[i].Time.After(h.Off[i-1].Time) {
			t.Errorf("off main is not newest first: %v after %v", h.Off[i].Time, h.Off[i-1].Time)
		}
	}
	_, js, _ = cli(t, home, "history", "--table", "shop.daily_sales", "--run", "z", "-o", "json")
	if err := json.Unmarshal([]byte(js), &h); err != nil || len(h.Rollbacks) != 1 {
		t.Errorf("history --run z: %v, rollbacks %+v, want its rollback", err, h.Rollbacks)
	}
	var v history.RunView
	_, js, _ = cli(t, home, "show", "--table", "shop.daily_sales", "--run", "week-1", "-o", "json")
	if err := json.Unmarshal([]byte(js), &v); err != nil || len(v.Snapshots) != 4 || v.Rows != 21 || !strings.Contains(printed, "fingerprint "+v.Fingerprint) {
		t.Errorf("show of a run in 4 batches: %v, %d snapshots, %d rows, fingerprint %s; publish printed:\n%s", err, len(v.Snapshots), v.Rows, v.Fingerprint, printed)
	}
}
