package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

type publishOptions struct {
	job            string   // a SQL job file, instead of inputs
	jobs           []string // every --job given: several are one release
	downstream     bool     // the release takes every job below the first
	lineage        []string // --jobs: where the jobs lineage reads are
	planDir        string   // where a release's plan files go
	restateFrozen  bool     // change partitions the table froze
	restate        bool     // rebuild published partitions with rows that arrived late
	leave          bool     // keep them as published, the late rows left out
	sinceLast      bool     // rebuild the days of the rows that arrived since the watermark
	reason         string   // why, recorded in the run
	decidedBy      string   // who decided it (default the OS user)
	rejects        string   // where a job's rejected rows go
	allowMismatch  bool     // let a job's staged figures differ from its reconciliation
	table          string
	partitions     []string
	allowEmpty     bool
	batch          int
	perPartition   bool
	noAutoRollback bool
	compression    string
	targetFileMiB  int64
	parallelism    int
	runID          string
	runIDGiven     bool // --run-id was given, not drawn
	memoryLimit    string
	spillDir       string
	csvDelimiter   string
	csvNull        string
	csvNoHeader    bool
	csvColumns     []string
	csvQuote       string
	csvColumnMap   string
	noProgress     bool
	adopt          bool
	implausible    bool
	band           string
	buildTwice     bool
	rewrite        bool // --rewrite-overlapping
	// changes compares the staged rows with the table's at the grain, for
	// the plan's summary.
	changes bool
	files   []string
	// planFile is where a plan is written, and auditBranch whether its
	// staged snapshot goes to a branch of the table (plan --no-branch).
	planFile    string
	auditBranch bool
	keys        int // grain keys of each kind of change named, with their values
}

