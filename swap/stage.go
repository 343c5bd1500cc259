package swap

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/jsonid"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/rows"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/internal/hold"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/swap/internal/staging"
	"github.com/lakeswap/lakeswap/verify"
)

// Request is one publish: which table, which partitions it owns, and where
// their rows come from.
type Request struct {
	Table      table.Identifier
	Partitions []string // partition values, e.g. 2026-01-01
	Source     rows.Source
	// SourceName describes the input for the record (file names, a job id);
	// it must not hold credentials.
	SourceName string
	// RunID names the run; empty means a fresh one.
	RunID string
	// Named says the caller chose RunID (--run-id), so that status may be
	// asked of it: a run that finds its partitions holding its content
	// then records that it did, beside the table's files.
	Named bool
	// AllowEmpty lets a declared partition be replaced by no rows.
	AllowEmpty bool
	// NoAutoRollback keeps a commit that failed verification in place.
	NoAutoRollback bool
	// Parallelism bounds the partitions staged at once; 0 means one per core.
	Parallelism int
	Writer      parquetio.Options
	// Target, when set, is the table as Open loaded it, so that a caller
	// who read the contract first does not load the table twice.
	Target *Target
	// AllowImplausible lets a partition's rows or additive sums move outside
	// the plausible band of what it held; Band, when set, replaces the
	// table's band for this run.
	AllowImplausible bool
	Band             *contract.Band
	// SecondBuild, when set, is the same input built again (read again,
	// or its transform run again): each partition's rows from it must
	// fingerprint as the staged rows do, or the run is refused as
	// nondeterministic.
	SecondBuild rows.Source
	// Adopt, instead of a Source, names Parquet files another engine wrote
	// under the table's location (full locations, as the table's file IO
	// reads them): they are validated and fingerprinted where they are and
	// committed as they are, never rewritten, moved or removed.
	Adopt []string
	// Changes compares each partition's staged rows with what it holds,
	// at the grain, for a person to read (PartitionPlan.Changes): one more
	// read of the old and new rows, and a last one of each, stopped early,
	// for the values of the keys named. Each partition's comparison holds
	// up to ChangesMemory of keys (0: verify.DiffMemory); past it they
	// wait sorted in SpillDir on local disk ("": the system's temporary
	// folder).
	Changes       bool
	ChangesMemory int64
	SpillDir      string
	// ChangesKeys is how many keys of each kind of change (added,
	// removed, changed) each partition names, with their values; 0 is
	// verify.ExampleKeys.
	ChangesKeys int
	// KeysMaxRows, when set, bounds the rows whose keys the run holds to
	// check the grain across its partitions where no other partition holds
	// files (about 40 bytes a row); past it the check is left to verify
	// --table, and the plan warns so.
	KeysMaxRows int64
	// Batch, when set, commits the run in batches of this many partitions,
	// in partition order, one snapshot each (Plan.Batch).
	Batch int
	// Job, when a SQL job computed the rows, is what the run records of
	// it, and the judge of its late rows.
	Job Job
	// Expect, when set, is what the source says each partition must hold
	// (a job's reconciliation): a staged partition whose rows or additive
	// sums differ is refused, unless AllowMismatch. The figures are
	// recorded with the job's.
	Expect        map[string]Figures
	AllowMismatch bool
	// Tolerance is how far each figure (rows, or an additive column) may
	// differ from Expect: a difference within it is a warning.
	Tolerance map[string]Tolerance
	// ReconcileQuery is the query that gave Expect, which a refusal
	// shows.
	ReconcileQuery string
	// RewriteOverlapping lets a run declare partitions that files of an
	// earlier partition spec hold rows of: those files go out in its
	// commit, and their rows of partitions it does not declare are staged
	// again from the table as carried partitions (PartitionPlan.Carried).
	// Without it such a run is refused, naming the files.
	RewriteOverlapping bool
	// RestateFrozen, when set, is the reason a run changes partitions the
	// table's lakeswap.freeze-after froze, and DecidedBy who decided it:
	// both recorded in the run. Empty, such a run is refused.
	RestateFrozen string
	DecidedBy     string
	// AuditBranch, for a plan (Stage), commits the staged snapshot to a
	// branch of the table built on the base (Plan.Branch), which any
	// engine can query before the plan is approved; main is untouched.
	AuditBranch bool
	// PlannedBy names who made a plan, and PlanFile where it is written:
	// what the list of plans waiting for approval shows (Pending).
	PlannedBy, PlanFile string
	// release is the release the run is a table of, if any.
	release *Release
}

