package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// noGrainYAML is a table as other engines create one: no identifier
// fields, every column optional.
const noGrainYAML = `table: web.events
columns:
  - {name: day, type: date}
  - {name: user_id, type: long}
  - {name: views, type: long}
partition: [{column: day, transform: identity}]
`

// TestContractSetInPlace: a table with no grain publishes (its plan says
// the grain guard is not run); table set grain= is refused while its data
// holds a key twice, naming the key, with nothing changed; once the data
// is clean it commits one schema update (identifier fields, the columns
// required) and nothing else (no data file rewritten), additive and a
// check beside it; the next publish enforces the grain. On every site.
func TestContractSetInPlace(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--schema", write(t, s.home, "events.yaml", noGrainYAML))
		dup := write(t, t.TempDir(), "dup.ndjson", `{"day":"2026-01-01","user_id":7,"views":1}
{"day":"2026-01-01","user_id":7,"views":2}
{"day":"2026-01-02","user_id":8,"views":3}
`)
		plan := s.must("plan", "--out", filepath.Join(t.TempDir(), "p.json"), "--table", "web.events", "--partitions", "day=2026-01-01..2026-01-02", dup)
		if !strings.Contains(plan, "not applicable (no grain): grain") || !strings.Contains(plan, "web.events has no grain") {
			t.Errorf("the plan of a table without a grain does not say the grain guard is left out: %s", plan)
		}
		out := s.must("publish", "--table", "web.events", "--partitions", "day=2026-01-01..2026-01-02", dup)
		if !strings.Contains(out, "published") {
			t.Fatalf("a table without a grain: %s", out)
		}
		meta, files := s.metadata("web.events"), s.files()
		code, _, errs := s.cli("table", "set", "--table", "web.events", "grain=user_id,day", "additive=views")
		if code != exitRefused || !strings.Contains(errs, "user_id=7") {
			t.Fatalf("table set grain= over a duplicate key: exit %d: %s", code, errs)
		}
		if s.metadata("web.events") != meta || !slices.Equal(s.files(), files) {
			t.Fatal("a refused table set changed the table")
		}

		clean := write(t, t.TempDir(), "clean.ndjson", `{"day":"2026-01-01","user_id":7,"views":3}
`)
		s.must("publish", "--table", "web.events", "--partitions", "day=2026-01-01", clean)
		meta, files = s.metadata("web.events"), s.files()
		s.must("table", "set", "--table", "web.events", "grain=user_id,day", "additive=views", "check.views=non-negative")
		after := s.files()
		var added []string
		for _, f := range after {
			if !slices.Contains(files, f) {
				added = append(added, f)
			}
		}
		if len(added) != 1 || !strings.HasSuffix(added[0], ".metadata.json") || len(after) != len(files)+1 {
			t.Errorf("table set wrote %v, want one metadata file and nothing else", added)
		}
		ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := cat.LoadTable(ctx, []string{"web", "events"})
		cat.Close()
		if err != nil {
			t.Fatal(err)
		}
		sc := tbl.Schema()
		var names []string
		for _, id := range sc.IdentifierFieldIDs {
			f, _ := sc.FindFieldByID(id)
			names = append(names, f.Name)
		}
		if slices.Sort(names); !slices.Equal(names, []string{"day", "user_id"}) {
			t.Errorf("identifier fields %v, want day and user_id", names)
		}
		if f, _ := sc.FindFieldByName("user_id"); !f.Required {
			t.Error("a grain column stayed optional")
		}
		if tbl.Metadata().Properties()["lakeswap.additive-columns"] != "views" || tbl.Metadata().Properties()["lakeswap.check.views"] != "non-negative" {
			t.Errorf("properties %v", tbl.Metadata().Properties())
		}
		// The grain holds from the next publish on.
		if code, _, errs := s.cli("publish", "--table", "web.events", "--partitions", "day=2026-01-01..2026-01-02", dup); code != exitRefused || !strings.Contains(errs, "duplicate-grain") {
			t.Errorf("a duplicate key after the grain was set: exit %d: %s", code, errs)
		}
	})
}
