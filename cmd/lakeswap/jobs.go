package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// printJob says how a job computed a run: its version, its sources'
// listing, and what its rules rejected.
func printJob(w io.Writer, p *swap.Plan) {
	j, err := job.InfoOf(p)
	if err != nil {
		fmt.Fprintf(w, "the plan's job cannot be read: %v\n", err)
	}
	if j == nil {
		return
	}
	fmt.Fprintf(w, "computed by job %s, version %s, from sources listed as %s\n", j.File, short(j.Version), short(j.SourcesHash))
	if j.Reconciled != nil {
		fmt.Fprintln(w, "reconciled with the sources:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  PARTITION\tSOURCE ROWS\tSTAGED ROWS\tSOURCE SUMS\tSTAGED SUMS")
		for _, pp := range p.Partitions {
			f := j.Reconciled[pp.Value]
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", verify.DisplayKey(pp.Key), words.Number(f.Rows), words.Number(pp.Fingerprint.Rows), formatSums(f.Sums, p.Contract.Scales), formatSums(pp.Fingerprint.Sums, p.Contract.Scales))
		}
		_ = tw.Flush()
	}
	if j.Late != nil {
		var late []string
		for _, d := range slices.Sorted(maps.Keys(j.Late)) {
			late = append(late, fmt.Sprintf("%s (%d)", d, j.Late[d]))
		}
		if len(late) == 0 {
			fmt.Fprintf(w, "no source row of the run's days arrived later than the lookback of %s\n", seconds(j.Lookback))
		} else {
			fmt.Fprintf(w, "source rows of the run's days that arrived later than the lookback of %s, by the day of their event: %s\n", seconds(j.Lookback), strings.Join(late, ", "))
		}
	}
	printLate(w, j)
	if j.RejectedRows == 0 {
		fmt.Fprintln(w, "rejected no source rows")
		return
	}
	var reasons []string
	for _, r := range slices.Sorted(maps.Keys(j.Rejected)) {
		reasons = append(reasons, fmt.Sprintf("%s (%d)", r, j.Rejected[r]))
	}
	fmt.Fprintf(w, "rejected %s, written to %s: %s\n", words.Count(j.RejectedRows, "source row"), j.RejectsFile, strings.Join(reasons, ", "))
}

// printLate says what the run did with rows that arrived late, and the
// watermark it records.
func printLate(w io.Writer, j *job.Info) {
	if d := j.Decision; d != nil {
		fmt.Fprintln(w, describeLate(*d, nil))
	}
	if len(j.Left) > 0 {
		fmt.Fprintf(w, "late rows of %s stay left out, as runs decided (--leave); --restate --reason TEXT rebuilds a day with them\n", strings.Join(slices.Sorted(maps.Keys(j.Left)), ", "))
	}
	switch {
	case j.Watermark == "":
	case j.Watermark == j.PreviousWatermark:
		fmt.Fprintf(w, "watermark: stays at %s (every source row that arrived by then is in the table or decided)\n", j.Watermark)
	case j.PreviousWatermark == "":
		fmt.Fprintf(w, "watermark: %s, recorded when the run lands (every source row that arrived by then is in the table or decided; --since-last starts there)\n", j.Watermark)
	default:
		fmt.Fprintf(w, "watermark: %s -> %s, recorded when the run lands (--since-last starts there)\n", j.PreviousWatermark, j.Watermark)
	}
}

// describeLate says in a line what a run decided on rows that arrived
// late, by day, or by partition where the record names them (keys).
func describeLate(d runrecord.LateDecision, keys []string) string {
	var days []string
	for _, day := range slices.Sorted(maps.Keys(d.Rows)) {
		days = append(days, fmt.Sprintf("%s (%s)", day, words.Number(d.Rows[day])))
	}
	if len(keys) > 0 {
		var rows int64
		for _, n := range d.Rows {
			rows += n
		}
		days = []string{fmt.Sprintf("%s (%s)", displayKeys(keys), words.Count(rows, "row"))}
	}
	var owner string
	if d.Owner != "" {
		owner = " (the job names " + words.Printable(d.Owner) + " its owner)"
	}
	switch d.Decision {
	case runrecord.LateCurrentPeriod:
		return fmt.Sprintf("late rows loaded into the day they arrived: %s, as the job's late policy current-period says%s", strings.Join(days, ", "), owner)
	case runrecord.LateLeave:
		return fmt.Sprintf("late rows left out, the partitions kept as published: %s, decided by %s: %s%s", strings.Join(days, ", "), words.Printable(d.DecidedBy), words.Printable(d.Reason), owner)
	}
	return fmt.Sprintf("late rows restated: %s, decided by %s: %s%s", strings.Join(days, ", "), words.Printable(d.DecidedBy), words.Printable(d.Reason), owner)
}
