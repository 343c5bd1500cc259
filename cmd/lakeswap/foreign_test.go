package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/swap"
)

// foreignTable is a table as another engine creates it: made through
// iceberg-go's own API, not lakeswap's table create, and with no
// identifier fields (so no grain).
type foreignTable struct {
	name      string
	column    iceberg.NestedField // the partition's source column; id and n follow it
	transform iceberg.Transform
	value     func(id int) string // the JSON of the column for row id
}

// create makes the table on the site, its namespace too.
func (f foreignTable) create(t *testing.T, s *site) {
	t.Helper()
	col := f.column
	col.ID, col.Required = 1, true
	sc := iceberg.NewSchema(0, col,
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	createEngineTable(t, s, f.name, sc, iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "p", Transform: f.transform}))
}

// rows writes NDJSON of the rows id with n.
func (f foreignTable) rows(t *testing.T, n int64, ids ...int) string {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, `{"%s":%s,"id":%d,"n":%d}`+"\n", f.column.Name, f.value(id), id, n)
	}
	return write(t, t.TempDir(), "in.ndjson", b.String())
}

// values are the partition values of rows ids, computed by lakeswap's
// partitioner from the rows' own values.
func (f foreignTable) values(t *testing.T, s *site, ids ...int) []string {
	t.Helper()
	_, tbl, done := engineTable(t, s, f.name)
	defer done()
	c, err := contract.Of(tbl.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	arr, _, err := array.FromJSON(memory.DefaultAllocator, c.Arrow.Field(0).Type, strings.NewReader("["+strings.Join(mapIDs(ids, f.value), ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	valueOf, err := c.Partition.Fields[0].ValueFunc(arr)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for r := range arr.Len() {
		v, _ := valueOf(r)
		values = append(values, v)
	}
	slices.Sort(values)
	return slices.Compact(values)
}

// selector names the partitions of values as a user would.
func (f foreignTable) selector(values []string) string {
	items := slices.Clone(values)
	switch {
	case f.column.Type == iceberg.PrimitiveTypes.String:
		for i, v := range items {
			items[i] = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
		}
	case f.transform.String() == "bucket[16]":
		items[0] = "bucket:" + items[0]
	}
	return f.column.Name + "=" + strings.Join(items, ",")
}

func mapIDs(ids []int, f func(int) string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = f(id)
	}
	return out
}

// readerView is what an independent reader sees: iceberg-go's own scan of
// the table's current snapshot (deletes applied), as id -> n.
func readerView(t *testing.T, s *site, name string) map[int64]int64 {
	t.Helper()
	ctx, tbl, done := engineTable(t, s, name)
	defer done()
	out := map[int64]int64{}
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	at, err := tbl.Scan(table.WithSelectedFields("id", "n")).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rdr := array.NewTableReader(at, 0)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		ids, ns := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
		for i := range int(rec.NumRows()) {
			out[ids.Value(i)] = ns.Value(i)
		}
	}
	return out
}

// foundBy counts the rows iceberg-go's scan finds with a filter on the
// partition's source column: it prunes files by the partition values the
// manifests record, so a wrong bucket or prefix loses the row.
func foundBy(t *testing.T, s *site, name string, filter iceberg.BooleanExpression) int64 {
	t.Helper()
	ctx, tbl, done := engineTable(t, s, name)
	defer done()
	at, err := tbl.Scan(table.WithRowFilter(filter)).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	return at.NumRows()
}

func want(n int64, ids ...int) map[int64]int64 {
	m := map[int64]int64{}
	for _, id := range ids {
		m[int64(id)] = n
	}
	return m
}

// TestForeignTransforms: tables made by another engine (through
// iceberg-go's API) partitioned by bucket(16, id), truncate(4, sku), and
// the identity of a timestamptz, a decimal and a boolean. On every site:
// publish, a rerun committing nothing, plan then apply, another writer's
// commit, a scoped rollback of the applied run, verify --table, and what
// an independent reader (iceberg-go's scan) sees after each step.
func TestForeignTransforms(t *testing.T) {
	cases := []foreignTable{
		{"bucketed", iceberg.NestedField{Name: "user_id", Type: iceberg.PrimitiveTypes.Int64}, iceberg.BucketTransform{NumBuckets: 16},
			func(id int) string { return fmt.Sprint(id * 7919) }},
		{"truncated", iceberg.NestedField{Name: "sku", Type: iceberg.PrimitiveTypes.String}, iceberg.TruncateTransform{Width: 4},
			func(id int) string {
				return fmt.Sprintf("%q", fmt.Sprintf("%s-%d", []string{"ABCD", "ABCE", "WXYZ", `A,B"C`}[id%4], id))
			}},
		{"stamped", iceberg.NestedField{Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz}, iceberg.IdentityTransform{},
			func(id int) string { return fmt.Sprintf(`"2026-01-31T05:00:0%d.25Z"`, id%4) }},
		{"priced", iceberg.NestedField{Name: "price", Type: iceberg.DecimalTypeOf(9, 2)}, iceberg.IdentityTransform{},
			func(id int) string { return fmt.Sprintf("%d.%02d", id%4, id%4*5) }},
		{"flagged", iceberg.NestedField{Name: "flag", Type: iceberg.PrimitiveTypes.Bool}, iceberg.IdentityTransform{},
			func(id int) string { return fmt.Sprint(id%2 == 0) }},
	}
	forEachSite(t, func(t *testing.T, s *site) {
		for _, f := range cases {
			t.Run(f.name, func(t *testing.T) {
				f.create(t, s)
				tbl := "eng." + f.name
				// Rows 1..8 in the partitions of ids 1, 2 (mod 4 or 2: the
				// run's); rows 3 and 7 (another writer's) fall elsewhere for
				// every case but the bucket one, whose partitions are found.
				mine, others := []int{1, 2, 5, 6}, []int{3, 7}
				if f.name == "flagged" {
					mine, others = []int{2, 4}, []int{1, 3}
				}
				mineValues := f.values(t, s, mine...)
				if f.name == "bucketed" { // another writer's rows in buckets of their own
					others = nil
					for id := 3; len(others) < 2; id += 2 {
						if !slices.Contains(mineValues, f.values(t, s, id)[0]) {
							others = append(others, id)
						}
					}
				}
				otherValues := f.values(t, s, others...)
				for _, v := range otherValues {
					if slices.Contains(mineValues, v) {
						t.Fatalf("the other writer's partition %s is the run's too", v)
					}
				}
				sel, otherSel := f.selector(mineValues), f.selector(otherValues)
				s.must("publish", "--run-id", "one", "--table", tbl, "--partitions", sel, f.rows(t, 1, mine...))
				if got := readerView(t, s, f.name); !maps.Equal(got, want(1, mine...)) {
					t.Fatalf("after publish the reader sees %v", got)
				}
				switch f.name { // found by a filter on the partition column, as a reader prunes
				case "bucketed":
					for _, id := range mine {
						if got := foundBy(t, s, f.name, iceberg.EqualTo(iceberg.Reference("user_id"), int64(id*7919))); got != 1 {
							t.Errorf("a scan for user_id %d finds %d rows: the manifests record the wrong bucket", id*7919, got)
						}
					}
				case "truncated":
					if got := foundBy(t, s, f.name, iceberg.StartsWith(iceberg.Reference("sku"), "ABCE")); got != 2 {
						t.Errorf("a scan for sku ABCE* finds %d rows", got)
					}
				}
				meta, files := s.metadata(tbl), withoutRecords(s.files())
				if out := s.must("publish", "--run-id", "one-again", "--table", tbl, "--partitions", sel, f.rows(t, 1, mine...)); s.metadata(tbl) != meta || !slices.Equal(withoutRecords(s.files()), files) {
					t.Fatalf("a rerun of the same rows committed or wrote: %s", out)
				}
				plan := filepath.Join(t.TempDir(), "p.json")
				s.must("plan", "--run-id", "two", "--out", plan, "--table", tbl, "--partitions", sel, f.rows(t, 5, mine...))
				pf, err := swap.ReadPlan(plan)
				if err != nil {
					t.Fatal(err)
				}
				s.must("apply", plan, "--approve", pf.PlanID)
				if got := readerView(t, s, f.name); !maps.Equal(got, want(5, mine...)) {
					t.Fatalf("after apply the reader sees %v", got)
				}
				s.must("publish", "--run-id", "other", "--table", tbl, "--partitions", otherSel, f.rows(t, 9, others...))
				s.must("rollback", "--scoped", "--table", tbl, "--run", "two")
				after := want(1, mine...)
				maps.Copy(after, want(9, others...))
				if got := readerView(t, s, f.name); !maps.Equal(got, after) {
					t.Fatalf("after a scoped rollback of run two the reader sees %v, want %v", got, after)
				}
				if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) {
					t.Errorf("verify --table: %s", out)
				}
				// A row outside the declared partitions is refused, naming it.
				meta = s.metadata(tbl)
				if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", sel, f.rows(t, 1, append(mine, others[0])...)); code != exitRefused || !strings.Contains(errs, "outside") || s.metadata(tbl) != meta {
					t.Errorf("a row outside %s: exit %d: %s", sel, code, errs)
				}
			})
		}
	})
}
