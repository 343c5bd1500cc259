package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergcat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/swap"
)

// createEngineTable makes eng.NAME through iceberg-go's API, as another
// engine would: no identifier fields, the spec as given.
func createEngineTable(t *testing.T, s *site, name string, sc *iceberg.Schema, spec iceberg.PartitionSpec) {
	t.Helper()
	ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if err := cat.CreateNamespace(ctx, []string{"eng"}, nil); err != nil && !strings.Contains(err.Error(), "exist") {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, []string{"eng", name}, sc, icebergcat.WithPartitionSpec(&spec)); err != nil {
		t.Fatal(err)
	}
}

// createEventsTable creates eng.events as Spark or Trino would: event_ts
// timestamptz, region, user_id, views, partitioned by day(event_ts) and
// region; it returns the schema.
func createEventsTable(t *testing.T, s *site) *iceberg.Schema {
	t.Helper()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "user_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 4, Name: "views", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "region", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, "events", sc, spec)
	return sc
}

// engineTable loads eng.NAME through the site's catalog; done closes it.
func engineTable(t *testing.T, s *site, name string) (ctx context.Context, tbl *table.Table, done func()) {
	t.Helper()
	ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = cat.LoadTable(ctx, []string{"eng", name}); err != nil {
		cat.Close()
		t.Fatal(err)
	}
	return ctx, tbl, func() { cat.Close() }
}

// view is what iceberg-go's scan of eng.NAME reads, row by row as
// "key=value" text of the columns named, sorted.
func view(t *testing.T, s *site, name string, cols ...string) []string {
	t.Helper()
	ctx, tbl, done := engineTable(t, s, name)
	defer done()
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	return scanned(t, ctx, tbl.Scan(table.WithSelectedFields(cols...)), cols)
}

// scanned is what a scan reads, row by row as "key=value" text of the
// columns named, sorted.
func scanned(t *testing.T, ctx context.Context, scan *table.Scan, cols []string) []string {
	t.Helper()
	at, err := scan.ToArrowTable(ctx)
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
			var parts []string
			for i := range cols {
				parts = append(parts, rec.Schema().Field(i).Name+"="+rec.Column(i).ValueStr(r))
			}
			out = append(out, strings.Join(parts, " "))
		}
	}
	slices.Sort(out)
	return out
}

