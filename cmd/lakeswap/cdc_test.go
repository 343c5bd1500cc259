package main

// Merge-on-read tables as a CDC writer leaves them, tried as a careless or
// hostile user would (sqlite+local): delete-only partitions and tuples,
// deletes beside unchanged partitions, batches cut short, a random CDC
// stream, another writer between plan and apply, what plans show, what
// is left behind, and sources a job cannot read by column name.

import (
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergcat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/swap"
)

// cdcTable is one merge-on-read table eng.NAME (d date, id long, n long),
// partitioned by d, on a sqlite+local site.
type cdcTable struct {
	t      *testing.T
	s      *site
	name   string
	tbl    string
	sc     *iceberg.Schema
	asArr  *arrow.Schema
	keys   *arrow.Schema // d, id
	idOnly *arrow.Schema // d, id too (eq delete on id needs partition source)
}

func newCDCTable(t *testing.T, name string, grainWithDay bool) *cdcTable {
	s := newSite(t, "sqlite+local")
	var sc *iceberg.Schema
	fields := []iceberg.NestedField{
		{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true}}
	sc = iceberg.NewSchema(0, fields...)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, name, sc, spec)
	h := &cdcTable{t: t, s: s, name: name, tbl: "eng." + name, sc: sc}
	var err error
	if h.asArr, err = table.SchemaToArrowSchema(sc, nil, true, false); err != nil {
		t.Fatal(err)
	}
	if h.keys, err = table.SchemaToArrowSchema(iceberg.NewSchema(0, sc.Field(0), sc.Field(1)), nil, true, false); err != nil {
		t.Fatal(err)
	}
	mor(t, s, name, func(tx *table.Transaction) error {
		return tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	})
	return h
}

func (h *cdcTable) appendRows(n int64, cells ...string) {
	h.t.Helper()
	mor(h.t, h.s, h.name, func(tx *table.Transaction) error {
		rec := morRows(h.t, h.asArr, n, cells...)
		defer rec.Release()
		rr, err := array.NewRecordReader(h.asArr, []arrow.RecordBatch{rec})
		if err != nil {
			return err
		}
		return tx.Append(h.t.Context(), rr, nil)
	})
}

func (h *cdcTable) eqDelete(cells ...string) {
	h.t.Helper()
	mor(h.t, h.s, h.name, func(tx *table.Transaction) error {
		rec := morRows(h.t, h.keys, 0, cells...)
		return tx.CommitEqualityDeletes(h.t.Context(), []int{1, 2}, iter.Seq2[arrow.RecordBatch, error](func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }), nil)
	})
}

func day(s string) iceberg.Date {
	d, _ := time.Parse(time.DateOnly, s)
	return iceberg.Date(arrow.Date32FromTime(d))
}

func (h *cdcTable) posDelete(dayS string, id int64) {
	h.t.Helper()
	mor(h.t, h.s, h.name, func(tx *table.Transaction) error {
		return tx.Delete(h.t.Context(), iceberg.NewAnd(iceberg.EqualTo(iceberg.Reference("d"), day(dayS)),
			iceberg.EqualTo(iceberg.Reference("id"), id)), nil)
	})
}

// upsert writes, in ONE snapshot (a RowDelta), data rows and an equality
// delete of the same keys, as Flink's upsert mode does: the delete applies
// to older data only.
func (h *cdcTable) upsert(n int64, cells ...string) {
	h.t.Helper()
	ctx, tbl, done := engineTable(h.t, h.s, h.name)
	defer done()
	tx := tbl.NewTransaction()
	rec := morRows(h.t, h.asArr, n, cells...)
	data := slices.Collect(func(yield func(iceberg.DataFile) bool) {
		for df, err := range table.WriteRecords(ctx, tbl, h.asArr, iter.Seq2[arrow.RecordBatch, error](func(y func(arrow.RecordBatch, error) bool) { y(rec, nil) })) {
			if err != nil {
				h.t.Fatal(err)
			}
			if !yield(df) {
				return
			}
		}
	})
	krec := morRows(h.t, h.keys, 0, cells...)
	dels, err := tx.WriteEqualityDeletes(ctx, []int{1, 2}, iter.Seq2[arrow.RecordBatch, error](func(y func(arrow.RecordBatch, error) bool) { y(krec, nil) }))
	if err != nil {
		h.t.Fatal(err)
	}
	if err := tx.NewRowDelta(nil).AddRows(data...).AddDeletes(dels...).Commit(ctx); err != nil {
		h.t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		h.t.Fatal(err)
	}
}

func (h *cdcTable) view() []string { return view(h.t, h.s, h.name, "d", "id", "n") }

