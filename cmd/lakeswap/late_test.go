//go:build !noduckdb

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
)

// batch3 is a third load of the retail fixture's events: o108, placed on
// 2026-01-01, arrives five days late (e14), past the job's two-day
// lookback; o109 arrives on time on 2026-01-06.
const batch3 = `{"event_id":"e14","order_id":"o108","channel":"web","order_ts":"2026-01-01T16:00:00Z","updated_at":"2026-01-01T16:00:00Z","source_version":1,"amount_cents":6000,"ingested_at":"2026-01-06T16:00:00Z"}
{"event_id":"e15","order_id":"o109","channel":"store","order_ts":"2026-01-06T12:00:00Z","updated_at":"2026-01-06T12:00:00Z","source_version":1,"amount_cents":2000,"ingested_at":"2026-01-06T12:01:00Z"}
`

// afterBatch2 are the facts, day and order, after the fixture's two
// batches (expected.json): e10 moved o100 to 2026-01-02.
var afterBatch2 = []string{"2026-01-01 o101", "2026-01-01 o102", "2026-01-01 o107", "2026-01-02 o100", "2026-01-02 o103", "2026-01-02 o106"}

// lateJob lays the retail orders_fact job out in a folder of its own, its
// raw events the fixture's first two batches, and the job's late policy
// (a YAML flow mapping) appended; it returns the folder and the job file.
func lateJob(t *testing.T, late string) (dir, jobFile string) {
	t.Helper()
	dir = t.TempDir()
	for _, f := range []string{"orders_fact.yaml", "orders_fact.sql"} {
		copyInto(t, filepath.Join("..", "..", "examples", "retail", f), filepath.Join(dir, f))
	}
	for _, b := range []string{"batch1.ndjson", "batch2.ndjson"} {
		copyInto(t, filepath.Join("..", "..", "internal", "retail", "fixture", b), filepath.Join(dir, "raw", b))
	}
	jobFile = filepath.Join(dir, "orders_fact.yaml")
	if late != "" {
		f, err := os.OpenFile(jobFile, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("late: " + late + "\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return dir, jobFile
}

// facts are retail.orders_fact's rows as iceberg-go's scan reads them:
// "day order", sorted, with more columns where named.
func facts(t *testing.T, s *site, more ...string) []string {
	t.Helper()
	tbl, done := retailTable(t, s, "orders_fact")
	defer done()
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	cols := append([]string{"order_date", "order_id"}, more...)
	at, err := tbl.Scan(table.WithSelectedFields(cols...)).ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rdr := array.NewTableReader(at, 0)
	defer rdr.Release()
	var out []string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for r := range int(rec.NumRows()) {
			var cells []string
			for _, c := range cols { // in the order named, not the table's
				cells = append(cells, rec.Column(rec.Schema().FieldIndices(c)[0]).ValueStr(r))
			}
			out = append(out, strings.Join(cells, " "))
		}
	}
	slices.Sort(out)
	return out
}

// retailTable loads retail.NAME from the site's catalog.
func retailTable(t *testing.T, s *site, name string) (*table.Table, func()) {
	t.Helper()
	ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, []string{"retail", name})
	if err != nil {
		cat.Close()
		t.Fatal(err)
	}
	return tbl, func() { cat.Close() }
}

// headProp is a property of the summary of the table's current snapshot.
func headProp(t *testing.T, s *site, name, key string) string {
	t.Helper()
	tbl, done := retailTable(t, s, name)
	defer done()
	if head := tbl.CurrentSnapshot(); head != nil && head.Summary != nil {
		return head.Summary.Properties[key]
	}
	return ""
}

// TestLateArrivalsDecidedInWriting: the retail facts after two batches,
// then a third whose o108 arrives five days after its day, past the
// job's two-day lookback. By plan, by publish and by publish in batches,
// the run is refused naming the day, the row, its arrival and the job's
// owner, and commits nothing; --leave --reason keeps the day as
// published and counts the row, and the next runs leave it out too;
// --restate --reason, planned then applied, rebuilds the day with it, who
// decided and why in history and show; a rerun then commits nothing.
func TestLateArrivalsDecidedInWriting(t *testing.T) {
	s := newSite(t, "sqlite+local")
	dir, job := lateJob(t, "{owner: finance@example.com, note: January is reported on the 5th}")
	s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))
	rejects := func() string { return filepath.Join(t.TempDir(), "rejects.ndjson") }
	run := func(args ...string) (int, string, string) {
		return s.cli(append(append([]string{}, args...), "--job", job, "--rejects", rejects(), "--partitions", twoDays)...)
	}
	if code, out, errs := run("publish"); code != 0 {
		t.Fatalf("batches 1 and 2: exit %d: %s%s", code, out, errs)
	}
	if got := facts(t, s); !slices.Equal(got, afterBatch2) {
		t.Fatalf("after batch 2 the facts are %v, want %v", got, afterBatch2)
	}
	write(t, filepath.Join(dir, "raw"), "batch3.ndjson", batch3)

	meta, files := s.metadata("orders_fact"), s.files()
	for _, route := range [][]string{{"plan", "--out", filepath.Join(t.TempDir(), "p.json")}, {"publish"}, {"publish", "--batch", "1"}} {
		code, _, errs := run(route...)
		for _, want := range []string{"late partition order_date=2026-01-01: 1 source row for it arrived later than the lookback of 2d",
			"the first at 2026-01-06 16:00Z, the latest 5d after its event", "finance@example.com as its owner: January is reported on the 5th",
			"--restate --reason TEXT", "--leave --reason TEXT"} {
			if code != exitRefused || !strings.Contains(errs, want) {
				t.Errorf("%s with o108 five days late: exit %d: %s\nwant refused, with %q", route[0], code, errs, want)
			}
		}
	}
	if s.metadata("orders_fact") != meta || !slices.Equal(s.files(), files) {
		t.Fatal("a refused run changed the table or left files")
	}
	if code, _, errs := run("publish", "--leave"); code != exitUsage || !strings.Contains(errs, "--reason") {
		t.Errorf("--leave without a reason: exit %d: %s", code, errs)
	}
	if code, _, errs := run("publish", "--leave", "--restate", "--reason", "x"); code != exitUsage || !strings.Contains(errs, "give one") {
		t.Errorf("--leave with --restate: exit %d: %s", code, errs)
	}

	// Leave: the day stays as published, the row counted and recorded.
	// In batches of a day: 2026-01-02 changes nothing and commits
	// nothing, so the first batch records what the run left out.
	code, out, errs := run("publish", "--leave", "--reason", "January is closed; o108 goes into February", "--decided-by", "ana", "--run-id", "leave-jan", "--batch", "1")
	if code != 0 {
		t.Fatalf("--leave: exit %d: %s%s", code, out, errs)
	}
	if got := facts(t, s); !slices.Equal(got, afterBatch2) {
		t.Errorf("after --leave the facts are %v, want them as published, %v", got, afterBatch2)
	}
	if s.metadata("orders_fact") == meta {
		t.Error("--leave committed no snapshot: the decision is not recorded")
	}
	var left map[string]runrecord.Left
	if err := json.Unmarshal([]byte(headProp(t, s, "orders_fact", runrecord.PropLateLeft)), &left); err != nil || left["2026-01-01"].Through != "2026-01-06T16:00:00Z" {
		t.Errorf("the run records the rows it left as %v (%v)", left, err)
	}
	want := "late rows left out, the partitions kept as published: order_date=2026-01-01 (1 row), decided by ana: January is closed; o108 goes into February"
	if out := s.must("history", "--table", "retail.orders_fact"); !strings.Contains(out, "run leave-jan: "+want) {
		t.Errorf("history does not show the decision:\n%s", out)
	}
	if out := s.must("show", "--table", "retail.orders_fact", "--run", "leave-jan"); !strings.Contains(out, want) {
		t.Errorf("show does not show the decision:\n%s", out)
	}
	// The next run leaves the row out as decided: nothing to refuse, and
	// nothing changes.
	if code, out, errs := run("publish"); code != 0 || !strings.Contains(out, "unchanged") {
		t.Errorf("the run after --leave: exit %d: %s%s; want unchanged", code, out, errs)
	}

	// Restate, planned then applied: the day is rebuilt with o108.
	planFile := filepath.Join(t.TempDir(), "plan.json")
	code, out, errs = run("plan", "--out", planFile, "--restate", "--reason", "finance reopened January", "--decided-by", "ana", "--run-id", "restate-jan")
	if code != 0 || !strings.Contains(out, "late rows restated: 2026-01-01 (1), decided by ana") {
		t.Fatalf("plan --restate: exit %d: %s%s", code, out, errs)
	}
	var pf swap.PlanFile
	if err := json.Unmarshal(mustRead(t, planFile), &pf); err != nil {
		t.Fatal(err)
	}
	s.must("apply", planFile, "--approve", pf.PlanID)
	if got, want := facts(t, s), append([]string{"2026-01-01 o108"}, afterBatch2...); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("after --restate the facts are %v, want o108 in 2026-01-01", got)
	}
	want = "late rows restated: order_date=2026-01-01 (1 row), decided by ana: finance reopened January"
	if out := s.must("history", "--table", "retail.orders_fact"); !strings.Contains(out, "run restate-jan: "+want) {
		t.Errorf("history does not show the restatement:\n%s", out)
	}
	if out := s.must("show", "--table", "retail.orders_fact", "--run", "restate-jan"); !strings.Contains(out, want) {
		t.Errorf("show does not show the restatement:\n%s", out)
	}
	if got := headProp(t, s, "orders_fact", runrecord.PropLateLeft); got != "{}" {
		t.Errorf("after the restatement the run records the days left out as %s; want none", got)
	}
	if code, out, errs := run("publish"); code != 0 || !strings.Contains(out, "unchanged") {
		t.Errorf("a rerun after the restatement: exit %d: %s%s; want unchanged", code, out, errs)
	}

	// Another late order of 2026-01-01 (o112, a week late). The watermark
	// is still before o108's arrival, since 2026-01-06 was not rebuilt:
	// leaving the day as published without both late rows would take o108
	// out of it, and is refused, as a restatement would need to be said.
	write(t, filepath.Join(dir, "raw"), "batch4.ndjson", `{"event_id":"e18","order_id":"o112","channel":"app","order_ts":"2026-01-01T18:00:00Z","updated_at":"2026-01-01T18:00:00Z","source_version":1,"amount_cents":700,"ingested_at":"2026-01-08T09:00:00Z"}`+"\n")
	meta = s.metadata("orders_fact")
	if code, _, errs := run("publish", "--leave", "--reason", "no"); code != exitRefused || !strings.Contains(errs, "--leave keeps the partition as published, but without its late rows it would still change (4 rows -> 3 rows)") {
		t.Errorf("--leave that would take out a row published before: exit %d: %s; want refused", code, errs)
	}
	if s.metadata("orders_fact") != meta {
		t.Error("a refused --leave moved the table")
	}
}

