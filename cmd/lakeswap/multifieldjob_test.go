package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

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
		sc := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
			iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
			iceberg.NestedField{ID: 3, Name: "user_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 4, Name: "views", Type: iceberg.PrimitiveTypes.Int64, Required: true})
		spec := iceberg.NewPartitionSpec(
			iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_ts_day", Transform: iceberg.DayTransform{}},
			iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "region", Transform: iceberg.IdentityTransform{}})
		createEngineTable(t, s, "events", sc, spec)
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
