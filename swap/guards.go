package swap

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/rows"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/rollback"
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
	applies func(plan *run, req Request) (ok bool, why, brief string)
	// judge judges a staged run as a whole: across its partitions, or
	// against the rest of the table, and returns its verdict, which
	// judgeAll writes into the plan. nil for the guards judged row by row
	// and partition by partition while the rows are staged (validate).
	judge func(ctx context.Context, j *judging) (Verdict, error)
	// rollback judges a rollback, for the guards that judge a change to
	// the table rather than rows staged: rollbacks, full, scoped or of a
	// release, meet those of the list.
	rollback *rollback.Guard
	// first, when set, is judged only on a run no other guard refused
	// yet (it reads every staged row again, which a refused run need
	// not): on one refused, it is not applicable, not judged.
	first bool
}

// judging is what a guard judging a staged run reads: the table, its
// files at the base by partition (all) read through fsys, deletes
// applied, the run as the guards before it left it, and the time.
type judging struct {
	// load reads another table of the catalog (a relationship check's).
	load func(context.Context, table.Identifier) (*table.Table, error)
	tbl  *table.Table
	fsys icebergio.IO
	all  map[string][]iceberg.DataFile
	plan *run
	req  Request
	now  time.Time
}

// A Verdict is what one guard decided of a staged run, beyond the guards
// judged as rows are staged: what it refuses the run for, what a person
// should read, and what let its findings through. A guard returns it;
// judgeAll alone writes it into the plan.
type Verdict struct {
	Findings []verify.Finding
	Warnings []string
	// By names what let the guard's findings through (a flag, or a job's
	// late policy), and Reason the reason the run records where it takes
	// one; By empty: nothing did.
	By, Reason string
	// Left are the values of the partitions the run decided to keep as
	// published (late rows left out): it rewrites their files with the
	// rows they hold, so that the decision is a snapshot of its own.
	Left []string
	// frozen are the values of the partitions the table froze, and
	// restated the restatement of those the run changes.
	frozen   []string
	restated *Restatement
}

// set is values as a set.
func set(values []string) map[string]bool {
	out := make(map[string]bool, len(values))
	for _, v := range values {
		out[v] = true
	}
	return out
}

// allow lets a finding through by flag, as a warning.
func (v *Verdict) allow(flag, reason, warning string) {
	v.By, v.Reason = flag, reason
	v.Warnings = append(v.Warnings, warning)
}

// write writes guard g's verdict into the plan, noting in v that a flag
// overrode it.
func (plan *run) write(g *Guard, verdict Verdict, v verdicts) {
	plan.Findings = append(plan.Findings, verdict.Findings...)
	plan.Warnings = append(plan.Warnings, verdict.Warnings...)
	if verdict.By != "" {
		v.override(g, verdict.By, verdict.Reason)
	}
	if verdict.restated != nil {
		plan.Restated = verdict.restated
	}
	if len(verdict.Left)+len(verdict.frozen) == 0 {
		return
	}
	left, frozen := set(verdict.Left), set(verdict.frozen)
	for i := range plan.Partitions {
		pp := &plan.Partitions[i]
		pp.Decided = pp.Decided || left[pp.Value]
		pp.Frozen = pp.Frozen || frozen[pp.Value]
	}
}

