package swap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/internal/hold"
	"github.com/lakeswap/lakeswap/swap/internal/staging"
	"github.com/lakeswap/lakeswap/verify"
)

// Catalog is what the protocol needs of a catalog: loading a table and
// committing to it, iceberg-go's table.CatalogIO. A *catalog.Catalog is
// one; tests wrap one to count loads or to act around a commit.
type Catalog = table.CatalogIO

var _ Catalog = (*catalog.Catalog)(nil)

// Publisher runs the publish protocol against one catalog.
type Publisher struct {
	Catalog  Catalog
	Logger   *slog.Logger // nil: discard
	Progress Progress     // nil: NoProgress
	// StagingIO, when set, gives the file IO staged files are written
	// through, from the table's own; lakeswap's S3 store plugs in here. Nil
	// writes through the table's IO.
	StagingIO func(ctx context.Context, table icebergio.IO) (icebergio.WriteFileIO, error)

	// RollbackRetention is how long the snapshot a publish replaces is kept
	// from snapshot expiry by its tag (RollbackTag); 0 is
	// DefaultRollbackRetention.
	RollbackRetention time.Duration

	// BeforeCommit, when set, sees the staged, validated plan just before the
	// commit; an error stops the publish with nothing committed and the
	// staged files removed. Approval flows and tests hook in here.
	BeforeCommit func(context.Context, *Plan) error
}

func (p *Publisher) log() *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Logger
}

// stagingIO is the file IO staged files are written and removed through.
func (p *Publisher) stagingIO(ctx context.Context, fsys icebergio.IO) (icebergio.WriteFileIO, error) {
	return staging.IO(ctx, p.StagingIO, fsys)
}

func (p *Publisher) progress() Progress {
	if p.Progress == nil {
		return NoProgress{}
	}
	return p.Progress
}

// Result is what a publish did.
type Result struct {
	Plan       *Plan `json:"plan"`
	SnapshotID int64 `json:"snapshot_id,omitempty,string"`
	// CommittedOn is the snapshot the commit was made on: the plan's base,
	// or the head it was rebased on when main had moved.
	CommittedOn int64      `json:"committed_on,omitempty,string"`
	Status      Status     `json:"status"`
	Mismatches  []Mismatch `json:"mismatches,omitempty"`
	// Batches is what became of each batch of a run committed in batches.
	Batches []BatchResult `json:"batches,omitempty"`
}

// Publish stages, validates and fingerprints the request's partitions,
// commits them as one snapshot replacing exactly those partitions, then reads
// the commit back and compares. The error matches outcome.ErrRefused, outcome.ErrConflict,
// outcome.ErrCommitUnknown or outcome.ErrVerifyFailed by the way it failed; the Result is
// returned with it where there is one.
func (p *Publisher) Publish(ctx context.Context, req Request) (*Result, error) {
	plan, tbl, err := p.stage(ctx, req, "run")
	if err != nil {
		return nil, err
	}
	res, err := p.apply(ctx, tbl, plan, req.NoAutoRollback)
	plan.stopRefresh()
	// Concluded: the files are the table's, or removed. An outcome still
	// open keeps its hold, which gc judges by its last refresh.
	if !errors.Is(err, outcome.ErrCommitUnknown) && !errors.Is(err, outcome.ErrNotLanded) {
		p.removeHolds(ctx, tbl, plan)
	}
	return res, err
}

// ApplyOptions are an apply's choices.
type ApplyOptions struct {
	// NoAutoRollback keeps a commit that fails verification in place.
	NoAutoRollback bool
	// Recheck reads every staged file's rows again and compares their
	// fingerprint with the plan's, beyond the sizes and checksums an apply
	// always compares.
	Recheck bool
	// Jobs reads back the job of a plan a SQL job computed (package
	// job's Read): such a plan is refused without it.
	Jobs JobReader
}

