package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/swap"

	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

type historyOptions struct {
	table string
}

func newHistoryCmd(g *globals) *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history --table NS.NAME",
		Short: "List main's snapshots with the runs that made them",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runHistory(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	return cmd
}

func runHistory(ctx context.Context, g *globals, o historyOptions) error {
	ident, err := swap.ParseTable(o.table)
	if err != nil {
		return usageError{err}
	}
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	main, off, err := pub.History(ctx, ident)
	if err != nil {
		return err
	}
	out := historyResult{Table: strings.Join(ident, "."), Main: main, Off: off}
	return g.emit(out, func(w io.Writer) {
		printHistory(w, main)
		if len(off) > 0 {
			fmt.Fprintln(w, "\nnot on main (rolled back or replaced):")
			printHistory(w, off)
		}
	})
}

func printHistory(w io.Writer, entries []runrecord.Entry) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SNAPSHOT\tTIME\tOPERATION\tRUN\tPARTITIONS\tROWS\tSUMS\tFINGERPRINT")
	for _, e := range entries {
		mark := ""
		if e.Current {
			mark = "*"
		}
		fmt.Fprintf(tw, "%d%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.SnapshotID, mark, e.Time.Format("2006-01-02 15:04:05"),
			e.Operation, orDash(e.RunID), orDash(displayKeys(e.Partitions)), e.Rows, formatSums(e.Sums, nil), short(e.Fingerprint))
	}
	_ = tw.Flush()
	for _, e := range entries {
		if e.Problem != "" {
			fmt.Fprintf(w, "warning: snapshot %d: %s\n", e.SnapshotID, e.Problem)
		}
	}
}

// historyResult is history's -o json: main's snapshots, newest first, and
// the runs no longer on it.
type historyResult struct {
	Table string            `json:"table"`
	Main  []runrecord.Entry `json:"main"`
	Off   []runrecord.Entry `json:"off_main"`
}

// formatSums lists sums by column; scales, where known, are the decimal
// columns' scales, which their unscaled sums are shown at.
func formatSums(sums map[string]int64, scales map[string]int) string {
	if len(sums) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + scaled(sums[k], scales[k])
	}
	return strings.Join(parts, " ")
}

// displayKeys lists partition keys on one line.
// displayKeys lists a run's partitions on one line; a long run by its
// ends and its count.
func displayKeys(keys []string) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = verify.DisplayKey(k)
	}
	if len(out) > 6 {
		return fmt.Sprintf("%s,...,%s (%d partitions)", strings.Join(out[:2], ","), strings.Join(out[len(out)-2:], ","), len(out))
	}
	return strings.Join(out, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return orDash(h)
}

// scaled shows an unscaled decimal sum at its scale, exactly: 1234 at
// scale 2 is 12.34, -5 is -0.05; at scale 0 an integer as it is.
func scaled(v int64, scale int) string {
	s := strconv.FormatInt(v, 10)
	if scale <= 0 {
		return s
	}
	sign := ""
	if v < 0 {
		sign, s = "-", s[1:]
	}
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	return sign + s[:len(s)-scale] + "." + s[len(s)-scale:]
}
