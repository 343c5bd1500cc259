package rollback

import (
	"context"
	"errors"
	"fmt"
	"github.com/lakeswap/lakeswap/swap/internal/outcome"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"slices"
	"strings"

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
func (l *Ledger) scopedRollback(ctx context.Context, tbl *table.Table, runs []table.Snapshot, recs []runrecord.Record, res *Result) (*Result, error) {
	name := strings.Join(tbl.Identifier(), ".")
	fail := func(format string, args ...any) (*Result, error) {
		return nil, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: fmt.Errorf("%w: "+format, append([]any{outcome.ErrRollbackRefused}, args...)...)}
	}
	rec := recs[len(recs)-1]
	if rec.RunID == "" {
		return fail("snapshot %d was not committed by lakeswap: it records no run and its partitions", runs[0].SnapshotID)
	}
	if s := runrecord.Find(tbl.Metadata(), "rollback-"+rec.RunID); s != nil {
		return fail("run rollback-%s is recorded already (snapshot %d): run %s was rolled back scoped before, or another run took that id", rec.RunID, s.SnapshotID, rec.RunID)
	}
	var partitions []string // every batch's, in partition order
	for _, r := range recs {
		partitions = append(partitions, r.Partitions...)
	}
	slices.Sort(partitions)
	res.Scoped = true
	for attempt := 1; ; attempt++ {
		meta := tbl.Metadata()
		c, err := contract.Of(meta)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		if rec.PartitionColumn != c.Partition.Name {
			return fail("run %s partitioned by %s, the table by %s now", rec.RunID, rec.PartitionColumn, c.Partition.Name)
		}
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		head := meta.CurrentSnapshot()
		now, err := snapshot.Files(ctx, fsys, head, c)
		if err != nil {
			return nil, err
		}
		values := map[string]string{}
		before := map[string][]iceberg.DataFile{}
		var out, back []iceberg.DataFile
		for i, run := range runs {
			then, err := snapshot.Files(ctx, fsys, meta.SnapshotByID(run.SnapshotID), c)
			if err != nil {
				return nil, err
			}
			var target *table.Snapshot // nil: the batch was the table's first
			if run.ParentSnapshotID != nil {
				target = meta.SnapshotByID(*run.ParentSnapshotID)
			}
			held, err := snapshot.Files(ctx, fsys, target, c)
			if err != nil {
				return nil, err
			}
			batch := map[string]string{}
			for _, v := range recs[i].Partitions {
				key := c.Partition.Key(v)
				values[v], batch[v] = key, key
				// The run's partitions hold the run's files, or a later
				// commit changed them.
				if !slices.Equal(snapshot.Paths(now[v]), snapshot.Paths(then[v])) {
					why, _, _ := snapshot.MovedSince(ctx, fsys, meta, &run.SnapshotID, c, map[string]string{v: key})
					if why == "" {
						why = "its files differ from the run's"
					}
					return fail("a later commit touched partition %s of run %s: %s; undoing the run there would undo that commit too", key, rec.RunID, why)
				}
				if err := snapshot.NoDeletes(key, held[v]); err != nil {
					return fail("%v", err)
				}
				before[v] = held[v]
				if slices.Equal(snapshot.Paths(then[v]), snapshot.Paths(held[v])) {
					continue // the run left it as it was (unchanged)
				}
				out, back = append(out, now[v]...), append(back, held[v]...)
			}
			if recs[i].BaseFingerprint != "" {
				parts, err := partitionFingerprintsOf(ctx, fsys, c, held, batch)
				if err != nil {
					return nil, err
				}
				if fp, _ := verify.Combine(parts); fp.Hash != recs[i].BaseFingerprint {
					return fail("the files run %s replaced%s fingerprint %s, not %s as recorded before the run", rec.RunID, inBatch(recs[i]), outcome.Short(fp.Hash), outcome.Short(recs[i].BaseFingerprint))
				}
			}
		}
		if len(out) == 0 && len(back) == 0 {
			return fail("run %s's partitions hold no files, and held none before it: there is nothing to undo", rec.RunID)
		}
		// A record the run took out of its partitions may live in another
		// one now, put there by a later commit: putting it back would
		// count it twice.
		added, err := snapshot.AddedSince(ctx, fsys, meta, runs[0].SnapshotID, c, values)
		if err != nil {
			return nil, err
		}
		restored := map[string][]string{}
		for v, files := range before {
			restored[values[v]] = snapshot.Paths(files)
		}
		if why, err := snapshot.KeysAddedElsewhere(ctx, fsys, c, rec.RunID, restored, added, "the rollback puts back"); why != "" || err != nil {
			if err != nil {
				return nil, err
			}
			return fail("%s; publish what the run's partitions should hold instead", why)
		}
		parts, err := partitionFingerprintsOf(ctx, fsys, c, before, values)
		if err != nil {
			return nil, err
		}
		fp, _ := verify.Combine(parts)
		undo := runrecord.Record{RunID: "rollback-" + rec.RunID, Source: "scoped rollback of run " + rec.RunID, PartitionColumn: rec.PartitionColumn,
			Partitions: partitions, Fingerprint: fp.Hash, FingerprintVersion: verify.Version, PartitionHashes: map[string]string{},
			Rows: fp.Rows, Sums: fp.Sums, BaseSnapshotID: &head.SnapshotID, BaseFingerprint: rec.Fingerprint, BaseRows: rec.Rows, Version: runrecord.Version}
		if len(runs) > 1 {
			// What the undo replaces is the run's batches together.
			ran, err := partitionFingerprintsOf(ctx, fsys, c, now, values)
			if err != nil {
				return nil, err
			}
			whole, _ := verify.Combine(ran)
			undo.BaseFingerprint, undo.BaseRows = whole.Hash, whole.Rows
		}
		for k, pf := range parts {
			undo.PartitionHashes[k] = pf.Hash
		}
		id, err := l.commitUndo(ctx, tbl, fsys, out, back, undo)
		if errors.Is(err, table.ErrCommitFailed) && attempt < snapshot.RebaseAttempts {
			if tbl, err = l.Catalog.LoadTable(ctx, tbl.Identifier()); err != nil {
				return nil, fmt.Errorf("reload %s: %w", name, err)
			}
			continue
		}
		if err != nil {
			return nil, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: err}
		}
		res.FromSnapshotID, res.ToSnapshotID = head.SnapshotID, id
		got, err := l.partitionFingerprints(ctx, tbl.Identifier(), id, partitions)
		if err != nil {
			return res, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID, Err: fmt.Errorf("%w: the rollback landed as snapshot %d, but reading it back failed: %w", outcome.ErrLandedUnverified, id, err)}
		}
		now2, _ := verify.Combine(got)
		res.Fingerprint = now2.Hash
		if now2.Hash != fp.Hash {
			return res, &outcome.OpError{Op: "rollback", Table: name, RunID: res.RunID,
				Err: fmt.Errorf("%w: snapshot %d fingerprints %s, the files put back %s", outcome.ErrVerifyFailed, id, outcome.Short(now2.Hash), outcome.Short(fp.Hash))}
		}
		res.Verified = !slices.ContainsFunc(recs, func(r runrecord.Record) bool { return r.BaseFingerprint == "" })
		return res, nil
	}
}

