package rollback

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
)

// releasePart is one table of a release being rolled back.
type releasePart struct {
	ident table.Identifier
	tbl   *table.Table
	rec   runrecord.Record
	res   *Result
}

// rollbackRelease undoes a release whole: every table it committed to has
// main pointed back at the snapshot the release replaced there, in one
// commit across the tables, and each is then checked as Rollback checks
// one. A table whose share committed nothing (its partitions held the
// content already) has nothing to undo. ident is the table the rollback
// was asked of, whose figures the result carries; Tables has every one.
func (l *Runner) rollbackRelease(ctx context.Context, req Request, rec runrecord.Record) (*Result, error) {
	name := strings.Join(req.Table, ".")
	fail := func(format string, args ...any) (*Result, error) {
		return nil, &outcome.OpError{Op: "rollback", Table: name, RunID: rec.RunID, Err: fmt.Errorf("%w: "+format, append([]any{outcome.ErrRollbackRefused}, args...)...)}
	}
	if req.Scoped {
		return fail("run %s is a release of %s, committed as one: a scoped rollback would undo one table's share of it; roll the release back whole (without --scoped)", rec.RunID, strings.Join(rec.Release, ", "))
	}
	var parts []*releasePart
	var changes []*snapshot.Change
	for _, t := range rec.Release {
		ident := strings.Split(t, ".")
		tbl, err := l.Catalog.LoadTable(ctx, ident)
		if err != nil {
			return nil, fmt.Errorf("load table %s of release %s: %w", t, rec.RunID, err)
		}
		meta := tbl.Metadata()
		run := runrecord.Find(meta, rec.RunID)
		if run == nil {
			continue // its share committed nothing
		}
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		r, _, err := runrecord.NewLoader(fsys).Snapshot(run)
		part := &releasePart{ident: ident, tbl: tbl, rec: r, res: &Result{RunID: rec.RunID, Table: t, FromSnapshotID: run.SnapshotID}}
		if err != nil {
			part.rec.BaseFingerprint, part.res.Unverified = "", "not checked: "+err.Error()
		}
		if run.ParentSnapshotID == nil {
			return fail("snapshot %d of release %s is the first of table %s: there is no earlier snapshot to point main at", run.SnapshotID, rec.RunID, t)
		}
		part.res.ToSnapshotID = *run.ParentSnapshotID
		parts = append(parts, part)
		head := meta.CurrentSnapshot()
		onMain := head != nil && table.IsAncestorOf(head.SnapshotID, run.SnapshotID, meta.SnapshotByID)
		switch {
		case !onMain:
			if at, ok := snapshot.RolledBackAt(meta, run, part.res.ToSnapshotID); ok {
				part.res.AlreadyRolledBack, part.res.RolledBackAt = true, &at
				continue
			}
			return fail("snapshot %d of release %s on table %s is not on main", run.SnapshotID, rec.RunID, t)
		case head.SnapshotID != run.SnapshotID && !req.Force:
			return fail("main of table %s has moved past the release's snapshot %d to %d; rolling the release back would drop the later commits from main (pass --force to do it anyway)", t, run.SnapshotID, head.SnapshotID)
		}
		if err := l.judge(ctx, &Undo{Table: tbl, To: part.res.ToSnapshotID, Release: rec.RunID, Req: req, Now: time.Now()}); err != nil {
			return fail("on table %s, %v", t, err)
		}
		tx := table.New(ident, meta, tbl.MetadataLocation(), tbl.FS, l.Catalog).NewTransaction()
		if err := tx.RollbackToSnapshot(part.res.ToSnapshotID); err != nil {
			return nil, &outcome.OpError{Op: "rollback", Table: t, RunID: rec.RunID, Err: err}
		}
		tc, err := tx.TableCommit()
		if err != nil {
			return nil, err
		}
		to := part.res.ToSnapshotID
		changes = append(changes, &snapshot.Change{Table: tbl, Commit: tc, ID: to, Landed: snapshot.PointsAt(to)})
	}
	if len(parts) == 0 {
		return fail("no table of release %s (%s) records it", rec.RunID, strings.Join(rec.Release, ", "))
	}
	// Each table is read back; the result is the asked table's, with
	// every table's beside it.
	var out *Result
	var all []Result
	readBack := func(ctx context.Context) error {
		var errs []error
		all = make([]Result, 0, len(parts))
		for _, part := range parts {
			res, err := l.readBackRestored(ctx, part.ident, []runrecord.Record{part.rec}, part.res)
			if res == nil {
				res = part.res
			}
			errs = append(errs, err)
			all = append(all, *res)
			if part.res.Table == name || out == nil {
				out = res
			}
		}
		return errors.Join(errs...)
	}
	var err error
	if len(changes) == 0 { // rolled back before on every table: read back
		err = readBack(ctx)
	} else if err = l.pointMainsAt(ctx, name, changes, rec.RunID, readBack); out == nil {
		return nil, err
	}
	final := *out
	final.Tables = all
	return &final, err
}

// pointMainsAt moves main of every table of a release back in one commit
// through the commit engine: an answer lost on the way is settled from
// the tables, and what landed is read back (readBack).
func (l *Runner) pointMainsAt(ctx context.Context, name string, changes []*snapshot.Change, runID string, readBack func(context.Context) error) error {
	b := &pointBack{changes: changes, readBack: readBack}
	err := snapshot.Land(ctx, l.Catalog, l.log(), runID, b)
	refused := (*snapshot.Refused)(nil)
	switch {
	case b.landed || err == nil:
		return err
	case errors.Is(err, catalog.ErrNoReleases):
		return &outcome.OpError{Op: "rollback", Table: name, RunID: runID, Err: err,
			Hint: "nothing was rolled back; a release is rolled back through a REST or SQL catalog"}
	case errors.As(err, &refused) && errors.Is(err, table.ErrCommitFailed):
		return &outcome.OpError{Op: "rollback", Table: name, RunID: runID, Err: err,
			Hint: "nothing was rolled back: main of a table of the release moved meanwhile; check `lakeswap history` and try again"}
	case refused != nil:
		return &outcome.OpError{Op: "rollback", Table: name, RunID: runID, Err: err, Hint: "nothing was rolled back"}
	}
	return &outcome.OpError{Op: "rollback", Table: name, RunID: runID, Err: err,
		Hint: "`lakeswap history` shows where main is on each table of the release once they can be read"}
}