func newPublishCmd(g *globals) *cobra.Command {
	var o publishOptions
	cmd := &cobra.Command{
		Use:   "publish --table NS.NAME --partitions COL=FROM..TO (INPUT... | --job JOB)",
		Short: "Replace the declared partitions with the rows of the input files, as one verified snapshot",
		Long: `publish stages the input files' rows (CSV with a header, NDJSON, or Parquet; text may be .gz
or .zst) as Parquet under a fresh prefix, validates them against the table's contract (schema, every
row inside the declared partitions, unique non-null grain, column checks, no empty partition),
fingerprints them, and commits one snapshot that replaces exactly the declared partitions, only if main
has not moved since the plan. It then reads the commit back and compares fingerprints. Rerunning the
same input leaves the same content.

An INPUT is a file, a glob ('out/*.csv.gz', quoted so that lakeswap lists it) or a folder (every input
file under it, skipping names that start with '.' or '_'), locally or on S3 (s3://bucket/prefix/,
s3://bucket/exports/*.parquet; listed once, and the run records the objects it read). Inputs of any
size and row order are read once and their rows wait in memory, or past --memory-limit's share on
local disk (--spill-dir), until their partition is staged.

With --adopt, the INPUTs are Parquet files another engine wrote under the table's location: they are
validated and fingerprinted where they are and committed as they are, never rewritten or removed.

Partitions are a closed range or a list on the partition column, each value checked against the
column's type and transform:
  --partitions order_date=2026-01-01..2026-01-31
  --partitions order_date=2026-01-01,2026-01-03
  --partitions at=2026-01..2026-03          (month partitions)
  --partitions n=1..12                      (integers)
  --partitions 'region=eu,"a,b",""'         (strings; quote a value with a comma, or the empty one)
  --partitions user_id=bucket:0..15         (the buckets of bucket[16] on user_id)
For a table of several partition fields, give one per field named; a field not named means every
value of it that the input or the table holds in the others (as Spark's dynamic overwrite):
  --partitions event_ts=2026-01-01..2026-01-31 --partitions region=eu,us
  --partitions event_ts=2026-01-01..2026-01-31                 (every region of those days)

A SQL job that names its lag and lookback may give --since-last instead of --partitions: the days of
the source rows that arrived since the table's watermark, less the lookback. Rows that arrived later
than the lookback into a day already published are refused until the run says --restate or --leave,
with --reason (docs/late.md).

` + exitCodesHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !cmd.Flags().Changed("job") {
				return usagef("publish needs at least one input: a file, a glob or a folder (or --job)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return runPublish(cmd.Context(), g, o)
		},
	}
	addStagingFlags(cmd, &o)
	f := cmd.Flags()
	f.BoolVar(&o.noAutoRollback, "no-auto-rollback", false, "keep a commit that fails verification instead of rolling it back")
	return cmd
}

// addStagingFlags are the flags of every command that stages a run.
func addStagingFlags(cmd *cobra.Command, o *publishOptions) {
	f := cmd.Flags()
	f.StringArrayVar(&o.jobs, "job", nil, "compute the rows with a SQL job file (its sources, SQL and reject rules) instead of reading inputs; several --job are one release, every table committed as one")
	f.BoolVar(&o.downstream, "downstream", false, "with --job: release with it every job that reads its table, directly or further down (found in --jobs), their partitions following from its")
	f.StringArrayVar(&o.lineage, "jobs", nil, "with --downstream: job files or folders of them to find what reads a table in (default: jobs: in lakeswap.yaml, else the folder of the first --job)")
	f.BoolVar(&o.allowMismatch, "allow-mismatch", false, "with --job: let staged rows or sums differ from what the job's reconciliation query says (a warning, not a refusal)")
	f.StringVar(&o.rejects, "rejects", "", "with --job: file the source rows its rules reject are written to, as JSON lines (default rejects-<run id>-<time>.ndjson, in a release rejects-<table>-<run id>-<time>.ndjson; never overwritten)")
	f.StringVar(&o.table, "table", "", "table to publish to, NAMESPACE.NAME (required; a job names its own)")
	f.StringArrayVar(&o.partitions, "partitions", nil, "partitions this run owns: COL=FROM..TO or COL=V1,V2 (required); for a table of several partition fields, once per field named, a field not named meaning every value of it the input or the table holds")
	f.BoolVar(&o.allowEmpty, "allow-empty", false, "allow a declared partition to be replaced by no rows")
	f.BoolVar(&o.implausible, "allow-implausible", false, "allow a partition's rows or additive sums to move outside the plausible band of what it holds")
	f.IntVar(&o.keys, "keys", 0, "how many grain keys of each kind of change (added, removed, changed) each partition names with their values (default 3)")
	f.BoolVar(&o.buildTwice, "build-twice", false, "read the inputs a second time and refuse the run if any partition's rows fingerprint otherwise (a nondeterministic input)")
	f.StringVar(&o.band, "plausible-band", "", "LO:HI ratios of new to old rows and sums a partition may move within (default: the table's lakeswap.plausible-band, else 0.5:2)")
	f.StringVar(&o.compression, "compression", "zstd", "Parquet compression: zstd, snappy, gzip, none")
	f.Int64Var(&o.targetFileMiB, "target-file-size-mib", 128, "roll to a new Parquet file at this size")
	f.IntVar(&o.parallelism, "parallelism", 0, "partitions staged at once (default: one per core)")
	f.StringVar(&o.runID, "run-id", "", "name the run, e.g. the orchestrator's job id (default: time and random): a rerun of a published id commits nothing, other content under it is refused; staged files go under run-<id>-<attempt>")
	f.StringVar(&o.memoryLimit, "memory-limit", "", "memory the whole process may use, e.g. 2GiB, at least 256MiB (default: half of the machine's)")
	f.BoolVar(&o.adopt, "adopt", false, "publish Parquet files another engine wrote under the table's location as they are: validated and fingerprinted in place, never rewritten")
	f.BoolVar(&o.noProgress, "no-progress", false, "no live display of rows read and partitions staged (it shows only on a terminal, never with -o json or -v)")
	f.IntVar(&o.batch, "batch", 0, "commit in batches of this many partitions, in partition order, one snapshot each; a rerun of the run id resumes after the batches that landed (default: one snapshot for the whole run)")
	f.BoolVar(&o.perPartition, "commit-per-partition", false, "commit each partition as a snapshot of its own, as --batch 1")
	f.BoolVar(&o.rewrite, "rewrite-overlapping", false, "where files written under an earlier partition spec (a month's file, the table now by day) hold rows of the declared partitions, take them out in the same commit and stage their other rows again from the table, into the partitions they fall in (carried); without it such a run is refused")
	f.BoolVar(&o.restateFrozen, "restate-frozen", false, "change partitions the table's lakeswap.freeze-after froze (with --reason, recorded in the run)")
	f.BoolVar(&o.restate, "restate", false, "with --job: rebuild published partitions with the source rows that arrived later than the job's lookback (with --reason, recorded in the run)")
	f.BoolVar(&o.leave, "leave", false, "with --job: keep published partitions as they are, the source rows that arrived later than the job's lookback left out and counted, in this run and the job's next (with --reason, recorded in the run)")
	f.BoolVar(&o.sinceLast, "since-last", false, "with --job, instead of --partitions: rebuild the days of the source rows that arrived since the watermark of the table's last landed run, less the job's lookback")
	f.StringVar(&o.reason, "reason", "", "with --restate-frozen, --restate or --leave: why, recorded in the run and shown by history and show")
	f.StringVar(&o.decidedBy, "decided-by", "", "with --restate-frozen, --restate or --leave: who decided it (default the user running lakeswap)")
	f.StringVar(&o.csvDelimiter, "delimiter", "", "CSV inputs: the character between fields, e.g. ';', '|' or tab (default: a comma)")
	f.StringVar(&o.csvNull, "null", "", "CSV inputs: the field that stands for null in any column, e.g. NULL or \\N")
	f.BoolVar(&o.csvNoHeader, "no-header", false, "CSV inputs: the first line is a row; --columns names the columns in order")
	f.StringSliceVar(&o.csvColumns, "columns", nil, "CSV inputs with --no-header: the file's columns in order, e.g. event_id,event_ts,amount")
	f.StringVar(&o.csvQuote, "quote", "", "CSV inputs: the character that quotes a value, doubled inside one, e.g. ' (default: a double quote)")
	f.StringVar(&o.csvColumnMap, "column-map", "", "CSV inputs: a YAML file mapping the file's column names to the table's (EventID: event_id)")
	f.StringVar(&o.spillDir, "spill-dir", "", "local folder where rows wait between reading and staging, and a plan's sorted grain keys past memory; needs about the inputs' uncompressed size (default: the system's temporary folder)")
}

func runPublish(ctx context.Context, g *globals, o publishOptions) error {
	o.runIDGiven = o.runID != ""
	if o.release() {
		return runRelease(ctx, g, o, false)
	}
	return runStaging(ctx, g, o, func(pub *swap.Publisher) backfill.Finish { return pub.Publish }, func(res *swap.Result) any {
		return planView{RunID: res.Plan.RunID, Result: res}
	}, printResult)
}

// runStaging checks a publish's flags, lists its inputs, opens the catalog
// and hands the request over to finish, through a job, adoption or the
// inputs' rows: publish and plan share all of it.
func runStaging(ctx context.Context, g *globals, o publishOptions, finishWith func(*swap.Publisher) backfill.Finish, view func(*swap.Result) any, print func(io.Writer, *swap.Result)) error {
	j, err := loadJob(&o)
	if err != nil {
		return err
	}
	req, in, err := stagingRequest(&o)
	if err != nil {
		return err
	}
	var files []string
	if j == nil {
		if files, err = source.ListInputs(localInputs(o.files)); err != nil {
			return requestError{err}
		}
	}
	g.writes, g.uploadBudget = true, backfill.UploadBudget(in.MemoryLimit)
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	if o.memoryLimit != "" {
		// Checked once the catalog says where the warehouse is (S3 needs
		// more), and before the runtime is held to the limit.
		if err := checkMemoryLimit(o.memoryLimit, in.MemoryLimit, g.props); err != nil {
			return err
		}
	}
	defer backfill.HoldRuntime(in.MemoryLimit)()
	in, unwire, err := g.wire(ctx, pub, j, o, in)
	if err != nil {
		return err
	}
	defer unwire(false)
	if files, err = listObjects(ctx, o.files, files, &in); err != nil {
		return err
	}
	finish := finishWith(pub)
	var res *swap.Result
	switch {
	case j != nil:
		res, err = j.Run(ctx, pub, req, job.RunOptions{Partitions: o.partitions, RejectsFile: o.rejects, Inputs: in, Late: lateChoice(o, req), SinceLast: o.sinceLast}, finish)
	case o.adopt:
		res, err = backfill.Adopted{Selectors: o.partitions, Paths: files}.Run(ctx, pub, req, finish)
	default:
		res, err = backfill.Files{Selectors: o.partitions, Paths: files, Input: in, Twice: o.buildTwice, Writer: backfill.WriterBytes(g.uploads)}.Run(ctx, pub, req, finish)
	}
	unwire(err == nil) // the display ends before anything is printed
	if res == nil {
		return err
	}
	var v any = res
	if view != nil {
		v = view(res)
	}
	return g.report(v, err, func(w io.Writer) { print(w, res) })
}

// loadJob loads --job, if given, and checks the flags that go with it; a
// job names its table.
func loadJob(o *publishOptions) (*job.Job, error) {
	if len(o.jobs) > 0 {
		o.job = o.jobs[0]
	}
	if o.job == "" {
		return nil, nil
	}
	if len(o.files) > 0 {
		return nil, usagef("a job reads its own sources: give --job or inputs, not both")
	}
	j, err := job.Load(o.job)
	if err != nil {
		return nil, requestError{err}
	}
	if o.table == "" {
		o.table = j.Table
	} else if o.table != j.Table {
		return nil, usagef("--table %s, but job %s computes %s", o.table, o.job, j.Table)
	}
	if o.adopt || o.buildTwice {
		return nil, usagef("--job computes rows with SQL: --adopt and --build-twice do not apply")
	}
	return j, nil
}

// stagingRequest checks the staging flags and makes the request and the
// input options of them.
func stagingRequest(o *publishOptions) (swap.Request, source.Options, error) {
	var req swap.Request
	var in source.Options
	fail := func(err error) (swap.Request, source.Options, error) { return req, in, err }
	ident, err := tableFlag(o.table)
	if err != nil {
		return fail(err)
	}
	switch {
	case o.sinceLast && len(o.jobs) == 0:
		return fail(usagef("--since-last rebuilds the days a job's sources received since its last run: give --job"))
	case o.sinceLast && len(o.partitions) > 0:
		return fail(usagef("--since-last finds the partitions from the job's watermark: give it or --partitions, not both"))
	case o.sinceLast && (len(o.jobs) > 1 || o.downstream):
		return fail(usagef("--since-last runs one job: a release (several --job, --downstream) names its partitions with --partitions"))
	case len(o.partitions) == 0 && !o.sinceLast:
		return fail(usagef("--partitions is required, for example --partitions order_date=2026-01-01..2026-01-02"))
	}
	if o.runID != "" {
		if err := swap.CheckRunID(o.runID); err != nil {
			return fail(usageError{err})
		}
	}
	writer, err := parquetio.ParseCompression(o.compression)
	if err != nil {
		return fail(usageError{err})
	}
	if o.targetFileMiB < 1 || o.targetFileMiB > 1<<20 {
		return fail(usagef("--target-file-size-mib %d: want a size from 1 to %d MiB", o.targetFileMiB, 1<<20))
	}
	if o.parallelism < 0 || o.parallelism > 1024 {
		return fail(usagef("--parallelism %d: want 0 (one per core) up to 1024", o.parallelism))
	}
	if o.perPartition {
		if o.batch > 1 {
			return fail(usagef("--commit-per-partition is --batch 1; pass one of them"))
		}
		o.batch = 1
	}
	if o.keys < 0 || o.keys > 1000 {
		return fail(usagef("--keys %d: want how many keys of each kind of change each partition names, 1 to 1000", o.keys))
	}
	if o.batch < 0 {
		return fail(usagef("--batch %d: want a number of partitions per commit", o.batch))
	}
	if o.rewrite && o.adopt {
		return fail(usagef("--adopt commits another engine's files as they are: --rewrite-overlapping, which stages rows again, does not apply"))
	}
	if o.batch > 0 && o.adopt {
		return fail(usagef("--adopt commits another engine's files as they are, in one snapshot: --batch and --commit-per-partition do not apply"))
	}
	writer.TargetFileSize = o.targetFileMiB << 20
	in = source.Options{SpillDir: o.spillDir, MemoryLimit: backfill.DefaultMemoryLimit()}
	if in.CSV, err = csvOptions(o); err != nil {
		return fail(err)
	}
	if o.memoryLimit != "" {
		if in.MemoryLimit, err = parseSize(o.memoryLimit); err != nil {
			return fail(usagef("--memory-limit: %v", err))
		}
	}
	req = swap.Request{
		RunID: o.runID, Named: o.runIDGiven, AllowEmpty: o.allowEmpty, NoAutoRollback: o.noAutoRollback, Parallelism: o.parallelism, Writer: writer,
		AllowImplausible: o.implausible, Changes: o.changes, ChangesKeys: o.keys, Batch: o.batch, AllowMismatch: o.allowMismatch, Table: ident, RewriteOverlapping: o.rewrite,
		SpillDir: o.spillDir,
	}
	backfill.Budget(&req, in.MemoryLimit)
	if o.planFile != "" {
		req.AuditBranch, req.PlanFile, req.PlannedBy = o.auditBranch, o.planFile, cmp.Or(strings.TrimSpace(o.decidedBy), osUser())
		if abs, err := filepath.Abs(o.planFile); err == nil {
			req.PlanFile = abs
		}
	}
	decides := o.restateFrozen || o.restate || o.leave
	switch {
	case o.restate && o.leave:
		return fail(usagef("--restate rebuilds the partitions with the late rows, --leave keeps them as published: give one"))
	case (o.restate || o.leave) && len(o.jobs) == 0:
		return fail(usagef("--restate and --leave decide on a job's source rows that arrived late: give --job"))
	case decides && strings.TrimSpace(o.reason) == "":
		return fail(usagef("%s decides on numbers already reported: say why with --reason TEXT, which the run records", decisionFlags(o)))
	case !decides && (o.reason != "" || o.decidedBy != "" && o.planFile == ""):
		return fail(usagef("--reason and --decided-by go with --restate-frozen, --restate or --leave"))
	case strings.ContainsFunc(o.reason, words.Unprintable) || strings.ContainsFunc(o.decidedBy, words.Unprintable):
		// history prints a decision on one line, as lakeswap's own lines.
		return fail(usagef("--reason and --decided-by are one line of text: they hold a newline, tab, terminal escape or direction override"))
	case len(o.reason) > maxReason:
		return fail(usagef("--reason is %d bytes; the run keeps it in every later metadata file of the table: say it in at most %d and point to the document", len(o.reason), maxReason))
	case decides:
		req.DecidedBy = cmp.Or(o.decidedBy, osUser())
		if o.restateFrozen {
			req.RestateFrozen = strings.TrimSpace(o.reason)
		}
	}
	if o.band != "" {
		band, err := contract.ParseBand(o.band)
		if err != nil {
			return fail(usageError{err})
		}
		req.Band = &band
	}
	return req, in, nil
}

// maxReason is the longest --reason, in bytes: a decision's reason is
// kept in the snapshot summary that every later metadata file carries.
const maxReason = 2000

// decisionFlags names the decisions the flags make, for a message.
func decisionFlags(o *publishOptions) string {
	var flags []string
	for _, f := range []struct {
		on   bool
		name string
	}{{o.restateFrozen, "--restate-frozen"}, {o.restate, "--restate"}, {o.leave, "--leave"}} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	return strings.Join(flags, " and ")
}

// lateChoice is the run's decision on late rows, if the flags make one.
func lateChoice(o publishOptions, req swap.Request) *job.LateChoice {
	switch {
	case o.restate:
		return &job.LateChoice{Decision: runrecord.LateRestate, Reason: strings.TrimSpace(o.reason), DecidedBy: req.DecidedBy}
	case o.leave:
		return &job.LateChoice{Decision: runrecord.LateLeave, Reason: strings.TrimSpace(o.reason), DecidedBy: req.DecidedBy}
	}
	return nil
}

// osUser names the user running lakeswap, for the runs that record who
// decided.
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

// localInputs are the inputs that are not S3 objects.
func localInputs(args []string) []string {
	var local []string
	for _, f := range args {
		if !source.IsObjectURL(f) {
			local = append(local, f)
		}
	}
	return local
}

// wire hooks the publisher up to the terminal and the test hooks, and
// opens the S3 store a job or S3 inputs read through.
// The returned function stops the live display: ok says the run got to
// its end, whose lines stay; otherwise they are cleared.
func (g *globals) wire(ctx context.Context, pub *swap.Publisher, j *job.Job, o publishOptions, in source.Options) (source.Options, func(ok bool), error) {
	pub.Progress = &progressLog{log: g.logger()}
	unwire := func(bool) {}
	if !o.noProgress && !g.json() && g.verbose == 0 && isTerminal(g.stderr) {
		live := newLiveProgress(g.stderr)
		unwire = func(ok bool) {
			if ok {
				live.End()
			}
			live.Close()
		}
		pub.Progress, in.Read, in.Size = live, live.Read, live.Size
	}
	pub.BeforeCommit = commitBarrier(g.getenv)
	// A job reads S3 sources, and the files of a table on S3, through
	// lakeswap's own S3 client; so do S3 inputs.
	jobS3 := j != nil && (s3store.UsesS3(g.props) || slices.ContainsFunc(j.SourceNames(), func(n string) bool { return source.IsObjectURL(j.Sources[n].Path) }))
	if jobS3 || len(localInputs(o.files)) < len(o.files) {
		var err error
		if in.Store, err = inputStore(ctx, g.props, g.getenv); err != nil {
			unwire(false)
			return in, nil, err
		}
	}
	return in, unwire, nil
}

// listObjects lists the S3 inputs among args, once each, after files.
func listObjects(ctx context.Context, args, files []string, in *source.Options) ([]string, error) {
	for _, arg := range args {
		if !source.IsObjectURL(arg) {
			continue
		}
		if in.Objects == nil {
			in.Objects = map[string]source.Object{}
		}
		objs, err := source.ListObjects(ctx, in.Store, arg)
		var nm *source.NoMatchError
		if errors.As(err, &nm) {
			return nil, requestError{err}
		}
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if _, seen := in.Objects[o.URL]; !seen {
				in.Objects[o.URL] = o
				files = append(files, o.URL)
			}
		}
	}
	return files, nil
}