// Figures are a partition's rows and additive sums.
type Figures struct {
	Rows int64                `json:"rows"`
	Sums map[string]exact.Sum `json:"sums,omitempty"`
}

// Target is a table loaded for a publish, with its contract: what a caller
// needs to check partition values before reading any input.
type Target struct {
	table    *table.Table
	Contract *contract.Contract
}

// Open loads a table and reads its contract.
func (p *Publisher) Open(ctx context.Context, ident table.Identifier) (*Target, error) {
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	c, err := contract.Of(tbl.Metadata())
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", strings.Join(ident, "."), err)
	}
	if err := snapshot.Writable(tbl.Metadata()); err != nil {
		return nil, outcome.Invalid(fmt.Errorf("table %s: %w", strings.Join(ident, "."), err))
	}
	return &Target{table: tbl, Contract: c}, nil
}

// Metadata is the table's metadata as loaded.
func (t *Target) Metadata() table.Metadata { return t.table.Metadata() }

// tableOf returns the loaded table if it is ident, else nil.
func (t *Target) tableOf(ident table.Identifier) *table.Table {
	if t == nil || !slices.Equal(t.table.Identifier(), ident) {
		return nil
	}
	return t.table
}

// NewRunID returns a run id that sorts by start time and is unique: the time
// of day alone would collide between two writers.
func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// maxRunID is the longest run id, in bytes.
const maxRunID = 200

// CheckRunID refuses a run id that is not printable text of 1 to 200
// bytes. Any such text is taken (an orchestrator's own id, say Airflow's
// scheduled__2026-01-01T00:00:00+00:00): its files' names hold it escaped.
func CheckRunID(id string) error {
	switch {
	case id == "":
		return errors.New("run id is empty")
	case len(id) > maxRunID:
		return fmt.Errorf("run id %q is %d bytes; at most %d", id[:40]+"...", len(id), maxRunID)
	case !utf8.ValidString(id):
		return fmt.Errorf("run id %q is not UTF-8 text", id)
	case strings.TrimSpace(id) != id:
		return fmt.Errorf("run id %q begins or ends with a space: a careless copy would be another run", id)
	}
	for _, r := range id {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("run id %q holds %U, which is not printable", id, r)
		}
	}
	return nil
}

// Stage plans a run and stages its partitions: it notes main's snapshot (the
// base) and the files each declared partition holds there, then writes,
// validates and fingerprints every partition's rows under a fresh prefix.
// It commits nothing: Apply commits the plan, here or in another process
// that reads it back as JSON. A plan with findings has had its staged files
// removed.
func (p *Publisher) Stage(ctx context.Context, req Request) (*Plan, error) {
	plan, tbl, err := p.stage(ctx, req, "plan")
	if plan == nil {
		return nil, err
	}
	if err == nil && req.AuditBranch && plan.Staged && !plan.Refused() && plan.prior == nil && !plan.changesNothing() && !plan.empty() {
		p.branchPlan(ctx, plan)
	}
	if err == nil && plan.Staged && len(req.Adopt) == 0 {
		p.notePending(ctx, tbl, plan, req)
	}
	return plan.Plan, err
}

