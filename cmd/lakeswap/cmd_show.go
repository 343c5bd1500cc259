package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/swap"
)

type showOptions struct {
	file string // the plan file
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
			return runShow(cmd.Context(), g, showOptions{file: args[0]})
		},
	}
}

func runShow(_ context.Context, g *globals, o showOptions) error {
	pf, err := swap.ReadPlan(o.file)
	if err != nil {
		return err
	}
	edited := pf.Unedited("show")
	return g.emit(pf, func(w io.Writer) {
		printPlan(w, pf.PlanID, pf.Plan, true)
		if pf.DiscardedAt != nil {
			fmt.Fprintf(w, "discarded at %s: its staged files were removed, and apply refuses it\n", pf.DiscardedAt.Format(time.RFC3339))
		}
		if edited != nil {
			fmt.Fprintf(w, "warning: %s was edited after it was planned (its content does not have id %s): apply refuses it\n", o.file, short(pf.PlanID))
		}
	})
}
