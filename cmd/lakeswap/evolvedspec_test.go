package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergcat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/history"
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

		monthsToDays(t, s, "respec")
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
		_, listed, err := history.Of(pub.Catalog).SnapshotFiles(ctx, []string{"eng", "respec"}, 0)
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

// monthsThenDays makes eng.NAME (d date, id long, n long, grain id) as
// another engine would: partitioned by month(d), a run "months"
// published under it from cells ("2026-01-05/1": day, id; n=1), then the
// spec changed to day(d). It returns the table's name, a writer of inputs
// and the files of the run, one a month.
func monthsThenDays(t *testing.T, s *site, name string, cells ...string) (string, func(n int, cells ...string) string, []string) {
	t.Helper()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d_month", Transform: iceberg.MonthTransform{}})
	createEngineTable(t, s, name, sc, spec)
	tbl := "eng." + name
	s.must("table", "set", "--table", tbl, "grain=id")
	rows := func(n int, cells ...string) string {
		var b strings.Builder
		for _, c := range cells {
			day, id, _ := strings.Cut(c, "/")
			fmt.Fprintf(&b, `{"d":%q,"id":%s,"n":%d}`+"\n", day, id, n)
		}
		return write(t, t.TempDir(), "in.ndjson", b.String())
	}
	months := map[string]bool{}
	for _, c := range cells {
		months[c[:7]] = true
	}
	s.must("publish", "--run-id", "months", "--table", tbl, "--partitions", "d="+strings.Join(slices.Sorted(maps.Keys(months)), ","), rows(1, cells...))
	monthsToDays(t, s, name)
	return tbl, rows, s.runFiles("months")
}