// stage stages a run, holding its attempt as kind ("run": refreshed while
// the publish runs; "plan": until applied or discarded). Its calls are the
// steps of swap/doc.go up to the commit.
func (p *Publisher) stage(ctx context.Context, req Request, kind string) (*run, *table.Table, error) {
	// 1. Plan: note main's snapshot (the base) and the files each declared
	//    partition holds there, each under a prefix no attempt used.
	p.progress().Step("plan")
	plan, tbl, base, err := p.planRun(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	// 2. Hold the attempt before the first file is written, so that gc
	//    never takes a file of this attempt for a killed one's.
	if len(req.Adopt) == 0 {
		if err := p.holdAttempt(ctx, tbl, plan, kind); err != nil {
			return nil, nil, err
		}
	}
	// 3. Stage: write each partition's rows as Parquet, validating and
	//    fingerprinting them on the way (or read the files to adopt).
	p.progress().Step("stage")
	stageErr := p.stageAll(ctx, tbl, plan, req)
	got := gather(plan.Partitions, req.Source)
	plan.Inputs, plan.Findings, plan.DroppedFindings = got.inputs, append(plan.Findings, got.findings...), got.dropped
	plan.Warnings = append(plan.Warnings, got.warnings...)
	// 4. Guard: the checks that look across partitions and at the rest of
	//    the table, each named in the plan's checks.
	v := verdicts{}
	if len(plan.contract.Grain) == 0 {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s has no grain: keys twice or null, and records moved between partitions, are not checked; `lakeswap table set --table %s grain=COLUMN,...` gives it one", plan.Table, plan.Table))
	}
	if stageErr == nil {
		p.progress().Step("compare")
		stageErr = p.guard(ctx, tbl, plan, req, base, v)
	}
	// 5. Fingerprint the run as a whole, and what it replaces.
	if stageErr == nil && !plan.Refused() {
		plan.Fingerprint, plan.BaseFingerprint = fingerprints(plan.Partitions)
	}
	plan.Checks = checksOf(plan, req, v)
	// 6. A stage that failed or was refused removes exactly what it wrote.
	if stageErr != nil || plan.Refused() {
		cleanup := p.removeStaged(ctx, tbl, plan)
		plan.stopRefresh()
		p.removeHolds(ctx, tbl, plan)
		if stageErr != nil {
			return nil, nil, &outcome.OpError{Op: "stage", Table: plan.Table, RunID: plan.RunID, Err: stageErr,
				Hint: "nothing was committed; " + cleanup}
		}
		plan.Cleanup = cleanup
		return plan, tbl, nil
	}
	plan.Staged = true
	for i := range plan.Partitions {
		plan.Partitions[i].Unchanged = plan.Partitions[i].same()
	}
	// A rerun of a recorded run id finds its content still on main when the
	// declared partitions hold now what the run staged.
	plan.held = plan.BaseFingerprint.Hash == plan.Fingerprint.Hash && len(plan.shares()) == 0
	return plan, tbl, nil
}

// planRun loads the table (unless the request carries it), notes main's
// snapshot and the files each declared partition holds there, and names
// the attempt and each partition's staging prefix. It returns every live
// file of the base by partition, for the guards.
func (p *Publisher) planRun(ctx context.Context, req Request) (*run, *table.Table, map[string][]iceberg.DataFile, error) {
	name := strings.Join(req.Table, ".")
	if len(req.Partitions) == 0 {
		return nil, nil, nil, fmt.Errorf("publish to %s declares no partitions", name)
	}
	if (len(req.Adopt) > 0) == (req.Source != nil) {
		return nil, nil, nil, fmt.Errorf("publish to %s: name either a source of rows or files to adopt", name)
	}
	runID := req.RunID
	if runID == "" {
		runID = NewRunID()
	}
	if err := CheckRunID(runID); err != nil {
		return nil, nil, nil, err
	}
	target := req.Target
	if target.tableOf(req.Table) == nil {
		var err error
		if target, err = p.Open(ctx, req.Table); err != nil {
			return nil, nil, nil, err
		}
	}
	tbl, contract := target.table, target.Contract
	meta := tbl.Metadata()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("file IO of %s: %w", name, err)
	}
	plan := &run{Plan: &Plan{RunID: runID, Named: req.Named, Attempt: staging.NewAttempt(), Table: name, Source: req.SourceName, BaseMetadata: tbl.MetadataLocation(),
		PartitionColumn: contract.Partition.Name, Contract: contract.Summary(), Batch: req.Batch}, oldFiles: map[string][]iceberg.DataFile{}, contract: contract}
	if err := plan.setJob(req.Job); err != nil {
		return nil, nil, nil, err
	}
	base := meta.CurrentSnapshot()
	if base != nil {
		id := base.SnapshotID
		plan.BaseSnapshotID = &id
	}
	schemaID := jsonid.Int(contract.Schema.ID)
	plan.BaseSchemaID, plan.SchemaEvolved = &schemaID, len(meta.Schemas()) > 1
	plan.prior = runrecord.Find(meta, runID)
	all, err := snapshot.Files(ctx, fsys, base, contract)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("table %s: %w", name, err)
	}
	earlier, err := snapshot.Earlier(ctx, fsys, base, contract)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("table %s: %w", name, err)
	}
	if plan.baseIO, err = snapshot.WithDeletes(ctx, tbl, fsys, base, all, map[string][]iceberg.DataFile{earlierSpec: earlier}); err != nil {
		return nil, nil, nil, fmt.Errorf("table %s: %w", name, err)
	}
	values := slices.Compact(slices.Sorted(slices.Values(req.Partitions)))
	for _, v := range values {
		if err := contract.Partition.ParseValue(v); err != nil {
			return nil, nil, nil, fmt.Errorf("publish to %s: %w", name, err)
		}
		if err := plan.addPartition(meta, v, all[v], false); err != nil {
			return nil, nil, nil, fmt.Errorf("table %s: %w", name, err)
		}
	}
	if earlier, err = plan.overlapping(ctx, meta, req, all, earlier, values); err != nil {
		return nil, nil, nil, err
	}
	if req.Batch > 0 {
		if err := plan.carryLanded(ctx, meta, fsys, all); err != nil {
			return nil, nil, nil, fmt.Errorf("table %s: %w", name, err)
		}
	}
	// The rest of the table, for the guards that read it (a record
	// that moved), holds the earlier spec's files too.
	if len(earlier) > 0 {
		all[earlierSpec] = earlier
	}
	return plan, tbl, all, nil
}

