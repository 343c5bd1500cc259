package rollback

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/swap/internal/staging"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

// scopedRollback undoes a run whose snapshot main has moved past without
// dropping the later commits: one new snapshot, a replace of exactly the
// run's partitions that takes its files out and puts back the files it
// replaced, pinned to main's head like a publish. A run committed in
// batches (runs, one snapshot a batch, oldest first) is undone the same
// way in one commit: each batch's partitions get back what they held
// before that batch. It is refused when a later commit touched one of
// those partitions, since undoing the run there would undo that commit
// too. The rollback is itself recorded as a run, rollback-<run id>, whose
// fingerprint is the one recorded before the run.
func (l *Runner) scopedRollback(ctx context.Context, tbl *table.Table, runs []table.Snapshot, recs []runrecord.Record, res *Result, req Request) (*Result, error) {
	name := strings.Join(tbl.Identifier(), ".")
	refuse := func(format string, args ...any) error {
		return &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: fmt.Errorf("%w: "+format, append([]any{outcome.ErrRollbackRefused}, args...)...)}
	}
	rec := recs[len(recs)-1]
	if rec.RunID == "" {
		return nil, refuse("snapshot %d was not committed by lakeswap: it records no run and its partitions", runs[0].SnapshotID)
	}
	var partitions []string // every batch's, in partition order
	for _, r := range recs {
		partitions = append(partitions, r.Partitions...)
	}
	slices.Sort(partitions)
	res.Scoped = true
	if s := runrecord.Find(tbl.Metadata(), undoID(rec.RunID)); s != nil {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		undo, ok, err := runrecord.NewLoader(fsys).Snapshot(s)
		if err != nil {
			return nil, err
		}
		if ok && onMain(tbl.Metadata(), s) && slices.Equal(undo.Partitions, partitions) {
			// A scoped rollback retried: said, and checked, not done twice.
			return l.alreadyScoped(ctx, tbl.Identifier(), s, undo, res)
		}
		return nil, refuse("run rollback-%s is recorded already (snapshot %d): run %s was rolled back scoped before, or another run took that id", rec.RunID, s.SnapshotID, rec.RunID)
	}
	ul := &undoLanding{l: l, tbl: tbl, runs: runs, recs: recs, partitions: partitions, req: req, res: res, refuse: refuse}
	err := snapshot.Land(ctx, l.Catalog, l.log(), undoID(rec.RunID), ul)
	if ul.landed {
		return ul.checked, err
	}
	// The files written back go only when the commit surely did not land;
	// with its outcome unknown, main may reference them.
	if errors.Is(err, outcome.ErrCommitUnknown) {
		ul.u.end(ctx, false)
	} else if ul.u != nil {
		ul.u.removeRestaged(ctx, l)
	}
	if !ul.sent { // refused or failed as it was planned and judged
		return nil, err
	}
	if refused := (*snapshot.Refused)(nil); !errors.As(err, &refused) {
		err = fmt.Errorf("%w (`lakeswap status --run rollback-%s` answers later whether the rollback landed)", err, rec.RunID)
	}
	return nil, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: err}
}

// undoLanding is a scoped rollback on its way through the commit engine
// (snapshot.Land), as a run of its own (rollback-<run id>): each attempt
// plans the undo on main as it is now, records it and meets the guards,
// then commits it pinned to that main; a main that moved is loaded again
// and the next attempt judges the undo again; the partitions are read
// back.
type undoLanding struct {
	l          *Runner
	tbl        *table.Table
	runs       []table.Snapshot
	recs       []runrecord.Record
	partitions []string // every batch's, in partition order
	req        Request
	res        *Result
	refuse     func(string, ...any) error
	// Of the attempt: what it takes out and puts back, and what it
	// records and commits.
	u      *undoPlan
	undo   runrecord.Record
	id     int64
	sent   bool // the attempt's commit was built and sent
	landed bool
	// checked is the result once read back.
	checked *Result
}

