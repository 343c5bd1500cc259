package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/verify"

	"github.com/lakeswap/lakeswap/runrecord"
)

type historyOptions struct {
	table      string
	limit      int
	since      string
	partitions []string
	run        string
}

func newHistoryCmd(g *globals) *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history --table NS.NAME [--limit N] [--since TIME] [--partition KEY] [--run RUN_ID]",
		Short: "List main's snapshots with the runs that made them, and the rollbacks",
		Long: `history lists main's snapshots, newest first, each with the run that made it (its partitions, as
ranges where they follow one another, its rows and sums, its fingerprint) and the rows of the whole
table after it; the times main was set back to an older snapshot (a rollback, which commits no
snapshot of its own) among them; then the snapshots main no longer reaches.`,
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runHistory(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	cmd.Flags().IntVar(&o.limit, "limit", 0, "show at most this many of main's snapshots, and of those off main (0: all)")
	cmd.Flags().StringVar(&o.since, "since", "", "only what happened since this time: 2026-01-31, 2026-01-31T12:00:00Z, or a duration before now (36h, 7d)")
	cmd.Flags().StringSliceVar(&o.partitions, "partition", nil, "only runs that replaced this partition, as history names it (order_date=2026-01-31); repeat for several")
	cmd.Flags().StringVar(&o.run, "run", "", "only this run's snapshots and the rollbacks of them")
	return cmd
}

func runHistory(ctx context.Context, g *globals, o historyOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return usageError{err}
	}
	if o.limit < 0 {
		return usagef("--limit %d: give a count of snapshots, or 0 for all", o.limit)
	}
	for _, p := range o.partitions {
		if !strings.Contains(p, "=") {
			return usagef("--partition %q: name it as history does, COLUMN=VALUE (order_date=2026-01-31)", p)
		}
	}
	var since time.Time
	if o.since != "" {
		if since, err = parseSince(o.since, time.Now()); err != nil {
			return usageError{err}
		}
	}
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	main, off, err := history.Of(pub.Catalog).History(ctx, ident)
	if err != nil {
		return err
	}
	rollbacks, err := history.Of(pub.Catalog).Rollbacks(ctx, ident)
	if err != nil {
		return err
	}
	c, err := pub.Contract(ctx, ident)
	if err != nil {
		return err
	}
	keep := historyFilter(o, since)
	// Off main newest first, as main is.
	off = slices.Clone(off)
	slices.SortStableFunc(off, func(a, b runrecord.Entry) int { return b.Time.Compare(a.Time) })
	out := historyResult{Table: strings.Join(ident, "."), Scales: c.Summary().Scales,
		Main: limit(filter(main, keep), o.limit), Off: limit(filter(off, keep), o.limit), Rollbacks: []history.Rollback{}}
	// Rollbacks among main's snapshots shown: none older than the oldest
	// of them when --limit cut main short.
	var oldest time.Time
	if o.limit > 0 && len(out.Main) == o.limit {
		oldest = out.Main[len(out.Main)-1].Time
	}
	for i := len(rollbacks) - 1; i >= 0; i-- { // newest first
		r := rollbacks[i]
		if len(o.partitions) > 0 || (o.run != "" && !slices.Contains(r.Runs, o.run)) || r.Time.Before(since) || r.Time.Before(oldest) {
			continue
		}
		out.Rollbacks = append(out.Rollbacks, r)
	}
	return g.emit(out, func(w io.Writer) {
		width := terminalWidth(g.stdout)
		if len(out.Main)+len(out.Off)+len(out.Rollbacks) == 0 && (o.run != "" || len(o.partitions) > 0 || o.since != "") {
			fmt.Fprintln(w, "no snapshot of "+out.Table+" matches "+describeFilter(o))
			return
		}
		printHistory(w, out.Main, out.Rollbacks, out.Scales, width)
		staged := slices.DeleteFunc(slices.Clone(out.Off), func(e runrecord.Entry) bool { return !e.Staged })
		replaced := slices.DeleteFunc(slices.Clone(out.Off), func(e runrecord.Entry) bool { return e.Staged })
		if len(replaced) > 0 {
			fmt.Fprintln(w, "\nnot on main (rolled back or replaced):")
			printHistory(w, replaced, nil, out.Scales, width)
		}
		if len(staged) > 0 {
			fmt.Fprintln(w, "\nstaged by plans on their audit branches, not published (lakeswap plans lists them):")
			printHistory(w, staged, nil, out.Scales, width)
			for _, e := range staged {
				fmt.Fprintf(w, "  run %s: branch %s\n", words.Printable(e.RunID), e.AuditBranch)
			}
		}
		printReleases(w, out.Table, slices.Concat(out.Main, out.Off))
	})
}