// inputStore opens the object store of the catalog's S3 settings
// (inputStore), for a job's S3 sources.
func (g *globals) inputStore(ctx context.Context) (source.ObjectStore, error) {
	return inputStore(ctx, g.props, g.getenv)
}

// inputStore reads input objects with the catalog's S3 settings, or, for a
// catalog off S3, the AWS chain's (AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL
// for a store other than AWS).
func inputStore(ctx context.Context, props map[string]string, getenv func(string) string) (*s3store.Store, error) {
	c := s3store.ConfigFromProps(props)
	if c.Endpoint == "" && (getenv("AWS_ENDPOINT_URL_S3") != "" || getenv("AWS_ENDPOINT_URL") != "") {
		c.PathStyle = true // S3-compatible stores answer on one address
	}
	awsCfg, err := s3store.LoadAWS(ctx, c)
	if err != nil {
		return nil, err
	}
	return s3store.New(awsCfg, c), nil
}

func printResult(w io.Writer, res *swap.Result) {
	p := res.Plan
	if res.Status == swap.StatusUnchanged {
		if p.Fingerprint.Rows == 0 {
			fmt.Fprintf(w, "run %s on %s: unchanged: the declared partitions hold no rows, and the run staged none; nothing was committed\n", p.RunID, p.Table)
			return
		}
		cleanup := "the staged files were removed"
		if p.Cleanup != "" {
			cleanup = p.Cleanup
		}
		fmt.Fprintf(w, "run %s on %s: unchanged: the declared partitions already hold exactly this content (fingerprint %s, %s); nothing was committed; %s\n",
			p.RunID, p.Table, short(p.Fingerprint.Hash), words.Count(p.Fingerprint.Rows, "row"), cleanup)
		return
	}
	if len(res.Batches) > 0 {
		fmt.Fprintf(w, "run %s on %s: %s in %s\n", p.RunID, p.Table, res.Status, words.Count(len(res.Batches), "batch", "batches"))
		for _, b := range res.Batches {
			if b.SnapshotID == 0 { // unchanged: nothing was committed for it
				fmt.Fprintf(w, "  batch %s %s: %s, nothing committed\n", b.Batch, strings.Join(b.Partitions, ","), b.Status)
				continue
			}
			fmt.Fprintf(w, "  batch %s %s: %s, snapshot %d\n", b.Batch, strings.Join(b.Partitions, ","), b.Status, b.SnapshotID)
		}
		fmt.Fprintf(w, "rows %s, sums %s, fingerprint %s\n", words.Number(p.Fingerprint.Rows), formatSums(p.Fingerprint.Sums, p.Contract.Scales), p.Fingerprint.Hash)
		return
	}
	if res.Status == swap.StatusAlreadyPublished {
		fmt.Fprintf(w, "run %s on %s: already published in snapshot %d with this content (fingerprint %s); nothing was committed\n",
			p.RunID, p.Table, res.SnapshotID, short(p.Fingerprint.Hash))
		return
	}
	fmt.Fprintf(w, "run %s on %s: %s", p.RunID, p.Table, res.Status)
	if res.SnapshotID != 0 {
		if res.CommittedOn != 0 && (p.BaseSnapshotID == nil || *p.BaseSnapshotID != res.CommittedOn) {
			fmt.Fprintf(w, " (snapshot %d, committed on %d, planned against %s)", res.SnapshotID, res.CommittedOn, baseName(p.BaseSnapshotID))
		} else {
			fmt.Fprintf(w, " (snapshot %d, base %s)", res.SnapshotID, baseName(p.BaseSnapshotID))
		}
	}
	fmt.Fprintln(w)
	printJob(w, p)
	if len(p.Findings) > 0 {
		return // the error lists the findings
	}
	for _, warning := range p.Warnings {
		fmt.Fprintln(w, "warning: "+warning)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tOLD ROWS\tNEW ROWS\tOLD FINGERPRINT\tNEW FINGERPRINT")
	for _, pp := range p.Partitions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", partitionName(pp), words.Number(pp.OldFingerprint.Rows), words.Number(pp.Fingerprint.Rows), short(pp.OldFingerprint.Hash), short(pp.Fingerprint.Hash))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "rows %s, sums %s, fingerprint %s\n", words.Number(p.Fingerprint.Rows), formatSums(p.Fingerprint.Sums, p.Contract.Scales), p.Fingerprint.Hash)
	for _, m := range res.Mismatches {
		fmt.Fprintf(w, "mismatch %s: %s\n", m.Partition, m.What)
	}
}

func baseName(id *int64) string {
	if id == nil {
		return "none"
	}
	return fmt.Sprint(*id)
}

// progressLog logs steps and staged partitions at -v, in the log's one
// format, each step with the time the one before it took.
type progressLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	step string
	at   time.Time
}

func (p *progressLog) Step(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.step != "" {
		p.log.Info("step done", "step", p.step, "took", time.Since(p.at).Round(time.Millisecond))
	}
	p.step, p.at = name, time.Now()
	p.log.Info("step", "step", name)
}

func (p *progressLog) Staged(partition string, rows, bytes int64) {
	p.log.Info("staged", "partition", partition, "rows", rows, "bytes", bytes)
}

// csvOptions reads the CSV flags.
func csvOptions(o *publishOptions) (source.CSVOptions, error) {
	form := source.CSVForm{Delimiter: o.csvDelimiter, Quote: o.csvQuote, Null: o.csvNull, Columns: o.csvColumns}
	if o.csvNoHeader {
		form.Header = new(bool)
	}
	if o.csvColumnMap != "" {
		m, err := source.ReadColumnMap(o.csvColumnMap)
		if err != nil {
			return source.CSVOptions{}, usagef("--column-map: %v", err)
		}
		form.Rename = m
	}
	c, err := form.Options()
	if err != nil {
		return c, usagef("CSV options: %v (--delimiter, --quote, --no-header with --columns, --column-map)", err)
	}
	return c, nil
}
