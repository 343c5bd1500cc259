package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap/history"
)

//go:embed report.tmpl
var reportHTML string

var reportPage = template.Must(template.New("report").Parse(reportHTML))

type reportOptions struct {
	table, run, out string
	keys            int
}

func newReportCmd(g *globals) *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report --table NS.NAME --run RUN_ID --out FILE.html",
		Short: "Write one self-contained HTML page of a run: its figures and a chart of each partition before and after",
		Long: `report writes, to --out, one HTML page of a committed run with the figures show --run gives (rows and
every additive sum of each partition before and after, fingerprints, files removed and added, the source)
and a chart of each partition's rows and sums before and after. The page loads nothing from the network.
It refuses to overwrite a file.`,
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReport(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.table, "table", "", "the run's table, NAMESPACE.NAME (required)")
	cmd.Flags().StringVar(&o.run, "run", "", "the run (required)")
	cmd.Flags().StringVar(&o.out, "out", "", "the HTML file to write (required)")
	cmd.Flags().IntVar(&o.keys, "keys", 0, "how many grain keys of each kind of change each partition names with their values (default 3)")
	return cmd
}

func runReport(ctx context.Context, g *globals, o reportOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return err
	}
	if o.run == "" || o.out == "" {
		return usagef("report needs --run and --out")
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
	f, err := os.OpenFile(o.out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return requestError{fmt.Errorf("write the report: %s exists, and a report is never written over: remove it or name another file with --out", o.out)}
	}
	if err != nil {
		return requestError{fmt.Errorf("write the report: %w", err)}
	}
	if err := reportPage.Execute(f, reportOf(v)); err != nil {
		f.Close()
		os.Remove(o.out)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return g.emit(reportResult{RunID: v.RunID, Table: v.Table, File: o.out, Run: v}, func(w io.Writer) {
		fmt.Fprintf(w, "wrote %s: run %s on %s, %s\n", o.out, v.RunID, v.Table, words.Count(len(v.Partitions), "partition"))
	})
}

// reportResult is report's -o json: the file written and the run's
// figures it shows.
type reportResult struct {
	RunID string           `json:"run_id"`
	Table string           `json:"table"`
	File  string           `json:"file"`
	Run   *history.RunView `json:"run"`
}

// The page's data: every figure as show prints it.
type (
	reportData struct {
		RunID, Table, Time, Snapshots, Source, JobVersion, Rows, Fingerprint, Checks string
		RolledBack                                                                   string
		Sums                                                                         []namedValue
		SumNames                                                                     []string
		Rejected                                                                     []string
		Reconciled                                                                   []reconciledRow
		Partitions                                                                   []reportPartition
		Keys                                                                         []reportKey
		Charts                                                                       []reportChart
	}
	// reportKey is a grain key the run changed, with its values.
	reportKey struct {
		Partition, Key, Kind string
		Columns              []reportValue
	}
	reportValue     struct{ Column, Old, New string }
	namedValue      struct{ Name, Value string }
	reportPartition struct {
		Key, RowsBefore, RowsAfter, RowsClass, HashBefore, HashAfter string
		Sums                                                         []reportSum
		Removed, Added                                               int
	}
	reportSum   struct{ Name, Before, After, Class string }
	reportChart struct {
		Title         string
		Width, Height int
		Bars          []reportBar
	}
	reportBar struct {
		Label                                 string
		X, Y, Y2, TextX, TextY, Before, After int
		BeforeText, AfterText                 string
	}
)

func reportOf(v *history.RunView) reportData {
	d := reportData{RunID: v.RunID, Table: v.Table, Time: v.Time.UTC().Format("2006-01-02 15:04:05Z"), Snapshots: joinIDs(v.Snapshots),
		Source: v.Source, JobVersion: v.JobVersion, Rows: words.Number(v.Rows), Fingerprint: v.Fingerprint,
		Checks: strings.TrimPrefix(describeRecordedChecks(v.Checks), "checks "), RolledBack: describeUndone(v)}
	d.SumNames = slices.Sorted(maps.Keys(v.Sums))
	for _, k := range d.SumNames {
		d.Sums = append(d.Sums, namedValue{k, scaled(v.Sums[k], v.Scales[k])})
	}
	for _, reason := range slices.Sorted(maps.Keys(v.Rejected)) {
		d.Rejected = append(d.Rejected, fmt.Sprintf("%s: %s", words.Count(v.Rejected[reason], "source row"), reason))
	}
	d.Reconciled = reconciledRows(v)
	for _, p := range v.Partitions {
		rp := reportPartition{Key: p.Partition, RowsBefore: words.Number(p.Before.Rows), RowsAfter: words.Number(p.After.Rows), RowsClass: trend(exact.Of(p.Before.Rows), exact.Of(p.After.Rows)),
			HashBefore: short(p.Before.Hash), HashAfter: short(p.After.Hash), Removed: len(p.Removed), Added: len(p.Added)}
		for _, k := range d.SumNames {
			rp.Sums = append(rp.Sums, reportSum{k, scaled(p.Before.Sums[k], v.Scales[k]), scaled(p.After.Sums[k], v.Scales[k]), trend(p.Before.Sums[k], p.After.Sums[k])})
		}
		d.Partitions = append(d.Partitions, rp)
		if p.Changes == nil {
			continue
		}
		for _, kc := range p.Changes.Values {
			rk := reportKey{Partition: p.Partition, Key: kc.Key, Kind: kc.Kind}
			for _, c := range kc.Columns {
				rk.Columns = append(rk.Columns, reportValue{c.Column, c.Old, c.New})
			}
			d.Keys = append(d.Keys, rk)
		}
	}
	d.Charts = append(d.Charts, chartOf("Rows", v, func(fp figures) (float64, string) { return float64(fp.Rows), words.Number(fp.Rows) }))
	for _, k := range d.SumNames {
		d.Charts = append(d.Charts, chartOf("Sum of "+k, v, func(fp figures) (float64, string) { return fp.Sums[k].Float64(), scaled(fp.Sums[k], v.Scales[k]) }))
	}
	return d
}

// figures are a partition's rows and sums, on one side of a run.
type figures struct {
	Rows int64
	Sums map[string]exact.Sum
}

// chartOf draws a partition's value before and after as two bars, each
// scaled to the largest value of the chart; a bar's length is the value's
// magnitude (its text says its sign).
func chartOf(title string, v *history.RunView, value func(figures) (float64, string)) reportChart {
	const labelWidth, barWidth, rowHeight = 190, 360, 26
	c := reportChart{Title: title, Width: labelWidth + barWidth + 220, Height: rowHeight*len(v.Partitions) + 6}
	top := 1.0
	for _, p := range v.Partitions {
		b, _ := value(figures{p.Before.Rows, p.Before.Sums})
		a, _ := value(figures{p.After.Rows, p.After.Sums})
		top = max(top, math.Abs(b), math.Abs(a))
	}
	for i, p := range v.Partitions {
		b, bt := value(figures{p.Before.Rows, p.Before.Sums})
		a, at := value(figures{p.After.Rows, p.After.Sums})
		y := i*rowHeight + 4
		c.Bars = append(c.Bars, reportBar{Label: p.Partition, X: labelWidth, Y: y, Y2: y + 9, TextX: labelWidth + barWidth + 10, TextY: y + 12,
			Before: int(math.Abs(b) * barWidth / top), After: int(math.Abs(a) * barWidth / top), BeforeText: bt, AfterText: at})
	}
	return c
}

func trend(before, after exact.Sum) string {
	switch after.Cmp(before) {
	case -1:
		return "down"
	case 1:
		return "up"
	}
	return ""
}