// TestSeveralPartitionFields: a table another engine made partitioned by
// day(event_ts), region. On every site: --partitions once per field; a
// field not named means every value of it the input or the table holds in
// the named days (a region the input no longer has is a wipe, refused
// unless allowed); a rerun commits nothing; plan then apply naming the
// region alone; another writer's commit, then a scoped rollback; a row
// outside refused; one folder per field; batches of tuples. What
// iceberg-go's own scan reads is checked after each step.
func TestSeveralPartitionFields(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		createEventsTable(t, s)
		const tbl = "eng.events"
		rows := func(views int, cells ...string) string { // cells: "01/eu/7" = day, region, user
			var b strings.Builder
			for _, c := range cells {
				day, rest, _ := strings.Cut(c, "/")
				i := strings.LastIndex(rest, "/")
				fmt.Fprintf(&b, `{"event_ts":"2026-01-%sT10:00:00Z","region":"%s","user_id":%s,"views":%d}`+"\n", day, rest[:i], rest[i+1:], views)
			}
			return write(t, t.TempDir(), "in.ndjson", b.String())
		}
		seen := func() []string { return view(t, s, "events", "event_ts", "region", "user_id", "views") }
		row := func(day, region string, user, views int) string {
			return fmt.Sprintf("event_ts=2026-01-%sT10:00:00Z region=%s user_id=%d views=%d", day, region, user, views)
		}
		expect := func(step string, want ...string) {
			t.Helper()
			slices.Sort(want)
			if got := seen(); !slices.Equal(got, want) {
				t.Fatalf("%s: the reader sees\n%s\nwant\n%s", step, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		days := "event_ts=2026-01-01..2026-01-02"
		all := []string{"01/eu/1", "01/us/2", "02/eu/3", "02/us/4"}
		s.must("publish", "--run-id", "one", "--table", tbl, "--partitions", days, "--partitions", "region=eu,us", rows(1, all...))
		expect("publish", row("01", "eu", 1, 1), row("01", "us", 2, 1), row("02", "eu", 3, 1), row("02", "us", 4, 1))
		files := s.files()
		if !slices.ContainsFunc(files, func(f string) bool { return strings.Contains(f, "/event_ts_day=2026-01-01/region=eu/") }) {
			t.Errorf("no folder per field:\n%s", strings.Join(files, "\n"))
		}
		meta := s.metadata(tbl)
		if out := s.must("publish", "--run-id", "one-again", "--table", tbl, "--partitions", "region=eu,us", "--partitions", days, rows(1, all...)); s.metadata(tbl) != meta || !slices.Equal(withoutRecords(s.files()), files) {
			t.Fatalf("a rerun committed or wrote: %s", out)
		}
		// but the record status answers from, as the run was named.
		if !slices.ContainsFunc(s.files(), func(f string) bool { return strings.HasSuffix(f, "/lakeswap/unchanged/one-again.json") }) {
			t.Error("a named run that changed nothing left no record for status")
		}

		// The day named alone: every region the table or input holds that
		// day is the run's. us is in the table, not the input: a wipe.
		day1 := rows(2, "01/eu/1", "01/apac/5")
		code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "event_ts=2026-01-01", day1)
		if code != exitRefused || !strings.Contains(errs, "region=us") || s.metadata(tbl) != meta {
			t.Fatalf("a region emptied by a run naming the day alone: exit %d: %s", code, errs)
		}
		s.must("publish", "--run-id", "day1", "--allow-empty", "--table", tbl, "--partitions", "event_ts=2026-01-01", day1)
		expect("publish of a day", row("01", "eu", 1, 2), row("01", "apac", 5, 2), row("02", "eu", 3, 1), row("02", "us", 4, 1))

		// The region named alone, by plan then apply: eu of every day.
		plan := filepath.Join(t.TempDir(), "p.json")
		s.must("plan", "--run-id", "eu", "--out", plan, "--table", tbl, "--partitions", "region=eu", rows(7, "01/eu/1", "02/eu/3"))
		pf, err := swap.ReadPlan(plan)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, pp := range pf.Plan.Partitions {
			keys = append(keys, pp.Key)
		}
		if want := []string{"event_ts=2026-01-01/region=eu", "event_ts=2026-01-02/region=eu"}; !slices.Equal(keys, want) {
			t.Errorf("the plan's partitions are %v, want %v", keys, want)
		}
		s.must("apply", plan, "--approve", pf.PlanID)
		expect("apply", row("01", "eu", 1, 7), row("01", "apac", 5, 2), row("02", "eu", 3, 7), row("02", "us", 4, 1))

		// Another writer, then a scoped rollback of run eu alone.
		s.must("publish", "--table", tbl, "--partitions", "event_ts=2026-01-03", "--partitions", "region=us", rows(9, "03/us/6"))
		s.must("rollback", "--scoped", "--table", tbl, "--run", "eu")
		expect("scoped rollback", row("01", "eu", 1, 2), row("01", "apac", 5, 2), row("02", "eu", 3, 1), row("02", "us", 4, 1), row("03", "us", 6, 9))
		if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) {
			t.Errorf("verify --table: %s", out)
		}
		for _, run := range []string{"one", "day1"} {
			if code, out, errs := s.cli("verify", "--table", tbl, "--run", run); code != 0 {
				t.Errorf("verify of run %s: exit %d: %s%s", run, code, out, errs)
			}
		}

		// A row outside the tuples declared is refused, naming it.
		meta = s.metadata(tbl)
		code, _, errs = s.cli("publish", "--table", tbl, "--partitions", "event_ts=2026-01-01", "--partitions", "region=eu", rows(3, "01/eu/1", "01/us/2"))
		if code != exitRefused || !strings.Contains(errs, "event_ts=2026-01-01/region=us") || s.metadata(tbl) != meta {
			t.Errorf("a row outside: exit %d: %s", code, errs)
		}
		// Selectors that name a column twice, or one not partitioned by.
		for _, bad := range [][]string{{"region=eu", "region=us"}, {"user_id=1"}} {
			args := []string{"publish", "--table", tbl}
			for _, b := range bad {
				args = append(args, "--partitions", b)
			}
			if code, _, errs := s.cli(append(args, rows(1, "01/eu/1"))...); code != exitUsage {
				t.Errorf("selectors %v: exit %d: %s", bad, code, errs)
			}
		}

		// Values holding the tuple's separator and its escape; history
		// names each run's tuples.
		odd := rows(1, "05/a/b/10", "05/50%/11")
		s.must("publish", "--run-id", "odd", "--table", tbl, "--partitions", "event_ts=2026-01-05", "--partitions", `region=a/b,50%`, odd)
		meta = s.metadata(tbl)
		if out := s.must("publish", "--table", tbl, "--partitions", "event_ts=2026-01-05", odd); s.metadata(tbl) != meta {
			t.Errorf("a rerun of values holding / and %% committed: %s", out)
		}
		if got := view(t, s, "events", "region", "user_id"); !slices.Contains(got, "region=a/b user_id=10") || !slices.Contains(got, "region=50% user_id=11") {
			t.Errorf("the reader sees %v", got)
		}
		if h := s.must("history", "--table", tbl); !strings.Contains(h, "event_ts=2026-01-05/region=a/b") || !strings.Contains(h, "event_ts=2026-01-01/region=eu") {
			t.Errorf("history does not name the tuples:\n%s", h)
		}

		// gc finds a plan's files under a folder per field once the plan
		// is past its retention, and removes those alone.
		s.must("plan", "--run-id", "abandoned", "--out", filepath.Join(t.TempDir(), "a.json"), "--table", tbl, "--partitions", "region=apac", rows(5, "01/apac/5"))
		staged := s.runFiles("abandoned")
		if len(staged) == 0 || !strings.Contains(staged[0], "/event_ts_day=2026-01-01/region=apac/run-abandoned-") {
			t.Fatalf("the plan staged %v", staged)
		}
		meta, kept := s.mainState(tbl), slices.DeleteFunc(s.data(), func(f string) bool { return slices.Contains(staged, f) })
		gc := s.command("gc", "--table", tbl, "--yes")
		gc.Env = append(gc.Env, "LAKESWAP_TEST_CLOCK=400h")
		if out, err := gc.CombinedOutput(); err != nil {
			t.Fatalf("gc: %v: %s", err, out)
		}
		left := s.data()
		if len(s.runFiles("abandoned")) != 0 || !slices.Equal(left, kept) || s.mainState(tbl) != meta {
			t.Errorf("gc left %v of the plan's files, or removed others:\n%s", s.runFiles("abandoned"), strings.Join(left, "\n"))
		}

		// Batches of tuples, one snapshot each, and a rerun resuming.
		before := len(seen())
		out := s.must("-o", "json", "publish", "--run-id", "batched", "--batch", "1", "--table", tbl, "--partitions", "event_ts=2026-01-04", "--partitions", "region=eu,us", rows(4, "04/eu/7", "04/us/8"))
		if !strings.Contains(out, `"batches"`) || len(seen()) != before+2 {
			t.Errorf("batches of tuples: %s", out)
		}
	})
}