func (ul *undoLanding) Build(ctx context.Context) ([]*snapshot.Change, error) {
	l, rec := ul.l, ul.recs[len(ul.recs)-1]
	ul.sent = false
	// 1. What the undo takes out and puts back, on main as it is now.
	u, err := l.planUndo(ctx, ul.tbl, ul.runs, ul.recs, ul.refuse)
	if err != nil {
		return nil, err
	}
	ul.u = u
	// 2. What it records: a run of its own, rollback-<run id>, with the
	//    frozen partitions it restates and why.
	undo, err := u.record(ctx, rec, ul.partitions, len(ul.runs) > 1)
	if err != nil {
		return nil, err
	}
	judged := &Undo{Table: ul.tbl, Changed: slices.Sorted(maps.Keys(u.before)), Req: ul.req, Now: time.Now()}
	if err := l.judge(ctx, judged); err != nil {
		return nil, ul.refuse("%v", err)
	}
	undo.Restated = judged.Restated
	ul.undo = undo
	// 3. One commit, pinned to main's head like a publish's.
	change, err := l.undoChange(ctx, ul.tbl, u.fsys, u.out, u.back, undo)
	if err != nil {
		return nil, err
	}
	ul.id, ul.sent = change.ID, true
	return []*snapshot.Change{change}, nil
}

// Rebase takes out what the refused attempt wrote back and loads main
// again: the next attempt plans and judges the undo on it.
func (ul *undoLanding) Rebase(ctx context.Context, _ *snapshot.Refused) (string, error) {
	ul.u.removeRestaged(ctx, ul.l)
	tbl, err := ul.l.Catalog.LoadTable(ctx, ul.tbl.Identifier())
	if err != nil {
		return "", fmt.Errorf("reload %s: %w", strings.Join(ul.tbl.Identifier(), "."), err)
	}
	ul.tbl = tbl
	return "", nil
}

// ReadBack checks that the partitions hold what was put back.
func (ul *undoLanding) ReadBack(ctx context.Context) error {
	ul.landed = true
	ul.u.end(ctx, true)
	l, res, id, name := ul.l, ul.res, ul.id, strings.Join(ul.tbl.Identifier(), ".")
	res.FromSnapshotID, res.ToSnapshotID = ul.u.head.SnapshotID, id
	got, err := snapshot.Fingerprints(ctx, l.Catalog, ul.tbl.Identifier(), id, ul.partitions)
	if err != nil {
		return &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: fmt.Errorf("%w: the rollback landed as snapshot %d, but reading it back failed: %w", outcome.ErrLandedUnverified, id, err)}
	}
	now := verify.Combine(got)
	res.Fingerprint = now.Hash
	ul.checked = res
	if now.Hash != ul.undo.Fingerprint {
		return &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID,
			Err: fmt.Errorf("%w: snapshot %d fingerprints %s, the files put back %s", outcome.ErrVerifyFailed, id, verify.Short(now.Hash), verify.Short(ul.undo.Fingerprint))}
	}
	res.Verified = !slices.ContainsFunc(ul.recs, func(r runrecord.Record) bool { return r.BaseFingerprint == "" })
	return nil
}

// undoPlan is what a scoped rollback takes out of the run's partitions and
// puts back, against main's head.
type undoPlan struct {
	fsys      icebergio.IO
	read      icebergio.IO // fsys, reading main's files with their deletes applied
	c         *contract.Contract
	head      *table.Snapshot
	out, back []iceberg.DataFile
	now       map[string][]iceberg.DataFile // main's files by partition value
	before    map[string][]iceberg.DataFile // what each partition held before the run
	// shares are, by partition value, the files of an earlier partition
	// spec the run rewrote that hold rows of the partition: put back
	// whole, with every partition they hold rows of.
	shares map[string][]string
	values map[string]string // the run's partition values and keys
	// restager writes back the rows of partitions that held delete
	// files, in one held attempt; restaged are the files it wrote, to be
	// removed should the undo not land.
	restager *staging.Restager
	restaged []string
}