// monthsToDays replaces table eng.name's partition field d_month by
// d_day, as another engine would.
func monthsToDays(t *testing.T, s *site, name string) {
	t.Helper()
	ctx, loaded, done := engineTable(t, s, name)
	defer done()
	tx := loaded.NewTransaction()
	if err := tx.UpdateSpec(true).RemoveField("d_month").AddField("d", iceberg.DayTransform{}, "d_day").Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRewriteOverlapping: a table partitioned by month, then by day, with
// a month file of January (days 5, 20, 25), one of February, and a day
// file another engine appended to January 25 under the day spec. With
// --rewrite-overlapping a run declaring January 5 takes the January file
// out and carries its rows of the 20th and 25th (the 25th with the
// engine's file) into new files. On every site and route: plan/apply,
// rerun (no snapshot), a scoped rollback after another writer's commit
// (the month file back), publish in batches (a file's partitions in one
// batch) and a full rollback; iceberg-go's scan after each step, the
// month files live or not, nothing removed from storage.
func TestRewriteOverlapping(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		tbl, rows, months := monthsThenDays(t, s, "rewrite", "2026-01-05/1", "2026-01-20/2", "2026-01-25/6", "2026-02-10/8")
		if len(months) != 2 {
			t.Fatalf("the months run wrote %v, want a file for each month", months)
		}
		jan, feb := months[0], months[1]
		asArrow, err := table.SchemaToArrowSchema(iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
			iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true}), nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		mor(t, s, "rewrite", func(tx *table.Transaction) error {
			rec := morRows(t, asArrow, 1, "2026-01-25/7")
			defer rec.Release()
			rr, err := array.NewRecordReader(asArrow, []arrow.RecordBatch{rec})
			if err != nil {
				return err
			}
			return tx.Append(t.Context(), rr, nil)
		})
		base := []string{r("2026-01-05", 1, 1), r("2026-01-20", 2, 1), r("2026-01-25", 6, 1), r("2026-01-25", 7, 1), r("2026-02-10", 8, 1)}
		expect := func(step string, want []string) {
			t.Helper()
			want = slices.Sorted(slices.Values(want))
			if got := view(t, s, "rewrite", "d", "id", "n"); !slices.Equal(got, want) {
				t.Errorf("%s: the reader sees\n  %v\nwant\n  %v", step, got, want)
			}
		}
		live := func() map[string]bool {
			_, loaded, done := engineTable(t, s, "rewrite")
			defer done()
			return liveFiles(t, loaded)
		}
		kept := func(step string, before []string) {
			t.Helper()
			now := s.files()
			for _, f := range before {
				if !slices.Contains(now, f) && !strings.Contains(f, "/lakeswap/holds/") {
					t.Errorf("%s removed %s from storage", step, f)
				}
			}
		}
		expect("as made", base)

		// Without the flag: refused naming the file and the way out.
		meta, files := s.metadata(tbl), s.files()
		if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "d=2026-01-05", rows(5, "2026-01-05/1")); code != exitRefused || !strings.Contains(errs, jan) || !strings.Contains(errs, "--rewrite-overlapping") || s.metadata(tbl) != meta {
			t.Errorf("without --rewrite-overlapping: exit %d: %s", code, errs)
		}
		// With --adopt: a usage error, nothing changed.
		if code, _, errs := s.cli("publish", "--adopt", "--rewrite-overlapping", "--table", tbl, "--partitions", "d=2026-01-05", jan); code != exitUsage || s.metadata(tbl) != meta || !slices.Equal(s.files(), files) {
			t.Errorf("--adopt with --rewrite-overlapping: exit %d: %s", code, errs)
		}

		// Plan and apply: the plan names the file and the carried days.
		plan := filepath.Join(t.TempDir(), "p.json")
		shown := s.must("plan", "--run-id", "rw", "--rewrite-overlapping", "--out", plan, "--table", tbl, "--partitions", "d=2026-01-05", rows(5, "2026-01-05/1"))
		for _, want := range []string{"rewrites 1 file written under an earlier partition spec", jan, "d=2026-01-20 (carried)", "d=2026-01-25 (carried)"} {
			if !strings.Contains(shown, want) {
				t.Errorf("the plan does not show %q:\n%s", want, shown)
			}
		}
		pf, err := swap.ReadPlan(plan)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, pp := range pf.Plan.Partitions {
			got = append(got, fmt.Sprintf("%s carried=%v shares=%v old=%d", pp.Value, pp.Carried, pp.OldShares, len(pp.OldFiles)))
		}
		want := []string{
			fmt.Sprintf("2026-01-05 carried=false shares=[%s] old=0", jan),
			fmt.Sprintf("2026-01-20 carried=true shares=[%s] old=0", jan),
			fmt.Sprintf("2026-01-25 carried=true shares=[%s] old=1", jan),
		}
		if !slices.Equal(got, want) {
			t.Errorf("the plan's partitions:\n  %v\nwant\n  %v", got, want)
		}
		if len(pf.Plan.Rewritten) != 1 || pf.Plan.Rewritten[0].Path != jan || pf.Plan.Rewritten[0].Rows != 3 {
			t.Errorf("the plan's rewritten files: %+v", pf.Plan.Rewritten)
		}
		files = s.files()
		s.must("apply", plan, "--approve", pf.PlanID)
		fixed := []string{r("2026-01-05", 1, 5), r("2026-01-20", 2, 1), r("2026-01-25", 6, 1), r("2026-01-25", 7, 1), r("2026-02-10", 8, 1)}
		expect("after the apply", fixed)
		if l := live(); l[jan] || !l[feb] {
			t.Errorf("after the apply the January file is live: %v, the February file: %v", l[jan], l[feb])
		}
		kept("the apply", files)
		for _, args := range [][]string{{"verify", "--table", tbl, "--run", "rw"}, {"-o", "json", "verify", "--table", tbl}} {
			if code, out, errs := s.cli(args...); code != 0 || !strings.Contains(out+errs, "ok") {
				t.Errorf("%v after the apply: exit %d: %s%s", args, code, out, errs)
			}
		}

		// Reruns: the same run id, and a new one, commit nothing.
		meta = s.metadata(tbl)
		s.must("publish", "--run-id", "rw", "--rewrite-overlapping", "--table", tbl, "--partitions", "d=2026-01-05", rows(5, "2026-01-05/1"))
		s.must("publish", "--rewrite-overlapping", "--table", tbl, "--partitions", "d=2026-01-05", rows(5, "2026-01-05/1"))
		if s.metadata(tbl) != meta {
			t.Errorf("a rerun of the same rows committed")
		}

		// Another writer's day, then a scoped rollback of the run: the
		// January file is back, the days as they were.
		s.must("publish", "--table", tbl, "--partitions", "d=2026-02-20", rows(1, "2026-02-20/9"))
		files = s.files()
		s.must("rollback", "--scoped", "--table", tbl, "--run", "rw")
		base = append(base, r("2026-02-20", 9, 1))
		expect("after the scoped rollback", base)
		if l := live(); !l[jan] || !l[feb] {
			t.Errorf("after the scoped rollback the January file is live: %v, the February file: %v", l[jan], l[feb])
		}
		kept("the scoped rollback", files)
		if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) {
			t.Errorf("verify --table after the scoped rollback: %s", out)
		}

		// In batches of one partition: January 5 and February 10 declared,
		// each month file rewritten with its days in one batch; then a
		// full rollback (main has not moved) puts both files back.
		files = s.files()
		out := s.must("-o", "json", "publish", "--run-id", "rw2", "--batch", "1", "--rewrite-overlapping", "--table", tbl,
			"--partitions", "d=2026-01-05,2026-02-10", rows(7, "2026-01-05/1", "2026-02-10/8"))
		if !strings.Contains(out, `"together"`) {
			t.Errorf("the batched run names no partitions committed together: %s", out)
		}
		expect("after the batches", []string{r("2026-01-05", 1, 7), r("2026-01-20", 2, 1), r("2026-01-25", 6, 1), r("2026-01-25", 7, 1), r("2026-02-10", 8, 7), r("2026-02-20", 9, 1)})
		if l := live(); l[jan] || l[feb] {
			t.Errorf("after the batches the January file is live: %v, the February file: %v", l[jan], l[feb])
		}
		if code, out, errs := s.cli("verify", "--table", tbl, "--run", "rw2"); code != 0 {
			t.Errorf("verify of the batches: exit %d: %s%s", code, out, errs)
		}
		s.must("rollback", "--table", tbl, "--run", "rw2")
		expect("after the full rollback", base)
		if l := live(); !l[jan] || !l[feb] {
			t.Errorf("after the full rollback the January file is live: %v, the February file: %v", l[jan], l[feb])
		}
		kept("the batches and the full rollback", files)

		// A SQL job, reconciled: the carried days are the table's, which
		// the job's reconciliation says nothing of.
		dir := t.TempDir()
		write(t, dir, "raw.ndjson", `{"d":"2026-01-20","id":2,"n":4}`+"\n"+`{"d":"2026-03-01","id":10,"n":4}`+"\n")
		sql := "SELECT CAST(d AS DATE) AS d, id, n FROM raw WHERE CAST(d AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)"
		job := write(t, dir, "fix.yaml", "table: "+tbl+"\nsources:\n  raw: {path: raw.ndjson}\nsql: |\n  "+sql+
			"\nreconcile: |\n  SELECT d, count(*)::BIGINT AS rows FROM ("+sql+") GROUP BY 1\n")
		s.must("publish", "--run-id", "job", "--rewrite-overlapping", "--job", job, "--partitions", "d=2026-01-20")
		expect("after the job", []string{r("2026-01-05", 1, 1), r("2026-01-20", 2, 4), r("2026-01-25", 6, 1), r("2026-01-25", 7, 1), r("2026-02-10", 8, 1), r("2026-02-20", 9, 1)})
		if l := live(); l[jan] || !l[feb] {
			t.Errorf("after the job the January file is live: %v, the February file: %v", l[jan], l[feb])
		}
		if code, out, errs := s.cli("verify", "--table", tbl, "--run", "job"); code != 0 {
			t.Errorf("verify of the job's run: exit %d: %s%s", code, out, errs)
		}
	})
}