// carryLanded carries again the partitions a landed batch of the run
// carried: a run resumed after a batch that rewrote a file of an earlier
// spec finds the file gone and would not carry them, and its batches
// would not be cut as the landed ones were. Staged from the table, they
// hold what the batch committed, and are recognised as landed.
func (plan *run) carryLanded(ctx context.Context, meta table.Metadata, fsys icebergio.IO, all map[string][]iceberg.DataFile) error {
	load := runrecord.NewLoader(fsys)
	added := false
	for _, s := range runrecord.FindAll(meta, plan.RunID) {
		rec, _, err := load.Snapshot(&s)
		if err != nil {
			return err
		}
		for _, v := range rec.Carried {
			if slices.ContainsFunc(plan.Partitions, func(pp PartitionPlan) bool { return pp.Value == v }) || plan.contract.Partition.ParseValue(v) != nil {
				continue
			}
			if err := plan.addPartition(meta, v, all[v], true); err != nil {
				return err
			}
			added = true
		}
	}
	if added {
		slices.SortFunc(plan.Partitions, func(a, b PartitionPlan) int { return strings.Compare(a.Value, b.Value) })
	}
	return nil
}

// addPartition adds to the plan the partition of value, holding files at
// the base, with a staging prefix of its own; carried, it is staged from
// the table's rows (Request.RewriteOverlapping).
func (plan *run) addPartition(meta table.Metadata, v string, files []iceberg.DataFile, carried bool) error {
	prefix, err := staging.Prefix(meta, plan.contract.Partition, v, plan.RunID, plan.Attempt)
	if err != nil {
		return err
	}
	data, deletes := describeData(files)
	plan.Partitions = append(plan.Partitions, PartitionPlan{
		Value: v, Key: plan.contract.Partition.Key(v), Prefix: prefix, OldFiles: data, OldDeletes: deletes, Carried: carried,
	})
	plan.oldFiles[v] = files
	return nil
}

// holdAttempt holds the plan's attempt as kind: a running publish's hold
// is refreshed until it ends, a plan's stays until applied or discarded.
func (p *Publisher) holdAttempt(ctx context.Context, tbl *table.Table, plan *run, kind string) error {
	loc := hold.Location(tbl.Metadata(), plan.RunID, plan.Attempt)
	if kind == "run" {
		var err error
		plan.stopHold, err = hold.WhileRunning(ctx, p.holds(tbl), p.log(), plan.RunID, plan.Attempt, loc)
		return err
	}
	return hold.Write(ctx, p.holds(tbl), plan.RunID, plan.Attempt, kind, time.Now(), loc)
}