// The guards, each once.
var (
	GuardSchema     = &Guard{Name: "schema", Kinds: []verify.Kind{verify.KindSchema, verify.KindInput, verify.KindAdopt}}
	GuardOwnership  = &Guard{Name: "ownership", Kinds: []verify.Kind{verify.KindOutside}}
	GuardGrain      = &Guard{Name: "grain", Kinds: []verify.Kind{verify.KindNullGrain, verify.KindDuplicateGrain}, applies: hasGrain}
	GuardRequired   = &Guard{Name: "required", Kinds: []verify.Kind{verify.KindNullRequired}}
	GuardChecks     = &Guard{Name: "column checks", Kinds: []verify.Kind{verify.KindCheck}, judge: judgeTableChecks}
	GuardEmpty      = &Guard{Name: "empty", Kinds: []verify.Kind{verify.KindEmpty}, Flag: "--allow-empty", judge: judgeEmpty}
	GuardMoved      = &Guard{Name: "moved records", Kinds: []verify.Kind{verify.KindMoved}, applies: grainAcross, judge: judgeMoved, first: true}
	GuardBand       = &Guard{Name: "plausible band", Kinds: []verify.Kind{verify.KindImplausible}, Flag: "--allow-implausible", judge: judgeBand}
	GuardReconcile  = &Guard{Name: "reconciliation", Kinds: []verify.Kind{verify.KindReconcile}, Flag: "--allow-mismatch", applies: reconciles, judge: judgeReconcile}
	GuardBuildTwice = &Guard{Name: "build twice", Kinds: []verify.Kind{verify.KindNondeterministic}, applies: buildsTwice, judge: judgeBuildTwice, first: true}
	GuardFrozen     = &Guard{Name: "frozen", Kinds: []verify.Kind{verify.KindFrozen}, Flag: "--restate-frozen", applies: freezes, judge: judgeFrozen, rollback: &rollback.Frozen}
	GuardLate       = &Guard{Name: "late arrivals", Kinds: []verify.Kind{verify.KindLate}, Flag: "--restate or --leave", applies: tracksArrival, judge: judgeLate}
	GuardRelease    = &Guard{Name: "release consistency", Kinds: []verify.Kind{verify.KindRelease}, applies: inRelease, rollback: &rollback.ReleaseShares}
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

// rollbackGuards are the guards of Guards that judge a rollback.
func rollbackGuards() []rollback.Guard {
	var out []rollback.Guard
	for _, g := range Guards {
		if g.rollback != nil {
			out = append(out, *g.rollback)
		}
	}
	return out
}

// judgeAll judges the run with every guard that judges a run as a whole,
// writing each verdict into the plan before the next guard judges, and
// noting in v which a flag overrode and which did not judge.
func judgeAll(ctx context.Context, j *judging, v verdicts) error {
	for _, g := range judgeOrder() {
		if g.first && j.plan.Refused() {
			if ok, _, _ := g.applies(j.plan, j.req); ok {
				v.unjudged(g)
			}
			continue
		}
		verdict, err := g.judge(ctx, j)
		if err != nil {
			return err
		}
		j.plan.write(g, verdict, v)
	}
	return nil
}

func inRelease(plan *run, req Request) (bool, string, string) {
	return req.release != nil || len(plan.Release) > 0, "the run is not a release of several tables", "not a release"
}

func hasGrain(plan *run, _ Request) (bool, string, string) {
	return len(plan.contract.Grain) > 0, "the table has no grain (`lakeswap table set grain=COLUMN,...` gives it one)", "no grain"
}

func grainAcross(plan *run, _ Request) (bool, string, string) {
	c := plan.contract
	switch {
	case len(c.Grain) == 0:
		return false, "the table has no grain", "no grain"
	case c.Partition.InGrain(c.Grain):
		return false, "the grain holds the partition columns, so a key lives in one partition only", "grain holds the partition"
	}
	return true, "", ""
}

func reconciles(_ *run, req Request) (bool, string, string) {
	return req.Expect != nil, "the run names no reconciliation (a job's reconcile:)", "no reconcile"
}

func buildsTwice(_ *run, req Request) (bool, string, string) {
	return req.SecondBuild != nil, "the run was built once (--build-twice builds it again and compares)", "built once"
}

func freezes(plan *run, _ Request) (bool, string, string) {
	if plan.contract.Freeze == nil {
		return false, "the table sets no lakeswap.freeze-after", "no freeze-after"
	}
	return true, "", ""
}

func tracksArrival(plan *run, _ Request) (bool, string, string) {
	if plan.job == nil || !plan.job.Tracks() {
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
func checksOf(plan *run, req Request, v verdicts) []Check {
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
func mergeChecks(plans []*run) []Check {
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

// guard judges the run with the guards that look across its partitions
// and at the rest of the table (all: the base's files by partition),
// noting in v which a flag overrode and which did not judge a run already
// refused; then cuts a run committed in batches, and compares keys for a
// person to read where asked.
func (p *Publisher) guard(ctx context.Context, tbl *table.Table, plan *run, req Request, all map[string][]iceberg.DataFile, v verdicts) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	fsys = plan.reading(fsys)
	if err := judgeAll(ctx, &judging{load: p.Catalog.LoadTable, tbl: tbl, fsys: fsys, all: all, plan: plan, req: req, now: time.Now()}, v); err != nil {
		return err
	}
	c := plan.contract
	if !plan.Refused() && plan.Batch > 0 && len(plan.Partitions) > plan.Batch {
		if plan.Together, err = exchanges(ctx, fsys, c, plan); err != nil {
			return err
		}
		plan.Together = append(plan.Together, plan.sharing()...)
		if err := plan.withLanded(tbl.Metadata(), runrecord.NewLoader(fsys)); err != nil {
			return err
		}
	}
	if !plan.Refused() && req.Changes {
		return grainChanges(ctx, fsys, c, plan, &req)
	}
	return nil
}

// judgeBuildTwice compares the staged rows with a second build's.
func judgeBuildTwice(ctx context.Context, j *judging) (Verdict, error) {
	if j.req.SecondBuild == nil {
		return Verdict{}, nil
	}
	found, err := buildsAgree(ctx, j.plan, j.plan.contract, j.req.SecondBuild)
	return Verdict{Findings: found}, err
}

// judgeMoved looks for staged keys the table holds in another partition.
func judgeMoved(ctx context.Context, j *judging) (Verdict, error) {
	found, skipped, err := moved(ctx, j.fsys, j.plan.contract, j.plan, j.all, j.req.KeysMaxRows)
	v := Verdict{Findings: found}
	if skipped != "" {
		v.Warnings = []string{skipped}
	}
	return v, err
}

func judgeReconcile(_ context.Context, j *judging) (Verdict, error) {
	var v Verdict
	found, within := reconcile(j.plan, j.plan.contract, j.req.Expect, j.req.Tolerance)
	for _, f := range within {
		v.Warnings = append(v.Warnings, "within the reconcile tolerance: "+f.String())
	}
	for _, f := range found {
		if j.req.AllowMismatch {
			v.allow("--allow-mismatch", "", "allowed (--allow-mismatch): "+f.String())
			continue
		}
		v.Findings = append(v.Findings, f)
	}
	if n := len(v.Findings); n > 0 && j.req.ReconcileQuery != "" {
		v.Findings[n-1].Message += "\n    the source's figures are the job's reconcile: query, for the run's partitions: " + strings.Join(strings.Fields(j.req.ReconcileQuery), " ")
	}
	return v, nil
}

func judgeBand(_ context.Context, j *judging) (Verdict, error) {
	band := j.plan.contract.Band
	if j.req.Band != nil {
		band = *j.req.Band
	}
	var v Verdict
	for _, f := range implausible(j.plan, j.plan.contract, band) {
		if j.req.AllowImplausible {
			v.allow("--allow-implausible", "", "allowed (--allow-implausible): "+f.String())
			continue
		}
		f.Message += implausibleAdvice
		v.Findings = append(v.Findings, f)
	}
	return v, nil
}

// judgeEmpty notes the partitions the request allowed to go empty: the
// guard's refusals are found as each partition is staged.
func judgeEmpty(_ context.Context, j *judging) (Verdict, error) {
	var v Verdict
	for _, pp := range j.plan.Partitions {
		if j.req.AllowEmpty && pp.Fingerprint.Rows == 0 && pp.OldFingerprint.Rows > 0 {
			v.allow("--allow-empty", "", fmt.Sprintf("allowed (--allow-empty): partition %s goes from %s to none", verify.DisplayKey(pp.Key), words.Count(pp.OldFingerprint.Rows, "row")))
		}
	}
	return v, nil
}

func judgeFrozen(_ context.Context, j *judging) (Verdict, error) {
	return frozen(j.plan, j.req, j.now), nil
}

// stillFrozen refuses, when a plan is applied, a change to a partition
// frozen since it was staged (or before a restatement it does not name):
// the freeze is judged at the commit too.
func stillFrozen(c *contract.Contract, plan *run, now time.Time) []verify.Finding {
	var out []verify.Finding
	for _, pp := range plan.Partitions {
		at, ok := c.FrozenAt(pp.Value)
		if !ok || now.Before(at) || !pp.ChangesContent() || plan.Restated != nil && slices.Contains(plan.Restated.Partitions, pp.Key) {
			continue
		}
		out = append(out, verify.Finding{Kind: verify.KindFrozen, Partition: pp.Key,
			Message: fmt.Sprintf("partition %s is frozen since %s (%s %s), after the plan was staged: plan it again with --restate-frozen --reason TEXT",
				verify.DisplayKey(pp.Key), frozenTime(at), contract.PropFreezeAfter, c.Freeze.Text)})
	}
	return out
}

// frozen refuses a change to a partition the table's lakeswap.freeze-after
// has frozen, unless the request restates it with a reason, which the
// run records; every frozen partition is marked in the plan.
func frozen(plan *run, req Request, now time.Time) Verdict {
	var v Verdict
	c := plan.contract
	if c.Freeze == nil {
		return v
	}
	for _, pp := range plan.Partitions {
		at, ok := c.FrozenAt(pp.Value)
		if !ok || now.Before(at) {
			continue
		}
		v.frozen = append(v.frozen, pp.Value)
		if !pp.ChangesContent() {
			continue // it holds what it held (its files may move): nothing is restated
		}
		key := verify.DisplayKey(pp.Key)
		if req.RestateFrozen != "" {
			v.allow("--restate-frozen", req.RestateFrozen, fmt.Sprintf("allowed (--restate-frozen): partition %s, frozen since %s (%s %s), is restated by %s: %s",
				key, frozenTime(at), contract.PropFreezeAfter, c.Freeze.Text, req.DecidedBy, req.RestateFrozen))
			if v.restated == nil {
				v.restated = &Restatement{Reason: req.RestateFrozen, DecidedBy: req.DecidedBy}
			}
			v.restated.Partitions = append(v.restated.Partitions, pp.Key)
			continue
		}
		v.Findings = append(v.Findings, verify.Finding{Kind: verify.KindFrozen, Partition: pp.Key,
			Message: fmt.Sprintf("partition %s is frozen since %s (%s %s): the run would change numbers already reported; restating it needs --restate-frozen --reason TEXT, which the run records",
				key, frozenTime(at), contract.PropFreezeAfter, c.Freeze.Text)})
	}
	return v
}

// frozenTime writes when a partition froze: its day, or its hour where
// the grace is counted in hours.
func frozenTime(at time.Time) string {
	if at.Hour() == 0 && at.Minute() == 0 {
		return at.Format(time.DateOnly)
	}
	return at.Format("2006-01-02 15:04Z07:00")
}

// buildsAgree fingerprints every partition's rows from a second build of
// the input and names each partition whose rows differ from the staged.
func buildsAgree(ctx context.Context, plan *run, c *contract.Contract, second rows.Source) ([]verify.Finding, error) {
	var out []verify.Finding
	for _, pp := range plan.Partitions {
		if pp.Carried { // its rows are the table's, not the input's
			continue
		}
		rr, err := second.Open(ctx, pp.Value)
		if err != nil {
			return nil, fmt.Errorf("second build of partition %s: %w", pp.Key, err)
		}
		acc := verify.NewAccumulator(c, pp.Value, nil)
		for rr.Next() {
			rec, ok := acc.Conform(rr.RecordBatch())
			if !ok {
				break
			}
			err := acc.Add(rec)
			rec.Release()
			if err != nil {
				rr.Release()
				return nil, err
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil {
			return nil, fmt.Errorf("second build of partition %s: %w", pp.Key, err)
		}
		if got := acc.Result(); got.Hash != pp.Fingerprint.Hash {
			out = append(out, verify.Finding{Kind: verify.KindNondeterministic, Partition: pp.Key,
				Message: fmt.Sprintf("a second build of the same input gives %s fingerprinting %s, the first %s fingerprinting %s: the input or its transform is not deterministic",
					words.Count(got.Rows, "row"), verify.Short(got.Hash), words.Count(pp.Fingerprint.Rows, "row"), verify.Short(pp.Fingerprint.Hash))})
		}
	}
	return out, nil
}

// implausible finds partitions whose new rows or additive sums lie outside
// the band of what they held: a source that lost most of a day, doubled
// it, flipped a sum's sign or filled a sum that was zero is an incident to
// look at before it replaces what people read. A partition judged is one
// that held rows (a new partition has nothing to be plausible against)
// and holds rows now (an empty one is the empty-partition finding's), with
// at least minPlausibleRows on one side.
func implausible(plan *run, c *contract.Contract, band contract.Band) []verify.Finding {
	var out []verify.Finding
	for _, pp := range plan.Partitions {
		before, after := pp.OldFingerprint.Rows, pp.Fingerprint.Rows
		if after == 0 || before == 0 || max(before, after) < minPlausibleRows {
			continue
		}
		check := func(what string, before, after exact.Sum, scale int) {
			ratio, ok := band.Holds(before, after)
			if ok {
				return
			}
			how := fmt.Sprintf("%.2fx", ratio)
			switch {
			case before.Sign() == 0:
				how = "from zero"
			case after.Sign() == 0:
				how = "0x"
			case ratio < 0:
				how = fmt.Sprintf("%.2fx, its sign flipped", ratio)
			}
			out = append(out, verify.Finding{Kind: verify.KindImplausible, Partition: pp.Key, Column: what,
				Message: fmt.Sprintf("%s %s -> %s (%s), outside the plausible band %s of what the partition holds",
					orRows(what), words.Grouped(before.Scaled(scale)), words.Grouped(after.Scaled(scale)), how, band)})
		}
		check("", exact.Of(before), exact.Of(after), 0)
		scales := c.Summary().Scales
		for _, i := range c.Additive {
			col := c.Fields[i].Name
			check(col, pp.OldFingerprint.Sums[col], pp.Fingerprint.Sums[col], scales[col])
		}
	}
	return out
}

// reconcile compares each staged partition with what the source says it
// must hold: its rows and each additive sum.
func reconcile(plan *run, c *contract.Contract, expect map[string]Figures, tolerance map[string]Tolerance) (out, within []verify.Finding) {
	if expect == nil {
		return nil, nil
	}
	scales := c.Summary().Scales
	for _, pp := range plan.Partitions {
		if pp.Carried { // the source says nothing of it
			continue
		}
		want := expect[pp.Value]
		if got := pp.Fingerprint.Rows; got != want.Rows {
			f := verify.Finding{Kind: verify.KindReconcile, Partition: pp.Key,
				Message: fmt.Sprintf("the source says %s rows, the run staged %s", words.Number(want.Rows), words.Number(got))}
			if t, ok := tolerance["rows"]; ok && t.Allows(exact.Of(want.Rows), exact.Of(got), 0) {
				f.Message += " (tolerance " + t.Text + ")"
				within = append(within, f)
			} else {
				out = append(out, f)
			}
		}
		for _, i := range c.Additive {
			col := c.Fields[i].Name
			if w, ok := want.Sums[col]; ok && !w.Equal(pp.Fingerprint.Sums[col]) {
				f := verify.Finding{Kind: verify.KindReconcile, Partition: pp.Key, Column: col,
					Message: fmt.Sprintf("the source says a sum of %s, the run staged %s", words.Grouped(w.Scaled(scales[col])), words.Grouped(pp.Fingerprint.Sums[col].Scaled(scales[col])))}
				if t, ok := tolerance[col]; ok && t.Allows(w, pp.Fingerprint.Sums[col], scales[col]) {
					f.Message += " (tolerance " + t.Text + ")"
					within = append(within, f)
				} else {
					out = append(out, f)
				}
			}
		}
	}
	return out, within
}

func orRows(column string) string {
	if column == "" {
		return "rows"
	}
	return "sum of " + column
}
