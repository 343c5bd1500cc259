package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/swap"
)

// TestJobSeveralFields: a SQL job publishes a table of two partition
// fields, day(event_ts) and region, on every site. $from and $to bound the
// days named; a region not named is every region the job's rows or the
// table hold those days (dynamic overwrite); the rerun commits nothing;
// the reconciliation query gives one row a (day, region); a region the
// run does not declare is refused when the job's rows hold it; plan then
// apply commits. Checked with iceberg-go's scan.
func TestJobSeveralFields(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		createEventsTable(t, s)
		const tbl = "eng.events"
		s.must("table", "set", "--table", tbl, "grain=event_ts,region,user_id", "additive=views")
		dir := t.TempDir()
		raw := func(views int, cells ...string) { // cells: "01/eu/7" = day, region, user
			var b strings.Builder
			for _, c := range cells {
				f := strings.Split(c, "/")
				fmt.Fprintf(&b, `{"ts":"2026-01-%sT10:00:00Z","region":"%s","user_id":%s,"views":%d}`+"\n", f[0], f[1], f[2], views)
			}
			write(t, dir, "raw.ndjson", b.String())
		}
		sql := "SELECT CAST(ts AS TIMESTAMPTZ) AS event_ts, region, user_id, views FROM raw\n" +
			"  WHERE CAST(CAST(ts AS TIMESTAMPTZ) AT TIME ZONE 'UTC' AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)"
		reconcile := "SELECT date_trunc('day', event_ts) AS event_ts, region, count(*)::BIGINT AS rows, sum(views)::BIGINT AS views FROM (" + sql + ") GROUP BY 1, 2"
		job := write(t, dir, "events.yaml", "table: eng.events\nsources:\n  raw: {path: raw.ndjson}\nsql: |\n  "+strings.ReplaceAll(sql, "\n", "\n  ")+
			"\nreconcile: |\n  "+strings.ReplaceAll(reconcile, "\n", "\n  ")+"\n")
		row := func(day, region string, user, views int) string {
			return fmt.Sprintf("event_ts=2026-01-%sT10:00:00Z region=%s user_id=%d views=%d", day, region, user, views)
		}
		expect := func(step string, want ...string) {
			t.Helper()
			slices.Sort(want)
			if got := view(t, s, "events", "event_ts", "region", "user_id", "views"); !slices.Equal(got, want) {
				t.Fatalf("%s: the reader sees\n%s\nwant\n%s", step, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		days := "event_ts=2026-01-01..2026-01-02"
		raw(1, "01/eu/1", "01/us/2", "02/eu/3", "02/us/4", "03/eu/5")
		out := s.must("publish", "--run-id", "job-one", "--job", job, "--partitions", days)
		expect("publish", row("01", "eu", 1, 1), row("01", "us", 2, 1), row("02", "eu", 3, 1), row("02", "us", 4, 1))
		if !strings.Contains(out, "event_ts=2026-01-01/region=eu") {
			t.Errorf("publish does not name the tuples:\n%s", out)
		}
		meta, files := s.metadata(tbl), s.files()
		if out := s.must("publish", "--job", job, "--partitions", days); s.metadata(tbl) != meta || !slices.Equal(s.files(), files) {
			t.Fatalf("the job's rerun committed or wrote: %s", out)
		}

		// The job's rows hold us, which the run does not declare.
		raw(2, "02/eu/3", "02/us/4")
		code, _, errs := s.cli("publish", "--job", job, "--partitions", "event_ts=2026-01-02", "--partitions", "region=eu")
		if code == 0 || !strings.Contains(errs, "region=us") || s.metadata(tbl) != meta {
			t.Errorf("a job's row in a region the run does not declare: exit %d: %s", code, errs)
		}

		// Plan then apply, the region named: the plan reconciles per tuple.
		plan := filepath.Join(t.TempDir(), "p.json")
		raw(3, "02/eu/3", "02/eu/6")
		shown := s.must("plan", "--job", job, "--out", plan, "--allow-implausible", "--partitions", "event_ts=2026-01-02", "--partitions", "region=eu")
		if !strings.Contains(shown, "reconciled with the sources:") || !strings.Contains(shown, "event_ts=2026-01-02/region=eu") {
			t.Errorf("the job's plan:\n%s", shown)
		}
		pf, err := swap.ReadPlan(plan)
		if err != nil {
			t.Fatal(err)
		}
		s.must("apply", plan, "--approve", pf.PlanID)
		expect("apply", row("01", "eu", 1, 1), row("01", "us", 2, 1), row("02", "eu", 3, 3), row("02", "eu", 6, 3), row("02", "us", 4, 1))
	})
}

// TestAdoptSeveralFields: --adopt on a table of two partition fields
// commits a file another engine wrote for one (day, region) named in full,
// and refuses a selection that leaves a field open (the files are read
// only once staged), changing nothing.
func TestAdoptSeveralFields(t *testing.T) {
	s := newSite(t, "sqlite+local")
	createEventsTable(t, s)
	const tbl = "eng.events"
	_, loaded, done := engineTable(t, s, "events")
	c, err := contract.Of(loaded.Metadata())
	loc := strings.TrimPrefix(loaded.Location(), "file://")
	done()
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
	defer b.Release()
	for user := range int64(2) {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC).UnixMicro()))
		b.Field(1).(*array.StringBuilder).Append("eu")
		b.Field(2).(*array.Int64Builder).Append(user + 1)
		b.Field(3).(*array.Int64Builder).Append(7)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w := parquetio.NewWriter(icebergio.LocalFS{}, filepath.Join(loc, "data", "engine-write"), c.Arrow, parquetio.Options{})
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	written, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	meta := s.metadata(tbl)
	if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "event_ts=2026-01-01", "--adopt", written[0].Path); code != exitUsage || !strings.Contains(errs, "every field") || s.metadata(tbl) != meta {
		t.Errorf("--adopt with the region left open: exit %d: %s", code, errs)
	}
	s.must("publish", "--table", tbl, "--partitions", "event_ts=2026-01-01", "--partitions", "region=eu", "--adopt", written[0].Path)
	want := []string{"event_ts=2026-01-01T10:00:00Z region=eu user_id=1 views=7", "event_ts=2026-01-01T10:00:00Z region=eu user_id=2 views=7"}
	if got := view(t, s, "events", "event_ts", "region", "user_id", "views"); !slices.Equal(got, want) {
		t.Errorf("after adopting, the reader sees %v, want %v", got, want)
	}
}