// TestLateCurrentPeriod: under the policy current-period, o108, five days
// late, loads into 2026-01-06, the day it arrived, flagged; its own day
// keeps what was published, and nothing is refused.
func TestLateCurrentPeriod(t *testing.T) {
	s := newSite(t, "sqlite+local")
	dir, job := lateJob(t, "{policy: current-period, flag: arrived_late, owner: finance@example.com}")
	sql := strings.Replace(string(mustRead(t, filepath.Join(dir, "orders_fact.sql"))), "    event_id\nFROM versions", "    event_id,\n    arrived_late\nFROM versions", 1)
	write(t, dir, "orders_fact.sql", sql)
	schema := strings.Replace(string(mustRead(t, filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))),
		"  - {name: event_id, type: string, required: true}\n", "  - {name: event_id, type: string, required: true}\n  - {name: arrived_late, type: boolean, required: true}\n", 1)
	s.must("table", "create", "--schema", write(t, dir, "schema.yaml", schema))
	s.must("publish", "--job", job, "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", twoDays)
	write(t, filepath.Join(dir, "raw"), "batch3.ndjson", batch3)
	out := s.must("publish", "--job", job, "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01,2026-01-02,2026-01-06", "--run-id", "jan6")
	if !strings.Contains(out, "late rows loaded into the day they arrived: 2026-01-06 (1)") {
		t.Errorf("the run does not say where the late row went:\n%s", out)
	}
	got := facts(t, s, "arrived_late")
	want := []string{"2026-01-01 o101 false", "2026-01-01 o102 false", "2026-01-01 o107 false", "2026-01-02 o100 false", "2026-01-02 o103 false",
		"2026-01-02 o106 false", "2026-01-06 o108 true", "2026-01-06 o109 false"}
	if !slices.Equal(got, want) {
		t.Errorf("the facts are %v, want %v", got, want)
	}
	if out := s.must("history", "--table", "retail.orders_fact"); !strings.Contains(out, "run jan6: late rows loaded into the day they arrived: order_date=2026-01-06 (1 row)") {
		t.Errorf("history does not show where the late row went:\n%s", out)
	}
}

