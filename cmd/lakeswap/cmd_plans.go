package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap/gc"
)

type plansOptions struct {
	table         string
	planRetention time.Duration
}

func newPlansCmd(g *globals) *cobra.Command {
	var o plansOptions
	cmd := &cobra.Command{
		Use:   "plans [--table NS.NAME]",
		Short: "List the plans staged and waiting for approval: neither applied nor discarded",
		Long: `plans lists the plans staged on a table (or on every table of the catalog) that were neither applied
nor discarded: each plan's id, its run, who planned it (--decided-by, or the OS user), its age, its
partitions, what it changes in rows and sums, its audit branch, its file, and when gc stops keeping its
staged files (--plan-retention, as gc's). The list is read from the holds each plan keeps in the table's
storage, so it shows the plans of every machine that planned on the table.`,
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPlans(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (default every table of the catalog)")
	cmd.Flags().DurationVar(&o.planRetention, "plan-retention", 7*24*time.Hour, "how long gc keeps a plan's files, for the expiry shown")
	return cmd
}

// plansResult is plans' -o json.
type plansResult struct {
	Plans []gc.Pending `json:"plans"`
}

func runPlans(ctx context.Context, g *globals, o plansOptions) error {
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	var tables []table.Identifier
	if o.table != "" {
		ident, err := tableFlag(o.table)
		if err != nil {
			return usageError{err}
		}
		tables = append(tables, ident)
	} else if tables, err = allTables(ctx, cat); err != nil {
		return err
	}
	now := testClock(g.getenv)
	if now.IsZero() {
		now = time.Now()
	}
	res := plansResult{Plans: []gc.Pending{}}
	for _, ident := range tables {
		found, err := pub.Pending(ctx, gc.Request{Table: ident, PlanRetention: o.planRetention, Now: now})
		if err != nil {
			return fmt.Errorf("plans of %s: %w", strings.Join(ident, "."), err)
		}
		res.Plans = append(res.Plans, found...)
	}
	return g.emit(res, func(w io.Writer) { printPending(w, res.Plans, now) })
}

// allTables lists every table of the catalog, namespace by namespace.
func allTables(ctx context.Context, cat *catalog.Catalog) ([]table.Identifier, error) {
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list the catalog's namespaces: %w", err)
	}
	var out []table.Identifier
	for _, ns := range nss {
		for ident, err := range cat.ListTables(ctx, ns) {
			if err != nil {
				return nil, fmt.Errorf("list the tables of %s: %w", strings.Join(ns, "."), err)
			}
			out = append(out, ident)
		}
	}
	slices.SortFunc(out, func(a, b table.Identifier) int { return strings.Compare(strings.Join(a, "."), strings.Join(b, ".")) })
	return out, nil
}

func printPending(w io.Writer, plans []gc.Pending, now time.Time) {
	if len(plans) == 0 {
		fmt.Fprintln(w, "no plan is waiting for approval")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tTABLE\tRUN\tPLANNED BY\tAGE\tPARTITIONS\tROWS\tSUMS\tEXPIRES\tBRANCH\tFILE")
	for _, p := range plans {
		var sums []string
		for _, c := range slices.Sorted(maps.Keys(p.Sums)) {
			sums = append(sums, c+" "+change(p.BaseSums[c], p.Sums[c], p.Scales[c]))
		}
		expires := p.Expires.UTC().Format(time.RFC3339)
		if p.Expired {
			expires += " (expired: gc removes it)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", short(p.PlanID), p.Table, words.Printable(p.RunID), orDash(words.Printable(p.PlannedBy)),
			age(now.Sub(p.Created)), displayKeys(p.Partitions), rowsChange(p.BaseRows, p.Rows), orDash(strings.Join(sums, ", ")), expires, orDash(p.Branch), orDash(p.File))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%s waiting; `lakeswap show PLAN_FILE` shows one, `lakeswap apply PLAN_FILE --approve ID` applies it, `lakeswap discard PLAN_FILE` drops it\n", words.Count(len(plans), "plan"))
}

// rowsChange shows rows before and after.
func rowsChange(before, after int64) string {
	if before == after {
		return words.Number(after)
	}
	d := words.Number(after - before)
	if after > before {
		d = "+" + d
	}
	return fmt.Sprintf("%s -> %s (%s)", words.Number(before), words.Number(after), d)
}

// age shows a duration as a person reads an age: 3m, 5h, 2d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