// Apply commits plans staged before, by Stage in this process or in others
// that wrote them as JSON, as one snapshot, then reads the commit back and
// compares, as Publish does. Several plans are partial plans of one
// backfill (shards staged on several machines): one table, one run id, one
// base snapshot, partitions that do not overlap. Apply loads the table and
// checks that each plan still holds: main at the plan's base, the table's
// contract the one the plan was staged under, each staged file under the
// plan's own prefix with the size and checksum it was written with. A plan
// that no longer holds is a conflict: nothing is committed, and its staged
// files are left, as they are whatever becomes of the plan (a plan read
// back may be old, its files since committed). A plan whose run the table
// already records concludes as a rerun of that run id does.
func (p *Publisher) Apply(ctx context.Context, opts ApplyOptions, docs ...*Plan) (*Result, error) {
	// 1. The plans are one run's: one table, one run id and base,
	//    partitions apart.
	plans := make([]*run, len(docs))
	for i, doc := range docs {
		if doc == nil {
			continue
		}
		var err error
		if plans[i], err = runOf(doc, opts.Jobs); err != nil {
			return &Result{Plan: doc, Status: StatusNotCommitted}, err
		}
	}
	tbl, err := p.loadPlans(ctx, plans)
	if err != nil {
		return nil, err
	}
	// 2. Each plan's attempt is held while the apply runs, refreshed as a
	//    publish's is: a plan near its retention, or a long apply in
	//    batches, keeps its files from gc. The plan's own hold stays until
	//    the apply concludes.
	unhold, failed, err := p.holdPlans(ctx, tbl, plans)
	if err != nil {
		return &Result{Plan: failed.Plan, Status: StatusNotCommitted}, err
	}
	defer unhold()
	res, err := p.applyBound(ctx, tbl, plans, opts)
	if res != nil && res.Status != StatusNotCommitted && res.Status != StatusRefused {
		// Concluded one way or the other: the plans wait for nothing now,
		// and whatever of their files the table references is the table's.
		for _, plan := range plans {
			p.removeHolds(ctx, tbl, plan)
		}
	}
	// 6. A plan's audit branch goes once the plan is concluded, refused or
	//    in conflict, unless main holds its snapshot (moved there) or
	//    someone committed to it. Anything else (a commit whose outcome is
	//    not known, Ctrl-C, storage that failed) keeps it: the plan may
	//    still be applied, and gc removes it past the plan retention.
	if err == nil || errors.Is(err, outcome.ErrRefused) || errors.Is(err, outcome.ErrConflict) {
		for _, plan := range plans {
			if said := p.dropBranch(ctx, plan.Plan); said != "" && res != nil && res.Plan != nil {
				res.Plan.Cleanup = strings.TrimPrefix(res.Plan.Cleanup+"; "+said, "; ")
			}
		}
	}
	return res, err
}

// applyBound binds plans read back to the table and commits them.
func (p *Publisher) applyBound(ctx context.Context, tbl *table.Table, plans []*run, opts ApplyOptions) (*Result, error) {
	// 3. Bind: each plan still holds against the table as it is now.
	for _, plan := range plans {
		if err := p.bind(ctx, tbl, plan, opts); err != nil {
			return &Result{Plan: plan.Plan, Status: StatusNotCommitted}, err
		}
	}
	// 4. Shards staged apart are judged together.
	whole := merge(plans)
	if len(plans) > 1 {
		if res, err := judgeShards(ctx, tbl, whole); err != nil {
			return res, err
		}
	}
	whole.whole = len(plans) == 1
	// 5. Commit and verify, as a publish does.
	return p.apply(ctx, tbl, whole, opts.NoAutoRollback)
}

// loadPlans checks that plans are one run's partial plans and loads their
// table.
func (p *Publisher) loadPlans(ctx context.Context, plans []*run) (*table.Table, error) {
	if len(plans) == 0 || slices.Contains(plans, nil) {
		return nil, errors.New("apply needs plans, and a plan is missing")
	}
	if err := shards(plans); err != nil {
		return nil, &outcome.RefusedError{Op: "apply", Table: plans[0].Table, Findings: []verify.Finding{{Kind: verify.KindPartialPlans, Message: err.Error()}}}
	}
	ident, err := catalog.ParseIdent(plans[0].Table)
	if err != nil {
		return nil, err
	}
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", plans[0].Table, err)
	}
	return tbl, nil
}

