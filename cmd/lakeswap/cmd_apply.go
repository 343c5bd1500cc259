package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

type applyOptions struct {
	files   []string // the plan files
	approve []string
	swap.ApplyOptions
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

The plans of a release (lakeswap plan --job A --downstream, one plan file a table) are applied
together, every table's plan given and approved: each table is checked as above, each job's sources
again with the tables of the release read as the release leaves them, and every table is committed
in one catalog commit (docs/releases.md). lakeswap discard removes what each plan file staged.

` + exitCodesHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return runApply(cmd.Context(), g, o)
		},
	}
	cmd.Flags().StringSliceVar(&o.approve, "approve", nil, "each plan's id, or its first 12 characters")
	cmd.Flags().BoolVar(&o.NoAutoRollback, "no-auto-rollback", false, "keep a commit that fails verification instead of rolling it back")
	cmd.Flags().BoolVar(&o.Recheck, "recheck", false, "read the staged files' rows again and compare their fingerprints with the plan's before committing")
	return cmd
}

func runApply(ctx context.Context, g *globals, o applyOptions) error {
	files := make([]*swap.PlanFile, len(o.files))
	var err error
	for i, name := range o.files {
		pf, err := swap.ReadPlan(name)
		if err != nil {
			return err
		}
		if err := pf.Unedited("apply"); err != nil {
			return err
		}
		if err := pf.NotDiscarded("apply"); err != nil {
			return err
		}
		files[i] = pf
	}
	approve := o.approve
	if len(approve) == 0 {
		if !isTerminal(g.stdout) || !isTerminal(os.Stdin) {
			return usagef("apply needs --approve <plan id> for each plan (the id lakeswap plan printed: %s)", strings.Join(swap.ShortIDs(files), ", "))
		}
		if approve, err = askApproval(g.stdout, os.Stdin, files); err != nil {
			return err
		}
	}
	plans, err := swap.Approve(files, approve)
	if err != nil {
		return err
	}
	g.writes = true
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	pub.Progress = &progressLog{log: g.logger()}
	pub.BeforeCommit = commitBarrier(g.getenv)
	if len(plans[0].Release) > 0 {
		return applyRelease(ctx, g, pub, o.ApplyOptions, files, plans)
	}
	res, err := backfill.Apply(ctx, pub, o.ApplyOptions, g.inputStore, plans...)
	if res == nil {
		return err
	}
	view := planView{RunID: res.Plan.RunID, PlanID: files[0].PlanID, Result: res}
	if len(files) > 1 {
		view = planView{RunID: res.Plan.RunID, PlanIDs: planIDs(files), Result: res}
	}
	if errors.Is(err, outcome.ErrConflict) {
		// Nothing was published: the result's figures are the plan's,
		// already shown when it was made, and the way on is the plan's.
		return g.report(view, discardHint(err, g.catalogFlags(), files), func(io.Writer) {})
	}
	return g.report(view, err, func(w io.Writer) { printResult(w, res) })
}

// discardHint says, for an apply that committed nothing and left the
// plan's staged files, how to remove them and go on: the plan files by
// the paths they were given as.
func discardHint(err error, catalogFlags string, files []*swap.PlanFile) error {
	var op *outcome.OpError
	if !errors.As(err, &op) {
		return err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = shellQuote(f.Name)
	}
	op.Hint = fmt.Sprintf("nothing was committed and the other commit is intact; `lakeswap%s discard %s` removes what the plan staged; then plan the run again against the table as it is now",
		catalogFlags, strings.Join(names, " "))
	return err
}

// askApproval shows each plan at the terminal and reads the id a person
// types for it: the id, or at least its first 12 characters, in either
// case. A mistyped id is said and asked again, up to approvalTries; an
// empty line stops. Either way nothing is applied, and the error says so.
func askApproval(w io.Writer, r io.Reader, files []*swap.PlanFile) ([]string, error) {
	in := bufio.NewReader(r)
	var approve []string
	for _, pf := range files {
		printPlan(w, pf.PlanID, pf.Plan, false)
		ok := false
		for try := 1; try <= approvalTries && !ok; try++ {
			fmt.Fprintf(w, "type the id of %s (plan %s: at least its first 12 characters) to apply it, or press Enter to stop: ", pf.Name, short(pf.PlanID))
			line, err := in.ReadString('\n')
			typed := strings.ToLower(strings.TrimSpace(line))
			switch {
			case typed == "" && err != nil:
				fmt.Fprintln(w)
				return nil, notApproved(pf, "the input ended before the id was typed")
			case typed == "":
				fmt.Fprintln(w)
				return nil, notApproved(pf, "no id was typed: apply stopped")
			case len(typed) >= 12 && strings.HasPrefix(pf.PlanID, typed):
				approve, ok = append(approve, typed), true
			case len(typed) < 12:
				fmt.Fprintf(w, "%q is too short: type at least the first 12 characters of the id\n", words.Printable(typed))
			default:
				fmt.Fprintf(w, "%q is not the id of %s (plan %s)\n", words.Printable(typed), pf.Name, short(pf.PlanID))
			}
			if err != nil && !ok {
				return nil, notApproved(pf, "the input ended before the id was typed")
			}
		}
		if !ok {
			return nil, notApproved(pf, fmt.Sprintf("the id was mistyped %d times", approvalTries))
		}
	}
	return approve, nil
}

// notApproved says a plan was not approved at the prompt, and that
// nothing was committed.
func notApproved(pf *swap.PlanFile, why string) error {
	return &outcome.RefusedError{Op: "apply", Table: pf.Plan.Table, Cause: outcome.ErrNotApproved,
		Findings: []verify.Finding{{Kind: verify.KindCheck, Where: pf.Name, Message: why + "; nothing was committed (a script passes --approve ID)"}}}
}

// approvalTries is how many times the prompt asks for a plan's id.
const approvalTries = 3

func planIDs(files []*swap.PlanFile) []string {
	out := make([]string, len(files))
	for i, pf := range files {
		out[i] = pf.PlanID
	}
	return out
}

// shellQuote writes a path as a shell reads it back: as it is when it
// holds nothing a shell treats apart, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./:@%+=,-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
