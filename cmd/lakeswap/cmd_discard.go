package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/swap"
)

type discardOptions struct {
	file string // the plan file
}

func newDiscardCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "discard PLAN",
		Short: "Remove the files a plan staged that will not be applied",
		Long: `discard removes exactly the files a plan lists as staged, one by one, never a prefix. It refuses
a plan that was applied (a snapshot references its files) and never removes files a plan adopts.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiscard(cmd.Context(), g, discardOptions{file: args[0]})
		},
	}
}

func runDiscard(ctx context.Context, g *globals, o discardOptions) error {
	pf, err := swap.ReadPlan(o.file)
	if err != nil {
		return err
	}
	if err := pf.Unedited("discard"); err != nil {
		return err
	}
	g.writes = true
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	said, err := pub.Discard(ctx, pf.Plan)
	if err != nil {
		return err
	}
	// apply then says the plan was discarded, rather than find its files
	// gone.
	if pf.DiscardedAt != nil {
		said += fmt.Sprintf("; %s was discarded already, at %s", o.file, pf.DiscardedAt.Format(time.RFC3339))
	} else {
		if err := swap.MarkDiscarded(o.file, time.Now()); err != nil {
			said += fmt.Sprintf("; could not mark %s as discarded (%v): apply would find its files gone", o.file, err)
		} else {
			said += "; " + o.file + " is marked discarded"
		}
	}
	out := discardResult{RunID: pf.Plan.RunID, PlanID: pf.PlanID, Table: pf.Plan.Table, Status: "discarded", Message: said}
	return g.emit(out, func(w io.Writer) { fmt.Fprintln(w, said) })
}

// discardResult is discard's -o json.
type discardResult struct {
	RunID   string `json:"run_id"`
	PlanID  string `json:"plan_id"`
	Table   string `json:"table"`
	Status  string `json:"status"`
	Message string `json:"message"`
}
