package rollback

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

// Request names the run to undo, by run id or by the snapshot it
// committed.
type Request struct {
	Table      table.Identifier
	RunID      string
	SnapshotID int64
	// Force rolls back even when main has moved past the run's snapshot,
	// which drops the later commits from main.
	Force bool
	// Scoped undoes only the run's partitions, as a new snapshot on main
	// that puts back the files the run replaced: later commits to other
	// partitions stay.
	Scoped bool
	// RestateFrozen is why a scoped rollback changes partitions the
	// table's lakeswap.freeze-after froze, and DecidedBy who decided it:
	// the rollback records both. Without it such a rollback is refused.
	RestateFrozen, DecidedBy string
}

// Result is what a rollback did.
type Result struct {
	RunID string `json:"run_id,omitempty"`
	// Table is the table this result is of, in a release's Tables.
	Table          string `json:"table,omitempty"`
	FromSnapshotID int64  `json:"from_snapshot_id,string"`
	ToSnapshotID   int64  `json:"to_snapshot_id,string"`
	Fingerprint    string `json:"fingerprint"`
	Verified       bool   `json:"verified"`
	// Scoped says the rollback was committed as a new snapshot
	// (ToSnapshotID) that restores only the run's partitions.
	Scoped bool `json:"scoped,omitempty"`
	// Batches is how many batches of a run committed in batches a scoped
	// rollback undid together.
	Batches int `json:"batches,omitempty"`
	// AlreadyRolledBack says the run was rolled back before, at
	// RolledBackAt (an orchestrator retrying a rollback): nothing was
	// committed now.
	AlreadyRolledBack bool       `json:"already_rolled_back,omitempty"`
	RolledBackAt      *time.Time `json:"rolled_back_at,omitempty"`
	// Unverified says why the rollback could not be checked against what
	// the run recorded (its run file unreadable).
	Unverified string `json:"unverified,omitempty"`
	// Tables are every table's result, when the run was a release of
	// several tables rolled back as one; the fields above are the asked
	// table's.
	Tables []Result `json:"tables,omitempty"`
}

