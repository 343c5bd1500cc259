package main

// --rewrite-overlapping tried as a careless or hostile user would
// (sqlite+local): rows with no partition value, a field left open whose
// tuples only an earlier file holds, a wipe of a day only a month file
// holds, a scoped rollback of a scoped rollback, a batched run resumed
// and run again.

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// onLocal runs a test on the sqlite+local site only.
func onLocal(t *testing.T, fn func(t *testing.T, s *site)) {
	t.Run("sqlite+local", func(t *testing.T) { fn(t, newSite(t, "sqlite+local")) })
}

// appendRows appends rows to eng.NAME through iceberg-go, as another
// engine would: each cell gives the schema's first columns, '/'-separated
// ("2026-01-05/eu/1": a date, a string, a long; "" is a null), and every
// column after them is 1.
func appendRows(t *testing.T, s *site, name string, sc *iceberg.Schema, cells ...string) {
	t.Helper()
	asArrow, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asArrow)
	defer b.Release()
	for _, c := range cells {
		parts := strings.Split(c, "/")
		for i, f := range b.Fields() {
			v := "1"
			if i < len(parts) {
				v = parts[i]
			}
			switch f := f.(type) {
			case *array.Date32Builder:
				if v == "" {
					f.AppendNull()
					continue
				}
				d, err := time.Parse(time.DateOnly, v)
				if err != nil {
					t.Fatal(err)
				}
				f.Append(arrow.Date32FromTime(d))
			case *array.StringBuilder:
				f.Append(v)
			case *array.Int64Builder:
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				f.Append(n)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	mor(t, s, name, func(tx *table.Transaction) error {
		rr, err := array.NewRecordReader(asArrow, []arrow.RecordBatch{rec})
		if err != nil {
			return err
		}
		return tx.Append(t.Context(), rr, nil)
	})
}

// TestRewriteKeepsNullPartitionRows: a table another engine wrote
// unpartitioned, then partitioned by day(d), d optional. Its one file holds
// rows of 2026-01-05, 2026-01-20 and a row whose d is null. A run declaring
// 2026-01-05 with --rewrite-overlapping takes the file out and carries
// 2026-01-20: the row with no d must still be there.
func TestRewriteKeepsNullPartitionRows(t *testing.T) {
	onLocal(t, func(t *testing.T, s *site) {
		sc := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: false},
			iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
		createEngineTable(t, s, "nulls", sc, *iceberg.UnpartitionedSpec)
		appendRows(t, s, "nulls", sc, "2026-01-05/1", "/2", "2026-01-20/3")
		ctx, loaded, done := engineTable(t, s, "nulls")
		tx := loaded.NewTransaction()
		if err := tx.UpdateSpec(true).AddField("d", iceberg.DayTransform{}, "d_day").Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		done()
		const tbl = "eng.nulls"
		s.must("table", "set", "--table", tbl, "grain=id")
		before := view(t, s, "nulls", "d", "id", "n")
		in := write(t, t.TempDir(), "in.ndjson", `{"d":"2026-01-05","id":1,"n":5}`+"\n")
		meta := s.metadata(tbl)
		code, _, errs := s.cli("publish", "--rewrite-overlapping", "--table", tbl, "--partitions", "d=2026-01-05", in)
		if code != exitRefused || !strings.Contains(errs, "1 row with no value of the partition column") || s.metadata(tbl) != meta {
			t.Errorf("a rewrite of a file holding a row with no d: exit %d: %s", code, errs)
		}
		if got := view(t, s, "nulls", "d", "id", "n"); !slices.Equal(got, before) {
			t.Errorf("after the refusal the reader sees %v, before %v", got, before)
		}
	})
}

// unpartitionedThenDayRegion makes eng.NAME (d, region, id, n; grain id)
// unpartitioned, appends cells, then partitions it by day(d), region.
func unpartitionedThenDayRegion(t *testing.T, s *site, name string, cells ...string) string {
	t.Helper()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 4, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	createEngineTable(t, s, name, sc, *iceberg.UnpartitionedSpec)
	appendRows(t, s, name, sc, cells...)
	ctx, loaded, done := engineTable(t, s, name)
	defer done()
	tx := loaded.NewTransaction()
	if err := tx.UpdateSpec(true).AddField("d", iceberg.DayTransform{}, "d_day").AddIdentity("region").Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tbl := "eng." + name
	s.must("table", "set", "--table", tbl, "grain=id")
	return tbl
}

// TestRewriteDayNamedAloneLeavesEarlierSpecRegion: a table partitioned by
// day(d), region whose earlier-spec file holds rows of 2026-01-05 in
// regions eu and us. A run naming the day alone owns every region the
// table holds that day (TestSeveralPartitionFields: a region the input
// no longer has is a wipe, refused unless --allow-empty). The input holds
// eu only: the run must be refused (us would be wiped), or us replaced.
// With --rewrite-overlapping the us rows are instead carried, and the day
// is left half replaced; without the flag, when the earlier file holds no
// eu row of the day, the run commits beside the file's us rows.
func TestRewriteDayNamedAloneLeavesEarlierSpecRegion(t *testing.T) {
	onLocal(t, func(t *testing.T, s *site) {
		in := write(t, t.TempDir(), "in.ndjson", `{"d":"2026-01-05","region":"eu","id":1,"n":5}`+"\n")
		// With --rewrite-overlapping.
		tbl := unpartitionedThenDayRegion(t, s, "halfday", "2026-01-05/eu/1", "2026-01-05/us/2", "2026-01-20/eu/3")
		code, out, errs := s.cli("publish", "--rewrite-overlapping", "--table", tbl, "--partitions", "d=2026-01-05", in)
		got := view(t, s, "halfday", "d", "region", "id", "n")
		t.Logf("with the flag: exit %d: %s%s\nreader: %v", code, out, errs, got)
		if code != exitRefused || !strings.Contains(errs, "region=us") || !slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, "region=us id=2") }) {
			t.Errorf("--rewrite-overlapping, the day named alone: region us of 2026-01-05 (not in the input) must be refused as a wipe: exit %d: %s\n%v", code, errs, got)
		}
		// Without it: the earlier file holds no eu row of the day.
		tbl = unpartitionedThenDayRegion(t, s, "halfday2", "2026-01-05/us/2", "2026-01-20/eu/3")
		code, out, errs = s.cli("publish", "--table", tbl, "--partitions", "d=2026-01-05", in)
		got = view(t, s, "halfday2", "d", "region", "id", "n")
		t.Logf("without the flag: exit %d: %s%s\nreader: %v", code, out, errs, got)
		if code != exitRefused || !strings.Contains(errs, "earlier partition spec") || !slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, "region=us id=2") }) {
			t.Errorf("the day named alone: region us of 2026-01-05, in an earlier-spec file, must be refused: exit %d: %s\n%v", code, errs, got)
		}
	})
}