// removeRestaged removes the files the undo wrote, and only those, then
// the hold that kept them.
func (u *undoPlan) removeRestaged(ctx context.Context, l *Runner) {
	for _, f := range u.restaged {
		if err := u.fsys.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.log().Warn("remove a file the refused rollback wrote", "path", f, "err", err)
		}
	}
	u.restaged = nil
	u.end(ctx, true)
}

// end ends the attempt that wrote rows back, if one did.
func (u *undoPlan) end(ctx context.Context, release bool) {
	if u != nil && u.restager != nil {
		u.restager.End(ctx, release)
		u.restager = nil
	}
}

// planUndo finds, for each batch of the run, the files its partitions hold
// now (the run's, or a later commit touched them: refused) and those they
// held before it (which must fingerprint as recorded); and refuses to put
// back a record a later commit added to another partition.
func (l *Runner) planUndo(ctx context.Context, tbl *table.Table, runs []table.Snapshot, recs []runrecord.Record, refuse func(string, ...any) error) (u *undoPlan, err error) {
	rec := recs[len(recs)-1]
	meta := tbl.Metadata()
	if err := snapshot.Writable(meta); err != nil {
		return nil, refuse("%v; a full rollback (main not moved past the run) needs no new files", err)
	}
	c, err := contract.Of(meta)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	if rec.PartitionColumn != c.Partition.Name {
		return nil, refuse("run %s partitioned by %s, the table by %s now", rec.RunID, rec.PartitionColumn, c.Partition.Name)
	}
	u = &undoPlan{c: c, head: meta.CurrentSnapshot(), values: map[string]string{}, before: map[string][]iceberg.DataFile{}, shares: map[string][]string{}}
	if u.fsys, err = tbl.FS(ctx); err != nil {
		return nil, err
	}
	if u.now, err = snapshot.Files(ctx, u.fsys, u.head, c); err != nil {
		return nil, err
	}
	if u.read, err = snapshot.WithDeletes(ctx, tbl, u.fsys, u.head, u.now); err != nil {
		return nil, err
	}
	written := u // the named result is nil on an error's return
	defer func() {
		if err != nil {
			written.removeRestaged(ctx, l)
		}
	}()
	for i, run := range runs {
		if err := l.batch(ctx, tbl, u, run, recs[i], rec.RunID, refuse); err != nil {
			return nil, err
		}
	}
	if len(u.out) == 0 && len(u.back) == 0 {
		return nil, refuse("run %s's partitions hold no files, and held none before it: there is nothing to undo", rec.RunID)
	}
	// A record the run took out of its partitions may live in another
	// one now, put there by a later commit: putting it back would
	// count it twice.
	added, err := snapshot.AddedSince(ctx, u.fsys, meta, runs[0].SnapshotID, c, u.values)
	if err != nil {
		return nil, err
	}
	// Read as readers read them: a partition the run left as it was keeps
	// its deletes, and a file added since may have some.
	restored := map[string][]string{}
	for v, files := range u.before {
		restored[u.values[v]] = append(snapshot.DataPaths(files), u.shares[v]...)
	}
	if why, err := snapshot.KeysAddedElsewhere(ctx, u.read, c, rec.RunID, restored, snapshot.StillLive(added, u.now), "the rollback puts back"); why != "" || err != nil {
		if err != nil {
			return nil, err
		}
		return nil, refuse("%s; publish what the run's partitions should hold instead", why)
	}
	return u, nil
}