// Rollback points main back at the snapshot a run replaced, then checks that
// the run's partitions there have the fingerprint recorded before the run.
// It refuses when main has moved past the run's snapshot unless Force.
func (l *Runner) Rollback(ctx context.Context, req Request) (*Result, error) {
	name := strings.Join(req.Table, ".")
	tbl, err := l.Catalog.LoadTable(ctx, req.Table)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	}
	meta := tbl.Metadata()
	run, err := snapshot.FindRun(meta, req.RunID, req.SnapshotID)
	if err != nil {
		return nil, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	load := runrecord.NewLoader(fsys)
	// A full rollback points main back whatever the run's record says;
	// only its check afterwards needs the run's partitions, which a run
	// file that cannot be read no longer gives: the rollback then says it
	// is unverified, and why. A scoped one needs them to act.
	var unread error
	read := func(s *table.Snapshot) (runrecord.Record, error) {
		r, _, err := load.Snapshot(s)
		if err != nil {
			if req.Scoped {
				return r, fmt.Errorf("%w; a full rollback (without --scoped) needs no run file", err)
			}
			unread, r.BaseFingerprint = err, ""
		}
		return r, nil
	}
	rec, err := read(run)
	if err != nil {
		return nil, err
	}
	if len(rec.Release) > 1 {
		return l.rollbackRelease(ctx, req, rec)
	}
	res := &Result{RunID: rec.RunID, FromSnapshotID: run.SnapshotID}
	defer func() {
		if unread != nil {
			res.Unverified = "not checked: " + unread.Error()
		}
	}()
	fail := func(format string, args ...any) (*Result, error) {
		return nil, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: fmt.Errorf("%w: "+format, append([]any{outcome.ErrRollbackRefused}, args...)...)}
	}
	// A run committed in batches, named by its id, is undone whole: main
	// goes back to before its first batch, which needs its batches to
	// follow each other. Named by a snapshot, that batch alone is undone.
	first, recs := run, []runrecord.Record{rec}
	all := runrecord.FindAll(meta, req.RunID)
	if head := meta.CurrentSnapshot(); req.RunID != "" && len(all) > 1 && head != nil {
		// Only the batches main holds are undone: one rolled back on its
		// own (after its check failed) is off main already.
		all = slices.DeleteFunc(all, func(s table.Snapshot) bool {
			return !table.IsAncestorOf(head.SnapshotID, s.SnapshotID, func(id int64) *table.Snapshot { return meta.SnapshotByID(id) })
		})
		if len(all) == 1 {
			run, first = &all[0], &all[0]
			if rec, err = read(run); err != nil {
				return nil, err
			}
			recs, res.FromSnapshotID = []runrecord.Record{rec}, run.SnapshotID
		}
	}
	if req.RunID != "" && len(all) > 1 {
		if recs, err = readAll(all, read); err != nil {
			return nil, err
		}
		if req.Scoped {
			res.Batches = len(all)
			return l.scopedRollback(ctx, tbl, all, recs, res, req)
		}
		first, run = &all[0], &all[len(all)-1]
		res.FromSnapshotID = run.SnapshotID
		for i, s := range all {
			if i > 0 && (s.ParentSnapshotID == nil || *s.ParentSnapshotID != all[i-1].SnapshotID) && !req.Force {
				return fail("another commit landed between batches %s and %s of run %s; rolling back to before the run would drop it (pass --force to do it anyway)", recs[i-1].Batch, recs[i].Batch, rec.RunID)
			}
		}
	}
	switch {
	case first.ParentSnapshotID == nil && len(recs) > 1:
		return fail("run %s's first batch is the table's first snapshot: there is no earlier snapshot to point main at (--scoped takes the run's files out as a new snapshot)", res.RunID)
	case first.ParentSnapshotID == nil && !req.Scoped:
		return fail("snapshot %d is the table's first; there is no earlier snapshot to point main at (--scoped takes the run's files out as a new snapshot)", first.SnapshotID)
	}
	if first.ParentSnapshotID != nil {
		res.ToSnapshotID = *first.ParentSnapshotID
	}

	head := meta.CurrentSnapshot()
	onMain, cut, later := backTo(meta, run)
	switch {
	case req.Scoped:
		// Judged by the run's partitions' files, which expiry leaves.
		return l.scopedRollback(ctx, tbl, []table.Snapshot{*run}, []runrecord.Record{rec}, res, req)
	case cut:
		return fail("main's history back to snapshot %d of run %s was expired, so whether main still holds the run is not known; pass --scoped to undo only the run's partitions, which is judged by their files", run.SnapshotID, res.RunID)
	case !onMain:
		if at, ok := snapshot.RolledBackAt(meta, run, res.ToSnapshotID); ok {
			// A rollback retried: main went back to the run's target after
			// it, and holds it still. Said, and checked, not done twice.
			res.AlreadyRolledBack, res.RolledBackAt = true, &at
			return l.readBackRestored(ctx, req.Table, recs, res)
		}
		return fail("snapshot %d of run %s is not on main (already rolled back?)", run.SnapshotID, res.RunID)
	case head.SnapshotID != run.SnapshotID && !req.Force:
		slices.Reverse(later)
		return fail("main has moved past snapshot %d to %d; rolling back would drop the later commits %s from main (pass --scoped to undo only the run's partitions and keep them, or --force to drop them)",
			run.SnapshotID, head.SnapshotID, strings.Join(later, ", "))
	}

	// The guards a run meets: no release's share dropped alone, no frozen
	// partition changed without a record.
	if err := l.judge(ctx, &Undo{Table: tbl, To: res.ToSnapshotID, Req: req, Now: time.Now()}); err != nil {
		return fail("%v", err)
	}
	// Main goes back to the snapshot the run replaced, then is read back.
	return l.pointMainAt(ctx, tbl, res, recs)
}