// TestRewriteBatchesResume: a run rewriting two month files in
// batches of one (January 5 with its carried days, then February 10),
// killed as it makes its second commit, is run again with the same run
// id: it should resume after the batch that landed (README: "Running the
// same run again resumes"), committing February.
func TestRewriteBatchesResume(t *testing.T) {
	onLocal(t, func(t *testing.T, s *site) {
		tbl, rows, _ := monthsThenDays(t, s, "resume", "2026-01-05/1", "2026-01-20/2", "2026-02-10/8", "2026-02-11/9")
		in := rows(7, "2026-01-05/1", "2026-02-10/8")
		args := []string{"publish", "--run-id", "rwb", "--batch", "1", "--rewrite-overlapping", "--table", tbl, "--partitions", "d=2026-01-05,2026-02-10", in}
		cmd := s.command(args...)
		cmd.Env = append(cmd.Env, "LAKESWAP_TEST_KILL_AT_COMMIT=2")
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("the publish told to die at its second commit exited 0: %s", out)
		}
		t.Logf("after the kill: %v", view(t, s, "resume", "d", "id", "n"))
		code, out, errs := s.cli(args...)
		t.Logf("rerun: exit %d: %s%s", code, out, errs)
		if code != 0 {
			t.Errorf("the rerun of the same run id does not resume after the landed batch: exit %d: %s", code, errs)
		}
		want := []string{r("2026-01-05", 1, 7), r("2026-01-20", 2, 1), r("2026-02-10", 8, 7), r("2026-02-11", 9, 1)}
		if got := view(t, s, "resume", "d", "id", "n"); !slices.Equal(got, want) {
			t.Errorf("after the rerun the reader sees %v, want %v", got, want)
		}
	})
}