// batch adds one batch of the run (run, recorded as r) to the undo.
func (l *Runner) batch(ctx context.Context, tbl *table.Table, u *undoPlan, run table.Snapshot, r runrecord.Record, runID string, refuse func(string, ...any) error) error {
	c, meta := u.c, tbl.Metadata()
	then, err := snapshot.Files(ctx, u.fsys, meta.SnapshotByID(run.SnapshotID), c)
	if err != nil {
		return err
	}
	var target *table.Snapshot // nil: the batch was the table's first
	if run.ParentSnapshotID != nil {
		target = meta.SnapshotByID(*run.ParentSnapshotID)
	}
	held, err := snapshot.Files(ctx, u.fsys, target, c)
	if err != nil {
		return err
	}
	rewritten, added, err := u.earlier(ctx, meta, target, &run, refuse)
	if err != nil {
		return err
	}
	u.back, u.out = append(u.back, rewritten...), append(u.out, added...)
	batch := map[string]string{}
	var restage []string // partitions whose files deletes applied to
	for _, v := range r.Partitions {
		key := c.Partition.Key(v)
		u.values[v], batch[v] = key, key
		u.shares[v] = snapshot.MayHoldAny(c, rewritten, v)
		if slices.Equal(snapshot.Paths(then[v]), snapshot.Paths(held[v])) &&
			!slices.ContainsFunc(snapshot.DataPaths(u.now[v]), func(p string) bool { return !slices.Contains(snapshot.DataPaths(then[v]), p) }) {
			// The run left it as it was (unchanged), and no later commit
			// added rows to it (a merge-on-read delete may have taken
			// some): the undo leaves it as it is now.
			u.before[v] = u.now[v]
			continue
		}
		// The run's partitions hold the run's files, or a later commit
		// changed them.
		if !slices.Equal(snapshot.Paths(u.now[v]), snapshot.Paths(then[v])) {
			why, _, _ := snapshot.MovedSince(ctx, u.fsys, meta, &run.SnapshotID, c, map[string]string{v: key})
			if why == "" {
				why = "its files differ from the run's"
			}
			return refuse("a later commit touched partition %s of run %s: %s; undoing the run there would undo that commit too", key, runID, why)
		}
		u.before[v] = held[v]
		u.out = append(u.out, u.now[v]...)
		if snapshot.HasDeletes(map[string][]iceberg.DataFile{v: held[v]}) {
			restage = append(restage, v)
			continue
		}
		u.back = append(u.back, held[v]...)
	}
	// What the run replaced is read as its readers read it: with the
	// deletes that applied to it then.
	read, err := snapshot.WithDeletes(ctx, tbl, u.fsys, target, held)
	if err != nil {
		return err
	}
	if r.BaseFingerprint != "" {
		parts, err := partitionFingerprintsOf(ctx, read, c, held, batch, u.shares)
		if err != nil {
			return err
		}
		if fp := verify.Combine(parts); fp.Hash != r.BaseFingerprint {
			return refuse("the files run %s replaced%s fingerprint %s, not %s as recorded before the run", runID, inBatch(r), verify.Short(fp.Hash), verify.Short(r.BaseFingerprint))
		}
	}
	// A partition that held delete files gets its rows back as new files:
	// its old files and their deletes cannot be put back as they were,
	// since Iceberg would give them new sequence numbers, and an equality
	// delete then applies to other rows than it did.
	for _, v := range restage {
		if u.restager == nil {
			if u.restager, err = staging.Restage(ctx, l.StagingIO, l.log(), tbl, undoID(runID)); err != nil {
				return err
			}
		}
		files, written, err := u.restager.Write(ctx, c, v, func(write func(arrow.RecordBatch) error) error {
			return eachRow(ctx, read, c, held[v], write)
		})
		u.restaged = append(u.restaged, written...)
		if err != nil {
			return fmt.Errorf("write back the rows partition %s held before run %s: %w", u.values[v], runID, err)
		}
		// Built twice: what was written reads back as what was read.
		want, err := snapshot.Fingerprint(ctx, read, c, v, snapshot.DataPaths(held[v]))
		if err != nil {
			return err
		}
		got, err := snapshot.Fingerprint(ctx, u.fsys, c, v, snapshot.Paths(files))
		if err != nil {
			return err
		}
		if got.Hash != want.Hash || got.Rows != want.Rows {
			return fmt.Errorf("the rows of partition %s written back fingerprint %s (%d rows), not %s (%d rows) as read", u.values[v], verify.Short(got.Hash), got.Rows, verify.Short(want.Hash), want.Rows)
		}
		u.before[v], u.back = files, append(u.back, files...)
	}
	return nil
}

