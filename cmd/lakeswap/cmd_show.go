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

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/verify"
)

type showOptions struct {
	file  string // the plan file
	table string
	run   string
	keys  int
}

func newShowCmd(g *globals) *cobra.Command {
	var o showOptions
	cmd := &cobra.Command{
		Use:   "show (PLAN | --table NS.NAME --run RUN_ID)",
		Short: "Print a plan whole, or a committed run partition by partition, before and after",
		Long: `show PLAN prints a plan lakeswap plan wrote, whole: every partition it declares, in order of how much
it changes, none elided (with -o json, the plan file itself: its id and the plan). It opens no catalog.
A plan edited since it was written is shown, and said to be edited: apply refuses it.

show --table T --run ID reads a committed run back from the table: for each partition it replaced, the
rows and every additive sum before and after with the difference, the fingerprints, and the data files
it removed and added; then the run's source, its job's version, and a job's rejected and reconciled
rows. It reads those partitions' files in the snapshot the run replaced and in the one it committed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && o.run == "" && o.table == "":
				o.file = args[0]
				return runShow(cmd.Context(), g, o)
			case len(args) == 0 && o.run != "" && o.table != "":
				return runShowRun(cmd.Context(), g, o)
			}
			return usagef("show a plan file (show PLAN) or a run (show --table NS.NAME --run RUN_ID)")
		},
	}
	cmd.Flags().StringVar(&o.table, "table", "", "the run's table, NAMESPACE.NAME")
	cmd.Flags().StringVar(&o.run, "run", "", "the run to show")
	cmd.Flags().IntVar(&o.keys, "keys", 0, "with --run: how many grain keys of each kind of change each partition names with their values (default 3)")
	return cmd
}

func runShowRun(ctx context.Context, g *globals, o showOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return usageError{err}
	}
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	v, err := history.Reader{Catalog: pub.Catalog, Keys: o.keys}.ShowRun(ctx, ident, o.run)
	if err != nil {
		return err
	}
	return g.emit(v, func(w io.Writer) { printRun(w, v) })
}

// describeUndone says, first of all, that a run was rolled back since:
// its figures are what it committed, which main no longer holds.
func describeUndone(v *history.RunView) string {
	u := v.RolledBack
	switch {
	case u == nil:
		return ""
	case u.Scoped:
		return fmt.Sprintf("ROLLED BACK: run %s was undone at %s by snapshot %d, a scoped rollback that put its partitions back; main no longer holds what it committed",
			v.RunID, u.Time.UTC().Format("2006-01-02 15:04:05Z"), u.To)
	}
	return fmt.Sprintf("ROLLED BACK: run %s was rolled back at %s: main was set back to snapshot %d; main no longer holds what it committed",
		v.RunID, u.Time.UTC().Format("2006-01-02 15:04:05Z"), u.To)
}

// printRun prints a run partition by partition: rows and each sum before
// -> after (difference), the fingerprints, the files removed and added.
func printRun(w io.Writer, v *history.RunView) {
	if u := describeUndone(v); u != "" {
		fmt.Fprintln(w, u)
	}
	fmt.Fprintf(w, "run %s on %s, committed %s as snapshot %s\n", v.RunID, v.Table, v.Time.UTC().Format("2006-01-02 15:04:05Z"), joinIDs(v.Snapshots))
	printBeforeAfter(w, v.Partitions, v.Scales)
	fmt.Fprintf(w, "rows %s, sums %s, fingerprint %s\n", words.Number(v.Rows), formatSums(v.Sums, v.Scales), v.Fingerprint)
	fmt.Fprintln(w, describeRecordedChecks(v.Checks))
	if v.Source != "" {
		fmt.Fprintf(w, "source %s\n", v.Source)
	}
	if v.JobVersion != "" {
		fmt.Fprintf(w, "job version %s\n", v.JobVersion)
	}
	for _, reason := range slices.Sorted(maps.Keys(v.Rejected)) {
		fmt.Fprintf(w, "rejected %s: %s\n", words.Count(v.Rejected[reason], "source row"), reason)
	}
	printReconciled(w, v)
	if r := v.Restated; r != nil {
		fmt.Fprintf(w, "restated frozen partitions %s, decided by %s: %s\n", displayKeys(r.Partitions), words.Printable(r.DecidedBy), words.Printable(r.Reason))
	}
	if d := v.LateDecision; d != nil {
		fmt.Fprintln(w, describeLate(*d, d.Partitions))
	}
	if v.Watermark != "" {
		fmt.Fprintf(w, "watermark %s: the source rows that arrived by then are in the table or decided\n", v.Watermark)
	}
	printFiles(w, v.Partitions)
}

// printBeforeAfter prints partitions before and after: rows and each sum
// before -> after (difference), the fingerprints, the files removed and
// added.
func printBeforeAfter(w io.Writer, parts []history.PartitionView, scales map[string]int) {
	sums := map[string]bool{}
	for _, p := range parts {
		for k := range p.Before.Sums {
			sums[k] = true
		}
		for k := range p.After.Sums {
			sums[k] = true
		}
	}
	cols := slices.Sorted(maps.Keys(sums))
	header := []string{"PARTITION", "ROWS"}
	for _, c := range cols {
		header = append(header, strings.ToUpper(c))
	}
	grain := slices.ContainsFunc(parts, func(p history.PartitionView) bool { return p.Changes != nil })
	if grain {
		header = append(header, "GRAIN (+added -removed ~changed)")
	}
	header = append(header, "CONTENT", "FILES")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, p := range parts {
		row := []string{verify.DisplayKey(p.Partition), rowsChange(p.Before.Rows, p.After.Rows)}
		for _, c := range cols {
			row = append(row, change(p.Before.Sums[c], p.After.Sums[c], scales[c]))
		}
		if grain {
			row = append(row, grainChange(p.Changes))
		}
		row = append(row, short(p.Before.Hash)+" -> "+short(p.After.Hash), fmt.Sprintf("-%d +%d", len(p.Removed), len(p.Added)))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	if grain {
		fmt.Fprintln(w, "keys changed at the grain (a few of each):")
		for _, p := range parts {
			if k := exampleKeys(p.Changes); k != "" {
				fmt.Fprintf(w, "  %s: %s\n", verify.DisplayKey(p.Partition), k)
				for _, v := range valueLines(p.Changes) {
					fmt.Fprintf(w, "    %s\n", v)
				}
			}
		}
	}
}

// printFiles lists each partition's files removed and added.
func printFiles(w io.Writer, parts []history.PartitionView) {
	for _, p := range parts {
		for _, f := range p.Removed {
			fmt.Fprintf(w, "  %s removed %s\n", verify.DisplayKey(p.Partition), f)
		}
		for _, f := range p.Added {
			fmt.Fprintf(w, "  %s added   %s\n", verify.DisplayKey(p.Partition), f)
		}
	}
}

func joinIDs(ids []int64) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprint(id)
	}
	return strings.Join(out, ", ")
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

// describeRecordedChecks groups a run's recorded checks by verdict:
// checks passed: schema, grain; not applicable: ...: build twice.
func describeRecordedChecks(checks []string) string {
	if len(checks) == 0 {
		return "checks: none recorded (a scoped rollback's, or a run of a lakeswap before runs recorded them)"
	}
	by := map[string][]string{}
	var order []string
	for _, c := range checks {
		name, verdict, _ := strings.Cut(c, "=")
		if by[verdict] == nil {
			order = append(order, verdict)
		}
		by[verdict] = append(by[verdict], name)
	}
	parts := make([]string, len(order))
	for i, v := range order {
		parts[i] = v + ": " + strings.Join(by[v], ", ")
	}
	return "checks " + strings.Join(parts, "; ")
}

// reconciledRow is a partition's figures, as the job's reconciliation
// gave them and as the run committed them: rows, then sums.
type reconciledRow struct {
	Key                                      string
	SourceRows, RunRows, SourceSums, RunSums string
	Differs                                  bool
}

// reconciledRows compares, for a job's run, each partition's figures as
// its reconciliation gave them with those the run committed.
func reconciledRows(v *history.RunView) []reconciledRow {
	var out []reconciledRow
	for _, p := range v.Partitions {
		src, ok := v.Reconciled[p.Partition]
		if !ok {
			continue
		}
		sums := map[string]exact.Sum{}
		for k, s := range src {
			if k != "rows" {
				sums[k] = s
			}
		}
		run := map[string]exact.Sum{}
		for k := range sums {
			run[k] = p.After.Sums[k]
		}
		rows, _ := src["rows"].Int64()
		r := reconciledRow{Key: verify.DisplayKey(p.Partition), SourceRows: words.Number(rows), RunRows: words.Number(p.After.Rows),
			SourceSums: formatSums(sums, v.Scales), RunSums: formatSums(run, v.Scales), Differs: rows != p.After.Rows}
		for k := range sums {
			r.Differs = r.Differs || !sums[k].Equal(run[k])
		}
		out = append(out, r)
	}
	return out
}

// printReconciled prints a job's run's reconciliation per partition.
func printReconciled(w io.Writer, v *history.RunView) {
	rows := reconciledRows(v)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "reconciled with the sources:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  PARTITION\tSOURCE ROWS\tRUN ROWS\tSOURCE SUMS\tRUN SUMS\t")
	for _, r := range rows {
		mark := ""
		if r.Differs {
			mark = "differs"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", r.Key, r.SourceRows, r.RunRows, r.SourceSums, r.RunSums, mark)
	}
	_ = tw.Flush()
}