func (h *cdcTable) rows(n int64, cells ...string) string {
	var b strings.Builder
	for _, c := range cells {
		d, id, _ := strings.Cut(c, "/")
		fmt.Fprintf(&b, `{"d":"%s","id":%s,"n":%d}`+"\n", d, id, n)
	}
	return write(h.t, h.t.TempDir(), "in.ndjson", b.String())
}

func (h *cdcTable) expect(step string, want ...string) {
	h.t.Helper()
	slices.Sort(want)
	if got := h.view(); !slices.Equal(got, want) {
		h.t.Errorf("%s: the reader sees\n  %v\nwant\n  %v", step, got, want)
	}
}

func r(d string, id, n int) string { return fmt.Sprintf("d=%s id=%d n=%d", d, id, n) }

// newFiles lists files under the warehouse not in before (holds left out).
func (h *cdcTable) newFiles(before []string) []string {
	var out []string
	for _, f := range h.s.files() {
		if !slices.Contains(before, f) && !strings.Contains(f, "/lakeswap/holds/") {
			out = append(out, f)
		}
	}
	return out
}

// TestCDCDeleteOnlyPartition: a day holding only an equality delete
// (Flink's upsert mode writes one for every key it upserts), and data
// upserted in one snapshot with its delete.
func TestCDCDeleteOnlyPartition(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.appendRows(10, "2026-01-01/1", "2026-01-01/2", "2026-01-01/3", "2026-01-02/1", "2026-01-02/2", "2026-01-02/3")
	h.upsert(11, "2026-01-01/2")
	h.posDelete("2026-01-02", 3)
	h.eqDelete("2026-01-03/9")
	seen := []string{r("2026-01-01", 1, 10), r("2026-01-01", 2, 11), r("2026-01-01", 3, 10), r("2026-01-02", 1, 10), r("2026-01-02", 2, 10)}
	h.expect("engine", seen...)
	t.Logf("deletes: %v", deleteFiles(t, h.s, h.name))
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	t.Logf("verify --table:\n%s", h.s.must("verify", "--table", h.tbl))

	// The rows the reader sees, given again: nothing.
	meta := h.s.metadata(h.tbl)
	out := h.s.must("publish", "--table", h.tbl, "--partitions", "d=2026-01-01..2026-01-02",
		h.rows(10, "2026-01-01/1", "2026-01-01/3", "2026-01-02/1", "2026-01-02/2")+"")
	_ = out
	if h.s.metadata(h.tbl) == meta {
		t.Errorf("a changed day 1 committed nothing")
	}
	h.expect("after publish", r("2026-01-01", 1, 10), r("2026-01-01", 3, 10), r("2026-01-02", 1, 10), r("2026-01-02", 2, 10))

	// Day 3 holds only a delete file: publish rows into it.
	before := h.s.files()
	out = h.s.must("publish", "--run-id", "d3", "--table", h.tbl, "--partitions", "d=2026-01-03", h.rows(30, "2026-01-03/9", "2026-01-03/8"))
	t.Logf("publish d3:\n%s", out)
	h.expect("after publish d3", r("2026-01-01", 1, 10), r("2026-01-01", 3, 10), r("2026-01-02", 1, 10), r("2026-01-02", 2, 10), r("2026-01-03", 8, 30), r("2026-01-03", 9, 30))
	t.Logf("deletes after d3: %v", deleteFiles(t, h.s, h.name))
	t.Logf("new files: %v", h.newFiles(before))
	if code, o, e := h.s.cli("verify", "--table", h.tbl, "--run", "d3"); code != 0 {
		t.Errorf("verify d3: %d %s %s", code, o, e)
	}
	// another writer, then a scoped rollback of d3: day 3 held only a delete file.
	h.appendRows(40, "2026-01-04/1")
	before = h.s.files()
	code, o, e := h.s.cli("rollback", "--scoped", "--table", h.tbl, "--run", "d3")
	if code != 0 {
		t.Errorf("scoped rollback d3: exit %d\n%s%s", code, o, e)
	}
	t.Logf("new files: %v", h.newFiles(before))
	h.expect("after scoped rollback d3", r("2026-01-01", 1, 10), r("2026-01-01", 3, 10), r("2026-01-02", 1, 10), r("2026-01-02", 2, 10), r("2026-01-04", 1, 40))
	if code, o, e := h.s.cli("verify", "--table", h.tbl); code != 0 {
		t.Errorf("verify table: %d %s %s", code, o, e)
	}
	if code, o, e := h.s.cli("verify", "--table", h.tbl, "--run", "rollback-d3"); code != 0 {
		t.Errorf("verify rollback-d3: %d %s %s", code, o, e)
	}
}

