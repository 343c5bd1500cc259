package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// stageJob computes a run's rows with a SQL job: it lists the job's
// sources (the run reads those files and no others), makes each a view of
// them without the rows the job's rules reject (written to the rejects
// file), runs the SQL for the declared range, and stages its result as any
// input's.
func stageJob(ctx context.Context, pub *swap.Publisher, req swap.Request, selector string, j *job.Job, rejectsFile string, in source.Options, finish func(context.Context, swap.Request) (*swap.Result, error)) (*swap.Result, error) {
	target, err := pub.Open(ctx, req.Table)
	if err != nil {
		return nil, err
	}
	c := target.Contract
	values, err := c.Partition.ParseSelector(selector)
	if err != nil {
		return nil, usageError{err}
	}
	for _, v := range values {
		if err := swap.CheckPartitionValue(target.Metadata(), c.Partition.Name, v); err != nil {
			return nil, usageError{err}
		}
	}
	if req.RunID == "" {
		req.RunID = swap.NewRunID() // to name the rejects file
	}
	if rejectsFile == "" {
		// A rerun of a run id is legitimate; each run gets a file of its
		// own, named by the time it started.
		rejectsFile = "rejects-" + req.RunID + "-" + time.Now().UTC().Format("20060102T150405.000Z") + ".ndjson"
	}
	listing, err := j.List(ctx, in.Store, tableFiles(pub))
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(in.SpillDir, "lakeswap-job-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	fetch := fetcher(in.Store, tmp)
	limit := in.MemoryLimit
	if limit <= 0 {
		limit = 512 << 20
	}
	eng, err := source.OpenSQLEngine(tmp, limit/4)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	// Rejected rows go to a file of their own, never overwritten; it is
	// kept only if some were.
	w, err := os.OpenFile(rejectsFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, usagef("rejects file: %v (a rejects file is never overwritten: name another with --rejects)", err)
	}
	rejected, err := j.Prepare(ctx, eng, listing, w, fetch, tmp)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil || rejected.Rows == 0 {
		_ = os.Remove(rejectsFile)
	}
	if err != nil {
		return nil, err
	}
	from, to := bounds(c, values)
	reconciled, err := j.Reconciled(ctx, eng, c, from, to)
	if err != nil {
		return nil, j.Named(err)
	}
	if reconciled != nil {
		req.Expect = map[string]swap.Figures{}
		for _, v := range values { // a partition the source does not name holds nothing
			f := reconciled[v]
			req.Expect[v] = swap.Figures{Rows: f.Rows, Sums: f.Sums}
		}
	}
	// Rows that arrived later than the lookback, for a table partitioned by
	// the day of its events.
	var late map[string]int64
	if c.Arrow.Field(c.Partition.Column).Type.ID() == arrow.DATE32 {
		if late, err = j.Late(ctx, eng, from, to); err != nil {
			return nil, j.Named(err)
		}
	}
	rr, err := j.Query(ctx, eng, from, to)
	if err != nil {
		return nil, j.Named(err)
	}
	name := "job " + filepath.Base(j.File)
	src, err := source.ReadResult(ctx, c, values, name, rr, in)
	rr.Release()
	if err != nil {
		return nil, j.Named(err)
	}
	defer src.Release()
	file, err := filepath.Abs(j.File)
	if err != nil {
		return nil, err
	}
	info := &swap.JobInfo{File: file, Version: j.Version, SourcesHash: listing.Hash, RejectedRows: rejected.Rows, Rejected: rejected.ByReason}
	if rejected.Rows > 0 {
		info.RejectsFile = rejectsFile
	}
	info.Reconciled, info.Late = req.Expect, late
	if late != nil {
		info.Lookback = time.Duration(j.Lookback).String()
	}
	req.Partitions, req.Source, req.Target, req.Job = values, src, target, info
	req.SourceName = fmt.Sprintf("%s (version %s, sources %s)", name, short(j.Version), short(listing.Hash))
	return finish(ctx, req)
}

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
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\n", verify.DisplayKey(pp.Key), f.Rows, pp.Fingerprint.Rows, formatSums(f.Sums), formatSums(pp.Fingerprint.Sums))
		}
		_ = tw.Flush()
	}
	if j.Late != nil {
		var late []string
		for _, d := range slices.Sorted(maps.Keys(j.Late)) {
			late = append(late, fmt.Sprintf("%s (%d)", d, j.Late[d]))
		}
		if len(late) == 0 {
			fmt.Fprintf(w, "no source row arrived later than the lookback of %s\n", j.Lookback)
		} else {
			fmt.Fprintf(w, "source rows that arrived later than the lookback of %s, by the day of their event: %s\n", j.Lookback, strings.Join(late, ", "))
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
	fmt.Fprintf(w, "rejected %d source row(s), written to %s: %s\n", j.RejectedRows, j.RejectsFile, strings.Join(reasons, ", "))
}

// sameSources refuses, as a conflict, to apply a plan a job computed once
// the job or its sources changed: the plan's rows are what that job made
// of those files, and no longer what it would make.
func sameSources(ctx context.Context, g *globals, pub *swap.Publisher, plan *swap.Plan) error {
	info := plan.Job
	if info == nil {
		return nil
	}
	conflict := func(format string, args ...any) error {
		return &swap.OpError{Op: "apply", Table: plan.Table, RunID: plan.RunID,
			Err:  fmt.Errorf("%w: "+format, append([]any{swap.ErrConflict}, args...)...),
			Hint: "nothing was committed; plan the job again"}
	}
	j, err := job.Load(info.File)
	if err != nil {
		return conflict("the plan's job cannot be read again: %v", err)
	}
	if j.Version != info.Version {
		return conflict("job %s changed since the plan (version %s, planned as %s)", info.File, short(j.Version), short(info.Version))
	}
	var store source.ObjectStore
	for _, name := range j.SourceNames() {
		if source.IsObjectURL(j.Sources[name].Path) && store == nil {
			s3, err := inputStore(ctx, g.props, g.getenv)
			if err != nil {
				return err
			}
			store = s3
		}
	}
	l, err := j.List(ctx, store, tableFiles(pub))
	if err != nil {
		return conflict("the job's sources cannot be listed again: %v", err)
	}
	if l.Hash != info.SourcesHash {
		return conflict("the sources of job %s changed since the plan (listed as %s, planned from %s): a file was added, removed or rewritten", info.File, short(l.Hash), short(info.SourcesHash))
	}
	return nil
}

// tableFiles lists what a job reads of a table of the catalog: the data
// files of its pinned snapshot.
func tableFiles(pub *swap.Publisher) job.TableFiles {
	return func(ctx context.Context, name string, snapshot int64) (int64, []runrecord.Input, error) {
		ident, err := catalog.ParseIdent(name)
		if err != nil {
			return 0, nil, err
		}
		return pub.SnapshotFiles(ctx, ident, snapshot)
	}
}

// fetcher copies a job's S3 files to dir, each only if it is still as
// listed.
func fetcher(store source.ObjectStore, dir string) job.Fetch {
	if store == nil {
		return nil
	}
	n := 0
	return func(ctx context.Context, in runrecord.Input) (string, error) {
		n++
		return source.Fetch(ctx, store, in, dir, n)
	}
}

// bounds are the least and the greatest of the declared values in the
// partition column's order: as numbers for an integer column (9 before
// 10), as text for dates, months and strings, whose text sorts as they do.
func bounds(c *contract.Contract, values []string) (from, to string) {
	order := strings.Compare
	switch c.Partition.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		order = func(a, b string) int {
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			return cmp.Compare(x, y)
		}
	}
	return slices.MinFunc(values, order), slices.MaxFunc(values, order)
}