// stageAll stages every declared partition: the request's rows, or the
// files it adopts, and what each partition holds at the base.
func (p *Publisher) stageAll(ctx context.Context, tbl *table.Table, plan *run, req Request) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	c := plan.contract
	if len(req.Adopt) > 0 {
		if err := p.adopt(ctx, fsys, tbl.Metadata(), c, plan, req.Adopt, req.AllowEmpty, adoptKeysMax(req.KeysMaxRows)); err != nil {
			return err
		}
		return fingerprintBase(ctx, plan.reading(fsys), c, plan)
	}
	wfs, err := p.stagingIO(ctx, fsys)
	if err != nil {
		return fmt.Errorf("staging IO of %s: %w", plan.Table, err)
	}
	if c.DeltaIntegers {
		req.Writer.DeltaIntegers = true
	}
	return p.stageRows(ctx, wfs, plan.reading(fsys), c, plan, req)
}

// staged is what staging found beyond each partition's rows: what each
// partition's validation found (and how many findings it left out), what
// the source found outside every partition, and the objects it read.
type staged struct {
	findings []verify.Finding
	dropped  int64
	inputs   []runrecord.Input
	warnings []string // of checks written warn:
}

// gather collects what staging the partitions from src found.
func gather(parts []PartitionPlan, src rows.Source) staged {
	var out staged
	if in, ok := src.(rows.ObjectReporter); ok {
		out.inputs = in.Objects()
	}
	if stray, ok := src.(rows.StrayReporter); ok {
		out.findings = append(out.findings, stray.Stray()...)
	}
	for _, pp := range parts {
		out.findings = append(out.findings, pp.findings.List...)
		out.dropped += pp.findings.Dropped
		for _, f := range pp.warnings.List {
			out.warnings = append(out.warnings, "check written warn: "+f.String())
		}
		if n := pp.warnings.Dropped; n > 0 {
			out.warnings = append(out.warnings, fmt.Sprintf("check written warn: and %s more in partition %s", words.Number(n), verify.DisplayKey(pp.Key)))
		}
	}
	return out
}

// ChangesContent says whether the partition's rows change, whatever
// becomes of its files.
func (pp *PartitionPlan) ChangesContent() bool {
	return pp.Fingerprint.Hash != pp.OldFingerprint.Hash || pp.Fingerprint.Rows != pp.OldFingerprint.Rows
}

// fingerprints combines the partitions' fingerprints into a run's, and
// what they held into what the run replaces.
func fingerprints(parts []PartitionPlan) (fp, base verify.Fingerprint) {
	newFP, oldFP := map[string]verify.Fingerprint{}, map[string]verify.Fingerprint{}
	for _, pp := range parts {
		newFP[pp.Key], oldFP[pp.Key] = pp.Fingerprint, pp.OldFingerprint
	}
	return verify.Combine(newFP), verify.Combine(oldFP)
}

func parallelism(n int) int {
	if n > 0 {
		return n
	}
	return runtime.NumCPU()
}

// minPlausibleRows is the fewest rows a partition must hold, before or
// after, for the band to judge it: a handful of rows swings by more than
// half with one correction, as the retail-orders story's days do. Both
// sides count, so that 99 rows becoming 5,000 is judged.
const minPlausibleRows = 100

// implausibleAdvice ends a refusal by the plausibility guard.
const implausibleAdvice = "; pass --allow-implausible if this is intended, or set the band (--plausible-band, table property " + contract.PropPlausibleBand + ")"

// stageRows stages every declared partition's rows from the request's
// source, and each carried partition's from the table, in parallel, and
// fingerprints what each holds at the base.
func (p *Publisher) stageRows(ctx context.Context, wfs icebergio.WriteFileIO, fsys icebergio.IO, c *contract.Contract, plan *run, req Request) error {
	locate := func(string, int64) string { return "" }
	if l, ok := req.Source.(rows.Locator); ok {
		locate = l.Locate
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelism(req.Parallelism))
	budget := &keptBudget{max: req.KeysMaxRows}
	defer budget.settle(plan)
	for i := range plan.Partitions {
		pp := &plan.Partitions[i]
		g.Go(func() error {
			// A carried partition's rows are the table's: no input line
			// names them.
			rows, at := func(fn func(arrow.RecordBatch) error) error { return baseRows(gctx, fsys, c, pp, fn) }, func(string, int64) string { return "" }
			if !pp.Carried {
				at = locate
				rr, err := req.Source.Open(gctx, pp.Value)
				if err != nil {
					return fmt.Errorf("stage partition %s: %w", pp.Key, err)
				}
				// Released once its findings are made: they name rows
				// through it (locate).
				defer rr.Release()
				rows = func(fn func(arrow.RecordBatch) error) error { return inputRows(rr, fn) }
			}
			if err := stagePartition(gctx, wfs, c, pp, req, at, rows); err != nil {
				return fmt.Errorf("stage partition %s: %w", pp.Key, err)
			}
			budget.take(pp)
			if pp.Carried {
				// What it held is what was just read of it: the rewritten
				// files are not read for it a second time.
				pp.OldFingerprint = verify.Fingerprint{Rows: pp.Fingerprint.Rows, Sums: pp.Fingerprint.Sums, Hash: pp.Fingerprint.Hash}
			} else if err := fingerprintOld(gctx, fsys, c, pp); err != nil {
				return err
			}
			var bytes int64
			for _, f := range pp.NewFiles {
				bytes += f.Bytes
			}
			p.progress().Staged(pp.Key, pp.Fingerprint.Rows, bytes)
			return nil
		})
	}
	return g.Wait()
}

