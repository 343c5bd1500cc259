package swap

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

// change is one table's share of a run: its plan, the table as loaded
// (again after a rebase), what became of it, and the snapshot its commit
// makes.
type change struct {
	plan *run
	tbl  *table.Table
	// readBy are the tables of a release staged from this one's staged
	// rows: it commits on the snapshot they read, never rebased.
	readBy []string
	res    *Result
	id     int64
}

// land commits a run of one table, each batch of a run committed in
// batches, and a release of several tables, through the one commit engine
// (snapshot.Land) that rollbacks go through too:
//  1. commit: one catalog operation (snapshot.Send) holding a replace for
//     each change, pinned to main, the schema and the spec as the plan
//     found them, and, for a release, each table it leaves as it is
//     (held) pinned where the release found it;
//  2. rebase: refused because main moved, the changes are judged again
//     against what landed since (the guards of rebase) and committed on
//     the new heads, or the conflict is said;
//  3. settle: an answer that says nothing sure is settled from the
//     tables' history;
//  4. read back: each change is read back and compared with its plan,
//     and the whole undone in one commit on a mismatch, unless
//     noAutoRollback.
//
// discard removes what the run staged, and says so; it is called when
// the run surely committed nothing. The status is the run's as a whole;
// each change's res says its own.
func (p *Publisher) land(ctx context.Context, runID string, commit, held []*change, noAutoRollback bool, discard func() string) (Status, error) {
	for _, c := range commit {
		c.res.Status = StatusNotCommitted // until it is
	}
	if p.BeforeCommit != nil {
		for _, c := range commit {
			if err := p.BeforeCommit(ctx, c.plan.Plan); err != nil {
				return StatusNotCommitted, &outcome.OpError{Op: "commit", Table: c.plan.Table, RunID: runID, Err: err,
					Hint: nothingCommitted(commit) + "; " + discard()}
			}
		}
	}
	p.progress().Step("commit")
	pl := &publishLanding{p: p, runID: runID, commit: commit, held: held, noAutoRollback: noAutoRollback}
	for _, c := range commit {
		pl.ours = append(pl.ours, len(runrecord.FindAll(c.tbl.Metadata(), runID)))
	}
	err := snapshot.Land(ctx, p.Catalog, p.log(), runID, pl)
	if pl.landed {
		return pl.status, err
	}
	err = pl.commitError(err)
	if elsewhere := (*committedElsewhere)(nil); errors.As(err, &elsewhere) {
		// Another process committed this very run; what this one staged
		// is either those files (the same plan) or its own, unreferenced.
		c := commit[0]
		c.res.Status, c.res.SnapshotID = StatusAlreadyPublished, elsewhere.snapshotID
		c.plan.Cleanup = discard()
		p.log().Info("already published by another process", "table", c.plan.Table, "run", runID, "snapshot", elsewhere.snapshotID)
		return StatusAlreadyPublished, nil
	}
	// A commit whose answer was lost may reference the staged files, and
	// one found not to have landed keeps them too: a catalog that
	// answered wrongly once is not trusted to have told the end.
	if !errors.Is(err, outcome.ErrCommitUnknown) && !errors.Is(err, outcome.ErrNotLanded) {
		op := (*outcome.OpError)(nil)
		if !errors.As(err, &op) {
			op = &outcome.OpError{Op: "commit", Table: commit[0].plan.Table, RunID: runID, Err: err, Hint: nothingCommitted(commit)}
			err = op
		}
		op.Hint += "; " + discard()
	}
	return StatusNotCommitted, err
}

// nothingCommitted says so, of one table or of every table of a release.
func nothingCommitted(commit []*change) string {
	if len(commit[0].plan.Release) > 0 {
		return "nothing was committed to any table of the release"
	}
	return "nothing was committed"
}

// publishLanding is a run's changes on their way through the commit
// engine (snapshot.Landing).
type publishLanding struct {
	p              *Publisher
	runID          string
	commit, held   []*change
	ours           []int  // snapshots each table records of the run before
	who            string // the table a refused rebase names
	noAutoRollback bool
	// landed is set once the commit landed; status is then the read
	// back's.
	landed bool
	status Status
}

func (pl *publishLanding) Build(ctx context.Context) ([]*snapshot.Change, error) {
	return pl.p.buildChanges(ctx, pl.runID, pl.commit, pl.held)
}