// TestRewriteScopedRollbackOfScopedRollback: a rewriting run, a scoped
// rollback of it (the January file back), another writer, then a scoped
// rollback of the rollback (run rollback-rw): the run's content should be
// back, the January file out again; no record may be there twice.
func TestRewriteScopedRollbackOfScopedRollback(t *testing.T) {
	onLocal(t, func(t *testing.T, s *site) {
		tbl, rows, months := monthsThenDays(t, s, "rr", "2026-01-05/1", "2026-01-20/2", "2026-01-25/6")
		s.must("publish", "--run-id", "rw", "--rewrite-overlapping", "--table", tbl, "--partitions", "d=2026-01-05", rows(5, "2026-01-05/1"))
		s.must("publish", "--table", tbl, "--partitions", "d=2026-03-01", rows(1, "2026-03-01/10"))
		s.must("rollback", "--scoped", "--table", tbl, "--run", "rw")
		s.must("publish", "--table", tbl, "--partitions", "d=2026-03-02", rows(1, "2026-03-02/11"))
		t.Logf("before: %v", view(t, s, "rr", "d", "id", "n"))
		code, out, errs := s.cli("rollback", "--scoped", "--table", tbl, "--run", "rollback-rw")
		got := view(t, s, "rr", "d", "id", "n")
		t.Logf("rollback of the rollback: exit %d: %s%s\nreader %v", code, out, errs, got)
		want := []string{r("2026-01-05", 1, 5), r("2026-01-20", 2, 1), r("2026-01-25", 6, 1), r("2026-03-01", 10, 1), r("2026-03-02", 11, 1)}
		if code != 0 || !slices.Equal(got, want) {
			t.Errorf("after a scoped rollback of the scoped rollback (exit %d: %s) the reader sees\n  %v\nwant\n  %v", code, errs, got, want)
		}
		_, loaded, done := engineTable(t, s, "rr")
		if liveFiles(t, loaded)[months[0]] {
			t.Errorf("after the rollback of the rollback the January file is live again")
		}
		done()
		if code, out, errs := s.cli("-o", "json", "verify", "--table", tbl); code != 0 {
			t.Errorf("verify --table: exit %d: %s%s", code, out, errs)
		}
	})
}

// TestRewriteAllowEmptyWipeOfMonthFileOnly: the January file holds rows of
// 2026-01-05 alone; a run declaring that day with no rows, --allow-empty
// and --rewrite-overlapping, asks for the day's rows to go (the plan shows
// 1 -> 0 rows). It exits 0, but commits nothing: the rows stay.
func TestRewriteAllowEmptyWipeOfMonthFileOnly(t *testing.T) {
	onLocal(t, func(t *testing.T, s *site) {
		tbl, _, months := monthsThenDays(t, s, "wipe1", "2026-01-05/1", "2026-02-10/8")
		empty := write(t, t.TempDir(), "empty.ndjson", "")
		code, out, errs := s.cli("publish", "--run-id", "w", "--allow-empty", "--rewrite-overlapping", "--table", tbl, "--partitions", "d=2026-01-05", empty)
		got := view(t, s, "wipe1", "d", "id", "n")
		t.Logf("exit %d: %s%s\nreader %v", code, out, errs, got)
		if want := []string{r("2026-02-10", 8, 1)}; code != 0 || !slices.Equal(got, want) {
			t.Errorf("the wipe of 2026-01-05 exited 0 but the reader sees %v, want %v", got, want)
		}
		_, loaded, done := engineTable(t, s, "wipe1")
		if liveFiles(t, loaded)[months[0]] {
			t.Errorf("the January file, which the run rewrites, is still live")
		}
		done()
	})
}

// TestRewriteBatchesRerunAfterSuccess: a batched rewriting run that
// landed whole, run again as is (an orchestrator's retry): the run id is
// an idempotency key, so it should say already published and exit 0, as
// an unbatched rewriting run's rerun does.
func TestRewriteBatchesRerunAfterSuccess(t *testing.T) {
	onLocal(t, func(t *testing.T, s *site) {
		tbl, rows, _ := monthsThenDays(t, s, "rerunb", "2026-01-05/1", "2026-01-20/2", "2026-02-10/8", "2026-02-11/9")
		in := rows(7, "2026-01-05/1", "2026-02-10/8")
		args := []string{"publish", "--run-id", "rwb", "--batch", "1", "--rewrite-overlapping", "--table", tbl, "--partitions", "d=2026-01-05,2026-02-10", in}
		s.must(args...)
		meta := s.metadata(tbl)
		code, out, errs := s.cli(args...)
		t.Logf("rerun: exit %d: %s%s", code, out, errs)
		if code != 0 || s.metadata(tbl) != meta {
			t.Errorf("the rerun of a batched rewriting run that landed: exit %d, want 0 (already published): %s", code, errs)
		}
	})
}