// TestTruncateAndMonth: truncate(4, sku), month(d), made by another
// engine. On every site: publish naming both fields, a rerun committing
// nothing, plan then apply naming the month alone (every prefix the
// input or table holds in it), another writer's month, a scoped rollback,
// verify, and iceberg-go's scan after each step.
func TestTruncateAndMonth(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		sc := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "sku", Type: iceberg.PrimitiveTypes.String, Required: true},
			iceberg.NestedField{ID: 2, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
			iceberg.NestedField{ID: 3, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 4, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
		spec := iceberg.NewPartitionSpec(
			iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "sku_trunc", Transform: iceberg.TruncateTransform{Width: 4}},
			iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "d_month", Transform: iceberg.MonthTransform{}})
		createEngineTable(t, s, "sales", sc, spec)
		const tbl = "eng.sales"
		rows := func(n int, cells ...string) string { // "ABCD-1/2026-01-05/1": sku, day, id
			var b strings.Builder
			for _, c := range cells {
				p := strings.Split(c, "/")
				fmt.Fprintf(&b, `{"sku":%q,"d":%q,"id":%s,"n":%d}`+"\n", p[0], p[1], p[2], n)
			}
			return write(t, t.TempDir(), "in.ndjson", b.String())
		}
		expect := func(step string, want ...string) {
			t.Helper()
			slices.Sort(want)
			if got := view(t, s, "sales", "id", "n"); !slices.Equal(got, want) {
				t.Fatalf("%s: the reader sees %v, want %v", step, got, want)
			}
		}
		first := []string{"ABCD-1/2026-01-05/1", "ABCDE/2026-01-31/2", "WXYZ-9/2026-02-01/3"}
		s.must("publish", "--run-id", "one", "--table", tbl, "--partitions", "d=2026-01..2026-02", "--partitions", "sku=ABCD,WXYZ", rows(1, first...))
		expect("publish", "id=1 n=1", "id=2 n=1", "id=3 n=1")
		meta := s.metadata(tbl)
		if out := s.must("publish", "--table", tbl, "--partitions", "sku=ABCD,WXYZ", "--partitions", "d=2026-01..2026-02", rows(1, first...)); s.metadata(tbl) != meta {
			t.Fatalf("a rerun committed: %s", out)
		}
		plan := filepath.Join(t.TempDir(), "p.json")
		s.must("plan", "--run-id", "jan", "--out", plan, "--table", tbl, "--partitions", "d=2026-01", rows(5, "ABCD-1/2026-01-05/1", "ABCDE/2026-01-31/2"))
		pf, err := swap.ReadPlan(plan)
		if err != nil || len(pf.Plan.Partitions) != 1 || pf.Plan.Partitions[0].Key != "sku=ABCD/d=2026-01" {
			t.Fatalf("plan: %v %+v", err, pf.Plan.Partitions)
		}
		s.must("apply", plan, "--approve", pf.PlanID)
		expect("apply", "id=1 n=5", "id=2 n=5", "id=3 n=1")
		s.must("publish", "--table", tbl, "--partitions", "d=2026-03", rows(9, "QRST/2026-03-01/4"))
		s.must("rollback", "--scoped", "--table", tbl, "--run", "jan")
		expect("scoped rollback", "id=1 n=1", "id=2 n=1", "id=3 n=1", "id=4 n=9")
		if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) {
			t.Errorf("verify --table: %s", out)
		}
		// A prefix truncate would not give is refused before anything is read.
		if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "sku=ABCDE", rows(1, first[0])); code != exitUsage || !strings.Contains(errs, "truncate[4]") {
			t.Errorf("sku=ABCDE: exit %d: %s", code, errs)
		}
	})
}