// inBatch names a run's batch in a message, or nothing for a run
// committed whole.
func inBatch(r runrecord.Record) string {
	if r.Batch == "" {
		return ""
	}
	return " in batch " + r.Batch
}

// commitUndo commits the replace of a scoped rollback on main as tbl holds
// it, and returns its snapshot.
func (l *Ledger) commitUndo(ctx context.Context, tbl *table.Table, fsys icebergio.IO, out, back []iceberg.DataFile, undo runrecord.Record) (int64, error) {
	written := &snapshot.RecordingIO{IO: fsys}
	head := tbl.CurrentSnapshot()
	cat := &snapshot.Extended{Catalog: l.Catalog, Updates: []table.Update{snapshot.TagRollbackTarget(undo.RunID, head, l.Retention)}}
	tx := table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(context.Context) (icebergio.IO, error) { return written.FS(), nil }, cat).NewTransaction()
	if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return 0, err
	}
	if err := tx.ReplaceDataFilesWithDataFiles(ctx, out, back, undo.Properties()); err != nil {
		return 0, err
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return 0, err
	}
	id := staged.CurrentSnapshot().SnapshotID
	cat.Updates = append(cat.Updates, snapshot.TagRun(snapshot.RunTag(undo.RunID), id, l.Retention))
	if _, err := tx.Commit(ctx); err != nil {
		if errors.Is(err, table.ErrCommitFailed) {
			snapshot.RemoveWritten(ctx, l.log(), tbl, written)
			return 0, err
		}
		// Answered with an error: the table says whether it landed.
		if err := snapshot.LookFor(ctx, l.Catalog, l.log(), tbl, undo.RunID, id, err, func(m table.Metadata) bool { return m.SnapshotByID(id) != nil }); err != nil {
			return 0, fmt.Errorf("%w (`lakeswap status --run %s` answers later whether the rollback landed)", err, undo.RunID)
		}
	}
	return id, nil
}

// partitionFingerprintsOf fingerprints the given partitions' files, keyed
// as column=value.
func partitionFingerprintsOf(ctx context.Context, fsys icebergio.IO, c *contract.Contract, files map[string][]iceberg.DataFile, values map[string]string) (map[string]verify.Fingerprint, error) {
	out := map[string]verify.Fingerprint{}
	for v, key := range values {
		fp, err := snapshot.Fingerprint(ctx, fsys, c, v, snapshot.Paths(files[v]))
		if err != nil {
			return nil, err
		}
		out[key] = fp
	}
	return out, nil
}
