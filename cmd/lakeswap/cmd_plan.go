package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
)

// planOptions are plan's flags: publish's, and where the plan goes.
type planOptions struct {
	publishOptions
	out      string // the plan file; default plan-<run id>.json
	noBranch bool   // stage without an audit branch
}

func newPlanCmd(g *globals) *cobra.Command {
	var o planOptions
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
			return runPlan(cmd.Context(), g, o)
		},
	}
	addStagingFlags(cmd, &o.publishOptions)
	cmd.Flags().BoolVar(&o.noBranch, "no-branch", false, "do not commit the staged snapshot to an audit branch of the table (lakeswap-plan-<run id>-<attempt>); the plan is then read only through lakeswap")
	cmd.Flags().StringVar(&o.out, "out", "", "file to write the plan to (default plan-<run id>.json); for a release, the existing folder its plan files go in (default the current one)")
	return cmd
}

func runPlan(ctx context.Context, g *globals, o planOptions) error {
	o.runIDGiven = o.runID != ""
	if o.runID == "" {
		o.runID = swap.NewRunID() // to name the plan file before staging
	} else if err := swap.CheckRunID(o.runID); err != nil {
		return usageError{err}
	}
	if o.release() {
		// One plan file a table, in the folder --out names.
		if o.out != "" {
			if st, err := os.Stat(o.out); err != nil {
				return requestError{fmt.Errorf("--out %s: no such folder; a release writes one plan file a table, plan-<run id>-<table>.json, into the folder --out names, which must exist", o.out)}
			} else if !st.IsDir() {
				return requestError{fmt.Errorf("--out %s is a file; a release writes one plan file a table, plan-<run id>-<table>.json, into the folder --out names", o.out)}
			}
		}
		o.planDir = o.out
		return runRelease(ctx, g, o.publishOptions, true)
	}
	if o.out == "" {
		o.out = "plan-" + swap.RunSegment(o.runID) + ".json"
	}
	// A plan file is the list of what its run staged, for apply and
	// discard: never overwritten (shards of one run id need one each).
	if _, err := os.Lstat(o.out); err == nil {
		return usagef("%s exists; a plan file is never overwritten: name another with --out, or remove it (discard its plan first if it was never applied)", o.out)
	}
	o.planFile, o.auditBranch = o.out, !o.noBranch
	var written *swap.PlanFile
	finish := func(pub *swap.Publisher) backfill.Finish {
		return func(ctx context.Context, req swap.Request) (*swap.Result, error) {
			plan, err := pub.Stage(ctx, req)
			if err != nil {
				return nil, err
			}
			if plan.Refused() {
				return &swap.Result{Plan: plan, Status: swap.StatusRefused}, &outcome.RefusedError{Op: "plan", Table: plan.Table, Findings: plan.Findings, Dropped: plan.DroppedFindings, Cleanup: plan.Cleanup}
			}
			// Stage held the plan's attempt in the table's storage, so
			// that gc keeps its files while it waits for approval.
			if written, err = swap.WritePlan(o.out, plan); err != nil {
				said, derr := pub.Discard(ctx, plan)
				if derr != nil {
					said = fmt.Sprintf("its staged files are left under the plan's prefixes, run %s: %v", plan.RunID, derr)
				}
				return nil, fmt.Errorf("write the plan: %w; %s", err, said)
			}
			return &swap.Result{Plan: plan, Status: swap.StatusPlanned}, nil
		}
	}
	return runStaging(ctx, g, o.publishOptions, finish, func(res *swap.Result) any {
		if written == nil {
			return planView{RunID: res.Plan.RunID, PlanID: swap.PlanID(res.Plan), Result: res}
		}
		return planView{RunID: res.Plan.RunID, PlanID: written.PlanID, File: written.Name, Result: res}
	}, func(w io.Writer, res *swap.Result) {
		if written == nil {
			return // refused: the findings are on stderr, and no plan was written
		}
		printPlan(w, written.PlanID, res.Plan, false)
		fmt.Fprintf(w, "plan written to %s; apply it with: lakeswap%s apply %s --approve %s\n", written.Name, g.catalogFlags(), written.Name, short(written.PlanID))
	})
}