func (pl *publishLanding) Rebase(ctx context.Context, _ *snapshot.Refused) (string, error) {
	why, who, err := pl.p.rebaseChanges(ctx, pl.runID, pl.commit, pl.held, pl.ours)
	pl.who = who
	return why, err
}

func (pl *publishLanding) ReadBack(ctx context.Context) error {
	pl.landed = true
	for _, c := range pl.commit {
		if head := c.tbl.CurrentSnapshot(); head != nil {
			c.plan.committedOn = head.SnapshotID
		}
		c.res.SnapshotID, c.res.CommittedOn, c.res.Status = c.id, c.plan.committedOn, StatusLandedUnverified
		pl.p.log().Info("committed", "table", c.plan.Table, "run", pl.runID, "snapshot", c.id)
	}
	var err error
	pl.status, err = pl.p.readBack(ctx, pl.runID, pl.commit, pl.noAutoRollback)
	return err
}

// commitError says what became of a commit that did not land: refused by
// a requirement other than main (nothing committed), refused because main
// moved where the run changes (a conflict), or not settled (unsettled).
func (pl *publishLanding) commitError(err error) error {
	first := pl.commit[0].plan
	conflict := (*snapshot.Conflict)(nil)
	if errors.As(err, &conflict) {
		op := &outcome.OpError{Op: "commit", Table: cmp.Or(pl.who, first.Table), RunID: pl.runID,
			Hint: "nothing was committed and the other commit is intact; plan the run again against main as it is now; " + conflict.Refused.Removed}
		op.Err = fmt.Errorf("%w: main moved since the plan's base snapshot %s: %s", outcome.ErrConflict, fmtID(first.BaseSnapshotID), conflict.Why)
		if len(first.Release) > 0 {
			op.Err = fmt.Errorf("%w: %s", outcome.ErrConflict, conflict.Why)
			op.Hint = "nothing was committed to any table of the release, and the other commits are intact; run the release again against main as it is now; " + conflict.Refused.Removed
		}
		return op
	}
	if elsewhere := (*committedElsewhere)(nil); errors.As(err, &elsewhere) {
		return err
	}
	refused := (*snapshot.Refused)(nil)
	if !errors.As(err, &refused) {
		return pl.p.unsettled(pl.commit, err)
	}
	if !errors.Is(err, table.ErrCommitFailed) {
		return &outcome.OpError{Op: "commit", Table: first.Table, RunID: pl.runID, Err: err, Hint: nothingCommitted(pl.commit)}
	}
	return err
}

// buildChanges builds each change's commit on main as its table holds
// it, and, for a release, the commits that hold the tables it leaves.
func (p *Publisher) buildChanges(ctx context.Context, runID string, commit, held []*change) ([]*snapshot.Change, error) {
	var sent []*snapshot.Change
	var pcs []*pendingCommit
	fail := func(err error) ([]*snapshot.Change, error) {
		for _, pc := range pcs {
			pc.removeWritten(ctx, p)
		}
		return nil, err
	}
	release := len(commit[0].plan.Release) > 0
	for _, c := range commit {
		if !release && fastForwards(c.tbl, c.plan) {
			// Main moves to the snapshot the plan's branch holds.
			sc := p.fastForward(c.tbl, c.plan)
			c.id = sc.ID
			sent = append(sent, sc)
			continue
		}
		pc, err := p.prepareCommit(ctx, c.tbl, c.plan)
		if err != nil {
			return fail(err)
		}
		pcs = append(pcs, pc)
		c.id = pc.id
		sc := &snapshot.Change{Table: c.tbl, Written: pc.written, ID: pc.id, Landed: snapshot.Adds(pc.id)}
		if release {
			if sc.Commit, err = pc.tableCommit(); err != nil {
				return fail(err)
			}
		} else {
			sc.Tx = pc.tx
		}
		sent = append(sent, sc)
	}
	if !release {
		return sent, nil
	}
	if err := nameSnapshots(sent, commit, held); err != nil {
		return fail(err)
	}
	for _, h := range held {
		tag := ReleaseTag(runID)
		landed := func(m table.Metadata) bool { return m.SnapshotByName(tag) != nil }
		if h.tbl.CurrentSnapshot() == nil {
			// An empty table is held empty, untagged: it changes nothing
			// the table could show.
			landed = func(table.Metadata) bool { return true }
		}
		sent = append(sent, &snapshot.Change{Table: h.tbl, Commit: p.hold(runID, h.tbl), Landed: landed})
	}
	return sent, nil
}

