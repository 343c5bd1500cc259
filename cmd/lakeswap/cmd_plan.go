package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// planFile is what plan writes and apply reads: the plan and its id, the
// SHA-256 of the plan's JSON, so that a plan edited after approval is
// another plan.
type planFile struct {
	PlanID string     `json:"plan_id"`
	Plan   *swap.Plan `json:"plan"`
}

func planID(p *swap.Plan) string {
	raw, _ := json.Marshal(p)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

func newPlanCmd(g *globals) *cobra.Command {
	var o publishOptions
	var out string
	cmd := &cobra.Command{
		Use:   "plan --table NS.NAME --partitions COL=FROM..TO (INPUT... | --job JOB) [--out FILE]",
		Short: "Stage, validate and fingerprint a run, and write the plan a person approves; commit nothing",
		Long: `plan does what publish does up to the commit: it stages the inputs' rows (or names the files
to adopt), validates and fingerprints them against the table as it is now, and writes the plan to a
file (default plan-<run id>.json) with its id, the SHA-256 of the plan. It prints what the plan would
change, partition by partition. lakeswap apply commits exactly that plan once its id is approved; until
then the staged files sit under the plan's own prefixes, where no reader sees them.

` + exitCodesHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !cmd.Flags().Changed("job") {
				return usagef("plan needs at least one input: a file, a glob or a folder (or --job)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files, o.changes = args, true
			return runPlan(cmd.Context(), g, o, out)
		},
	}
	addStagingFlags(cmd, &o)
	cmd.Flags().StringVar(&out, "out", "", "file to write the plan to (default plan-<run id>.json)")
	return cmd
}

func runPlan(ctx context.Context, g *globals, o publishOptions, out string) error {
	var written string
	if o.runID == "" {
		o.runID = swap.NewRunID() // to name the plan file before staging
	} else if err := swap.CheckRunID(o.runID); err != nil {
		return usageError{err}
	}
	if out == "" {
		out = "plan-" + o.runID + ".json"
	}
	// A plan file is the list of what its run staged, for apply and
	// discard: never overwritten (shards of one run id need one each).
	if _, err := os.Lstat(out); err == nil {
		return usagef("%s exists; a plan file is never overwritten: name another with --out, or remove it (discard its plan first if it was never applied)", out)
	}
	stage := func(ctx context.Context, pub *swap.Publisher, req swap.Request, files []string, j *job.Job, in source.Options) (*swap.Result, error) {
		finish := func(ctx context.Context, req swap.Request) (*swap.Result, error) {
			plan, err := pub.Stage(ctx, req)
			if err != nil {
				return nil, err
			}
			if plan.Refused() {
				return &swap.Result{Plan: plan, Status: "refused"}, &swap.RefusedError{Op: "plan", Table: plan.Table, Findings: plan.Findings, Dropped: plan.DroppedFindings, Cleanup: plan.Cleanup}
			}
			// Stage held the plan's attempt in the table's storage, so
			// that gc keeps its files while it waits for approval.
			if err := writePlan(out, plan); err != nil {
				said, derr := pub.Discard(ctx, plan)
				if derr != nil {
					said = fmt.Sprintf("its staged files are left under the plan's prefixes, run %s: %v", plan.RunID, derr)
				}
				return nil, fmt.Errorf("write the plan: %w; %s", err, said)
			}
			written = out
			return &swap.Result{Plan: plan, Status: "planned"}, nil
		}
		switch {
		case j != nil:
			return stageJob(ctx, pub, req, o.partitions, j, o.rejects, in, finish)
		case o.adopt:
			return stageAdopted(ctx, pub, req, o.partitions, files, finish)
		}
		return stageFiles(ctx, pub, req, o.partitions, files, in, o.buildTwice, writerBytes(g.props), finish)
	}
	return runStaging(ctx, g, o, stage, func(res *swap.Result) any {
		return planView{PlanID: planID(res.Plan), File: written, Result: res}
	}, func(w io.Writer, res *swap.Result) {
		if written == "" {
			return // refused: the findings are on stderr, and no plan was written
		}
		printPlan(w, planID(res.Plan), res.Plan, false)
		fmt.Fprintf(w, "plan written to %s; apply it with: lakeswap%s apply %s --approve %s\n", written, g.catalogFlags(), written, short(planID(res.Plan)))
	})
}

// writePlan writes a plan file, only where none exists.
func writePlan(file string, plan *swap.Plan) error {
	raw, err := json.MarshalIndent(planFile{PlanID: planID(plan), Plan: plan}, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(raw, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// planView is a plan as -o json prints it: with its id.
type planView struct {
	PlanID  string   `json:"plan_id,omitempty"`
	PlanIDs []string `json:"plan_ids,omitempty"` // of partial plans applied together
	File    string   `json:"plan_file,omitempty"`
	*swap.Result
}

// printPlan shows what a plan changes, the way a person checks it before
// approving: every partition that changes, largest relative change first
// (rows and sums before and after, what changed at the grain with a few
// keys), then the unchanged ones, elided when many unless whole, and what
// the run allowed.
func printPlan(w io.Writer, id string, p *swap.Plan, whole bool) {
	base := "an empty table"
	if p.BaseSnapshotID != nil {
		base = fmt.Sprintf("snapshot %d", *p.BaseSnapshotID)
	}
	fmt.Fprintf(w, "plan %s: run %s on %s, against %s\n", short(id), p.RunID, p.Table, base)
	var sums []string
	for c := range p.Fingerprint.Sums {
		sums = append(sums, c)
	}
	sort.Strings(sums)
	grain := false
	for _, pp := range p.Partitions {
		grain = grain || pp.Changes != nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "PARTITION\tROWS"
	for _, c := range sums {
		head += "\t" + strings.ToUpper(c)
	}
	if grain {
		head += "\tGRAIN (+added -removed ~changed)"
	}
	fmt.Fprintln(tw, head+"\tCONTENT")
	type entry struct {
		line, keys string
		rel        float64
	}
	var changedRows, sameRows []entry
	var keys []string
	for _, pp := range p.Partitions {
		same := pp.OldFingerprint.Hash == pp.Fingerprint.Hash
		line := verify.DisplayKey(pp.Key) + "\t" + change(pp.OldFingerprint.Rows, pp.Fingerprint.Rows)
		rel := relative(pp.OldFingerprint.Rows, pp.Fingerprint.Rows)
		for _, c := range sums {
			line += "\t" + change(pp.OldFingerprint.Sums[c], pp.Fingerprint.Sums[c])
			rel = max(rel, relative(pp.OldFingerprint.Sums[c], pp.Fingerprint.Sums[c]))
		}
		if grain {
			line += "\t" + grainChange(pp.Changes)
		}
		if same {
			sameRows = append(sameRows, entry{line: line + "\tunchanged (files kept)"})
			continue
		}
		e := entry{line: line + "\t" + short(pp.OldFingerprint.Hash) + " -> " + short(pp.Fingerprint.Hash), rel: rel}
		if k := exampleKeys(pp.Changes); k != "" {
			e.keys = "  " + verify.DisplayKey(pp.Key) + ": " + k
		}
		changedRows = append(changedRows, e)
	}
	changed := len(changedRows)
	// Largest relative change first; partition order among equals.
	sort.SliceStable(changedRows, func(i, j int) bool { return changedRows[i].rel > changedRows[j].rel })
	var rows []string
	for _, e := range changedRows {
		rows = append(rows, e.line)
		if e.keys != "" {
			keys = append(keys, e.keys)
		}
	}
	cells := strings.Repeat("\t", strings.Count(head, "\t"))
	if whole || len(sameRows) <= 5 {
		for _, e := range sameRows {
			rows = append(rows, e.line)
		}
	} else {
		rows = append(rows, fmt.Sprintf("... %d unchanged partitions (lakeswap show lists them) ...", len(sameRows))+cells)
	}
	if len(p.Partitions) > 12 {
		line := fmt.Sprintf("total of %d\t%s", len(p.Partitions), change(p.BaseFingerprint.Rows, p.Fingerprint.Rows))
		for _, c := range sums {
			line += "\t" + change(p.BaseFingerprint.Sums[c], p.Fingerprint.Sums[c])
		}
		if grain {
			line += "\t"
		}
		rows = append(rows, line+"\t"+fmt.Sprintf("%d changed", changed))
	}
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	_ = tw.Flush()
	if len(keys) > 0 {
		fmt.Fprintln(w, "keys changed at the grain (a few of each):")
		if !whole {
			keys = byEnds(keys, 12, 5)
		}
		for _, k := range keys {
			fmt.Fprintln(w, k)
		}
	}
	for _, warning := range p.Warnings {
		fmt.Fprintln(w, "warning: "+warning)
	}
	printChecks(w, p.Checks)
	if changed == 0 {
		fmt.Fprintf(w, "no changes: every partition of %s already holds the planned content\n", p.Table)
		return
	}
	printJob(w, p)
	fmt.Fprintf(w, "this will replace %d partitions of %s", changed, p.Table)
	if n := len(p.Partitions) - changed; n > 0 {
		fmt.Fprintf(w, " (%d declared partition(s) hold the planned content already and keep their files)", n)
	}
	batches := p.Batches()
	if len(batches) > 0 {
		fmt.Fprintf(w, ", in %d batches of %d partitions, one snapshot each", len(batches), p.Batch)
		if len(p.Together) > 0 {
			fmt.Fprintf(w, " (partitions that exchange records commit in one batch)")
		}
	}
	fmt.Fprintln(w)
	// Every batch that holds a group is shown whole; the others are the
	// next partitions in order.
	keyOf := map[string]string{}
	for _, pp := range p.Partitions {
		keyOf[pp.Value] = pp.Key
	}
	grouped := map[string]bool{}
	for _, g := range p.Together {
		for _, v := range g {
			grouped[keyOf[v]] = true
		}
	}
	for i, b := range batches {
		keys := make([]string, len(b))
		joined := false
		for j, k := range b {
			keys[j] = verify.DisplayKey(k)
			joined = joined || grouped[k]
		}
		if joined {
			fmt.Fprintf(w, "  batch %d/%d: %s (they exchange records)\n", i+1, len(batches), strings.Join(keys, ", "))
		}
	}
}

// byEnds shows a long list by its ends: its first and last n lines when it
// has more than most.
func byEnds(lines []string, most, n int) []string {
	if len(lines) <= most {
		return lines
	}
	more := fmt.Sprintf("... %d more ...", len(lines)-2*n)
	// Kept in a table's columns: as many cells as the lines around it.
	more += strings.Repeat("\t", strings.Count(lines[0], "\t"))
	return append(append(lines[:n:n], more), lines[len(lines)-n:]...)
}

// printChecks says which of the run's guards passed, which a flag let
// through and which did not run.
func printChecks(w io.Writer, checks []swap.Check) {
	by := map[string][]string{}
	var order []string
	for _, c := range checks {
		name := c.Name
		if c.At == "commit" {
			name += " (again at commit)"
		}
		if by[c.Result] == nil {
			order = append(order, c.Result)
		}
		by[c.Result] = append(by[c.Result], name)
	}
	var parts []string
	for _, r := range order {
		parts = append(parts, r+": "+strings.Join(by[r], ", "))
	}
	if len(parts) > 0 {
		fmt.Fprintln(w, "checks "+strings.Join(parts, "; "))
	}
}

// relative is how far a figure moved, relative to what it was: 1 is a
// doubling or a halving's loss of half, growth from zero counts as 1 per
// unit, so that the partition that moved most shows first.
func relative(before, after int64) float64 {
	d := math.Abs(float64(after) - float64(before))
	return d / max(math.Abs(float64(before)), 1)
}

// grainChange is a partition's change at the grain in a few characters.
func grainChange(ch *verify.Changes) string {
	switch {
	case ch == nil:
		return "-"
	case ch.Skipped != "":
		return "not compared"
	}
	return fmt.Sprintf("+%d -%d ~%d", ch.Added, ch.Removed, ch.Changed)
}

// exampleKeys names a few keys of each change.
func exampleKeys(ch *verify.Changes) string {
	if ch == nil {
		return ""
	}
	if ch.Skipped != "" {
		return ch.Skipped
	}
	var parts []string
	for _, k := range []struct {
		what string
		n    int64
		keys []string
	}{{"added", ch.Added, ch.AddedKeys}, {"removed", ch.Removed, ch.RemovedKeys}, {"changed", ch.Changed, ch.ChangedKeys}} {
		if len(k.keys) == 0 {
			continue
		}
		part := k.what + " " + strings.Join(k.keys, "; ")
		if more := k.n - int64(len(k.keys)); more > 0 {
			part += fmt.Sprintf(" (and %d more)", more)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " | ")
}

// change writes before -> after (difference).
func change(before, after int64) string {
	if before == after {
		return fmt.Sprint(after)
	}
	return fmt.Sprintf("%d -> %d (%+d)", before, after, after-before)
}

func newApplyCmd(g *globals) *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use:   "apply PLAN... --approve PLAN_ID...",
		Short: "Commit exactly the plans a person approved, if everything they relied on still holds",
		Long: `apply commits the plan in a file written by lakeswap plan. It needs the plan's id: --approve with
the id or its first 12 characters, or, at a terminal, typed in after the plan is shown. It refuses a plan
file whose content no longer has its id (edited by hand), and rechecks what the plan relied on: main at
the plan's base snapshot, the table's contract, each staged file where the plan put it with the size and
SHA-256 it was written with (--recheck also reads their rows again and compares fingerprints). Then it
commits, reads the commit back and compares, as publish does.

Several plans are the partial plans of one backfill, planned on disjoint partitions by several machines
with one --run-id against one base snapshot: apply checks that, needs each plan's id approved (repeat
--approve, or separate the ids by commas), and commits them all as one snapshot.

` + exitCodesHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApply(cmd.Context(), g, args, o)
		},
	}
	cmd.Flags().StringSliceVar(&o.approve, "approve", nil, "each plan's id, or its first 12 characters")
	cmd.Flags().BoolVar(&o.NoAutoRollback, "no-auto-rollback", false, "keep a commit that fails verification instead of rolling it back")
	cmd.Flags().BoolVar(&o.Recheck, "recheck", false, "read the staged files' rows again and compare their fingerprints with the plan's before committing")
	return cmd
}

type applyOptions struct {
	approve []string
	swap.ApplyOptions
}

// errNotApproved is a plan without a matching approval.
var errNotApproved = errors.New("not approved")

func runApply(ctx context.Context, g *globals, files []string, o applyOptions) error {
	plans := make([]*swap.Plan, len(files))
	ids := make([]string, len(files))
	for i, file := range files {
		pf, err := readPlanFile(file)
		if err != nil {
			return err
		}
		if err := unedited("apply", file, pf); err != nil {
			return err
		}
		ids[i], plans[i] = pf.PlanID, pf.Plan
	}
	approve := o.approve
	if len(approve) == 0 {
		if !isTerminal(g.stdout) || !isTerminal(os.Stdin) {
			return usagef("apply needs --approve <plan id> for each plan (the id lakeswap plan printed: %s)", strings.Join(shortIDs(ids), ", "))
		}
		in := bufio.NewReader(os.Stdin)
		for i, plan := range plans {
			printPlan(g.stdout, ids[i], plan, false)
			fmt.Fprintf(g.stdout, "type the id of %s (or its first 12 characters) to apply it: ", files[i])
			line, _ := in.ReadString('\n')
			approve = append(approve, strings.TrimSpace(line))
		}
	}
	if err := approved(files, ids, approve); err != nil {
		return &swap.RefusedError{Op: "apply", Table: plans[0].Table, Findings: []verify.Finding{{Kind: verify.KindCheck, Message: err.Error()}}}
	}
	g.writes = true
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	pub.Progress = progressLog{g}
	pub.BeforeCommit = commitBarrier(g.getenv)
	for _, plan := range plans {
		if err := sameSources(ctx, g, pub, plan); err != nil {
			return err
		}
	}
	res, err := pub.Apply(ctx, o.ApplyOptions, plans...)
	if res == nil {
		return err
	}
	view := planView{PlanID: ids[0], Result: res}
	if len(ids) > 1 {
		view = planView{PlanIDs: ids, Result: res}
	}
	return g.report(view, err, func(w io.Writer) { printResult(w, res) })
}

// approved checks that every plan's id is approved, by itself or by its
// first 12 characters or more, and that every approval names a plan.
func approved(files, ids, approve []string) error {
	used := make([]bool, len(approve))
	for i, id := range ids {
		ok := false
		for j, a := range approve {
			if len(a) >= 12 && strings.HasPrefix(id, a) {
				ok, used[j] = true, true
			}
		}
		if !ok {
			return fmt.Errorf("%s (plan %s) is %v: no --approve given matches its id", files[i], short(id), errNotApproved)
		}
	}
	for j, a := range approve {
		if !used[j] {
			return fmt.Errorf("approval %q is not the id of any plan given (%s): %v", a, strings.Join(shortIDs(ids), ", "), errNotApproved)
		}
	}
	return nil
}

func shortIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = short(id)
	}
	return out
}

func newShowCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "show PLAN",
		Short: "Print a plan whole: every partition, every key example, every warning",
		Long: `show prints a plan lakeswap plan wrote, whole: every partition it declares, in order of how much it
changes, none elided (with -o json, the plan file itself: its id and the plan). It opens no catalog.
A plan edited since it was written is shown, and said to be edited: apply refuses it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pf, err := readPlanFile(args[0])
			if err != nil {
				return err
			}
			edited := unedited("show", args[0], pf)
			return g.emit(pf, func(w io.Writer) {
				printPlan(w, pf.PlanID, pf.Plan, true)
				if edited != nil {
					fmt.Fprintf(w, "warning: %s was edited after it was planned (its content does not have id %s): apply refuses it\n", args[0], short(pf.PlanID))
				}
			})
		},
	}
}

func newDiscardCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "discard PLAN",
		Short: "Remove the files a plan staged that will not be applied",
		Long: `discard removes exactly the files a plan lists as staged, one by one, never a prefix. It refuses
a plan that was applied (a snapshot references its files) and never removes files a plan adopts.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pf, err := readPlanFile(args[0])
			if err != nil {
				return err
			}
			if err := unedited("discard", args[0], pf); err != nil {
				return err
			}
			g.writes = true
			ctx, cat, pub, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer cat.Close()
			said, err := pub.Discard(ctx, pf.Plan)
			if err != nil {
				return err
			}
			fmt.Fprintln(g.stdout, said)
			return nil
		},
	}
}

// unedited refuses a plan whose content no longer has the id it was
// written with: one edited by hand is another plan, which nobody approved
// and whose files lakeswap did not stage.
func unedited(op, file string, pf *planFile) error {
	if planID(pf.Plan) == pf.PlanID {
		return nil
	}
	return &swap.RefusedError{Op: op, Table: pf.Plan.Table, Findings: []verify.Finding{{Kind: verify.KindCheck, Where: file,
		Message: "the plan's content does not have the id it was written with: it was edited after it was planned; plan again"}}}
}

// readPlanFile reads a plan lakeswap plan wrote.
func readPlanFile(file string) (*planFile, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, usagef("read the plan: %v", err)
	}
	var pf planFile
	if err := json.Unmarshal(raw, &pf); err != nil {
		return nil, usagef("%s is not a plan lakeswap wrote: %v", file, err)
	}
	if pf.Plan == nil {
		return nil, usagef("%s is not a plan lakeswap wrote: it holds no plan", file)
	}
	return &pf, nil
}