// fingerprintBase fingerprints what each declared partition holds at the
// base.
func fingerprintBase(ctx context.Context, fsys icebergio.IO, c *contract.Contract, plan *run) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelism(0))
	for i := range plan.Partitions {
		pp := &plan.Partitions[i]
		g.Go(func() error { return fingerprintOld(gctx, fsys, c, pp) })
	}
	return g.Wait()
}

// fingerprintOld fingerprints what a partition holds at the base: its
// files' rows and its rows among the rewritten files.
func fingerprintOld(ctx context.Context, fsys icebergio.IO, c *contract.Contract, pp *PartitionPlan) error {
	old, err := snapshot.Fingerprint(ctx, fsys, c, pp.Value, filePaths(pp.OldFiles), pp.OldShares...)
	if err != nil {
		return fmt.Errorf("fingerprint partition %s at the base: %w", pp.Key, err)
	}
	pp.OldFingerprint = old
	return nil
}

// baseRows reads what a partition holds at the base, batch by batch in
// the contract's schema: its files' rows, then its rows among the
// rewritten files.
func baseRows(ctx context.Context, fsys icebergio.IO, c *contract.Contract, pp *PartitionPlan, fn func(arrow.RecordBatch) error) error {
	err := eachBatch(ctx, fsys, c, pp.OldFiles, func(rec arrow.RecordBatch) (bool, error) { return false, fn(rec) })
	if err != nil {
		return err
	}
	return snapshot.EachShare(ctx, fsys, c, pp.Value, pp.OldShares, fn)
}