// TestCDCDeleteOnlyTuple: a table of day(event_ts), region whose
// tuple (2026-01-01, apac) holds only an equality delete. A rerun of the
// day with exactly the rows a reader sees.
func TestCDCDeleteOnlyTuple(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := createEventsTable(t, s)
	const tbl = "eng.events"
	asArrow, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, sc.Field(0), sc.Field(1), sc.Field(2)), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	build := func(sch *arrow.Schema, cells ...string) arrow.RecordBatch { // "01/eu/7"
		b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		defer b.Release()
		for _, c := range cells {
			p := strings.Split(c, "/")
			ts, _ := time.Parse(time.RFC3339, "2026-01-"+p[0]+"T10:00:00Z")
			b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
			b.Field(1).(*array.StringBuilder).Append(p[1])
			var v int64
			fmt.Sscan(p[2], &v)
			b.Field(2).(*array.Int64Builder).Append(v)
			if len(sch.Fields()) > 3 {
				b.Field(3).(*array.Int64Builder).Append(1)
			}
		}
		return b.NewRecordBatch()
	}
	mor(t, s, "events", func(tx *table.Transaction) error {
		if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
			return err
		}
		rec := build(asArrow, "01/eu/1", "01/us/2", "01/us/3", "01/latam/6")
		rr, err := array.NewRecordReader(asArrow, []arrow.RecordBatch{rec})
		if err != nil {
			return err
		}
		return tx.Append(t.Context(), rr, nil)
	})
	// A delete of a key the table never held in apac (a CDC delete).
	mor(t, s, "events", func(tx *table.Transaction) error {
		rec := build(keys, "01/apac/5", "01/latam/6")
		return tx.CommitEqualityDeletes(t.Context(), []int{1, 2, 3}, iter.Seq2[arrow.RecordBatch, error](func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }), nil)
	})
	// And a us row deleted by position: us keeps user 2.
	mor(t, s, "events", func(tx *table.Transaction) error {
		return tx.Delete(t.Context(), iceberg.EqualTo(iceberg.Reference("user_id"), int64(3)), nil)
	})
	got := view(t, s, "events", "region", "user_id")
	t.Logf("reader sees %v", got)
	s.must("table", "set", "--table", tbl, "grain=event_ts,region,user_id", "additive=views")
	in := write(t, t.TempDir(), "in.ndjson", `{"event_ts":"2026-01-01T10:00:00Z","region":"eu","user_id":1,"views":1}
{"event_ts":"2026-01-01T10:00:00Z","region":"us","user_id":2,"views":1}
`)
	meta := s.metadata(tbl)
	code, out, errs := s.cli("publish", "--table", tbl, "--partitions", "event_ts=2026-01-01", in)
	t.Logf("rerun of the day as the reader sees it: exit %d\n%s%s", code, out, errs)
	if code != 0 || s.metadata(tbl) != meta {
		t.Errorf("a rerun of exactly the rows a reader sees: exit %d (metadata changed: %v)", code, s.metadata(tbl) != meta)
	}
	code, out, errs = s.cli("plan", "--out", filepath.Join(t.TempDir(), "p.json"), "--table", tbl, "--partitions", "event_ts=2026-01-01", "--allow-empty", in)
	t.Logf("plan with --allow-empty: exit %d\n%s%s", code, out, errs)
}

// TestCDCJobUnpartitionedSource: a job whose source is an unpartitioned
// merge-on-read table (a CDC landing table) copies what a reader of it
// sees, before and after an equality delete there.
func TestCDCJobUnpartitionedSource(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	createEngineTable(t, h.s, "landing", sc, *iceberg.UnpartitionedSpec)
	src := &cdcTable{t: t, s: h.s, name: "landing", tbl: "eng.landing", sc: sc, asArr: h.asArr, keys: h.keys}
	mor(t, h.s, "landing", func(tx *table.Transaction) error {
		return tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	})
	src.appendRows(5, "2026-01-01/1", "2026-01-01/2", "2026-01-02/3")
	job := write(t, t.TempDir(), "copy.yaml", "table: eng.cdc\nsources:\n  l: {table: eng.landing}\n"+
		"sql: SELECT d, id, n FROM l WHERE d BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)\n")
	h.s.must("publish", "--job", job, "--partitions", "d=2026-01-01..2026-01-02")
	h.expect("copy", r("2026-01-01", 1, 5), r("2026-01-01", 2, 5), r("2026-01-02", 3, 5))
	// With an equality delete in the landing table: the copy follows it.
	src.eqDelete("2026-01-01/2")
	h.s.must("publish", "--job", job, "--allow-implausible", "--partitions", "d=2026-01-01..2026-01-02")
	h.expect("copy after the delete", r("2026-01-01", 1, 5), r("2026-01-02", 3, 5))
}