// earlier lists the files of an earlier partition spec a run's snapshot
// took out (rewritten, by --rewrite-overlapping: its parent, target, holds
// them and it does not) and put in (added: a scoped rollback of such a
// run put them back). The first go back as they were, the second out: one
// rewritten live on main again would be there twice, and one added that
// main no longer holds was taken out by a later commit; both are refused.
func (u *undoPlan) earlier(ctx context.Context, meta table.Metadata, target, run *table.Snapshot, refuse func(string, ...any) error) (rewritten, added []iceberg.DataFile, err error) {
	before, err := snapshot.Earlier(ctx, u.fsys, target, u.c)
	if err != nil {
		return nil, nil, err
	}
	after, err := snapshot.Earlier(ctx, u.fsys, meta.SnapshotByID(run.SnapshotID), u.c)
	if err != nil || len(before) == 0 && len(after) == 0 {
		return nil, nil, err
	}
	now, err := snapshot.Earlier(ctx, u.fsys, u.head, u.c)
	if err != nil {
		return nil, nil, err
	}
	had, kept, live := snapshot.Paths(before), snapshot.Paths(after), snapshot.Paths(now)
	for _, df := range before {
		if slices.Contains(kept, df.FilePath()) {
			continue
		}
		if slices.Contains(live, df.FilePath()) {
			return nil, nil, refuse("%s, which the run rewrote, is live on main again", df.FilePath())
		}
		rewritten = append(rewritten, df)
	}
	for _, df := range after {
		if slices.Contains(had, df.FilePath()) {
			continue
		}
		if !slices.Contains(live, df.FilePath()) {
			return nil, nil, refuse("%s, which the run put back, was taken out by a later commit; undoing the run would undo that commit too", df.FilePath())
		}
		added = append(added, df)
	}
	return rewritten, added, nil
}