// rebaseChanges loads every table of the run again after a refused
// commit and says why the run cannot be committed on their heads now,
// naming the table, or "" having pointed every plan at its head. A table
// another attempt of the run committed to meanwhile ends it: with the
// same content, a run of one table is published (committedElsewhere).
func (p *Publisher) rebaseChanges(ctx context.Context, runID string, commit, held []*change, ours []int) (why, who string, err error) {
	for i, c := range slices.Concat(held, commit) {
		now, err := p.Catalog.LoadTable(ctx, c.tbl.Identifier())
		if err != nil {
			return "", "", err
		}
		plan, head := c.plan, now.CurrentSnapshot()
		before := 0
		if i >= len(held) {
			before = ours[i-len(held)]
		}
		if all := runrecord.FindAll(now.Metadata(), runID); len(all) > before {
			if len(plan.Release) > 0 {
				return fmt.Sprintf("another attempt of release %s committed to %s meanwhile; run it again to conclude it", runID, plan.Table), plan.Table, nil
			}
			return p.committedMeanwhile(ctx, now, plan, all[before:])
		}
		if len(c.readBy) > 0 && movedFrom(head, plan.BaseSnapshotID) {
			return fmt.Sprintf("table %s moved since the release staged it (main at %s, staged against %s), and %s read it as staged",
				plan.Table, snapshot.Describe(head), fmtID(plan.BaseSnapshotID), strings.Join(c.readBy, ", ")), plan.Table, nil
		}
		why, err := rebase(ctx, now, plan)
		if why != "" || err != nil {
			if len(plan.Release) > 0 {
				why = fmt.Sprintf("table %s: main moved since the plan's base snapshot %s: %s", plan.Table, fmtID(plan.BaseSnapshotID), why)
			}
			return why, plan.Table, err
		}
		c.tbl = now
	}
	return "", "", nil
}

// committedMeanwhile judges a run of one table whose id another attempt
// committed since: a run id is recorded once (a batch once), so the same
// content (the same plan applied by another process, say) is this run,
// published; other content is a conflict. Another process may have
// committed later batches too: the one that is this batch decides.
func (p *Publisher) committedMeanwhile(ctx context.Context, now *table.Table, plan *run, theirs []table.Snapshot) (string, string, error) {
	fsys, err := now.FS(ctx)
	if err != nil {
		return "", "", err
	}
	load := runrecord.NewLoader(fsys)
	for _, s := range theirs {
		if rec, ok, lerr := load.Snapshot(&s); lerr == nil && ok && rec.Fingerprint == plan.Fingerprint.Hash && rec.Batch == plan.BatchOf &&
			slices.Equal(rec.Partitions, plan.values()) {
			return "", "", &committedElsewhere{snapshotID: s.SnapshotID}
		}
	}
	return fmt.Sprintf("another attempt of run %s committed snapshot %d meanwhile with other content; run it again to conclude it", plan.RunID, theirs[len(theirs)-1].SnapshotID), plan.Table, nil
}

// unsettled says what to do about a commit whose outcome the tables did
// not settle as landed: not landed, or not known.
func (p *Publisher) unsettled(commit []*change, err error) error {
	first := commit[0].plan
	if len(first.Release) > 0 {
		if errors.Is(err, outcome.ErrNotLanded) {
			return &outcome.OpError{Op: "commit", Table: first.Table, RunID: first.RunID, Err: err,
				Hint: "no table of the release holds its commit; run the release again with the same run id (should the commit land late after all, the rerun finds it); the staged files were kept, and `lakeswap gc` removes them once past its grace period"}
		}
		var where []string
		for _, c := range commit {
			where = append(where, fmt.Sprintf("%s snapshot %d", c.plan.Table, c.id))
		}
		return &outcome.OpError{Op: "commit", Table: first.Table, RunID: first.RunID, Err: err,
			Hint: fmt.Sprintf("the commit would be %s; `lakeswap status --table %s --run %s` answers from the tables' history whether it landed; the staged files were kept, since the commit may reference them",
				strings.Join(where, ", "), first.Table, first.RunID)}
	}
	if errors.Is(err, outcome.ErrNotLanded) {
		return &outcome.OpError{Op: "commit", Table: first.Table, RunID: first.RunID, Err: err,
			Hint: fmt.Sprintf("nothing was committed as far as the table shows; run the publish again with the same run id (should the commit land late after all, the rerun finds it and reports it); the files staged by attempt %s were kept, and `lakeswap gc --table %s` removes them once past its grace period", first.Attempt, first.Table)}
	}
	return &outcome.OpError{Op: "commit", Table: first.Table, RunID: first.RunID, Err: err,
		Hint: fmt.Sprintf("the commit would be snapshot %d; `lakeswap status --table %s --run %s` answers from the table's history whether it landed; the files staged by attempt %s were kept, since the commit may reference them",
			commit[0].id, first.Table, first.RunID, first.Attempt)}
}