// TestCDCScopedRollbackUnchangedPartition: run fix changes day 1 and
// leaves day 2 as it was (recorded unchanged); a CDC writer then deletes
// a row of day 2. A scoped rollback of fix need only touch day 1.
func TestCDCScopedRollbackUnchangedPartition(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.appendRows(10, "2026-01-01/1", "2026-01-01/2", "2026-01-02/1", "2026-01-02/2", "2026-01-02/3")
	h.eqDelete("2026-01-02/2")
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	out := h.s.must("publish", "--run-id", "fix", "--table", h.tbl, "--partitions", "d=2026-01-01..2026-01-02",
		write(t, t.TempDir(), "in.ndjson", `{"d":"2026-01-01","id":1,"n":20}
{"d":"2026-01-01","id":2,"n":20}
{"d":"2026-01-02","id":1,"n":10}
{"d":"2026-01-02","id":3,"n":10}
`))
	t.Logf("publish fix:\n%s", out)
	h.expect("after fix", r("2026-01-01", 1, 20), r("2026-01-01", 2, 20), r("2026-01-02", 1, 10), r("2026-01-02", 3, 10))
	// A CDC writer deletes a row of day 2, which fix left as it was.
	h.posDelete("2026-01-02", 3)
	meta := h.s.metadata(h.tbl)
	code, o, e := h.s.cli("rollback", "--scoped", "--table", h.tbl, "--run", "fix")
	if code != 0 {
		t.Errorf("scoped rollback of fix: exit %d\n%s%s", code, o, e)
	}
	if code != 0 {
		t.Errorf("scoped rollback of fix refused though the later commit touched only a partition fix left unchanged (metadata same: %v)", meta == h.s.metadata(h.tbl))
	}
	h.expect("after scoped rollback", r("2026-01-01", 1, 10), r("2026-01-01", 2, 10), r("2026-01-02", 1, 10))
	code, o, e = h.s.cli("verify", "--table", h.tbl)
	if code != 0 {
		t.Errorf("verify --table: exit %d\n%s%s", code, o, e)
	}
	code, o, e = h.s.cli("verify", "--table", h.tbl, "--run", "fix")
	if code != 0 {
		t.Errorf("verify --run fix: exit %d\n%s%s", code, o, e)
	}
}

// TestCDCApplyAfterDeleteInUnchanged: plan changes day 1 and leaves
// day 2 as it is; a CDC writer deletes in day 2 and appends in day 3;
// apply.
func TestCDCApplyAfterDeleteInUnchanged(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.appendRows(10, "2026-01-01/1", "2026-01-01/2", "2026-01-02/1", "2026-01-02/2", "2026-01-02/3")
	h.eqDelete("2026-01-02/2")
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	plan := filepath.Join(t.TempDir(), "p.json")
	out := h.s.must("plan", "--run-id", "fix", "--out", plan, "--table", h.tbl, "--partitions", "d=2026-01-01..2026-01-02",
		write(t, t.TempDir(), "in.ndjson", `{"d":"2026-01-01","id":1,"n":20}
{"d":"2026-01-01","id":2,"n":20}
{"d":"2026-01-02","id":1,"n":10}
{"d":"2026-01-02","id":3,"n":10}
`))
	t.Logf("plan:\n%s", out)
	pf, err := swap.ReadPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	h.appendRows(30, "2026-01-03/1")
	h.eqDelete("2026-01-02/3")
	before := h.s.files()
	meta := h.s.mainState(h.tbl)
	code, o, e := h.s.cli("apply", plan, "--approve", pf.PlanID)
	t.Logf("apply: exit %d\n%s%s", code, o, e)
	t.Logf("main moved: %v; new files: %v", meta != h.s.mainState(h.tbl), h.newFiles(before))
	// Documented: any delete file added in a planned partition (unchanged
	// ones included) is a conflict, nothing committed.
	if code != exitConflict || meta != h.s.mainState(h.tbl) {
		t.Errorf("apply: exit %d, committed %v", code, meta != h.s.mainState(h.tbl))
	}
	h.expect("after apply", r("2026-01-01", 1, 10), r("2026-01-01", 2, 10), r("2026-01-02", 1, 10), r("2026-01-03", 1, 30))
	code, o, e = h.s.cli("discard", plan)
	if code != 0 {
		t.Errorf("discard: exit %d\n%s%s", code, o, e)
	}
	t.Logf("left of run fix: %v", h.s.runFiles("fix"))
}

