package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/swap"
)

// TestHourAndYearPartitions: tables partitioned by hour(ts) and year(d)
// publish, rerun committing nothing, plan then apply, verify, and roll
// back one run's partitions after another writer's commit, on every site;
// selectors take Iceberg's own forms of the values (2026-01-31-05, 2026).
func TestHourAndYearPartitions(t *testing.T) {
	cases := []struct {
		name, column, typ, transform string
		first, second, other         string // values for the rows
		declared, otherDeclared      string
	}{
		{"hour", "ts", "timestamptz", "hour", "2026-01-31T05:10:00Z", "2026-01-31T06:59:59.999999Z", "2026-01-31T07:00:00Z",
			"ts=2026-01-31-05..2026-01-31-06", "ts=2026-01-31-07"},
		{"year", "d", "date", "year", "2025-03-01", "2026-12-31", "2027-01-01", "d=2025..2026", "d=2027"},
	}
	forEachSite(t, func(t *testing.T, s *site) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				tbl := "tr." + c.name
				s.must("table", "create", "--schema", write(t, t.TempDir(), "s.yaml", `table: `+tbl+`
columns:
  - {name: `+c.column+`, type: `+c.typ+`, required: true}
  - {name: id, type: long, required: true}
  - {name: n, type: long, required: true}
identifier: [`+c.column+`, id]
partition: [{column: `+c.column+`, transform: `+c.transform+`}]
additive: [n]
`))
				rows := func(n int) string {
					return write(t, t.TempDir(), "in.ndjson", strings.Join([]string{
						`{"` + c.column + `":"` + c.first + `","id":1,"n":` + strconv.Itoa(n) + `}`,
						`{"` + c.column + `":"` + c.second + `","id":2,"n":1}`, ""}, "\n"))
				}
				s.must("publish", "--run-id", c.name+"-1", "--table", tbl, "--partitions", c.declared, rows(1))
				meta := s.metadata(tbl)
				if out := s.must("publish", "--run-id", c.name+"-1b", "--table", tbl, "--partitions", c.declared, rows(1)); s.metadata(tbl) != meta {
					t.Fatalf("a rerun committed: %s", out)
				}
				plan := filepath.Join(t.TempDir(), "p.json")
				s.must("plan", "--run-id", c.name+"-2", "--out", plan, "--table", tbl, "--partitions", c.declared, rows(5))
				pf, err := swap.ReadPlan(plan)
				if err != nil || len(pf.Plan.Partitions) != 2 {
					t.Fatalf("plan: %v %+v", err, pf)
				}
				s.must("apply", plan, "--approve", pf.PlanID)
				s.must("verify", "--table", tbl, "--run", c.name+"-2")
				// Another writer, then a scoped rollback of run 2 alone.
				other := write(t, t.TempDir(), "o.ndjson", `{"`+c.column+`":"`+c.other+`","id":3,"n":9}`+"\n")
				s.must("publish", "--table", tbl, "--partitions", c.otherDeclared, other)
				s.must("rollback", "--scoped", "--table", tbl, "--run", c.name+"-2")
				if h := s.must("-o", "json", "verify", "--table", tbl); !strings.Contains(h, `"ok": true`) {
					t.Errorf("the table after a scoped rollback: %s", h)
				}
				// A row outside the declared partitions is refused.
				if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", c.otherDeclared, rows(1)); code != exitRefused || !strings.Contains(errs, "outside") {
					t.Errorf("rows outside %s: exit %d: %s", c.otherDeclared, code, errs)
				}
			})
		}
	})
}
