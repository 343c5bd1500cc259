package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/testenv"
)

// TestRESTCommitAnswers: each answer a REST catalog gives a publish's
// commit, from the server itself, and what lakeswap makes of it (publish,
// plan then apply). 504 after the server applied the commit: the run is
// found landed and verified (exit 0). 503 before applying it: it did not
// land (exit 1), main is unchanged. 409 after applying it (a retried
// request): found landed, nothing it wrote removed (exit 0). 409 on every
// attempt: a conflict (exit
// 4) that leaves the table's metadata and files exactly as they were
// (a plan's staged files stay the plan's, for discard).
func TestRESTCommitAnswers(t *testing.T) {
	const rebaseAttempts = 10 // swap tries a commit this often on a main that moved
	s := newSite(t, "rest+minio")
	s.createDaily()
	in := batch2Input(t)
	conflict := slices.Repeat([]testenv.CommitFault{{Status: http.StatusConflict}}, rebaseAttempts)
	cases := []struct {
		name   string
		faults []testenv.CommitFault
		code   int
		landed bool
		says   string
	}{
		{"504-after-applying", []testenv.CommitFault{{Status: http.StatusGatewayTimeout, Applied: true}}, exitOK, true, ""},
		{"503-before-applying", []testenv.CommitFault{{Status: http.StatusServiceUnavailable}}, exitError, false, "did not land"},
		{"409", conflict, exitConflict, false, "main moved since the plan's base snapshot"},
		// A gateway's retry of a commit the server applied meets the
		// version it moved: refused, though the first landed.
		{"409-after-applying", []testenv.CommitFault{{Status: http.StatusConflict, Applied: true}}, exitOK, true, ""},
	}
	for _, route := range []string{"publish", "apply"} {
		for _, c := range cases {
			t.Run(route+"/"+c.name, func(t *testing.T) {
				run := route + "-" + c.name
				meta, before := s.mainState("daily_orders"), s.data()
				args := []string{"--run-id", run, "--table", "retail.daily_orders", "--partitions", twoDays, in}
				if route == "apply" {
					plan := filepath.Join(t.TempDir(), "plan.json")
					var planned struct {
						PlanID string `json:"plan_id"`
					}
					if err := json.Unmarshal([]byte(s.must(append([]string{"-o", "json", "plan", "--out", plan}, args...)...)), &planned); err != nil {
						t.Fatal(err)
					}
					args = []string{"apply", plan, "--approve", planned.PlanID}
					before = s.data() // what the plan staged stays its own, for discard
				} else {
					args = append([]string{"publish"}, args...)
				}
				s.rest.FailCommits(c.faults...)
				code, out, errs := s.cli(args...)
				if code != c.code || !strings.Contains(errs, c.says) {
					t.Fatalf("%s answered %s: exit %d, want %d saying %q: %s%s", route, c.name, code, c.code, c.says, out, errs)
				}
				if got := s.rest.Injected(); len(got) == 0 {
					t.Fatal("the server injected no fault")
				}
				if moved := s.mainState("daily_orders") != meta; moved != c.landed {
					t.Fatalf("metadata moved: %v, want %v", moved, c.landed)
				}
				if c.code == exitConflict {
					if after := s.data(); !slices.Equal(after, before) {
						t.Errorf("a conflict left files behind:\nbefore %v\nafter  %v", before, after)
					}
				}
				if c.landed {
					if code, _, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", run); code != 0 {
						t.Errorf("verify: exit %d: %s", code, errs)
					}
					s.must("rollback", "--table", "retail.daily_orders", "--run", run)
				}
			})
		}
	}
}