// readBack reads every change back and compares it with its plan; if any
// differs, the run is undone whole in one commit, unless noAutoRollback.
func (p *Publisher) readBack(ctx context.Context, runID string, commit []*change, noAutoRollback bool) (Status, error) {
	var failed []string
	var errs []error
	release := len(commit[0].plan.Release) > 0
	for _, c := range commit {
		mismatches, err := p.readBackCommit(ctx, c.plan, c.id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.plan.Table, err))
			continue
		}
		if len(mismatches) == 0 {
			c.res.Status = StatusPublished
			continue
		}
		c.res.Mismatches, c.res.Status = mismatches, StatusVerifyFailed
		said := fmt.Sprintf("snapshot %d differs from the staged plan: %v", c.id, mismatches)
		if release {
			said = c.plan.Table + " " + said
		}
		failed = append(failed, said)
	}
	first, one := commit[0].plan.Table, commit[0]
	if len(errs) > 0 && len(failed) == 0 {
		// Exit codes never say "rolled back" of a commit main holds. A
		// table that could not be read back stays landed-unverified.
		hint := fmt.Sprintf("the commit landed as snapshot %d and main holds it, but it could not be read back to check it; finish the check with `lakeswap verify --table %s --run %s` (and roll it back if that fails)", one.id, first, runID)
		if release {
			hint = fmt.Sprintf("the release landed and main holds it, but it could not be read back to check it; finish the check with `lakeswap verify --table %s --run %s` (and roll it back if that fails)", first, runID)
		}
		return StatusLandedUnverified, &outcome.OpError{Op: "verify", Table: first, RunID: runID, Err: fmt.Errorf("%w: %w", outcome.ErrLandedUnverified, errors.Join(errs...)), Hint: hint}
	}
	if len(failed) == 0 {
		for _, c := range commit {
			p.removeUnchanged(ctx, c.tbl, c.plan)
		}
		return StatusPublished, nil
	}
	verr := fmt.Errorf("%w: %s", outcome.ErrVerifyFailed, strings.Join(failed, "; "))
	if noAutoRollback {
		what := "undo with"
		if release {
			what = "undo the whole release with"
		}
		return StatusVerifyFailed, &outcome.OpError{Op: "verify", Table: first, RunID: runID, Err: verr,
			Hint: fmt.Sprintf("kept as asked (--no-auto-rollback); %s `lakeswap rollback --table %s --run %s`", what, first, runID)}
	}
	return p.undo(ctx, runID, commit, verr)
}

// undo rolls back a run whose commit differs from its plan: a run of one
// table (or one batch) by its snapshot, a release whole, in one commit.
func (p *Publisher) undo(ctx context.Context, runID string, commit []*change, verr error) (Status, error) {
	one := commit[0]
	first := one.plan.Table
	req := rollback.Request{Table: one.tbl.Identifier(), SnapshotID: one.id}
	release := len(one.plan.Release) > 0
	if release {
		req = rollback.Request{Table: one.tbl.Identifier(), RunID: runID}
	}
	_, rerr := p.Rollback(ctx, req)
	if rerr != nil {
		// The rollback's own check can fail after its commit moved main
		// back: what main holds says which happened. Rolled back is said
		// only where every table's main is where its commit was made.
		if where, back := p.pointedBack(context.WithoutCancel(ctx), commit); back {
			for _, c := range commit {
				c.res.Status = StatusRolledBack
			}
			return StatusRolledBack, &outcome.OpError{Op: "verify", Table: first, RunID: runID, Err: verr,
				Hint: fmt.Sprintf("main was rolled back to %s, but checking it failed: %v; run `lakeswap history --table %s`", where, rerr, first)}
		}
		if !release {
			one.res.Status = StatusLandedUnverified
		}
		hint := fmt.Sprintf("main still holds snapshot %d, which differs from the plan: the automatic rollback failed; roll back by hand with `lakeswap rollback --table %s --run %s`", one.id, first, runID)
		if release {
			hint = fmt.Sprintf("the automatic rollback of the release failed; run `lakeswap history --table %s` and roll back by hand with `lakeswap rollback --table %s --run %s`", first, first, runID)
		}
		return StatusLandedUnverified, &outcome.OpError{Op: "verify", Table: first, RunID: runID, Err: fmt.Errorf("%w: %w", outcome.ErrLandedUnverified, errors.Join(verr, rerr)), Hint: hint}
	}
	for _, c := range commit {
		c.res.Status = StatusRolledBack
	}
	hint := "main was rolled back to the snapshot the commit replaced"
	if release {
		hint = "every table of the release was rolled back, in one commit, to the snapshot the release replaced"
	}
	return StatusRolledBack, &outcome.OpError{Op: "verify", Table: first, RunID: runID, Err: verr, Hint: hint}
}