// TestCDCBatchesPartlyApplied: plan in batches of one day over two
// days that hold deletes; a CDC writer deletes in day 2 before apply, so
// batch 1 lands and batch 2 conflicts; discard, resume, roll back.
func TestCDCBatchesPartlyApplied(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.appendRows(10, "2026-01-01/1", "2026-01-01/2", "2026-01-02/1", "2026-01-02/2", "2026-01-02/3")
	h.eqDelete("2026-01-01/2", "2026-01-02/2")
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	in := write(t, t.TempDir(), "in.ndjson", `{"d":"2026-01-01","id":1,"n":20}
{"d":"2026-01-01","id":2,"n":20}
{"d":"2026-01-02","id":1,"n":20}
{"d":"2026-01-02","id":3,"n":20}
`)
	plan := filepath.Join(t.TempDir(), "p.json")
	h.s.must("plan", "--run-id", "b", "--batch", "1", "--out", plan, "--table", h.tbl, "--partitions", "d=2026-01-01..2026-01-02", in)
	pf, err := swap.ReadPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	h.posDelete("2026-01-02", 3)
	code, o, e := h.s.cli("apply", plan, "--approve", pf.PlanID)
	t.Logf("apply: exit %d\n%s%s", code, o, e)
	// The whole plan is checked before its first batch: a conflict, nothing committed.
	if code != exitConflict {
		t.Errorf("apply: exit %d", code)
	}
	h.expect("after apply", r("2026-01-01", 1, 10), r("2026-01-02", 1, 10))
	code, o, e = h.s.cli("status", "--table", h.tbl, "--run", "b")
	t.Logf("status: exit %d\n%s%s", code, o, e)
	code, o, e = h.s.cli("discard", plan)
	if code != 0 {
		t.Errorf("discard: exit %d\n%s%s", code, o, e)
	}
	t.Logf("files of run b: %v", h.s.runFiles("b"))
	// Resume with the same run id and input.
	code, o, e = h.s.cli("publish", "--run-id", "b", "--batch", "1", "--table", h.tbl, "--partitions", "d=2026-01-01..2026-01-02", in)
	t.Logf("resume: exit %d\n%s%s", code, o, e)
	h.expect("after resume", r("2026-01-01", 1, 20), r("2026-01-01", 2, 20), r("2026-01-02", 1, 20), r("2026-01-02", 3, 20))
	code, o, e = h.s.cli("verify", "--table", h.tbl, "--run", "b")
	if code != 0 {
		t.Errorf("verify run b: exit %d\n%s%s", code, o, e)
	}
	h.appendRows(40, "2026-01-04/1")
	code, o, e = h.s.cli("rollback", "--scoped", "--table", h.tbl, "--run", "b")
	if code != 0 {
		t.Errorf("scoped rollback b: exit %d\n%s%s", code, o, e)
	}
	h.expect("after scoped rollback", r("2026-01-01", 1, 10), r("2026-01-02", 1, 10), r("2026-01-04", 1, 40))
	code, o, e = h.s.cli("verify", "--table", h.tbl)
	if code != 0 {
		t.Errorf("verify table: exit %d\n%s%s", code, o, e)
	}
	code, o, e = h.s.cli("verify", "--table", h.tbl, "--run", "rollback-b")
	if code != 0 {
		t.Errorf("verify rollback-b: exit %d\n%s%s", code, o, e)
	}
	code, o, e = h.s.cli("history", "--table", h.tbl)
	t.Logf("history: exit %d\n%s%s", code, o, e)
}

// TestCDCJobRenamedSourceColumn: a job's source table renamed a
// column after its files were written; one day's file has a delete, the
// other's not: both are read through a copy, by field id, and the job
// reads every amount under its new name.
func TestCDCJobRenamedSourceColumn(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, h.s, "src", sc, spec)
	src := &cdcTable{t: t, s: h.s, name: "src", tbl: "eng.src", sc: sc, asArr: h.asArr, keys: h.keys}
	mor(t, h.s, "src", func(tx *table.Transaction) error {
		return tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	})
	src.appendRows(5, "2026-01-01/1", "2026-01-01/2", "2026-01-02/3", "2026-01-02/4")
	mor(t, h.s, "src", func(tx *table.Transaction) error {
		return tx.UpdateSchema(true, false).RenameColumn([]string{"n"}, "amount").Commit()
	})
	src.eqDelete("2026-01-01/2")
	t.Logf("source reads %v", view(t, h.s, "src", "d", "id", "amount"))
	job := write(t, t.TempDir(), "copy.yaml", "table: eng.cdc\nsources:\n  s: {table: eng.src}\n"+
		"sql: SELECT d, id, amount AS n FROM s WHERE d BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)\n")
	h.s.must("publish", "--job", job, "--partitions", "d=2026-01-01..2026-01-02")
	var days []string
	for _, row := range h.view() {
		if strings.Contains(row, "2026-01-01") || strings.Contains(row, "2026-01-02") {
			days = append(days, row)
		}
	}
	if want := []string{r("2026-01-01", 1, 5), r("2026-01-02", 3, 5), r("2026-01-02", 4, 5)}; !slices.Equal(days, want) {
		t.Errorf("a job reading a table whose column n was renamed amount holds %v, want %v (every amount read by field id)", days, want)
	}
}

