package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// printJob says how a job computed a run: its version, its sources'
// listing, and what its rules rejected.
func printJob(w io.Writer, p *swap.Plan) {
	j := p.Job
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
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\n", verify.DisplayKey(pp.Key), f.Rows, pp.Fingerprint.Rows, formatSums(f.Sums, p.Contract.Scales), formatSums(pp.Fingerprint.Sums, p.Contract.Scales))
		}
		_ = tw.Flush()
	}
	if j.Late != nil {
		var late []string
		for _, d := range slices.Sorted(maps.Keys(j.Late)) {
			late = append(late, fmt.Sprintf("%s (%d)", d, j.Late[d]))
		}
		if len(late) == 0 {
			fmt.Fprintf(w, "no source row arrived later than the lookback of %s\n", seconds(j.Lookback))
		} else {
			fmt.Fprintf(w, "source rows that arrived later than the lookback of %s, by the day of their event: %s\n", seconds(j.Lookback), strings.Join(late, ", "))
		}
	}
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