// printReleases notes, under the history, the runs shown that were
// releases: which other tables they committed in the same commit.
func printReleases(w io.Writer, name string, entries []runrecord.Entry) {
	seen := map[string]bool{}
	for _, e := range entries {
		if r := e.Restated; r != nil && !seen["restated "+e.RunID] {
			if len(seen) == 0 {
				fmt.Fprintln(w)
			}
			seen["restated "+e.RunID] = true
			fmt.Fprintf(w, "run %s restated frozen partitions %s, decided by %s: %s\n", e.RunID, displayKeys(r.Partitions), words.Printable(r.DecidedBy), words.Printable(r.Reason))
		}
		if d := e.LateDecision; d != nil && !seen["late "+e.RunID+" "+e.Batch] {
			if len(seen) == 0 {
				fmt.Fprintln(w)
			}
			seen["late "+e.RunID+" "+e.Batch] = true
			fmt.Fprintf(w, "run %s: %s\n", e.RunID, describeLate(*d, d.Partitions))
		}
		if len(e.Release) < 2 || seen[e.RunID] {
			continue
		}
		if len(seen) == 0 {
			fmt.Fprintln(w)
		}
		seen[e.RunID] = true
		others := slices.DeleteFunc(slices.Clone(e.Release), func(t string) bool { return t == name })
		fmt.Fprintf(w, "run %s is a release: released with %s in one commit (tag %s); rollback --run takes them back together\n",
			e.RunID, strings.Join(others, ", "), swap.ReleaseTag(e.RunID))
	}
}

// describeFilter says what the filters asked for, as the flags gave it.
func describeFilter(o historyOptions) string {
	var parts []string
	if o.run != "" {
		parts = append(parts, "--run "+o.run)
	}
	for _, p := range o.partitions {
		parts = append(parts, "--partition "+p)
	}
	if o.since != "" {
		parts = append(parts, "--since "+o.since)
	}
	return strings.Join(parts, " ")
}

// historyFilter is what --since, --partition and --run keep.
func historyFilter(o historyOptions, since time.Time) func(runrecord.Entry) bool {
	return func(e runrecord.Entry) bool {
		if e.Time.Before(since) || (o.run != "" && e.RunID != o.run) {
			return false
		}
		if len(o.partitions) == 0 {
			return true
		}
		for _, p := range o.partitions {
			if slices.Contains(e.Partitions, p) {
				return true
			}
		}
		return false
	}
}

func filter[T any](xs []T, keep func(T) bool) []T {
	out := []T{}
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func limit[T any](xs []T, n int) []T {
	if n > 0 && len(xs) > n {
		return xs[:n]
	}
	return xs
}

// parseSince reads --since: a date (midnight UTC), a time in RFC 3339, or
// a duration before now, in Go's units or whole days (7d).
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: give a date (2026-01-31), a time (2026-01-31T12:00:00Z) or a duration before now (36h, 7d)", s)
}