// TestSinceLast, on PostgreSQL and MinIO: publish --since-last with no
// watermark yet rebuilds every day the sources hold and records the
// greatest arrival it read; after batch 2 it plans exactly the day batch
// 2 touched plus the day the two-day lookback reaches back to; a run
// killed as it commits leaves table and watermark where they were, and
// the next run picks the same days up; later, only the days of the rows
// since the watermark, less the lookback, are rebuilt.
func TestSinceLast(t *testing.T) {
	s := newSite(t, "postgres+minio")
	dir, job := lateJob(t, "")
	batch2 := mustRead(t, filepath.Join(dir, "raw", "batch2.ndjson"))
	if err := os.Remove(filepath.Join(dir, "raw", "batch2.ndjson")); err != nil {
		t.Fatal(err)
	}
	s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))
	rejects := func() string { return filepath.Join(t.TempDir(), "rejects.ndjson") }
	if code, _, errs := s.cli("publish", "--job", job, "--since-last", "--partitions", twoDays); code != exitUsage || !strings.Contains(errs, "not both") {
		t.Errorf("--since-last with --partitions: exit %d: %s", code, errs)
	}
	if code, _, errs := s.cli("publish", "--table", "retail.orders_fact", "--since-last", filepath.Join(dir, "raw")); code != exitUsage || !strings.Contains(errs, "give --job") {
		t.Errorf("--since-last without a job: exit %d: %s", code, errs)
	}
	planned := func() []string {
		t.Helper()
		planFile := filepath.Join(t.TempDir(), "plan.json")
		s.must("plan", "--job", job, "--since-last", "--rejects", rejects(), "--out", planFile)
		var pf swap.PlanFile
		if err := json.Unmarshal(mustRead(t, planFile), &pf); err != nil {
			t.Fatal(err)
		}
		var days []string
		for _, pp := range pf.Plan.Partitions {
			days = append(days, pp.Value)
		}
		s.must("discard", planFile)
		return days
	}

	if got := planned(); !slices.Equal(got, []string{"2026-01-01", "2026-01-02"}) {
		t.Errorf("with no watermark, --since-last plans %v; want every day batch 1 holds", got)
	}
	s.must("publish", "--job", job, "--since-last", "--rejects", rejects())
	// e5, at 09:31 on 2026-01-02, is the last kept row of batch 1 to arrive.
	if w := headProp(t, s, "orders_fact", runrecord.PropWatermark); w != "2026-01-02T09:31:00Z" {
		t.Errorf("batch 1's run records the watermark %q", w)
	}

	// Batch 2 touches 2026-01-02; the lookback reaches back to rows of
	// 2026-01-01 that arrived within two days before the watermark.
	write(t, filepath.Join(dir, "raw"), "batch2.ndjson", string(batch2))
	if got := planned(); !slices.Equal(got, []string{"2026-01-01", "2026-01-02"}) {
		t.Errorf("after batch 2, --since-last plans %v", got)
	}
	meta := s.metadata("orders_fact")
	kill := s.command("publish", "--job", job, "--since-last", "--rejects", rejects())
	kill.Env = append(kill.Env, "LAKESWAP_TEST_KILL_AT_COMMIT=1")
	if out, err := kill.CombinedOutput(); err == nil {
		t.Fatalf("the run to be killed at its commit finished:\n%s", out)
	}
	if s.metadata("orders_fact") != meta || headProp(t, s, "orders_fact", runrecord.PropWatermark) != "2026-01-02T09:31:00Z" {
		t.Fatal("a run killed as it committed moved the table or its watermark")
	}
	if got := planned(); !slices.Equal(got, []string{"2026-01-01", "2026-01-02"}) {
		t.Errorf("after the killed run, --since-last plans %v; want the same days", got)
	}
	s.must("publish", "--job", job, "--since-last", "--rejects", rejects(), "--run-id", "b2")
	if got := facts(t, s); !slices.Equal(got, afterBatch2) {
		t.Errorf("after batch 2 by --since-last the facts are %v, want %v", got, afterBatch2)
	}
	if w := headProp(t, s, "orders_fact", runrecord.PropWatermark); w != "2026-01-03T09:00:00Z" {
		t.Errorf("batch 2's run records the watermark %q", w)
	}

	// Days later: only the days of what arrived since, less the lookback.
	write(t, filepath.Join(dir, "raw"), "batch4.ndjson", `{"event_id":"e16","order_id":"o110","channel":"web","order_ts":"2026-01-09T10:00:00Z","updated_at":"2026-01-09T10:00:00Z","source_version":1,"amount_cents":1000,"ingested_at":"2026-01-09T10:00:30Z"}`+"\n")
	s.must("publish", "--job", job, "--since-last", "--rejects", rejects())
	write(t, filepath.Join(dir, "raw"), "batch5.ndjson", `{"event_id":"e17","order_id":"o111","channel":"app","order_ts":"2026-01-10T07:00:00Z","updated_at":"2026-01-10T07:00:00Z","source_version":1,"amount_cents":1500,"ingested_at":"2026-01-10T08:00:00Z"}`+"\n")
	if got := planned(); !slices.Equal(got, []string{"2026-01-09", "2026-01-10"}) {
		t.Errorf("--since-last plans %v; want the day that arrived and the one the lookback reaches", got)
	}

	// A scoped rollback of batch 2's run takes its rows out again: the
	// watermarks recorded since are passed over, and --since-last reads
	// again from batch 1's.
	if code, out, errs := s.cli("rollback", "--scoped", "--table", "retail.orders_fact", "--run", "b2"); code != 0 {
		t.Fatalf("rollback --scoped --run b2: exit %d: %s%s", code, out, errs)
	}
	if got := planned(); !slices.Equal(got, []string{"2026-01-01", "2026-01-02", "2026-01-09", "2026-01-10"}) {
		t.Errorf("after a scoped rollback of batch 2's run, --since-last plans %v; want from batch 1's watermark on", got)
	}
}

