package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap/gc"
)

type gcOptions struct {
	table         string
	grace         time.Duration
	planRetention time.Duration
	yes           bool
}

func newGCCmd(g *globals) *cobra.Command {
	var o gcOptions
	cmd := &cobra.Command{
		Use:   "gc --table NS.NAME [--yes]",
		Short: "Remove what attempts that never committed left: staged files, incomplete uploads, expired plans and tags",
		Long: `gc lists, and with --yes removes, what runs that never committed left behind in a table's storage:
  - files an attempt staged (found by lakeswap's staging layout, <column>=<value>/run-<run id>-<attempt>/,
    never by prefix alone) that no snapshot of the table references;
  - incomplete multipart uploads of such files;
  - holds past their time: a publish holds its attempt while it runs (refreshed every 10 minutes,
    so gc tells a live publish from a killed one), and a plan holds its files until it is applied or
    discarded, or for --plan-retention;
  - lakeswap's tags (lakeswap-before-<run id>, lakeswap-run-<run id>) past their retention.
An attempt that is held, or that wrote anything within --grace, is left whole. Without --yes, gc
removes nothing and prints what it would remove.`,
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGC(cmd.Context(), g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	f.DurationVar(&o.grace, "grace", 24*time.Hour, "leave attempts that wrote anything, or refreshed their hold, within this (at least 1h)")
	f.DurationVar(&o.planRetention, "plan-retention", 7*24*time.Hour, "a plan held for approval keeps its files this long")
	f.BoolVar(&o.yes, "yes", false, "remove what is listed (without it, gc is a dry run)")
	return cmd
}

func runGC(ctx context.Context, g *globals, o gcOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return usageError{err}
	}
	if o.grace < time.Hour {
		return usagef("--grace %s: want at least an hour: a running publish refreshes its hold every 10 minutes, and gc must see it", o.grace)
	}
	g.writes = o.yes
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	res, err := pub.GC(ctx, gc.Request{Table: ident, Grace: o.grace, PlanRetention: o.planRetention, Yes: o.yes, Now: testClock(g.getenv)})
	if res == nil {
		return err
	}
	return g.report(res, err, func(w io.Writer) {
		if len(res.Items) > 0 {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KIND\tRUN\tSIZE\tSINCE\tLOCATION")
			for _, it := range res.Items {
				loc := it.Location
				if it.Note != "" {
					loc += " (" + it.Note + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.Kind, it.RunID, words.Number(it.Bytes), it.Time.UTC().Format(time.RFC3339), loc)
			}
			_ = tw.Flush()
		}
		verb := "would remove"
		if res.Removed {
			verb = "removed"
		}
		fmt.Fprintf(w, "%s %s, %s; kept %s of held attempts (a running publish, a plan) and %s of attempts active within the grace period\n", verb, words.Count(len(res.Items), "item"), words.Count(res.Bytes, "byte"), words.Count(res.Kept, "staged file"), words.Number(res.Young))
		if !res.Removed && len(res.Items) > 0 {
			fmt.Fprintln(w, "dry run: nothing was removed; pass --yes to remove these")
		}
	})
}
