package swap

import (
	"context"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

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
// and records its verdict, and rollbacks meet the guards that judge a
// change to the table (frozen, release consistency). A guard reports its
// refusals as findings of its kinds; one that cannot judge a run says
// why.
type Guard struct {
	Name  string
	Kinds []verify.Kind
	// Flag lets its findings through where one can; the run records that
	// it did (and why, for the flags that take a reason).
	Flag string
	// applies says whether the guard can judge the run, and why not; nil:
	// it judges every run.
	applies func(plan *Plan, req Request) (ok bool, why, brief string)
	// judge judges a staged run as a whole: across its partitions, or
	// against the rest of the table. nil for the guards judged row by row
	// and partition by partition while the rows are staged (validate).
	judge func(ctx context.Context, j *judging) error
	// first, when set, is judged only on a run no other guard refused
	// yet (it reads every staged row again, which a refused run need
	// not): on one refused, it is not applicable, not judged.
	first bool
}

// judging is what a guard judging a staged run reads: the table, its
// files at the base by partition (all) read through fsys, deletes
// applied, the run, and the verdicts so far.
type judging struct {
	tbl  *table.Table
	fsys icebergio.IO
	all  map[string][]iceberg.DataFile
	plan *Plan
	req  Request
	v    verdicts
	now  time.Time
	g    *Guard // the guard judging
}

// override notes that flag let the judging guard's finding through, with
// the reason the run records where the flag takes one.
func (j *judging) override(flag, reason string) { j.v.override(j.g, flag, reason) }

// The guards, each once.
var (
	GuardSchema     = &Guard{Name: "schema", Kinds: []verify.Kind{verify.KindSchema, verify.KindInput, verify.KindAdopt}}
	GuardOwnership  = &Guard{Name: "ownership", Kinds: []verify.Kind{verify.KindOutside}}
	GuardGrain      = &Guard{Name: "grain", Kinds: []verify.Kind{verify.KindNullGrain, verify.KindDuplicateGrain}, applies: hasGrain}
	GuardRequired   = &Guard{Name: "required", Kinds: []verify.Kind{verify.KindNullRequired}}
	GuardChecks     = &Guard{Name: "column checks", Kinds: []verify.Kind{verify.KindCheck}}
	GuardEmpty      = &Guard{Name: "empty", Kinds: []verify.Kind{verify.KindEmpty}, Flag: "--allow-empty", judge: judgeEmpty}
	GuardMoved      = &Guard{Name: "moved records", Kinds: []verify.Kind{verify.KindMoved}, applies: grainAcross, judge: judgeMoved, first: true}
	GuardBand       = &Guard{Name: "plausible band", Kinds: []verify.Kind{verify.KindImplausible}, Flag: "--allow-implausible", judge: judgeBand}
	GuardReconcile  = &Guard{Name: "reconciliation", Kinds: []verify.Kind{verify.KindReconcile}, Flag: "--allow-mismatch", applies: reconciles, judge: judgeReconcile}
	GuardBuildTwice = &Guard{Name: "build twice", Kinds: []verify.Kind{verify.KindNondeterministic}, applies: buildsTwice, judge: judgeBuildTwice, first: true}
	GuardFrozen     = &Guard{Name: "frozen", Kinds: []verify.Kind{verify.KindFrozen}, Flag: "--restate-frozen", applies: freezes, judge: judgeFrozen}
	GuardLate       = &Guard{Name: "late arrivals", Kinds: []verify.Kind{verify.KindLate}, Flag: "--restate or --leave", applies: tracksArrival, judge: judgeLate}
	GuardRelease    = &Guard{Name: "release consistency", Kinds: []verify.Kind{verify.KindRelease}, applies: inRelease}
)

// Guards is every guard, in the order a plan lists them.
var Guards = []*Guard{GuardSchema, GuardOwnership, GuardGrain, GuardRequired, GuardChecks, GuardEmpty,
	GuardMoved, GuardBand, GuardReconcile, GuardBuildTwice, GuardFrozen, GuardLate, GuardRelease}

// judgeOrder is the order the guards with a judge judge a run in: the
// second build first, so that a run it refuses is not read for moved
// records too.
func judgeOrder() []*Guard {
	out := []*Guard{GuardBuildTwice}
	for _, g := range Guards {
		if g.judge != nil && g != GuardBuildTwice {
			out = append(out, g)
		}
	}
	return out
}

// judgeAll judges the run with every guard that judges a run as a whole.
func judgeAll(ctx context.Context, j *judging) error {
	for _, g := range judgeOrder() {
		if g.first && j.plan.Refused() {
			if ok, _, _ := g.applies(j.plan, j.req); ok {
				j.v.unjudged(g)
			}
			continue
		}
		j.g = g
		if err := g.judge(ctx, j); err != nil {
			return err
		}
	}
	return nil
}

func inRelease(plan *Plan, req Request) (bool, string, string) {
	return req.release != nil || len(plan.Release) > 0, "the run is not a release of several tables", "not a release"
}

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

// refuse adds a finding of a guard the plan's checks list already: the
// verdict is refused from now on.
func (plan *Plan) refuse(g *Guard, f verify.Finding) {
	plan.Findings = append(plan.Findings, f)
	for i, c := range plan.Checks {
		if c.Name == g.Name && c.At == "stage" {
			plan.Checks[i].Result, plan.Checks[i].Findings, plan.Checks[i].Why, plan.Checks[i].Brief = Refused, c.Findings+1, "", ""
		}
	}
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