// holdPlans holds each plan's attempt for this apply, under a name of its
// own (several processes may apply one plan), and returns what ends it, or
// the plan it could not hold.
func (p *Publisher) holdPlans(ctx context.Context, tbl *table.Table, plans []*run) (unhold func(), failed *run, err error) {
	applier := staging.NewAttempt()
	var ends []func()
	unhold = func() {
		for _, end := range ends {
			end()
		}
	}
	for _, plan := range plans {
		loc := hold.ApplyLocation(tbl.Metadata(), plan.RunID, plan.Attempt, applier)
		stop, err := hold.WhileRunning(ctx, p.holds(tbl), p.log(), plan.RunID, plan.Attempt, loc)
		if err != nil {
			unhold()
			return nil, plan, err
		}
		ends = append(ends, func() {
			stop()
			hold.RemoveAt(ctx, p.holds(tbl), p.log(), plan.RunID, loc)
			hold.RemoveAt(ctx, p.holds(tbl), p.log(), plan.RunID, hold.Other(loc))
		})
	}
	return unhold, nil, nil
}

// judgeShards runs over a run merged from shards the checks that shards
// staged apart could not: a key staged in two shards, and the partitions
// that exchange records, which commit in one batch. A plan staged whole
// did both at stage time, and its id covers them.
func judgeShards(ctx context.Context, tbl *table.Table, whole *run) (*Result, error) {
	c := whole.contract
	if c == nil {
		return nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return &Result{Plan: whole.Plan, Status: StatusNotCommitted}, err
	}
	if len(c.Grain) > 0 && !c.Partition.InGrain(c.Grain) {
		found, err := stagedTwice(ctx, fsys, c, whole)
		if err != nil {
			return &Result{Plan: whole.Plan, Status: StatusNotCommitted}, err
		}
		if len(found) > 0 {
			return &Result{Plan: whole.Plan, Status: StatusRefused}, &outcome.RefusedError{Op: "apply", Table: whole.Table, Findings: found}
		}
	}
	if whole.Batch > 0 && len(whole.Partitions) > whole.Batch {
		if whole.Together, err = exchanges(ctx, fsys, c, whole); err != nil {
			return &Result{Plan: whole.Plan, Status: StatusNotCommitted}, err
		}
	}
	return nil, nil
}

// apply concludes a staged plan against the table it was staged on, or
// bound to: a refusal, a rerun of a recorded run id, or a commit and its
// check. Its calls are the steps of swap/doc.go from the commit on.
func (p *Publisher) apply(ctx context.Context, tbl *table.Table, plan *run, noAutoRollback bool) (*Result, error) {
	// A plan that commits nothing concludes without a commit.
	if res, err, done := p.concludeUncommitted(ctx, tbl, plan); done {
		return res, err
	}
	if plan.Batch > 0 && len(plan.Partitions) > plan.Batch {
		return p.applyBatches(ctx, tbl, plan, noAutoRollback)
	}
	// Commit and read back through the one engine, as a release of one
	// table.
	res := &Result{Plan: plan.Plan}
	_, err := p.land(ctx, plan.RunID, []*change{{plan: plan, tbl: tbl, res: res}}, nil, noAutoRollback,
		func() string { return plan.discarded(ctx, p, tbl) })
	return res, err
}

// concludeUncommitted concludes a plan that needs no commit: one refused,
// a rerun of a run id the table records, or one whose partitions hold its
// content already. done is false for a plan to commit.
func (p *Publisher) concludeUncommitted(ctx context.Context, tbl *table.Table, plan *run) (res *Result, err error, done bool) {
	name := plan.Table
	res = &Result{Plan: plan.Plan}
	switch {
	case plan.Refused():
		res.Status = StatusRefused
		p.log().Info("publish refused", "table", name, "run", plan.RunID, "findings", len(plan.Findings)+int(plan.DroppedFindings))
		return res, &outcome.RefusedError{Op: plan.op(), Table: name, Findings: plan.Findings, Dropped: plan.DroppedFindings, Cleanup: plan.Cleanup}, true
	case plan.Batch > 0 && len(plan.Partitions) > plan.Batch:
		return nil, nil, false // each batch concludes on its own
	case plan.prior != nil:
		res, err = p.rerun(ctx, tbl, plan, res)
		return res, err, true
	case plan.empty():
		// Nothing to replace and nothing staged (--allow-empty on empty
		// partitions): a commit would make a snapshot that changes nothing.
		res.Status = StatusUnchanged
		p.log().Info("nothing to commit", "table", name, "run", plan.RunID)
		return res, nil, true
	case !plan.changesNothing():
		return nil, nil, false
	}
	// The declared partitions hold now exactly what the run staged: a
	// rerun of the same input commits nothing.
	res.Status = StatusUnchanged
	p.log().Info("partitions already hold the planned content", "table", name, "run", plan.RunID)
	if plan.Named {
		// A run id someone chose, and may ask status of.
		p.noteUnchanged(ctx, tbl, plan)
	}
	if !plan.bound {
		plan.discarded(ctx, p, tbl)
		return res, nil, true
	}
	// A plan read back keeps its files unless no snapshot references
	// them, as discard checks: the plan may be old, and applied.
	said, err := p.discardListed(ctx, tbl, plan)
	if err != nil {
		said = fmt.Sprintf("the plan's staged files were left in place: %v", err)
	}
	plan.Cleanup = said
	return res, nil, true
}

