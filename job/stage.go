package job

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/verify"
)

// RunOptions are a job run's choices beyond the publish request.
type RunOptions struct {
	// Partitions select the partitions the run owns (COL=FROM..TO, a list).
	Partitions []string
	// RejectsFile is where the source rows the job's rules reject go, as
	// JSON lines; empty names one by the run id and time. It is never
	// overwritten, and kept only if some rows were rejected.
	RejectsFile string
	// Inputs are how sources are read: S3, memory, spill folder.
	Inputs source.Options
	// Release, when the run is one table of a release, is how it reads a
	// table the release rebuilds too: as the release will leave it.
	Release *swap.Release
	// Late is the run's decision on source rows that arrived later than
	// the lookback into partitions already published; nil leaves it to
	// the job's policy.
	Late *LateChoice
	// SinceLast rebuilds, instead of Partitions, the days of the rows
	// that arrived since the last landed run's watermark, less the
	// lookback.
	SinceLast bool
}

// Run computes a run's rows with the job and hands the request to finish
// (Publish, or a Stage that stops at the plan): it lists the job's sources
// (the run reads those files and no others), makes each a view of them
// without the rows the job's rules reject (written to the rejects file),
// runs the SQL for the declared range, and stages its result as any
// input's, with the job's reconciliation as what each partition must hold.
func (j *Job) Run(ctx context.Context, pub *swap.Publisher, req swap.Request, o RunOptions, finish func(context.Context, swap.Request) (*swap.Result, error)) (*swap.Result, error) {
	target, err := pub.Open(ctx, req.Table)
	if err != nil {
		return nil, err
	}
	c := target.Contract
	tracks := j.tracksArrival(c)
	if o.Release != nil && (!tracks || j.policy() == runrecord.LateCurrentPeriod) {
		o.Late = nil // a release's decision is for the jobs that escalate
	}
	switch {
	case (o.SinceLast || o.Late != nil || j.OnLate != LatePolicy{}) && !tracks:
		return nil, outcome.Invalid(fmt.Errorf("job %s: a late policy, --restate, --leave and --since-last judge rows by when they arrived: they need the job's lag: {event_time, ingested_at}, a lookback, and a table partitioned by a date column alone", filepath.Base(j.File)))
	case o.Late != nil && j.policy() == runrecord.LateCurrentPeriod:
		return nil, outcome.Invalid(fmt.Errorf("job %s loads late rows into the day they arrived (late policy current-period): --%s decides nothing", filepath.Base(j.File), o.Late.Decision))
	}
	var sel contract.Selection
	if !o.SinceLast {
		if sel, err = target.Partitions(o.Partitions...); err != nil {
			return nil, err
		}
	}
	if req.RunID == "" {
		req.RunID = swap.NewRunID() // to name the rejects file
	}
	rejectsFile := o.RejectsFile
	if rejectsFile == "" {
		// A rerun of a run id is legitimate; each run gets a file of its
		// own, named by the time it started.
		rejectsFile = "rejects-" + swap.RunSegment(req.RunID) + "-" + time.Now().UTC().Format("20060102T150405.000Z") + ".ndjson"
	}
	in := o.Inputs
	tables := tableFiles(pub)
	if o.Release != nil {
		tables = releaseFiles(o.Release, j.Table, tables)
	}
	listing, err := j.List(ctx, in.Store, tables)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(in.SpillDir, "lakeswap-job-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	limit := in.MemoryLimit
	if limit <= 0 {
		limit = 512 << 20
	}
	eng, err := source.OpenSQLEngine(tmp, EngineMemory(limit))
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	engineErr := func(err error) error { return outOfMemory(j.Named(err), limit) }
	rejected, err := j.prepareInto(ctx, eng, listing, rejectsFile, fetcher(in.Store, pub, tmp), tmp)
	if err != nil {
		return nil, outOfMemory(err, limit)
	}
	var arr *arrival
	if tracks {
		if arr, err = j.newArrival(ctx, target, o.Late); err != nil {
			return nil, err
		}
		if err := j.lagReadable(ctx, eng); err != nil {
			return nil, engineErr(err)
		}
	}
	if o.SinceLast {
		days, err := arr.sinceLast(ctx, eng)
		if err != nil {
			return nil, engineErr(err)
		}
		if sel, err = target.Partitions(c.Partition.Fields[0].Name + "=" + strings.Join(days, ",")); err != nil {
			return nil, err
		}
	}
	// $from and $to bound the first field the selectors name (of a table
	// of several fields, the days of day(event_ts), say); the run owns
	// the tuples the selectors name, as any input's.
	field, named := sel.FirstNamed()
	from, to := bounds(c.Partition.Fields[field], named)
	// Rows that arrived later than the lookback, by the day of their
	// event, and what the run does with them.
	var late map[string]int64
	info := &Info{}
	if tracks {
		if late, err = j.Late(ctx, eng, from, to); err != nil {
			return nil, engineErr(err)
		}
		if err := arr.decide(ctx, eng, named, info); err != nil {
			return nil, engineErr(err)
		}
	}
	rr, err := j.Query(ctx, eng, from, to)
	if err != nil {
		return nil, engineErr(err)
	}
	name := "job " + filepath.Base(j.File)
	src, err := source.ReadResult(ctx, c, sel, name, rr, in)
	rr.Release()
	if err != nil {
		return nil, engineErr(err)
	}
	defer src.Release()
	values, err := target.Resolve(ctx, sel, src.Partitions())
	if err != nil {
		return nil, err
	}
	if req.Expect, err = j.expected(ctx, eng, c, values, from, to); err != nil {
		return nil, outOfMemory(err, limit)
	}
	if req.Tolerance, err = j.tolerance(c); err != nil {
		return nil, err
	}
	req.ReconcileQuery = j.Reconcile
	file, err := filepath.Abs(j.File)
	if err != nil {
		return nil, err
	}
	info.File, info.Version, info.SourcesHash, info.RejectedRows, info.Rejected = file, j.Version, listing.Hash, rejected.Rows, rejected.ByReason
	info.Reconciled, info.Late = req.Expect, late
	if rejected.Rows > 0 {
		info.RejectsFile = rejectsFile
	}
	if late != nil {
		info.Lookback = time.Duration(j.Lookback).Seconds()
	}
	req.Partitions, req.Source, req.Target, req.Job = values, src, target, info
	req.SourceName = fmt.Sprintf("%s (version %s, sources %s)", name, verify.Short(j.Version), verify.Short(listing.Hash))
	// The rows are lakeswap's now: the engine's memory, and the result it
	// kept, go back before staging needs its own.
	eng.Close()
	return finish(ctx, req)
}

// EngineMemory is the share of a run's memory limit the SQL engine is
// given; lakeswap's reading of its rows (which spills past its own share)
// and staging take the rest.
func EngineMemory(limit int64) int64 { return limit / 4 }

// outOfMemory names, for a job whose SQL ran out of the memory the engine
// was given, the limit to raise.
func outOfMemory(err error, limit int64) error {
	if !source.OutOfMemory(err) {
		return err
	}
	// The engine's own advice (SET statements) is not the user's to follow.
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return fmt.Errorf("%s\nthe job needs more than the %d MiB the SQL engine is given, a quarter of --memory-limit (%d MiB); the engine spilled what it could to the run's spill folder: raise --memory-limit, or let the SQL need less (aggregates, joins and sorts spill; a window function keeps whole partitions in memory)", msg, EngineMemory(limit)>>20, limit>>20)
}

// prepareInto prepares the job's views on eng, writing rejected rows to a
// file of their own, never overwritten, and kept only if some were.
func (j *Job) prepareInto(ctx context.Context, eng *source.SQLEngine, listing *Listing, rejectsFile string, fetch Fetch, dir string) (*Rejected, error) {
	w, err := os.OpenFile(rejectsFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, outcome.Invalid(fmt.Errorf("rejects file: %w (a rejects file is never overwritten: name another with --rejects)", err))
	}
	rejected, err := j.Prepare(ctx, eng, listing, w, fetch, dir)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil || rejected.Rows == 0 {
		_ = os.Remove(rejectsFile)
	}
	return rejected, err
}

// tolerance is the job's reconcile_tolerance, each figure one the table
// reconciles: rows, or an additive column.
func (j *Job) tolerance(c *contract.Contract) (map[string]swap.Tolerance, error) {
	if len(j.ReconcileTolerance) == 0 {
		return nil, nil
	}
	out := map[string]swap.Tolerance{}
	for k, v := range j.ReconcileTolerance {
		i := slices.IndexFunc(c.Fields, func(f iceberg.NestedField) bool { return f.Name == k })
		if k != "rows" && (i < 0 || !slices.Contains(c.Additive, i)) {
			return nil, outcome.Invalid(fmt.Errorf("job %s: reconcile_tolerance of %s: the figures reconciled are rows and the additive columns of %s (%s)", filepath.Base(j.File), k, j.Table, strings.Join(c.Summary().Additive, ", ")))
		}
		t, err := swap.ParseTolerance(v)
		if err != nil {
			return nil, err
		}
		out[k] = t
	}
	return out, nil
}

// expected is what the job's reconciliation query says each declared
// partition must hold (a partition the source does not name holds
// nothing), or nil when the job has none.
func (j *Job) expected(ctx context.Context, eng *source.SQLEngine, c *contract.Contract, values []string, from, to string) (map[string]swap.Figures, error) {
	reconciled, err := j.Reconciled(ctx, eng, c, from, to)
	if err != nil || reconciled == nil {
		return nil, j.Named(err)
	}
	out := map[string]swap.Figures{}
	for _, v := range values {
		f := reconciled[v]
		out[v] = swap.Figures{Rows: f.Rows, Sums: f.Sums}
	}
	return out, nil
}

// Recheck refuses, as a conflict, to apply a plan a job computed once the
// job or its sources changed: the plan's rows are what that job made of
// those files, and no longer what it would make. store opens the S3 store
// a job's S3 sources are listed through; it is called only for those.
func Recheck(ctx context.Context, pub *swap.Publisher, plan *swap.Plan, store func(context.Context) (source.ObjectStore, error)) error {
	return RecheckIn(ctx, pub, plan, store, nil)
}

// RecheckIn is Recheck for a plan of a release, whose job read the tables
// the release rebuilds as the release leaves them.
func RecheckIn(ctx context.Context, pub *swap.Publisher, plan *swap.Plan, store func(context.Context) (source.ObjectStore, error), rel *swap.Release) error {
	info, err := InfoOf(plan)
	if info == nil || err != nil {
		return err
	}
	conflict := func(format string, args ...any) error {
		return &outcome.OpError{Op: "apply", Table: plan.Table, RunID: plan.RunID,
			Err:  fmt.Errorf("%w: "+format, append([]any{outcome.ErrConflict}, args...)...),
			Hint: "nothing was committed; plan the job again (`lakeswap discard PLAN` removes what this plan staged)"}
	}
	j, err := Load(info.File)
	if err != nil {
		return conflict("the plan's job cannot be read again: %v", err)
	}
	if j.Version != info.Version {
		return conflict("job %s changed since the plan (version %s, planned as %s)", info.File, verify.Short(j.Version), verify.Short(info.Version))
	}
	var s3 source.ObjectStore
	if slices.ContainsFunc(j.SourceNames(), func(n string) bool { return source.IsObjectURL(j.Sources[n].Path) }) {
		if s3, err = store(ctx); err != nil {
			return err
		}
	}
	tables := tableFiles(pub)
	if rel != nil {
		tables = releaseFiles(rel, j.Table, tables)
	}
	l, err := j.List(ctx, s3, tables)
	if err != nil {
		return conflict("the job's sources cannot be listed again: %v", err)
	}
	if l.Hash != info.SourcesHash {
		return conflict("the sources of job %s changed since the plan (listed as %s, planned from %s): a file was added, removed or rewritten", info.File, verify.Short(l.Hash), verify.Short(info.SourcesHash))
	}
	return nil
}

// tableFiles lists what a job reads of a table of the catalog: the data
// files of its pinned snapshot.
func tableFiles(pub *swap.Publisher) TableFiles {
	return func(ctx context.Context, name string, snapshot int64) (string, []runrecord.Input, error) {
		// A job file's table name is not a flag: a bad one is an error of
		// the job's, not of how lakeswap was called.
		ident, err := catalog.ParseIdent(name)
		if err != nil {
			return "", nil, err
		}
		id, files, err := history.Of(pub.Catalog).SnapshotFiles(ctx, ident, snapshot)
		return fmt.Sprintf("%s@%d", name, id), files, err
	}
}

// releaseFiles reads a table the release rebuilds as the release leaves
// it, and any other table as tables does. A job that pins a snapshot of a
// table the release rebuilds is refused: it would be computed from the
// table as it was, and the release would commit the new upstream beside
// a downstream of the old.
func releaseFiles(rel *swap.Release, reader string, tables TableFiles) TableFiles {
	return func(ctx context.Context, name string, snapshot int64) (string, []runrecord.Input, error) {
		if snapshot != 0 && rel.Rebuilds(name) {
			return "", nil, outcome.Invalid(fmt.Errorf("%s reads table %s pinned at snapshot %d, and the release rebuilds %s: it would be computed from the table as it was, not as the release leaves it; drop snapshot: from the job's source to read the release's, or publish the job on its own", reader, name, snapshot, name))
		}
		if snapshot == 0 {
			read, files, ok, err := rel.Files(ctx, name, reader)
			if ok || err != nil {
				return read, files, err
			}
		}
		return tables(ctx, name, snapshot)
	}
}

// fetcher copies a job's S3 files to dir, each only if it is still as
// listed, and writes there the rows of a table's data file that deletes
// apply to, with them applied.
func fetcher(store source.ObjectStore, pub *swap.Publisher, dir string) Fetch {
	if store == nil && pub == nil {
		return nil
	}
	n := 0
	opened := map[string]*history.Applied{} // by table@snapshot: planned once
	return func(ctx context.Context, in runrecord.Input) (string, error) {
		n++
		if strings.HasPrefix(in.URL, "iceberg:") {
			if pub == nil {
				return "", fmt.Errorf("%s is read through a copy (deletes to apply, or columns renamed), and no catalog is at hand to read it", in.URL)
			}
			table, id, path, err := history.ParseCopiedInput(in.URL)
			if err != nil {
				return "", err
			}
			key := fmt.Sprintf("%s@%d", table, id)
			if opened[key] == nil {
				if opened[key], err = history.Of(pub.Catalog).OpenApplied(ctx, table, id); err != nil {
					return "", err
				}
			}
			dst := filepath.Join(dir, fmt.Sprintf("applied-%d.parquet", n))
			if _, err := opened[key].Copy(ctx, path, dst); err != nil {
				return "", err
			}
			return dst, nil
		}
		if store == nil {
			return "", fmt.Errorf("%s is on S3, and no S3 store is configured", in.URL)
		}
		return source.Fetch(ctx, store, in, dir, n)
	}
}

// bounds are the least and the greatest of a field's declared values in
// its order: as numbers for an integer field (9 before 10), as text for
// dates, months and strings, whose text sorts as they do.
func bounds(f contract.Partitioner, values []string) (from, to string) {
	order := strings.Compare
	if f.Integers() {
		order = func(a, b string) int {
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			return cmp.Compare(x, y)
		}
	}
	return slices.MinFunc(values, order), slices.MaxFunc(values, order)
}

// MeasureArrival lists the job's sources and measures how late their rows arrive
// (MeasureLag). pub reads the tables a job reads, and may be nil for a job
// that reads none; store reads its S3 sources.
func (j *Job) MeasureArrival(ctx context.Context, pub *swap.Publisher, store source.ObjectStore, memoryLimit int64) (*LagReport, error) {
	var tables TableFiles
	if pub != nil {
		tables = tableFiles(pub)
	}
	l, err := j.List(ctx, store, tables)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "lakeswap-lag-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	eng, err := source.OpenSQLEngine(tmp, EngineMemory(memoryLimit))
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	if _, err := j.Prepare(ctx, eng, l, io.Discard, fetcher(store, pub, tmp), tmp); err != nil {
		return nil, err
	}
	return j.MeasureLag(ctx, eng)
}