// pointMainAt moves main back to res.ToSnapshotID in one commit, pinned to
// main as tbl holds it, through the commit engine: an answer lost on the
// way is settled from the table, and the undone runs' partitions are read
// back (readBackRestored).
func (l *Runner) pointMainAt(ctx context.Context, tbl *table.Table, res *Result, recs []runrecord.Record) (*Result, error) {
	name, meta := strings.Join(tbl.Identifier(), "."), tbl.Metadata()
	// Through the publisher's catalog, as every commit of lakeswap's.
	tx := table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), tbl.FS, l.Catalog).NewTransaction()
	if err := tx.RollbackToSnapshot(res.ToSnapshotID); err != nil {
		return nil, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: err}
	}
	to := res.ToSnapshotID
	checked := res
	b := &pointBack{changes: []*snapshot.Change{{Table: tbl, Tx: tx, ID: to, Landed: snapshot.PointsAt(to)}},
		readBack: func(ctx context.Context) (err error) {
			checked, err = l.readBackRestored(ctx, tbl.Identifier(), recs, res)
			return err
		}}
	err := snapshot.Land(ctx, l.Catalog, l.log(), res.RunID, b)
	if b.landed {
		return checked, err
	}
	if refused := (*snapshot.Refused)(nil); errors.As(err, &refused) {
		return nil, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: err,
			Hint: "main moved meanwhile; check `lakeswap history` and try again"}
	}
	return nil, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: err,
		Hint: "`lakeswap history` shows where main is once the table can be read"}
}

// readBackRestored reads each undone run's partitions at the snapshot main
// now points at and compares them with what the run recorded before it.
func (l *Runner) readBackRestored(ctx context.Context, ident table.Identifier, recs []runrecord.Record, res *Result) (*Result, error) {
	name := strings.Join(ident, ".")
	res.Verified = true
	for _, rec := range recs {
		fp, err := l.fingerprintAt(ctx, ident, res.ToSnapshotID, rec.Partitions)
		if err != nil {
			return nil, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: fmt.Errorf("main points at %d, but its fingerprint could not be read: %w", res.ToSnapshotID, err)}
		}
		res.Fingerprint = fp.Hash
		if want := rec.BaseFingerprint; want != "" && want != fp.Hash {
			return res, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID,
				Err: fmt.Errorf("%w: main points at %d, but its fingerprint %s differs from %s recorded before the run", outcome.ErrVerifyFailed, res.ToSnapshotID, verify.Short(fp.Hash), verify.Short(want))}
		}
		res.Verified = res.Verified && rec.BaseFingerprint != ""
	}
	return res, nil
}

// fingerprintAt recomputes the run fingerprint of the partitions with the
// given values in a snapshot.
func (l *Runner) fingerprintAt(ctx context.Context, ident table.Identifier, snapshotID int64, values []string) (verify.Fingerprint, error) {
	parts, err := snapshot.Fingerprints(ctx, l.Catalog, ident, snapshotID, values)
	if err != nil {
		return verify.Fingerprint{}, err
	}
	fp := verify.Combine(parts) // only the hash is compared
	return fp, nil
}

// backTo walks main's history back to run: whether main holds it, whether
// snapshot expiry cut the walk short first (then whether main holds the
// run is not known from ancestry), and the snapshots committed after it,
// newest first.
func backTo(meta table.Metadata, run *table.Snapshot) (onMain, cut bool, later []string) {
	head := meta.CurrentSnapshot()
	if head == nil {
		return false, false, nil
	}
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		if s.SnapshotID == run.SnapshotID {
			return true, false, later
		}
		later = append(later, strconv.FormatInt(s.SnapshotID, 10))
		cut = s.ParentSnapshotID != nil && meta.SnapshotByID(*s.ParentSnapshotID) == nil
	}
	return false, cut, later
}

// readAll reads the records of a run's batches, in order.
func readAll(all []table.Snapshot, read func(*table.Snapshot) (runrecord.Record, error)) ([]runrecord.Record, error) {
	recs := make([]runrecord.Record, 0, len(all))
	for _, s := range all {
		r, err := read(&s)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}