// TestLateInARelease: orders_fact and the daily groups read from it,
// released as one (--downstream). o108, five days late, refuses the
// release, naming the fact day, and nothing moves in either table;
// --restate --reason rebuilds both, the decision recorded with the facts
// (daily_orders, whose job tracks no arrival, takes the decision as
// nothing to decide).
func TestLateInARelease(t *testing.T) {
	s := newSite(t, "sqlite+local")
	batches := string(mustRead(t, filepath.Join("..", "..", "internal", "retail", "fixture", "batch1.ndjson"))) +
		string(mustRead(t, filepath.Join("..", "..", "internal", "retail", "fixture", "batch2.ndjson")))
	dir := retailJobs(t, s, batches)
	t.Chdir(t.TempDir()) // where a release writes its rejects files
	release := func(args ...string) (int, string, string) {
		return s.cli(append([]string{"publish", "--job", filepath.Join(dir, "orders_fact.yaml"), "--downstream", "--jobs", dir, "--partitions", twoDays}, args...)...)
	}
	if code, out, errs := release(); code != 0 {
		t.Fatalf("the release of batches 1 and 2: exit %d: %s%s", code, out, errs)
	}
	write(t, filepath.Join(dir, "raw"), "batch3.ndjson", batch3)
	facts0, daily0 := s.metadata("orders_fact"), s.metadata("daily_orders")
	if code, _, errs := release(); code != exitRefused || !strings.Contains(errs, "order_date=2026-01-01: 1 source row for it arrived later than the lookback") {
		t.Errorf("the release with o108 five days late: exit %d: %s; want refused", code, errs)
	}
	if s.metadata("orders_fact") != facts0 || s.metadata("daily_orders") != daily0 {
		t.Fatal("a refused release moved a table")
	}
	if code, out, errs := release("--restate", "--reason", "finance reopened January", "--run-id", "jan-restated"); code != 0 {
		t.Fatalf("the release with --restate: exit %d: %s%s", code, out, errs)
	}
	if !slices.Contains(facts(t, s), "2026-01-01 o108") || s.metadata("daily_orders") == daily0 {
		t.Error("the restated release did not rebuild both tables with o108")
	}
	if out := s.must("history", "--table", "retail.orders_fact"); !strings.Contains(out, "run jan-restated: late rows restated: order_date=2026-01-01 (1 row)") {
		t.Errorf("history does not show the release's decision:\n%s", out)
	}
}