// pointedBack says whether main of every table of commit is at the
// snapshot its commit was made on, as a rollback leaves it, naming them.
func (p *Publisher) pointedBack(ctx context.Context, commit []*change) (string, bool) {
	var where []string
	for _, c := range commit {
		now, err := p.Catalog.LoadTable(ctx, c.tbl.Identifier())
		if err != nil || now.CurrentSnapshot() == nil || now.CurrentSnapshot().SnapshotID != c.plan.committedOn {
			return "", false
		}
		where = append(where, fmt.Sprintf("snapshot %d", c.plan.committedOn))
	}
	return strings.Join(where, ", "), true
}

// committedElsewhere is a commit that found the same run, with the same
// content, committed meanwhile by another process: the run is published,
// and nothing more is committed.
type committedElsewhere struct{ snapshotID int64 }

func (e *committedElsewhere) Error() string {
	return fmt.Sprintf("the same run was committed as snapshot %d by another process", e.snapshotID)
}

// movedFrom says whether main, at head, is elsewhere than base.
func movedFrom(head *table.Snapshot, base *int64) bool {
	if head == nil || base == nil {
		return (head == nil) != (base == nil)
	}
	return head.SnapshotID != *base
}

// nameSnapshots records in each new snapshot of a release every table's
// snapshot of it (lakeswap.release-snapshots): the ids are decided once
// every table's commit is built, after each snapshot's summary was, so it
// is written into the summary each commit sends.
func nameSnapshots(sent []*snapshot.Change, commit, held []*change) error {
	ids := map[string]string{}
	for _, c := range commit {
		ids[c.plan.Table] = strconv.FormatInt(c.id, 10)
	}
	for _, h := range held {
		if head := h.tbl.CurrentSnapshot(); head != nil {
			ids[h.plan.Table] = strconv.FormatInt(head.SnapshotID, 10)
		}
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	for i, c := range commit {
		found := false
		for _, u := range sent[i].Commit.Updates {
			if u.Action() != table.UpdateAddSnapshot {
				continue
			}
			// iceberg-go's update carries the snapshot it adds, its
			// summary a map this commit alone holds.
			v := reflect.ValueOf(u)
			if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
				continue
			}
			f := v.Elem().FieldByName("Snapshot")
			if !f.IsValid() || !f.CanInterface() {
				continue
			}
			snap, ok := f.Interface().(*table.Snapshot)
			if !ok || snap == nil || snap.Summary == nil || snap.SnapshotID != c.id {
				continue
			}
			snap.Summary.Properties[runrecord.PropReleaseSnapshots] = string(b)
			found = true
		}
		if !found {
			return fmt.Errorf("the commit of %s adds no snapshot %d to name the release's snapshots in", c.plan.Table, c.id)
		}
	}
	return nil
}

// hold is the commit of a table of a release that changes nothing: its
// main held where the release found it, at the snapshot another table of
// the release read, and tagged with the release there.
func (p *Publisher) hold(runID string, tbl *table.Table) table.TableCommit {
	meta := tbl.Metadata()
	head := meta.CurrentSnapshot()
	tc := table.TableCommit{Identifier: tbl.Identifier(), Updates: []table.Update{}, Requirements: []table.Requirement{table.AssertTableUUID(meta.TableUUID())}}
	if head == nil {
		tc.Requirements = append(tc.Requirements, table.AssertRefSnapshotID(table.MainBranch, nil))
		return tc
	}
	tc.Requirements = append(tc.Requirements, table.AssertRefSnapshotID(table.MainBranch, &head.SnapshotID))
	tc.Updates = append(tc.Updates, snapshot.TagRun(ReleaseTag(runID), head.SnapshotID, p.RollbackRetention))
	return tc
}