// TestCDCScopedRollbackRefusedAfterRestage: grain id alone; day 1
// held a delete before run fix (so the rollback writes its rows back);
// a later commit adds, in day 5, a key the rollback would put back.
func TestCDCScopedRollbackRefusedAfterRestage(t *testing.T) {
	h := grainIDTable(t, "cdc3")
	s := h.s
	h.appendRows(10, "2026-01-01/1", "2026-01-01/2", "2026-01-01/3")
	h.eqDelete("2026-01-01/3")
	s.must("table", "set", "--table", h.tbl, "additive=n")
	s.must("publish", "--run-id", "fix", "--allow-implausible", "--table", h.tbl, "--partitions", "d=2026-01-01", h.rows(10, "2026-01-01/2"))
	h.appendRows(50, "2026-01-05/1")
	before := s.files()
	meta := s.metadata(h.tbl)
	code, o, e := s.cli("rollback", "--scoped", "--table", h.tbl, "--run", "fix")
	if code != exitRollbackRefuse || meta != s.metadata(h.tbl) {
		t.Errorf("scoped rollback putting back a key added elsewhere: exit %d\n%s%s; want refused, nothing changed", code, o, e)
	}
	// What it wrote back, and its hold, went with the refusal.
	if left := h.newFiles(before); len(left) > 0 {
		t.Errorf("a refused rollback left %v", left)
	}
	h.expect("after", r("2026-01-01", 2, 10), r("2026-01-05", 1, 50))
}

// TestCDCRandomStream: a random stream of appends, upserts (data and
// equality delete in one snapshot), equality deletes and position deletes
// over four days; then the rows the reader sees, given again, must commit
// nothing, and verify --table must count what the reader sees.
func TestCDCRandomStream(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := newCDCTable(t, "cdc", true)
			rng := newRand(seed)
			cell := func() string { return fmt.Sprintf("2026-01-0%d/%d", 1+rng.Intn(4), 1+rng.Intn(6)) }
			// Start with every key once, so the grain is unique.
			var all []string
			for d := 1; d <= 4; d++ {
				for id := 1; id <= 6; id++ {
					all = append(all, fmt.Sprintf("2026-01-0%d/%d", d, id))
				}
			}
			h.appendRows(1, all...)
			for step := 0; step < 8; step++ {
				switch rng.Intn(3) {
				case 0:
					c := cell()
					h.upsert(int64(10+step), c)
				case 1:
					h.eqDelete(cell(), cell())
				case 2:
					c := cell()
					d, id, _ := strings.Cut(c, "/")
					var v int64
					fmt.Sscan(id, &v)
					h.posDelete(d, v)
				}
			}
			seen := h.view()
			t.Logf("reader: %v", seen)
			h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
			var b strings.Builder
			for _, row := range seen {
				var d string
				var id, n int
				fmt.Sscanf(row, "d=%s id=%d n=%d", &d, &id, &n)
				fmt.Fprintf(&b, `{"d":"%s","id":%d,"n":%d}`+"\n", d, id, n)
			}
			meta := h.s.metadata(h.tbl)
			code, o, e := h.s.cli("publish", "--table", h.tbl, "--partitions", "d=2026-01-01..2026-01-04", "--allow-empty", write(t, t.TempDir(), "seen.ndjson", b.String()))
			if code != 0 || h.s.metadata(h.tbl) != meta {
				t.Errorf("rerun of what the reader sees: exit %d, committed %v\n%s%s", code, h.s.metadata(h.tbl) != meta, o, e)
			}
			out := h.s.must("-o", "json", "verify", "--table", h.tbl)
			if !strings.Contains(out, fmt.Sprintf(`"rows": %d`, len(seen))) {
				t.Errorf("verify --table counts otherwise than the reader's %d rows: %s", len(seen), out)
			}
		})
	}
}