// rerun concludes a publish whose run id the table already records. The id is
// an idempotency key: the same content, still on main, is reported as
// published and nothing is committed; anything else is refused, so that the
// history keeps saying what the run did. The attempt's staging goes either
// way.
func (p *Publisher) rerun(ctx context.Context, tbl *table.Table, plan *run, res *Result) (*Result, error) {
	prior := plan.prior
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	rec, _, err := runrecord.NewLoader(fsys).Snapshot(prior)
	if err != nil {
		return nil, &outcome.OpError{Op: "publish", Table: plan.Table, RunID: plan.RunID, Err: err,
			Hint: "nothing was committed; " + plan.discarded(ctx, p, tbl)}
	}
	recorded := rec.Fingerprint
	meta := tbl.Metadata()
	onMain := false
	if head := meta.CurrentSnapshot(); head != nil {
		onMain = table.IsAncestorOf(head.SnapshotID, prior.SnapshotID, func(id int64) *table.Snapshot { return meta.SnapshotByID(id) })
	}
	held := plan.held
	cleanup := plan.discarded(ctx, p, tbl)
	if plan.bound {
		// A plan read back whose run another plan published: its own
		// staged files go, unless a snapshot references them (the same
		// plan, applied already), as discard does.
		// Its branch goes first: its snapshot references them.
		now, branch := tbl, p.dropBranch(ctx, plan.Plan)
		if branch != "" {
			if again, err := p.Catalog.LoadTable(ctx, tbl.Identifier()); err == nil {
				now = again
			}
		}
		said, err := p.discardListed(ctx, now, plan)
		if err != nil {
			said = "the plan's staged files were left in place: " + err.Error()
		}
		if branch != "" {
			said += "; " + branch
		}
		cleanup, plan.Cleanup = said, said
	}
	same := recorded == plan.Fingerprint.Hash
	if !same && len(plan.Partitions) > 0 {
		// One shard of a run applied as a whole holds part of its content.
		same = true
		for _, pp := range plan.Partitions {
			same = same && rec.PartitionHashes[pp.Key] == pp.Fingerprint.Hash
		}
	}
	if same && onMain && held {
		res.Status, res.SnapshotID = StatusAlreadyPublished, prior.SnapshotID
		p.log().Info("already published", "table", plan.Table, "run", plan.RunID, "snapshot", prior.SnapshotID)
		return res, nil
	}
	var msg string
	switch {
	case !same:
		keys := rec.Keys()
		for i, k := range keys {
			keys[i] = verify.DisplayKey(k)
		}
		msg = fmt.Sprintf("run id %s was already used by snapshot %d for other content (fingerprint %s, partitions %s); this input fingerprints %s; publish it under a new run id",
			plan.RunID, prior.SnapshotID, verify.Short(recorded), strings.Join(keys, ","), verify.Short(plan.Fingerprint.Hash))
		if rec.Batch != "" {
			msg += fmt.Sprintf(" (run %s was committed in batches, %s: to resume it, run it with the same --batch)", plan.RunID, rec.Batch)
		}
	case !onMain:
		msg = fmt.Sprintf("run %s was published as snapshot %d, which main no longer holds (rolled back?); publish it again under a new run id", plan.RunID, prior.SnapshotID)
	default:
		msg = fmt.Sprintf("run %s was published as snapshot %d, but later commits changed its partitions; publish it again under a new run id", plan.RunID, prior.SnapshotID)
	}
	res.Status = StatusRefused
	plan.Findings = append(plan.Findings, verify.Finding{Kind: verify.KindRunID, Message: msg})
	return res, &outcome.RefusedError{Op: plan.op(), Table: plan.Table, Findings: plan.Findings, Cleanup: cleanup}
}
