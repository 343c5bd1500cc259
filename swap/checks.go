package swap

import (
	"slices"

	"github.com/lakeswap/lakeswap/verify"
)

// Check is one guard's verdict on a run: every run is judged by the same
// list (Guards), at stage time, and the guards that depend on the rest of
// the table judge again at commit time (Plan.Checks). The plan, show and
// the run record list every one.
type Check struct {
	Name string `json:"name"`
	// Result is passed, refused, overridden (By names the flag, Reason
	// what the run recorded of it) or not applicable (Why says why).
	Result   string `json:"result"`
	Findings int    `json:"findings,omitempty"`
	By       string `json:"by,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Why      string `json:"why,omitempty"`
	// Brief is Why in a few words, as the run records it.
	Brief string `json:"brief,omitempty"`
	// At says when it ran: stage, or commit (again, over the snapshots
	// committed since the plan's base).
	At string `json:"at"`
}

// Verdict writes the check's verdict in a few words: "passed",
// "overridden by --allow-implausible", "not applicable (no grain)". A run
// records its checks so (name=verdict), short, since every later metadata
// file of the table may carry them; a reason a flag takes is recorded
// with the decision it is of (lakeswap.restated-frozen,
// lakeswap.late-decision), not again here.
func (c Check) Verdict() string {
	switch {
	case c.Result == Overridden && c.By != "":
		return c.Result + " by " + c.By
	case c.Result == NotApplicable && c.Brief != "":
		return c.Result + " (" + c.Brief + ")"
	}
	return c.Result
}

// The verdicts a guard gives.
const (
	Passed        = "passed"
	Refused       = "refused"
	Overridden    = "overridden"
	NotApplicable = "not applicable"
)

// A Guard is one rule a run is judged by before it commits, declared once
// here: every route (publish, apply, batches, shards, releases, jobs,
// adopt) stages through the one stage, which judges each guard of Guards
// and records its verdict. A guard reports its refusals as findings of
// its kinds; one that cannot judge a run says why.
type Guard struct {
	Name  string
	Kinds []verify.Kind
	// Flag lets its findings through where one can; the run records that
	// it did (and why, for the flags that take a reason).
	Flag string
	// applies says whether the guard can judge the run, and why not; nil:
	// it judges every run.
	applies func(plan *Plan, req Request) (ok bool, why, brief string)
}

// The guards, each once.
var (
	GuardSchema     = &Guard{Name: "schema", Kinds: []verify.Kind{verify.KindSchema, verify.KindInput, verify.KindAdopt}}
	GuardOwnership  = &Guard{Name: "ownership", Kinds: []verify.Kind{verify.KindOutside}}
	GuardGrain      = &Guard{Name: "grain", Kinds: []verify.Kind{verify.KindNullGrain, verify.KindDuplicateGrain}, applies: hasGrain}
	GuardRequired   = &Guard{Name: "required", Kinds: []verify.Kind{verify.KindNullRequired}}
	GuardChecks     = &Guard{Name: "column checks", Kinds: []verify.Kind{verify.KindCheck}}
	GuardEmpty      = &Guard{Name: "empty", Kinds: []verify.Kind{verify.KindEmpty}, Flag: "--allow-empty"}
	GuardMoved      = &Guard{Name: "moved records", Kinds: []verify.Kind{verify.KindMoved}, applies: grainAcross}
	GuardBand       = &Guard{Name: "plausible band", Kinds: []verify.Kind{verify.KindImplausible}, Flag: "--allow-implausible"}
	GuardReconcile  = &Guard{Name: "reconciliation", Kinds: []verify.Kind{verify.KindReconcile}, Flag: "--allow-mismatch", applies: reconciles}
	GuardBuildTwice = &Guard{Name: "build twice", Kinds: []verify.Kind{verify.KindNondeterministic}, applies: buildsTwice}
	GuardFrozen     = &Guard{Name: "frozen", Kinds: []verify.Kind{verify.KindFrozen}, Flag: "--restate-frozen", applies: freezes}
	GuardLate       = &Guard{Name: "late arrivals", Kinds: []verify.Kind{verify.KindLate}, Flag: "--restate or --leave", applies: tracksArrival}
)

// Guards is every guard, in the order a plan lists them.
var Guards = []*Guard{GuardSchema, GuardOwnership, GuardGrain, GuardRequired, GuardChecks, GuardEmpty,
	GuardMoved, GuardBand, GuardReconcile, GuardBuildTwice, GuardFrozen, GuardLate}

func hasGrain(plan *Plan, _ Request) (bool, string, string) {
	return len(plan.contract.Grain) > 0, "the table has no grain (`lakeswap table set grain=COLUMN,...` gives it one)", "no grain"
}

func grainAcross(plan *Plan, _ Request) (bool, string, string) {
	c := plan.contract
	switch {
	case len(c.Grain) == 0:
		return false, "the table has no grain", "no grain"
	case c.Partition.InGrain(c.Grain):
		return false, "the grain holds the partition columns, so a key lives in one partition only", "grain holds the partition"
	}
	return true, "", ""
}

func reconciles(_ *Plan, req Request) (bool, string, string) {
	return req.Expect != nil, "the run names no reconciliation (a job's reconcile:)", "no reconcile"
}

func buildsTwice(_ *Plan, req Request) (bool, string, string) {
	return req.SecondBuild != nil, "the run was built once (--build-twice builds it again and compares)", "built once"
}

func freezes(plan *Plan, _ Request) (bool, string, string) {
	if plan.contract.Freeze == nil {
		return false, "the table sets no lakeswap.freeze-after", "no freeze-after"
	}
	return true, "", ""
}

func tracksArrival(plan *Plan, _ Request) (bool, string, string) {
	if plan.Job == nil || plan.Job.Policy == "" {
		return false, "the run is not a job that tracks its rows' arrival (lag:, lookback:, a table by day)", "no arrival tracked"
	}
	return true, "", ""
}

// verdicts are what the guards of one stage decided beyond their
// findings: which a flag overrode, and which found nothing to judge.
type verdicts map[*Guard]Check

// override notes that flag let a guard's finding through, with the
// reason the run records where the flag takes one.
func (v verdicts) override(g *Guard, flag, reason string) {
	v[g] = Check{Result: Overridden, By: flag, Reason: reason}
}

// unjudged notes that a guard did not judge a run already refused.
func (v verdicts) unjudged(g *Guard) {
	v[g] = Check{Result: NotApplicable, Why: "not judged: the run was refused before it", Brief: "run refused first"}
}

// checksOf lists every guard's verdict on a staged plan: refused where it
// found something, overridden where a flag let that through, not
// applicable where it cannot judge the run (and why), else passed.
func checksOf(plan *Plan, req Request, v verdicts) []Check {
	out := make([]Check, 0, len(Guards))
	for _, g := range Guards {
		c := Check{Name: g.Name, Result: Passed, At: "stage"}
		for _, f := range plan.Findings {
			if slices.Contains(g.Kinds, f.Kind) {
				c.Findings++
			}
		}
		over, overridden := v[g]
		switch {
		case c.Findings > 0:
			c.Result = Refused
		case overridden:
			c.Result, c.By, c.Reason, c.Why, c.Brief = over.Result, over.By, over.Reason, over.Why, over.Brief
		case g.applies != nil:
			if ok, why, brief := g.applies(plan, req); !ok {
				c.Result, c.Why, c.Brief = NotApplicable, why, brief
			}
		}
		out = append(out, c)
	}
	return out
}

// mergeChecks joins the checks of shards of one run: per guard, refused
// where any shard's was, else overridden where any was (by its flag),
// else passed where any judged it, else not applicable.
func mergeChecks(plans []*Plan) []Check {
	rank := map[string]int{Refused: 3, Overridden: 2, Passed: 1, NotApplicable: 0}
	var out []Check
	at := map[string]int{}
	for _, plan := range plans {
		for _, c := range plan.Checks {
			key := c.Name + "\x00" + c.At
			i, ok := at[key]
			if !ok {
				at[key] = len(out)
				out = append(out, c)
				continue
			}
			if rank[c.Result] > rank[out[i].Result] {
				findings := out[i].Findings
				out[i] = c
				out[i].Findings += findings
			} else {
				out[i].Findings += c.Findings
			}
		}
	}
	return out
}