// TestLateOddArrivals: arrival times a careless or broken loader writes.
// A row of a published day with no arrival time cannot be told on time,
// so it is refused as late until a run restates it; a row stamped as
// arriving in 2099 does not carry the watermark past the run's clock, so
// later late rows are still refused; a late row of a published day the
// run does not rebuild (o101 moved to 2026-01-02) is named in a warning;
// a flag column the source already has, and a reason on two lines, are
// usage errors; a check with every check turned off is too.
func TestLateOddArrivals(t *testing.T) {
	s := newSite(t, "sqlite+local")
	dir, job := lateJob(t, "{owner: finance@example.com}")
	s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))
	raw := filepath.Join(dir, "raw")
	write(t, raw, "future.ndjson", `{"event_id":"e90","order_id":"o190","channel":"web","order_ts":"2026-01-02T08:00:00Z","updated_at":"2026-01-02T08:00:00Z","source_version":1,"amount_cents":10,"ingested_at":"2099-01-01T00:00:00Z"}`+"\n")
	run := func(args ...string) (int, string, string) {
		return s.cli(append(append([]string{}, args...), "--job", job, "--rejects", filepath.Join(t.TempDir(), "r.ndjson"))...)
	}
	if code, out, errs := run("publish", "--partitions", twoDays); code != 0 {
		t.Fatalf("the first backfill: exit %d: %s%s", code, out, errs)
	}
	if w := headProp(t, s, "orders_fact", runrecord.PropWatermark); w != "2026-01-03T09:00:00Z" {
		t.Errorf("with a row stamped as arriving in 2099 the watermark is %q, want 2026-01-03T09:00:00Z, the latest arrival not in the future", w)
	}

	// The 2099 row did not end the news: o108, five days late, is refused.
	write(t, raw, "batch3.ndjson", batch3)
	if code, _, errs := run("publish", "--partitions", twoDays); code != exitRefused || !strings.Contains(errs, "late partition order_date=2026-01-01") {
		t.Errorf("o108 five days late after a row stamped 2099: exit %d: %s; want refused", code, errs)
	}
	if err := os.Remove(filepath.Join(raw, "batch3.ndjson")); err != nil {
		t.Fatal(err)
	}

	// o101 moves to 2026-01-02, six days late: a run of 2026-01-01 alone
	// takes it out of that day and says where it waits, beside the 2099
	// row, news until its time comes.
	write(t, raw, "move.ndjson", `{"event_id":"e61","order_id":"o101","channel":"web","order_ts":"2026-01-02T11:00:00Z","updated_at":"2026-01-08T11:00:00Z","source_version":9,"amount_cents":5000,"ingested_at":"2026-01-08T11:00:00Z"}`+"\n")
	code, out, errs := run("plan", "--partitions", "order_date=2026-01-01", "--out", filepath.Join(t.TempDir(), "p.json"))
	if code != 0 || !strings.Contains(out, "source rows arrived later than the lookback for published days the run does not rebuild: 2026-01-02 (2)") {
		t.Errorf("a late row moving a record out of the run's day: exit %d: %s%s; want a warning naming 2026-01-02", code, out, errs)
	}
	if err := os.Remove(filepath.Join(raw, "move.ndjson")); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run("plan", "--partitions", "order_date=2026-01-01", "--restate", "--reason", "just in case", "--out", filepath.Join(t.TempDir(), "p.json")); code != 0 ||
		!strings.Contains(out, "--restate: no late row changes a day of the run") {
		t.Errorf("--restate with nothing to decide: exit %d: %s%s; want a warning that nothing is decided", code, out, errs)
	}

	// No arrival time: judged late, refused until restated.
	write(t, raw, "null.ndjson", `{"event_id":"e60","order_id":"o160","channel":"web","order_ts":"2026-01-01T12:00:00Z","updated_at":"2026-01-01T12:00:00Z","source_version":1,"amount_cents":60,"ingested_at":null}`+"\n")
	meta, files := s.metadata("orders_fact"), s.files()
	code, _, errs = run("publish", "--partitions", twoDays)
	if code != exitRefused || !strings.Contains(errs, "late partition order_date=2026-01-01: 1 source row") || !strings.Contains(errs, "the first at an unknown time (rows with no arrival time are news to every run") {
		t.Errorf("a row with no arrival time into a published day: exit %d: %s; want refused as late", code, errs)
	}
	if s.metadata("orders_fact") != meta || !slices.Equal(s.files(), files) {
		t.Fatal("a refused run changed the table or left files")
	}
	if code, _, errs := run("publish", "--partitions", twoDays, "--restate", "--reason", "o160 came from the till\nrun fake: forged"); code != exitUsage || !strings.Contains(errs, "one line of text") {
		t.Errorf("a reason on two lines: exit %d: %s; want a usage error", code, errs)
	}
	if code, out, errs := run("publish", "--partitions", twoDays, "--restate", "--reason", "o160 came from the till"); code != 0 || !strings.Contains(out, "late rows restated: 2026-01-01 (1)") {
		t.Fatalf("--restate: exit %d: %s%s", code, out, errs)
	}
	if got := facts(t, s); !slices.Contains(got, "2026-01-01 o160") {
		t.Errorf("after --restate the facts are %v, want o160 in 2026-01-01", got)
	}
	if code, out, errs := run("publish", "--partitions", twoDays); code != 0 || !strings.Contains(out, "unchanged") {
		t.Errorf("a rerun after the restatement: exit %d: %s%s; want unchanged", code, out, errs)
	}

	// o160, news to every run, restates nothing once in: --restate of a
	// day it leaves as it is decides nothing, and commits nothing.
	meta = s.metadata("orders_fact")
	if code, out, errs := run("plan", "--partitions", "order_date=2026-01-01", "--restate", "--reason", "again", "--out", filepath.Join(t.TempDir(), "p.json")); code != 0 ||
		!strings.Contains(out, "--restate: no late row changes a day of the run") {
		t.Errorf("plan --restate of a day o160 leaves as it is: exit %d: %s%s; want nothing decided", code, out, errs)
	}
	if code, out, errs := run("publish", "--partitions", "order_date=2026-01-01", "--restate", "--reason", "again"); code != 0 || !strings.Contains(out, "unchanged") {
		t.Errorf("--restate of a day o160 leaves as it is: exit %d: %s%s; want unchanged", code, out, errs)
	}
	if s.metadata("orders_fact") != meta {
		t.Error("a restatement that changes nothing moved the table")
	}
	// --leave: o160 has no arrival time to record, so 2026-01-01 records
	// no window; the 2099 row's window for 2026-01-02 ends at the run's
	// clock, not in 2099.
	if code, out, errs := run("publish", "--partitions", twoDays, "--leave", "--reason", "kept as reported"); code != 0 {
		t.Fatalf("--leave: exit %d: %s%s", code, out, errs)
	}
	var left map[string]runrecord.Left
	if err := json.Unmarshal([]byte(headProp(t, s, "orders_fact", runrecord.PropLateLeft)), &left); err != nil {
		t.Fatal(err)
	}
	if _, ok := left["2026-01-01"]; ok || left["2026-01-02"].Through == "" || left["2026-01-02"].Through >= "2099" {
		t.Errorf("the days left out are %v; want 2026-01-02 alone, through no later than now", left)
	}

	_, flaggedJob := lateJob(t, "{policy: current-period, flag: channel}")
	if code, _, errs := s.cli("plan", "--job", flaggedJob, "--partitions", twoDays, "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--out", filepath.Join(t.TempDir(), "p.json")); code != exitUsage || !strings.Contains(errs, "flag channel is a column source") {
		t.Errorf("a flag the source already has: exit %d: %s; want a usage error", code, errs)
	}
	if code, _, errs := s.cli("check", "--table", "retail.orders_fact", "--volume-band", "off", "--verified=false", "--contract=false"); code != exitUsage || !strings.Contains(errs, "no check to run") {
		t.Errorf("check with every check off: exit %d: %s; want a usage error", code, errs)
	}
}