type lcg struct{ x uint64 }

func newRand(seed int64) *lcg { return &lcg{uint64(seed)*6364136223846793005 + 1442695040888963407} }
func (l *lcg) Intn(n int) int {
	l.x = l.x*6364136223846793005 + 1442695040888963407
	return int((l.x >> 33) % uint64(n))
}

// TestCDCRebaseReadsAddedWithoutDeletes: grain id alone. A plan
// stages id 7 in day 1; meanwhile a CDC writer appends id 7 in day 5 and
// deletes it again (merge-on-read). Nothing would hold id 7 twice.
func TestCDCRebaseReadsAddedWithoutDeletes(t *testing.T) {
	h := grainIDTable(t, "cdc4")
	s := h.s
	h.appendRows(10, "2026-01-01/1", "2026-01-05/2", "2026-01-05/3")
	s.must("table", "set", "--table", h.tbl, "additive=n")
	plan := filepath.Join(t.TempDir(), "p.json")
	s.must("plan", "--run-id", "fix", "--out", plan, "--table", h.tbl, "--partitions", "d=2026-01-01", h.rows(10, "2026-01-01/1", "2026-01-01/7"))
	pf, err := swap.ReadPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	h.appendRows(10, "2026-01-05/7")
	h.posDelete("2026-01-05", 7)
	h.expect("engine", r("2026-01-01", 1, 10), r("2026-01-05", 2, 10), r("2026-01-05", 3, 10))
	code, o, e := s.cli("apply", plan, "--approve", pf.PlanID)
	t.Logf("apply: exit %d\n%s%s", code, o, e)
	if code != 0 {
		t.Errorf("apply refused a record no reader sees twice: exit %d", code)
	}
}

func icebergcatWithSpec(s *iceberg.PartitionSpec) icebergcat.CreateTableOpt {
	return icebergcat.WithPartitionSpec(s)
}
func icebergcatWithProps(p iceberg.Properties) icebergcat.CreateTableOpt {
	return icebergcat.WithProperties(p)
}

// TestCDCV3NoDeletes: a format-v3 table without any delete.
func TestCDCV3NoDeletes(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	ctx, cat, _, err := openPublisher(t.Context(), siteConfig(t, s), noLog())
	if err != nil {
		t.Fatal(err)
	}
	_ = cat.CreateNamespace(ctx, []string{"eng"}, nil)
	if _, err := cat.CreateTable(ctx, []string{"eng", "v3"}, sc, icebergcatWithSpec(&spec), icebergcatWithProps(iceberg.Properties{"format-version": "3"})); err != nil {
		t.Fatal(err)
	}
	cat.Close()
	asArrow, _ := table.SchemaToArrowSchema(sc, nil, true, false)
	h := &cdcTable{t: t, s: s, name: "v3", tbl: "eng.v3", sc: sc, asArr: asArrow}
	s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	files, meta := s.files(), s.metadata(h.tbl)
	code, _, errs := s.cli("publish", "--table", h.tbl, "--partitions", "d=2026-01-01", h.rows(10, "2026-01-01/1"))
	if code != exitUsage || !strings.Contains(errs, "format v3") || s.metadata(h.tbl) != meta || !slices.Equal(s.files(), files) {
		t.Errorf("publish to a format-v3 table: exit %d: %s; want refused before anything is staged", code, errs)
	}
}

// TestCDCShowPlan: what plan, show and -o json say of a day with deletes.
func TestCDCShowPlan(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.appendRows(10, "2026-01-01/1", "2026-01-01/2", "2026-01-01/3", "2026-01-01/4")
	h.upsert(11, "2026-01-01/2")
	h.eqDelete("2026-01-01/3")
	h.posDelete("2026-01-01", 4)
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	plan := filepath.Join(t.TempDir(), "p.json")
	out := h.s.must("plan", "--run-id", "p", "--out", plan, "--table", h.tbl, "--partitions", "d=2026-01-01", h.rows(10, "2026-01-01/1", "2026-01-01/2"))
	t.Logf("plan:\n%s", out)
	t.Logf("show:\n%s", h.s.must("show", plan))
	t.Logf("json:\n%s", h.s.must("-o", "json", "show", plan))
	t.Logf("describe:\n%s", h.s.must("table", "describe", "--table", h.tbl))
}