// inputRows reads a partition's rows from the request's source.
func inputRows(rr array.RecordReader, fn func(arrow.RecordBatch) error) error {
	for rr.Next() {
		if err := fn(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	return nil
}

// stagePartition streams one partition's rows (read by rows) through
// validation, the fingerprint and the Parquet writer. After the first
// finding it stops writing but goes on validating, so that every finding
// is reported.
func stagePartition(ctx context.Context, wfs icebergio.WriteFileIO, c *contract.Contract, pp *PartitionPlan, req Request, locate func(string, int64) string, rows func(func(arrow.RecordBatch) error) error) error {
	acc := verify.NewAccumulator(c, pp.Value, func(row int64) string { return locate(pp.Value, row) })
	keepKeys(acc, c)
	w := parquetio.NewWriter(wfs, pp.Prefix, c.Arrow, req.Writer)
	defer func() { pp.NewFiles, pp.created, pp.touched = w.Written(), w.Created(), w.Opened() }()
	// After the first finding the rows go on, for the findings' keys, to
	// local files of the run's alone (a hashed grain names no key).
	var rest *restRows
	defer func() { rest.remove() }()
	err := rows(func(batch arrow.RecordBatch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, ok := acc.Conform(batch)
		if !ok {
			return nil
		}
		clean := acc.Count() == 0
		err := acc.Add(rec)
		switch {
		case err != nil:
		case clean && acc.Count() == 0:
			err = w.Write(rec)
		case hashedGrain(c):
			if rest == nil {
				rest, err = newRestRows(req.SpillDir, c, req.Writer)
			}
			if err == nil {
				err = rest.w.Write(rec)
			}
		}
		rec.Release()
		return err
	})
	if err != nil {
		w.Abort()
		return err
	}
	if _, err := w.Close(); err != nil {
		return err
	}
	pp.findings, pp.warnings = acc.Findings(req.AllowEmpty), acc.Warnings()
	pp.Fingerprint = acc.Result()
	pp.grainHashes = acc.GrainHashes()
	files := w.Written()
	if rest != nil {
		if _, err := rest.w.Close(); err != nil {
			return err
		}
		files = append(slices.Clone(files), rest.w.Written()...)
	}
	return nameKeys(ctx, multiIO{wfs}, acc, files, pp)
}

// hashedGrain says whether a contract's grain is kept hashed, so that a
// repeated key is named only by reading its rows again: any grain but
// one integer column.
func hashedGrain(c *contract.Contract) bool {
	if len(c.Grain) == 0 {
		return false
	}
	if len(c.Grain) > 1 {
		return true
	}
	switch c.Fields[c.Grain[0]].Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		return false
	}
	return true
}

// restRows are a refused partition's rows after its first finding,
// written to a local folder of their own, removed once its findings are
// made.
type restRows struct {
	dir string
	w   *parquetio.Writer
}

func newRestRows(spill string, c *contract.Contract, opts parquetio.Options) (*restRows, error) {
	dir, err := os.MkdirTemp(spill, "lakeswap-keys-")
	if err != nil {
		return nil, err
	}
	return &restRows{dir: dir, w: parquetio.NewWriter(icebergio.LocalFS{}, "file://"+dir, c.Arrow, opts)}, nil
}

func (r *restRows) remove() {
	if r != nil {
		r.w.Abort()
		_ = os.RemoveAll(r.dir)
	}
}

// multiIO reads a run's staged files through the staging IO and its
// local files (file://) directly.
type multiIO struct{ icebergio.IO }

func (m multiIO) Open(name string) (icebergio.File, error) {
	if strings.HasPrefix(name, "file://") {
		return icebergio.LocalFS{}.Open(name)
	}
	return m.IO.Open(name)
}

// nameKeys names the grain of each duplicate-grain finding that does not
// yet, from a second read of the files that hold the partition's rows in
// order from its first (what staging wrote before its first finding, or
// the files adopted): the finding says which key repeats, not only where.
func nameKeys(ctx context.Context, fsys icebergio.IO, acc *verify.Accumulator, files []parquetio.File, pp *PartitionPlan) error {
	n, last := acc.KeysToName()
	if n == 0 {
		return nil
	}
	first := int64(1)
	for _, f := range files {
		if first > last {
			break
		}
		if _, err := snapshot.EachBatch(ctx, fsys, acc, f.Path, func(rec arrow.RecordBatch) (bool, error) {
			acc.NameKeys(rec, first)
			first += rec.NumRows()
			return first > last, nil
		}); err != nil {
			return fmt.Errorf("read %s again to name its repeated keys: %w", f.Path, err)
		}
	}
	pp.findings = acc.Findings(true)
	return nil
}

// Partitions resolves the selectors on the partition columns (FROM..TO,
// or a list, one per field named; see contract.Partitioning.ParseSelectors)
// to the partitions a run owns, each value checked against its column's
// type and transform and, where the selectors name every field, against
// what the table's storage can hold under any run id. It is the one place
// a run's partitions are resolved; Stage checks each value again.
func (t *Target) Partitions(selectors ...string) (contract.Selection, error) {
	sel, err := t.Contract.Partition.ParseSelectors(selectors)
	if err != nil {
		return sel, outcome.Invalid(err)
	}
	for _, v := range sel.Values {
		if err := CheckPartitionValue(t.Metadata(), t.Contract.Partition, v); err != nil {
			return sel, outcome.Invalid(err)
		}
	}
	return sel, nil
}

// Resolve gives the partitions a selection declares once the input is
// read. For a table of one field, the values named: a declared partition
// the input leaves empty is a wipe the run refuses. For several fields,
// the tuples the selectors match that the input (seen) or the table's
// current snapshot holds: a field not named means every value of it, as
// Spark's dynamic overwrite replaces every region of the days it writes,
// so no region is left half-replaced; a tuple neither holds is no
// partition at all (days times regions name many that never had rows),
// while one the table holds and the input leaves empty is a wipe. A run
// declaring nothing this way is refused.
func (t *Target) Resolve(ctx context.Context, sel contract.Selection, seen []string) ([]string, error) {
	if t.Contract.Partition.One() {
		return sel.Values, nil
	}
	meta := t.table.Metadata()
	fsys, err := t.table.FS(ctx)
	if err != nil {
		return nil, err
	}
	files, err := snapshot.Files(ctx, fsys, meta.CurrentSnapshot(), t.Contract)
	if err != nil {
		return nil, err
	}
	// A tuple whose files are all delete files (a CDC delete of a key it
	// never held), or whose every row a delete removes, holds no row a
	// reader sees: it is no partition of the table's. Only tuples with
	// deletes that the input does not hold are read to find out.
	inInput := map[string]bool{}
	for _, v := range seen {
		inInput[v] = true
	}
	var held []string
	doubt := map[string][]iceberg.DataFile{} // tuples of the selection to read
	for v, fs := range files {
		data := snapshot.DataPaths(fs)
		switch {
		case len(data) == 0:
		case len(data) < len(fs) && sel.Owns(v) && !inInput[v]:
			doubt[v] = fs
		default:
			held = append(held, v)
		}
	}
	if len(doubt) > 0 {
		read, err := snapshot.WithDeletes(ctx, t.table, fsys, meta.CurrentSnapshot(), doubt)
		if err != nil {
			return nil, err
		}
		for v, fs := range doubt {
			if has, err := snapshot.AnyRow(ctx, read, snapshot.DataPaths(fs)); err != nil {
				return nil, fmt.Errorf("partition %s: %w", t.Contract.Partition.Key(v), err)
			} else if has {
				held = append(held, v)
			}
		}
	}
	// Files of an earlier spec (the table partitioned otherwise before)
	// hold tuples too: a region of a named day that only such a file
	// holds is the table's all the same, and the run's.
	earlier, err := snapshot.Earlier(ctx, fsys, meta.CurrentSnapshot(), t.Contract)
	if err != nil {
		return nil, err
	}
	for _, df := range earlier {
		if df.ContentType() != iceberg.EntryContentData || !snapshot.MayHold(t.Contract, df, sel.Named()) {
			continue
		}
		vs, _, err := snapshot.ValuesIn(ctx, fsys, t.Contract, df.FilePath())
		if err != nil {
			return nil, fmt.Errorf("read %s, written under an earlier partition spec: %w", df.FilePath(), err)
		}
		held = append(held, vs...)
	}
	values := sel.Resolve(seen, held)
	if len(values) == 0 {
		return nil, outcome.Invalid(fmt.Errorf("the selectors %s match no partition the input or the table holds", sel))
	}
	if len(values) > maxPartitions {
		return nil, outcome.Invalid(fmt.Errorf("the selectors %s match %d partitions, over %d; name more of the fields or split the backfill", sel, len(values), maxPartitions))
	}
	for _, v := range values {
		if err := CheckPartitionValue(meta, t.Contract.Partition, v); err != nil {
			return nil, outcome.Invalid(err)
		}
	}
	return values, nil
}

// maxPartitions bounds the partitions one run declares, as a selector's
// ranges are bounded.
const maxPartitions = 100_000

// Location is the table's location, under which adopted files must lie.
func (t *Target) Location() string { return t.table.Metadata().Location() }

// ParseTable reads a table name as NS.NAME (nested namespaces: A.B.NAME).
func ParseTable(name string) (table.Identifier, error) {
	ident, err := catalog.ParseIdent(name)
	return ident, outcome.Invalid(err)
}

// adoptKeysMax is the most rows whose grain keys adopted partitions
// validated at once may hold: KeysMaxRows, or no bound but the cores when
// it is not set.
func adoptKeysMax(keysMaxRows int64) int64 {
	if keysMaxRows <= 0 {
		return math.MaxInt64
	}
	return keysMaxRows
}

// Published says which partitions of the table's main hold rows, by
// value.
func (t *Target) Published(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	head := t.table.Metadata().CurrentSnapshot()
	if head == nil {
		return out, nil
	}
	fsys, err := t.table.FS(ctx)
	if err != nil {
		return nil, err
	}
	all, err := snapshot.Files(ctx, fsys, head, t.Contract)
	if err != nil {
		return nil, err
	}
	for v, files := range all {
		out[v] = len(files) > 0
	}
	return out, nil
}
