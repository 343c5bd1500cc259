package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/jsonid"
	"github.com/lakeswap/lakeswap/swap"
)

// TestEvolvedSchema: another engine adds a column after lakeswap wrote
// the table (ALTER TABLE ADD COLUMN note string), then renames one of the
// grain's. Files written before are read by field id, the new column null:
// the same rows again commit nothing, new rows publish, and verify of the
// runs from before and after each change passes. On every site.
func TestEvolvedSchema(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		s.must("publish", "--run-id", "before", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))

		ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := cat.LoadTable(ctx, []string{"retail", "daily_orders"})
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.UpdateSchema(true, false).AddColumn([]string{"note"}, iceberg.PrimitiveTypes.String, "", false, nil).Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		cat.Close()

		meta := s.metadata("daily_orders")
		if out := s.must("publish", "--run-id", "same", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t)); s.metadata("daily_orders") != meta {
			t.Errorf("the same rows after a column was added committed: %s", out)
		}
		// One day only: run before still holds the other, written under the
		// old schema, which verify --table reads it with.
		day2 := write(t, t.TempDir(), "day2.ndjson", `{"order_date":"2026-01-02","channel":"web","order_count":3,"amount_cents":100,"note":"late"}`+"\n")
		s.must("publish", "--run-id", "after", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-02", day2)
		for _, run := range []string{"before", "after"} {
			if code, out, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", run); code != 0 {
				t.Errorf("verify of run %s: exit %d: %s%s", run, code, out, errs)
			}
		}
		out := s.must("-o", "json", "verify", "--table", "retail.daily_orders")
		if !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"run_id": "before"`) {
			t.Errorf("verify --table does not check run before's partition as it recorded it: %s", out)
		}

		// Then a rename (channel, part of the grain, found by its field id).
		ctx, cat, _, err = openPublisher(context.Background(), siteConfig(t, s), noLog())
		if err != nil {
			t.Fatal(err)
		}
		tbl, err = cat.LoadTable(ctx, []string{"retail", "daily_orders"})
		if err != nil {
			t.Fatal(err)
		}
		tx = tbl.NewTransaction()
		if err := tx.UpdateSchema(true, false).RenameColumn([]string{"channel"}, "sales_channel").Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		cat.Close()
		renamed := write(t, t.TempDir(), "renamed.ndjson", `{"order_date":"2026-01-01","sales_channel":"web","order_count":3,"amount_cents":100}`+"\n")
		s.must("publish", "--run-id", "renamed", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", renamed)
		for _, run := range []string{"before", "after", "renamed"} {
			if code, out, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", run); code != 0 {
				t.Errorf("verify of run %s after the rename: exit %d: %s%s", run, code, out, errs)
			}
		}
		if out := s.must("-o", "json", "verify", "--table", "retail.daily_orders"); !strings.Contains(out, `"ok": true`) {
			t.Errorf("verify --table after the rename: %s", out)
		}
	})
}

// evolve commits one schema change to eng.NAME through iceberg-go, as
// another engine's ALTER TABLE would.
func evolve(t *testing.T, s *site, name string, change func(*table.UpdateSchema) *table.UpdateSchema) {
	t.Helper()
	ctx, tbl, done := engineTable(t, s, name)
	defer done()
	tx := tbl.NewTransaction()
	if err := change(tx.UpdateSchema(true, false)).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestEvolvedTable: a table another engine made, whose schema then
// gained a column, lost one to a rename (a grain column) and widened an
// int to a long, each after data was written. On every site, after each
// change: the same rows commit nothing, new rows publish, plan then apply,
// verify of every run from before and after, and at the end a scoped
// rollback after another writer's commit, checked with iceberg-go's scan.
func TestEvolvedTable(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		sc := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
			iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int32, Required: true})
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
		createEngineTable(t, s, "evolving", sc, spec)
		const tbl = "eng.evolving"
		s.must("table", "set", "--table", tbl, "grain=d,id", "additive=n")
		idCol, nCol := "id", "n"
		rows := func(day string, n int64, ids ...int) string {
			var b strings.Builder
			for _, id := range ids {
				fmt.Fprintf(&b, `{"d":"2026-01-%s","%s":%d,"%s":%d}`+"\n", day, idCol, id, nCol, n)
			}
			return write(t, t.TempDir(), "in.ndjson", b.String())
		}
		days := "d=2026-01-01..2026-01-02"
		both := func(n int64) string {
			return write(t, t.TempDir(), "both.ndjson", strings.Join([]string{
				fmt.Sprintf(`{"d":"2026-01-01","%s":1,"%s":%d}`, idCol, nCol, n),
				fmt.Sprintf(`{"d":"2026-01-02","%s":2,"%s":%d}`, idCol, nCol, n), ""}, "\n"))
		}
		var runs []string
		step := func(label string, n int64) {
			t.Helper()
			meta := s.metadata(tbl)
			if out := s.must("publish", "--table", tbl, "--partitions", days, both(n-1)); s.metadata(tbl) != meta {
				t.Fatalf("%s: the same rows committed: %s", label, out)
			}
			plan := filepath.Join(t.TempDir(), "p.json")
			s.must("plan", "--run-id", label, "--out", plan, "--allow-implausible", "--table", tbl, "--partitions", days, both(n))
			pf, err := swap.ReadPlan(plan)
			if err != nil {
				t.Fatal(err)
			}
			// The plan names the schema each side was read with: the
			// table's current one, which this step's change made.
			_, et, done := engineTable(t, s, "evolving")
			current := jsonid.Int(et.Metadata().CurrentSchema().ID)
			done()
			if pf.Plan.BaseSchemaID == nil || *pf.Plan.BaseSchemaID != current || pf.Plan.Contract.SchemaID != current || pf.Plan.SchemaEvolved != (current > 0) {
				t.Errorf("%s: the plan's schemas: base %v, staged %d, evolved %v; the table's current schema is %d", label, pf.Plan.BaseSchemaID, pf.Plan.Contract.SchemaID, pf.Plan.SchemaEvolved, current)
			}
			if shown := s.must("show", plan); current > 0 && !strings.Contains(shown, fmt.Sprintf("read with schema %d of the table, the base with schema %d", current, current)) {
				t.Errorf("%s: show does not name the schemas: %s", label, shown)
			}
			s.must("apply", plan, "--approve", pf.PlanID)
			runs = append(runs, label)
			for _, run := range runs {
				if code, out, errs := s.cli("verify", "--table", tbl, "--run", run); code != 0 {
					t.Errorf("%s: verify of run %s: exit %d: %s%s", label, run, code, out, errs)
				}
			}
			if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) {
				t.Errorf("%s: verify --table: %s", label, out)
			}
		}
		s.must("publish", "--run-id", "first", "--table", tbl, "--partitions", days, both(1))
		runs = append(runs, "first")
		step("as-made", 2)

		evolve(t, s, "evolving", func(u *table.UpdateSchema) *table.UpdateSchema {
			return u.AddColumn([]string{"note"}, iceberg.PrimitiveTypes.String, "", false, nil)
		})
		step("added", 3)
		evolve(t, s, "evolving", func(u *table.UpdateSchema) *table.UpdateSchema { return u.RenameColumn([]string{"id"}, "user_id") })
		idCol = "user_id"
		step("renamed", 4)
		evolve(t, s, "evolving", func(u *table.UpdateSchema) *table.UpdateSchema {
			return u.UpdateColumn([]string{"n"}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: iceberg.PrimitiveTypes.Int64}})
		})
		step("widened", 5)
		// A value only a long holds, then another writer, then a scoped
		// rollback of it back to the rows from before.
		big := int64(1) << 40
		s.must("publish", "--run-id", "big", "--allow-implausible", "--table", tbl, "--partitions", "d=2026-01-01", rows("01", big, 1))
		s.must("publish", "--table", tbl, "--partitions", "d=2026-01-03", rows("03", 7, 3))
		s.must("rollback", "--scoped", "--table", tbl, "--run", "big")
		got := view(t, s, "evolving", "d", "user_id", "n")
		want := []string{"d=2026-01-01 user_id=1 n=5", "d=2026-01-02 user_id=2 n=5", "d=2026-01-03 user_id=3 n=7"}
		if !slices.Equal(got, want) {
			t.Errorf("after the scoped rollback the reader sees %v, want %v", got, want)
		}
		if out := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(out, `"ok": true`) {
			t.Errorf("verify --table at the end: %s", out)
		}
	})
}

// TestContractSetAfterADroppedColumn: on a table another engine made and
// then dropped a column of (the first, so that every later field's id is
// not its place), table set grain= judges the table's data by the
// fields' own ids: a duplicate key is refused, naming it, with nothing
// changed; once the data is clean the grain is set on the right columns,
// and the next publish enforces it. Before, the check built the metadata
// anew, numbering the fields again, and refused every grain ("int64 does
// not widen to date32").
func TestContractSetAfterADroppedColumn(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "x", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "d", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 3, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, "dropping", sc, spec)
	const tbl = "eng.dropping"
	dup := write(t, t.TempDir(), "dup.ndjson", `{"x":1,"d":"2026-01-01","id":7}
{"x":2,"d":"2026-01-01","id":7}
`)
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-01", dup)
	evolve(t, s, "dropping", func(u *table.UpdateSchema) *table.UpdateSchema { return u.DeleteColumn([]string{"x"}) })

	meta, files := s.metadata(tbl), s.files()
	if code, _, errs := s.cli("table", "set", "--table", tbl, "grain=d,id"); code != exitRefused || !strings.Contains(errs, "id=7") {
		t.Fatalf("table set grain= over a duplicate key after a dropped column: exit %d: %s; want refused naming id=7", code, errs)
	}
	if s.metadata(tbl) != meta || !slices.Equal(s.files(), files) {
		t.Fatal("a refused table set changed the table")
	}
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-01", write(t, t.TempDir(), "clean.ndjson", `{"d":"2026-01-01","id":7}
{"d":"2026-01-01","id":8}
`))
	s.must("table", "set", "--table", tbl, "grain=d,id")
	_, et, done := engineTable(t, s, "dropping")
	cur := et.Schema()
	done()
	var names []string
	for _, id := range cur.IdentifierFieldIDs {
		f, _ := cur.FindFieldByID(id)
		names = append(names, fmt.Sprintf("%s#%d", f.Name, f.ID))
	}
	if slices.Sort(names); !slices.Equal(names, []string{"d#2", "id#3"}) {
		t.Errorf("the grain is %v, want d#2 and id#3 (the fields' own ids)", names)
	}
	again := write(t, t.TempDir(), "again.ndjson", `{"d":"2026-01-01","id":9}
{"d":"2026-01-01","id":9}
`)
	if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "d=2026-01-01", again); code != exitRefused || !strings.Contains(errs, "duplicate-grain") {
		t.Errorf("a duplicate key once the grain is set: exit %d: %s", code, errs)
	}
	if got, want := view(t, s, "dropping", "d", "id"), []string{"d=2026-01-01 id=7", "d=2026-01-01 id=8"}; !slices.Equal(got, want) {
		t.Errorf("the reader sees %v, want %v", got, want)
	}
}