// unreferenced lists files under the table's data folder in lakeswap's
// layout (a run-* folder) that no snapshot of the table references.
func (h *cdcTable) unreferenced() []string {
	h.t.Helper()
	ctx, tbl, done := engineTable(h.t, h.s, h.name)
	defer done()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	ref := map[string]bool{}
	for _, sn := range tbl.Metadata().Snapshots() {
		ms, err := sn.Manifests(fsys)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, m := range ms {
			es, err := m.FetchEntries(fsys, false)
			if err != nil {
				h.t.Fatal(err)
			}
			for _, e := range es {
				ref[e.DataFile().FilePath()] = true
			}
		}
	}
	var out []string
	for _, f := range h.s.files() {
		if strings.Contains(f, "/"+h.name+"/data/") && strings.Contains(f, "/run-") && !ref[f] {
			out = append(out, f)
		}
	}
	return out
}

// TestCDCLeftovers: after each step on a merge-on-read table, the
// files lakeswap wrote that no snapshot references.
func TestCDCLeftovers(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.appendRows(10, "2026-01-01/1", "2026-01-01/2", "2026-01-02/1", "2026-01-02/2", "2026-01-03/1")
	h.eqDelete("2026-01-01/2", "2026-01-02/2")
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	check := func(step string) {
		t.Helper()
		if left := h.unreferenced(); len(left) > 0 {
			t.Errorf("after %s, unreferenced files lakeswap wrote: %v", step, left)
		}
	}
	// refused: a row outside the declared days
	code, _, _ := h.s.cli("publish", "--table", h.tbl, "--partitions", "d=2026-01-01", h.rows(5, "2026-01-01/1", "2026-01-05/1"))
	t.Logf("refused publish: %d", code)
	check("a refused publish")
	// refused: implausible (too few rows? under 100 not judged) -> empty
	code, _, _ = h.s.cli("publish", "--table", h.tbl, "--partitions", "d=2026-01-01..2026-01-02", h.rows(5, "2026-01-01/1"))
	t.Logf("refused (empty) publish: %d", code)
	check("an empty-partition refusal")
	// a rerun that commits nothing
	h.s.must("publish", "--table", h.tbl, "--partitions", "d=2026-01-01..2026-01-02", h.rows(10, "2026-01-01/1", "2026-01-02/1"))
	check("a rerun committing nothing")
	// plan, conflicting delete, apply (conflict), discard
	plan := filepath.Join(t.TempDir(), "p.json")
	h.s.must("plan", "--run-id", "p", "--out", plan, "--table", h.tbl, "--partitions", "d=2026-01-01", h.rows(20, "2026-01-01/1"))
	pf, _ := swap.ReadPlan(plan)
	h.posDelete("2026-01-01", 1)
	code, _, _ = h.s.cli("apply", plan, "--approve", pf.PlanID)
	t.Logf("conflicting apply: %d", code)
	h.s.must("discard", plan)
	check("a conflicting apply, then discard")
	// publish, CDC commit, scoped rollback (restaged), full rollback of the rollback
	h.s.must("publish", "--run-id", "fix", "--table", h.tbl, "--partitions", "d=2026-01-02", h.rows(30, "2026-01-02/1", "2026-01-02/5"))
	check("a publish")
	h.appendRows(40, "2026-01-04/1")
	h.s.must("rollback", "--scoped", "--table", h.tbl, "--run", "fix")
	check("a scoped rollback")
	code, o, e := h.s.cli("rollback", "--table", h.tbl, "--run", "rollback-fix")
	t.Logf("full rollback of the rollback: %d %s%s", code, o, e)
	check("a full rollback")
	h.expect("end", r("2026-01-02", 1, 30), r("2026-01-02", 5, 30), r("2026-01-03", 1, 10), r("2026-01-04", 1, 40))
	code, o, e = h.s.cli("verify", "--table", h.tbl)
	t.Logf("verify: %d %s%s", code, o, e)
}

// TestCDCNoopPlanAfterDelete: a plan with no changes, then a CDC
// delete in its day, then apply.
func TestCDCNoopPlanAfterDelete(t *testing.T) {
	h := newCDCTable(t, "cdc", true)
	h.appendRows(10, "2026-01-01/1", "2026-01-01/2")
	h.eqDelete("2026-01-01/2")
	h.s.must("table", "set", "--table", h.tbl, "grain=d,id", "additive=n")
	plan := filepath.Join(t.TempDir(), "p.json")
	h.s.must("plan", "--run-id", "p", "--out", plan, "--table", h.tbl, "--partitions", "d=2026-01-01", h.rows(10, "2026-01-01/1"))
	pf, _ := swap.ReadPlan(plan)
	h.posDelete("2026-01-01", 1)
	code, o, e := h.s.cli("apply", plan, "--approve", pf.PlanID)
	t.Logf("apply of a no-op plan after a delete in its day: exit %d\n%s%s", code, o, e)
	t.Logf("reader: %v", h.view())
}