// event is one raw order event of the retail job's source, as NDJSON: its
// arrival (ingested_at) is written as given, null for "".
func event(id, order, ts string, version int, ingested string) string {
	arrived := `"` + ingested + `"`
	if ingested == "" {
		arrived = "null"
	}
	return `{"event_id":"` + id + `","order_id":"` + order + `","channel":"web","order_ts":"` + ts + `","updated_at":"` + ts + `","source_version":` + strconv.Itoa(version) + `,"amount_cents":100,"ingested_at":` + arrived + "}\n"
}

// TestLateAcrossRoutes: the late guard where the routes of a job's run
// meet. After the fixture's two batches (watermark 2026-01-03T09:00Z):
// a run over days with a gap records no watermark past a row of the gap
// day, so --since-last rebuilds it; a row of no arrival time refuses
// --since-last, naming its day; a late correction that
// moves a record out of a published day into a day not yet published is
// refused like a move into one, and recorded when restated; shards that
// decide differently are refused, where the run recorded the first's
// decision for both; lag columns of epoch numbers are refused, where the
// guard judged nothing.
func TestLateAcrossRoutes(t *testing.T) {
	s := newSite(t, "sqlite+local")
	dir, job := lateJob(t, "{owner: finance@example.com}")
	raw := filepath.Join(dir, "raw")
	s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))
	rejects := func() string { return filepath.Join(t.TempDir(), "r.ndjson") }
	run := func(args ...string) (int, string, string) {
		return s.cli(append(append([]string{}, args...), "--job", job, "--rejects", rejects())...)
	}
	planned := func(args ...string) []string {
		t.Helper()
		planFile := filepath.Join(t.TempDir(), "plan.json")
		if code, out, errs := run(append([]string{"plan", "--out", planFile}, args...)...); code != 0 {
			t.Fatalf("plan %v: exit %d: %s%s", args, code, out, errs)
		}
		pf, err := swap.ReadPlan(planFile)
		if err != nil {
			t.Fatal(err)
		}
		var days []string
		for _, pp := range pf.Plan.Partitions {
			days = append(days, pp.Value)
		}
		s.must("discard", planFile)
		return days
	}
	s.must("publish", "--job", job, "--rejects", rejects(), "--partitions", twoDays)
	const w0 = "2026-01-03T09:00:00Z"

	// A gap: o300 of 2026-01-03 moves to 2026-01-05; the run of 01-01,
	// 01-02 and 01-04 does not read 01-03, so its watermark stays before
	// the row of 01-03, and --since-last takes that day in.
	write(t, raw, "gap.ndjson", event("e301", "o300", "2026-01-03T10:00:00Z", 1, "2026-01-04T10:00:00Z")+
		event("e302", "o300", "2026-01-05T10:00:00Z", 2, "2026-01-05T10:00:00Z")+
		event("e303", "o301", "2026-01-04T10:00:00Z", 1, "2026-01-04T12:00:00Z"))
	if code, out, errs := run("publish", "--partitions", "order_date=2026-01-01,2026-01-02,2026-01-04"); code != 0 {
		t.Fatalf("the run over a gapped list of days: exit %d: %s%s", code, out, errs)
	}
	if w := headProp(t, s, "orders_fact", runrecord.PropWatermark); w != w0 {
		t.Errorf("the run over 01-01, 01-02 and 01-04 records the watermark %q; want %s, before the row of 01-03 it did not read", w, w0)
	}
	if got := planned("--since-last", "--allow-empty"); !slices.Contains(got, "2026-01-03") {
		t.Errorf("--since-last after the gapped run plans %v; want 2026-01-03 among them", got)
	}
	if err := os.Remove(filepath.Join(raw, "gap.ndjson")); err != nil {
		t.Fatal(err)
	}

	// No arrival time, in a day no other row touches: news to every run,
	// which no watermark passes, so --since-last is refused naming it,
	// where it passed the row over.
	write(t, raw, "null.ndjson", event("e400", "o400", "2026-01-07T10:00:00Z", 1, ""))
	if code, _, errs := run("plan", "--since-last", "--out", filepath.Join(t.TempDir(), "p.json")); code != exitUsage || !strings.Contains(errs, "source raw_events holds 1 row with no arrival time") || !strings.Contains(errs, "day 2026-01-07") {
		t.Errorf("--since-last with a row of no arrival time on 2026-01-07: exit %d: %s; want refused naming the day", code, errs)
	}
	if err := os.Remove(filepath.Join(raw, "null.ndjson")); err != nil {
		t.Fatal(err)
	}

	// A row of no arrival time in a new day is no correction: a published
	// day that changes by rows on time beside it is not refused.
	write(t, raw, "ontime.ndjson", event("e500", "o500", "2026-01-01T20:00:00Z", 1, "2026-01-01T20:05:00Z")+event("e501", "o501", "2026-01-06T10:00:00Z", 1, ""))
	if code, out, errs := run("plan", "--partitions", "order_date=2026-01-01,2026-01-02,2026-01-06", "--out", filepath.Join(t.TempDir(), "p.json")); code != 0 {
		t.Errorf("a published day changed by a row on time, beside a row of no arrival time in a new day: exit %d: %s%s; want planned", code, out, errs)
	}
	if err := os.Remove(filepath.Join(raw, "ontime.ndjson")); err != nil {
		t.Fatal(err)
	}

	// o101 moves out of published 2026-01-01 into 2026-01-03, not yet
	// published, by a correction six days late.
	write(t, raw, "move.ndjson", event("e61", "o101", "2026-01-03T11:00:00Z", 9, "2026-01-09T11:00:00Z"))
	meta, files := s.metadata("orders_fact"), s.files()
	code, _, errs := run("publish", "--partitions", "order_date=2026-01-01..2026-01-03")
	if code != exitRefused || !strings.Contains(errs, "late partition order_date=2026-01-01: it is published and changes, while 1 source row of 2026-01-03, not yet published, arrived later than the lookback") {
		t.Errorf("a late move out of a published day into a new one: exit %d: %s; want refused naming 2026-01-01", code, errs)
	}
	if s.metadata("orders_fact") != meta || !slices.Equal(s.files(), files) {
		t.Fatal("a refused run changed the table or left files")
	}
	if code, out, errs := run("publish", "--partitions", "order_date=2026-01-01..2026-01-03", "--restate", "--reason", "o101 was re-dated", "--run-id", "redated"); code != 0 {
		t.Fatalf("--restate of the move: exit %d: %s%s", code, out, errs)
	}
	if got := facts(t, s); !slices.Contains(got, "2026-01-03 o101") || slices.Contains(got, "2026-01-01 o101") {
		t.Errorf("after the restated move the facts are %v, want o101 in 2026-01-03 alone", got)
	}
	if out := s.must("history", "--table", "retail.orders_fact"); !strings.Contains(out, "run redated: late rows restated: order_date=2026-01-01 (1 row)") {
		t.Errorf("history does not record the restatement of 2026-01-01:\n%s", out)
	}

	// Shards of one run, one leaving and one restating: refused, naming
	// both decisions; nothing changes.
	write(t, raw, "late2.ndjson", event("e71", "o171", "2026-01-01T12:00:00Z", 1, "2026-01-09T12:00:00Z")+
		event("e72", "o172", "2026-01-02T12:00:00Z", 1, "2026-01-09T12:00:00Z"))
	shard := func(day, decision, reason string) (string, string) {
		p := filepath.Join(t.TempDir(), "shard.json")
		if code, out, errs := run("plan", "--run-id", "sharded", "--partitions", "order_date="+day, "--"+decision, "--reason", reason, "--out", p); code != 0 {
			t.Fatalf("plan of %s: exit %d: %s%s", day, code, out, errs)
		}
		pf, err := swap.ReadPlan(p)
		if err != nil {
			t.Fatal(err)
		}
		return p, pf.PlanID
	}
	main, content := s.mainState("orders_fact"), s.content()
	a, aID := shard("2026-01-01", "leave", "kept as reported")
	b, bID := shard("2026-01-02", "restate", "the till was late")
	if code, _, errs := s.cli("apply", a, b, "--approve", aID+","+bID); code == 0 || !strings.Contains(errs, "decide late rows differently") || !strings.Contains(errs, "kept as reported") || !strings.Contains(errs, "the till was late") {
		t.Errorf("shards that decide differently: exit %d: %s; want refused naming both decisions", code, errs)
	}
	if s.mainState("orders_fact") != main {
		t.Error("a refused apply of shards moved the table")
	}
	s.must("discard", a)
	s.must("discard", b)
	if !slices.Equal(s.content(), content) {
		t.Error("discarding the shards left files")
	}

	// Epoch numbers as arrival times read as no time at all.
	_, epochJob := lateJob(t, "")
	epochRaw := filepath.Join(filepath.Dir(epochJob), "raw")
	for _, f := range []string{"batch1.ndjson", "batch2.ndjson"} {
		if err := os.Remove(filepath.Join(epochRaw, f)); err != nil {
			t.Fatal(err)
		}
	}
	write(t, epochRaw, "epoch.ndjson", strings.ReplaceAll(event("e1", "o1", "2026-01-01T10:00:00Z", 1, "x"), `"x"`, "1767866400"))
	if code, _, errs := s.cli("plan", "--job", epochJob, "--partitions", twoDays, "--rejects", rejects(), "--out", filepath.Join(t.TempDir(), "p.json")); code != exitUsage || !strings.Contains(errs, "ingested_at ingested_at reads as no time") || !strings.Contains(errs, "to_timestamp(CAST(ingested_at AS BIGINT))") {
		t.Errorf("a lag of epoch numbers: exit %d: %s; want a usage error naming to_timestamp", code, errs)
	}
	if code, _, errs := s.cli("lag", "--job", epochJob); code != exitUsage || !strings.Contains(errs, "reads as no time") {
		t.Errorf("lag of epoch numbers: exit %d: %s; want a usage error", code, errs)
	}

	// A lag time that fails to compute is named, though both are read in
	// one scan.
	_, failingJob := lateJob(t, "")
	yaml, err := os.ReadFile(failingJob)
	if err != nil {
		t.Fatal(err)
	}
	yaml = []byte(strings.Replace(string(yaml), "ingested_at: ingested_at}", `ingested_at: "error('no arrival here')"}`, 1))
	write(t, filepath.Dir(failingJob), filepath.Base(failingJob), string(yaml))
	if code, _, errs := s.cli("plan", "--job", failingJob, "--partitions", twoDays, "--rejects", rejects(), "--out", filepath.Join(t.TempDir(), "p.json")); code != exitUsage || !strings.Contains(errs, "lag: ingested_at error('no arrival here')") || !strings.Contains(errs, "no arrival here") {
		t.Errorf("a lag time that fails: exit %d: %s; want a usage error naming ingested_at", code, errs)
	}
}
