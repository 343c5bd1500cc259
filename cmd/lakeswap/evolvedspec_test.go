package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/runrecord"
)

// TestEvolvedSpec: a table another engine made partitioned by month(d),
// then by day(d), with files of both. On every site: a day no month file
// holds publishes beside them; a day a month file holds rows of is
// refused naming the file, and nothing changes; a job's table source,
// verify --table and the moved-records guard read the month files too;
// iceberg-go's scan is checked after each step.
func TestEvolvedSpec(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		sc := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
			iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d_month", Transform: iceberg.MonthTransform{}})
		createEngineTable(t, s, "respec", sc, spec)
		const tbl = "eng.respec"
		s.must("table", "set", "--table", tbl, "grain=id")
		rows := func(n int, cells ...string) string { // "2026-01-05/1": day, id
			var b strings.Builder
			for _, c := range cells {
				day, id, _ := strings.Cut(c, "/")
				fmt.Fprintf(&b, `{"d":%q,"id":%s,"n":%d}`+"\n", day, id, n)
			}
			return write(t, t.TempDir(), "in.ndjson", b.String())
		}
		s.must("publish", "--run-id", "months", "--table", tbl, "--partitions", "d=2026-01", rows(1, "2026-01-05/1", "2026-01-20/2"))

		ctx, loaded, done := engineTable(t, s, "respec")
		tx := loaded.NewTransaction()
		if err := tx.UpdateSpec(true).RemoveField("d_month").AddField("d", iceberg.DayTransform{}, "d_day").Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		done()
		monthFiles := s.runFiles("months")

		// A day of February: no month file holds it.
		s.must("publish", "--run-id", "feb", "--table", tbl, "--partitions", "d=2026-02-01..2026-02-02", rows(1, "2026-02-01/3", "2026-02-02/4"))
		want := []string{"id=1 n=1", "id=2 n=1", "id=3 n=1", "id=4 n=1"}
		if got := view(t, s, "respec", "id", "n"); !slices.Equal(got, want) {
			t.Fatalf("after a publish beside the month files the reader sees %v", got)
		}
		meta, files := s.metadata(tbl), s.files()
		code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "d=2026-01-05", rows(5, "2026-01-05/1"))
		if code != exitRefused || !strings.Contains(errs, monthFiles[0]) || !strings.Contains(errs, "d=2026-01-05") || !strings.Contains(errs, "rewrite the table's files") {
			t.Errorf("a day a month file holds: exit %d: %s", code, errs)
		}
		if s.metadata(tbl) != meta || !slices.Equal(s.files(), files) {
			t.Errorf("the refused run changed the table or its files")
		}
		// A job reading the table as a source lists the month files too.
		ctx, cat, pub, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
		if err != nil {
			t.Fatal(err)
		}
		_, listed, err := pub.SnapshotFiles(ctx, []string{"eng", "respec"}, 0)
		cat.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range monthFiles {
			if !slices.ContainsFunc(listed, func(in runrecord.Input) bool { return in.URL == f }) {
				t.Errorf("a job's table source leaves out %s, written under the earlier spec", f)
			}
		}
		// A day of January the month file holds no row of is the run's alone.
		s.must("publish", "--run-id", "jan-3", "--table", tbl, "--partitions", "d=2026-01-03", rows(1, "2026-01-03/5"))
		if got := view(t, s, "respec", "id", "n"); !slices.Equal(got, append(slices.Clone(want), "id=5 n=1")) {
			t.Errorf("after a day the month file holds nothing of, the reader sees %v", got)
		}
		// verify --table and table set read the month files too: id 1 is
		// in the month file and, published again, in a day of February.
		if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"rows": 5`) {
			t.Errorf("verify --table does not read every row: %s", out)
		}
		// A record the month file holds, staged in a day of February, moved:
		// the run is refused naming where it lives.
		meta = s.metadata(tbl)
		if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "d=2026-02-03", rows(1, "2026-02-03/1")); code != exitRefused || !strings.Contains(errs, "moved") || !strings.Contains(errs, "earlier partition spec") || s.metadata(tbl) != meta {
			t.Errorf("a record of the month file staged in February: exit %d: %s", code, errs)
		}
	})
}
