package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

type lagOptions struct {
	job string // the job file
}

func newLagCmd(g *globals) *cobra.Command {
	var o lagOptions
	cmd := &cobra.Command{
		Use:   "lag --job JOB",
		Short: "Measure how late a job's source rows arrive, to size its lookback",
		Long: `lag measures, over the rows of the job's lag source that its reject rules keep, the distribution of
ingested_at - event_time (the job's lag: {event_time, ingested_at}, SQL on the source's columns): its
percentiles, and how many rows arrived later than the job's lookback. It reads the sources and
nothing else.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLag(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.job, "job", "", "the job file (required)")
	return cmd
}

func runLag(ctx context.Context, g *globals, o lagOptions) error {
	if o.job == "" {
		return usagef("name the job with --job")
	}
	j, err := job.Load(o.job)
	if err != nil {
		return requestError{err}
	}
	var pub *swap.Publisher
	var store source.ObjectStore
	onS3 := slices.ContainsFunc(j.SourceNames(), func(name string) bool { return source.IsObjectURL(j.Sources[name].Path) })
	if onS3 || slices.ContainsFunc(j.SourceNames(), func(name string) bool { return j.Sources[name].Table != "" }) {
		// A table is read through the catalog, and S3 through lakeswap's
		// client with the catalog's settings.
		var cat io.Closer
		var err error
		if ctx, cat, pub, err = g.open(ctx); err != nil {
			return err
		}
		defer cat.Close()
		if onS3 || s3store.UsesS3(g.props) {
			s3, err := inputStore(ctx, g.props, g.getenv)
			if err != nil {
				return err
			}
			store = s3
		}
	}
	r, err := j.MeasureArrival(ctx, pub, store, backfill.DefaultMemoryLimit())
	if err != nil {
		return err
	}
	return g.emit(r, func(w io.Writer) {
		fmt.Fprintf(w, "arrival lag of %s over %s: p50 %s, p90 %s, p99 %s, max %s\n",
			r.Source, words.Count(r.Rows, "row"), seconds(r.Percentiles["p50"]), seconds(r.Percentiles["p90"]), seconds(r.Percentiles["p99"]), seconds(r.Percentiles["max"]))
		if j.Lookback > 0 {
			fmt.Fprintf(w, "beyond the lookback of %s: %s (%.1f%%)\n", seconds(r.Lookback), words.Count(r.Beyond, "row"), 100*r.Share)
		} else {
			fmt.Fprintln(w, "the job declares no lookback")
		}
		if r.Unreadable > 0 {
			fmt.Fprintf(w, "%s times that do not read as timestamps and are left out\n", words.Count(r.Unreadable, "row has", "rows have"))
		}
	})
}

// seconds shows a duration in seconds as a person reads one (1h30m0s).
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond)
}