// TestV1VoidPartitionField: a format-v1 table whose partition field
// another engine replaced (month(d) by day(d)) keeps the old field as
// void, always null. Before, every publish was refused ("partition
// transform void is not supported"). Now a day publishes, its files'
// partition data holding the void field as null; the same rows again
// change nothing; a day a month file holds is refused, naming the file;
// a rollback restores the table; the reader sees each step.
func TestV1VoidPartitionField(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d_month", Transform: iceberg.MonthTransform{}})
	ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, []string{"eng"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, []string{"eng", "v1"}, sc, icebergcat.WithPartitionSpec(&spec), icebergcat.WithProperties(iceberg.Properties{"format-version": "1"})); err != nil {
		t.Fatal(err)
	}
	cat.Close()
	const tbl = "eng.v1"
	in := func(lines string) string { return write(t, t.TempDir(), "in.ndjson", lines) }
	s.must("publish", "--run-id", "jan", "--table", tbl, "--partitions", "d=2026-01", in(`{"d":"2026-01-05","id":1}`+"\n"))
	monthsToDays(t, s, "v1")
	janFiles := s.runFiles("jan")

	feb := in(`{"d":"2026-02-01","id":3}` + "\n" + `{"d":"2026-02-02","id":4}` + "\n")
	s.must("publish", "--run-id", "feb", "--table", tbl, "--partitions", "d=2026-02-01..2026-02-02", feb)
	if got, want := view(t, s, "v1", "id"), []string{"id=1", "id=3", "id=4"}; !slices.Equal(got, want) {
		t.Fatalf("after a day published on the void field's spec the reader sees %v, want %v", got, want)
	}
	_, et, done := engineTable(t, s, "v1")
	tasks, err := et.Scan().PlanFiles(ctx)
	done()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, task := range tasks {
		p := task.File.Partition()
		if strings.Contains(task.File.FilePath(), "/run-feb-") {
			checked++
			if v, ok := p[1000]; !ok || v != nil || p[1001] == nil {
				t.Errorf("%s records partition %v: want the void field 1000 null and the day 1001 set", task.File.FilePath(), p)
			}
		}
	}
	if checked != 2 {
		t.Errorf("the reader plans %d files of run feb, want one a day", checked)
	}
	meta := s.metadata(tbl)
	if out := s.must("publish", "--table", tbl, "--partitions", "d=2026-02-01..2026-02-02", feb); !strings.Contains(out, "unchanged") || s.metadata(tbl) != meta {
		t.Errorf("the same rows again: %s; want unchanged, nothing committed", out)
	}
	files := s.files()
	if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "d=2026-01-05", in(`{"d":"2026-01-05","id":9}`+"\n")); code != exitRefused || !strings.Contains(errs, janFiles[0]) {
		t.Errorf("a day a month file holds: exit %d: %s; want refused naming %s", code, errs, janFiles[0])
	}
	if s.metadata(tbl) != meta || !slices.Equal(s.files(), files) {
		t.Error("the refused run changed the table or its files")
	}
	s.must("rollback", "--table", tbl, "--run", "feb")
	if got, want := view(t, s, "v1", "id"), []string{"id=1"}; !slices.Equal(got, want) {
		t.Errorf("after the rollback the reader sees %v, want %v", got, want)
	}
}