// eachRow reads the rows of a partition's data files through fsys, in the
// contract's schema, batch by batch.
func eachRow(ctx context.Context, fsys icebergio.IO, c *contract.Contract, files []iceberg.DataFile, fn func(arrow.RecordBatch) error) error {
	acc := verify.NewAccumulator(c, "", nil) // only to project batches
	for _, path := range snapshot.DataPaths(files) {
		rr, err := snapshot.Open(ctx, fsys, path)
		if err != nil {
			return err
		}
		for rr.Next() {
			rec, err := acc.Project(rr.RecordBatch())
			if err == nil {
				err = fn(rec)
				rec.Release()
			}
			if err != nil {
				rr.Release()
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// record is what the undo records: the rollback as a run of its own,
// whose fingerprint is the one recorded before the run, and whose base is
// what the run's partitions hold now (all its batches, for batches).
func (u *undoPlan) record(ctx context.Context, rec runrecord.Record, partitions []string, batches bool) (runrecord.Record, error) {
	parts, err := partitionFingerprintsOf(ctx, u.read, u.c, u.before, u.values, u.shares)
	if err != nil {
		return runrecord.Record{}, err
	}
	fp := verify.Combine(parts)
	id, source := runrecord.ScopedRollback(rec.RunID)
	undo := runrecord.Record{RunID: id, Source: source, PartitionColumn: rec.PartitionColumn,
		Partitions: partitions, Fingerprint: fp.Hash, FingerprintVersion: verify.VersionOf(u.c.Schema), PartitionHashes: map[string]string{},
		Rows: fp.Rows, Sums: fp.Sums, BaseSnapshotID: &u.head.SnapshotID, BaseFingerprint: rec.Fingerprint, BaseRows: rec.Rows, Version: runrecord.Version}
	if batches {
		// What the undo replaces is the run's batches together.
		ran, err := partitionFingerprintsOf(ctx, u.read, u.c, u.now, u.values, nil)
		if err != nil {
			return runrecord.Record{}, err
		}
		whole := verify.Combine(ran)
		undo.BaseFingerprint, undo.BaseRows = whole.Hash, whole.Rows
	}
	for k, pf := range parts {
		undo.PartitionHashes[k] = pf.Hash
	}
	return undo, nil
}

// inBatch names a run's batch in a message, or nothing for a run
// committed whole.
func inBatch(r runrecord.Record) string {
	if r.Batch == "" {
		return ""
	}
	return " in batch " + r.Batch
}

// undoChange builds the replace of a scoped rollback on main as tbl holds
// it, pinned there.
func (l *Runner) undoChange(ctx context.Context, tbl *table.Table, fsys icebergio.IO, out, back []iceberg.DataFile, undo runrecord.Record) (*snapshot.Change, error) {
	written := &snapshot.RecordingIO{IO: fsys, Meta: tbl.Metadata()}
	head := tbl.CurrentSnapshot()
	cat := &snapshot.Extended{Catalog: l.Catalog, Updates: []table.Update{snapshot.TagRollbackTarget(undo.RunID, head, l.Retention)}}
	tx := table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(context.Context) (icebergio.IO, error) { return written.FS(), nil }, cat).NewTransaction()
	if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return nil, err
	}
	props, runFile, body := undo.Summary(tbl.Metadata().Location())
	if err := runrecord.WriteRunFile(written, runFile, body); err != nil {
		snapshot.RemoveWritten(ctx, l.log(), tbl, written)
		return nil, err
	}
	fail := func(err error) (*snapshot.Change, error) {
		snapshot.RemoveWritten(ctx, l.log(), tbl, written)
		return nil, err
	}
	if err := tx.ReplaceDataFilesWithDataFiles(ctx, out, back, props); err != nil {
		return fail(err)
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return fail(err)
	}
	id := staged.CurrentSnapshot().SnapshotID
	cat.Updates = append(cat.Updates, snapshot.TagRun(snapshot.RunTag(undo.RunID), id, l.Retention))
	return &snapshot.Change{Table: tbl, Tx: tx, Written: written, ID: id, Landed: snapshot.Adds(id)}, nil
}

// partitionFingerprintsOf fingerprints the given partitions' files, and
// their rows among the files of an earlier spec shared by value, keyed as
// column=value.
func partitionFingerprintsOf(ctx context.Context, fsys icebergio.IO, c *contract.Contract, files map[string][]iceberg.DataFile, values map[string]string, shares map[string][]string) (map[string]verify.Fingerprint, error) {
	out := map[string]verify.Fingerprint{}
	for v, key := range values {
		fp, err := snapshot.Fingerprint(ctx, fsys, c, v, snapshot.DataPaths(files[v]), shares[v]...)
		if err != nil {
			return nil, err
		}
		out[key] = fp
	}
	return out, nil
}

// onMain reports whether main holds snapshot s.
func onMain(meta table.Metadata, s *table.Snapshot) bool {
	head := meta.CurrentSnapshot()
	return head != nil && table.IsAncestorOf(head.SnapshotID, s.SnapshotID, func(id int64) *table.Snapshot { return meta.SnapshotByID(id) })
}

// alreadyScoped reports a scoped rollback done before as snapshot s, which
// main holds, recorded as undo: its partitions are read again there and
// compared with what it recorded.
func (l *Runner) alreadyScoped(ctx context.Context, ident table.Identifier, s *table.Snapshot, undo runrecord.Record, res *Result) (*Result, error) {
	at := time.UnixMilli(s.TimestampMs).UTC()
	res.AlreadyRolledBack, res.RolledBackAt, res.ToSnapshotID = true, &at, s.SnapshotID
	if s.ParentSnapshotID != nil {
		res.FromSnapshotID = *s.ParentSnapshotID
	}
	got, err := snapshot.Fingerprints(ctx, l.Catalog, ident, s.SnapshotID, undo.Partitions)
	if err != nil {
		return nil, &outcome.OpError{Op: "rollback", Table: strings.Join(ident, "."), RunID: res.RunID, Err: err}
	}
	fp := verify.Combine(got)
	res.Fingerprint, res.Verified = fp.Hash, fp.Hash == undo.Fingerprint
	return res, nil
}

// undoID is the run id of the scoped rollback of run.
func undoID(run string) string {
	id, _ := runrecord.ScopedRollback(run)
	return id
}
