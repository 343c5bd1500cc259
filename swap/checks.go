package swap

import (
	"slices"

	"github.com/lakeswap/lakeswap/verify"
)

// Check is one guard of a run, by name, and what it found: every run
// passes the same list, at stage time, and the checks that depend on the
// rest of the table pass again at commit time (Plan.Checks).
type Check struct {
	Name     string `json:"name"`
	Result   string `json:"result"` // passed, refused, allowed (by a flag), not run
	Findings int    `json:"findings,omitempty"`
	// At says when it ran: stage, or commit (again, over the snapshots
	// committed since the plan's base).
	At string `json:"at"`
}

// guards names each guard and the finding kinds it reports.
var guards = []struct {
	name  string
	kinds []verify.Kind
}{
	{"schema", []verify.Kind{verify.KindSchema, verify.KindInput, verify.KindAdopt}},
	{"ownership", []verify.Kind{verify.KindOutside}},
	{"grain", []verify.Kind{verify.KindNullGrain, verify.KindDuplicateGrain}},
	{"required", []verify.Kind{verify.KindNullRequired}},
	{"column checks", []verify.Kind{verify.KindCheck}},
	{"empty", []verify.Kind{verify.KindEmpty}},
	{"moved records", []verify.Kind{verify.KindMoved}},
	{"plausible band", []verify.Kind{verify.KindImplausible}},
	{"reconciliation", []verify.Kind{verify.KindReconcile}},
	{"build twice", []verify.Kind{verify.KindNondeterministic}},
	{"frozen", []verify.Kind{verify.KindFrozen}},      // listed only for a table that freezes
	{"late arrivals", []verify.Kind{verify.KindLate}}, // listed only for a job that tracks arrival
}

// checksOf lists a staged plan's guards: ran says which of the guards that
// do not always run did (moved records, plausible band, reconciliation,
// build twice), allowed which found something a flag let through.
func checksOf(plan *Plan, ran, allowed map[string]bool) []Check {
	var out []Check
	for _, g := range guards {
		if (g.name == "frozen" || g.name == "late arrivals") && !ran[g.name] {
			continue
		}
		c := Check{Name: g.name, Result: "passed", At: "stage"}
		for _, f := range plan.Findings {
			if slices.Contains(g.kinds, f.Kind) {
				c.Findings++
			}
		}
		switch {
		case c.Findings > 0:
			c.Result = "refused"
		case allowed[g.name]:
			c.Result = "allowed"
		case !ran[g.name] && !always[g.name]:
			c.Result = "not run"
		}
		out = append(out, c)
	}
	return out
}

// always are the guards every stage runs on every row.
// The grain's runs where the table has one.
var always = map[string]bool{"schema": true, "ownership": true, "required": true, "column checks": true, "empty": true}