// printHistory prints snapshots and, among them by time, the rollbacks,
// newest first. Where the terminal's width is known, a run's partitions
// are cut to fit it.
func printHistory(w io.Writer, entries []runrecord.Entry, rollbacks []history.Rollback, scales map[string]int, width int) {
	header := []string{"SNAPSHOT", "TIME", "OPERATION", "RUN", "PARTITIONS", "RUN ROWS", "TABLE ROWS", "SUMS", "FINGERPRINT"}
	var rows [][]string
	r := 0
	for _, e := range entries {
		for ; r < len(rollbacks) && rollbacks[r].Time.After(e.Time); r++ {
			rows = append(rows, rollbackRow(rollbacks[r]))
		}
		mark := ""
		if e.Current {
			mark = "*"
		}
		tableRows := "-"
		if e.TableRows != nil {
			tableRows = words.Number(*e.TableRows)
		}
		runRows := "-"
		if e.RunID != "" {
			runRows = words.Number(e.Rows)
		}
		rows = append(rows, []string{fmt.Sprintf("%d%s", e.SnapshotID, mark), e.Time.UTC().Format("2006-01-02 15:04:05Z"),
			e.Operation, orDash(e.RunID), orDash(displayKeys(e.Partitions)), runRows, tableRows, formatSums(e.Sums, scales), short(e.Fingerprint)})
	}
	for ; r < len(rollbacks); r++ {
		rows = append(rows, rollbackRow(rollbacks[r]))
	}
	// Narrower than the table: the fingerprint, row counts, sums, time and
	// operation go, in that order, and then the partitions are cut.
	header, rows = dropToFit(header, rows, width, "FINGERPRINT", "TABLE ROWS", "RUN ROWS", "SUMS", "TIME", "OPERATION")
	fitColumn(header, rows, slices.Index(header, "PARTITIONS"), width)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	for _, e := range entries {
		if e.Problem != "" {
			fmt.Fprintf(w, "warning: snapshot %d: %s\n", e.SnapshotID, e.Problem)
		}
	}
}

// rollbackRow shows main set back, with the runs it no longer holds.
func rollbackRow(r history.Rollback) []string {
	return []string{strconv.FormatInt(r.To, 10), r.Time.UTC().Format("2006-01-02 15:04:05Z"), "rollback", orDash(strings.Join(r.Runs, ",")),
		fmt.Sprintf("main set back from %d", r.From), "-", "-", "-", "-"}
}

// dropToFit leaves out columns, in the order named, while the widest line
// is wider than width (0: unknown, nothing is left out).
func dropToFit(header []string, rows [][]string, width int, names ...string) ([]string, [][]string) {
	for _, name := range names {
		if width <= 0 || lineWidth(header, rows) <= width {
			break
		}
		i := slices.Index(header, name)
		if i < 0 {
			continue
		}
		header = slices.Delete(slices.Clone(header), i, i+1)
		for r := range rows {
			rows[r] = slices.Delete(rows[r], i, i+1)
		}
	}
	return header, rows
}

// lineWidth is the width of the widest line tabwriter makes of a table
// with two spaces between columns.
func lineWidth(header []string, rows [][]string) int {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	line := 0
	for _, n := range widths {
		line += n + 2
	}
	return line - 2
}

// fitColumn cuts column col of rows, ending in "...", so that the widest
// line fits width (unknown: 0, nothing is cut), keeping at least 12
// characters of it.
func fitColumn(header []string, rows [][]string, col, width int) {
	if width <= 0 || col < 0 {
		return
	}
	over := lineWidth(header, rows) - width
	if over <= 0 {
		return
	}
	widest := utf8.RuneCountInString(header[col])
	for _, row := range rows {
		widest = max(widest, utf8.RuneCountInString(row[col]))
	}
	keep := max(widest-over, 12)
	for _, row := range rows {
		if r := []rune(row[col]); len(r) > keep {
			row[col] = string(r[:keep-3]) + "..."
		}
	}
}

// terminalWidth is w's width in columns where w is a terminal, else 0.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

// historyResult is history's -o json: main's snapshots, newest first, the
// rollbacks that set main back, newest first, and the runs no longer on
// main; each as the filters asked.
type historyResult struct {
	Table     string             `json:"table"`
	Main      []runrecord.Entry  `json:"main"`
	Off       []runrecord.Entry  `json:"off_main"`
	Rollbacks []history.Rollback `json:"rollbacks"`
	// Scales are the decimal additive columns' scales: a sum is the
	// unscaled value, 1234 at scale 2 being 12.34.
	Scales map[string]int `json:"scales,omitempty"`
}

// formatSums lists sums by column; scales, where known, are the decimal
// columns' scales, which their unscaled sums are shown at.
func formatSums(sums map[string]exact.Sum, scales map[string]int) string {
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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// short is a hash as messages show it, or "-" for none.
func short(h string) string { return orDash(verify.Short(h)) }

// scaled writes a sum at its column's scale: 1234 at scale 2 is 12.34.
func scaled(v exact.Sum, scale int) string { return words.Grouped(v.Scaled(scale)) }
