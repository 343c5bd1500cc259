package swap

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
)

// A backfill of a year runs beside the table's daily jobs, so main moving
// since the plan is the rule, not the exception. As Iceberg's own
// ReplacePartitions validation does, lakeswap judges a moved main by
// partition: when no commit since the plan's base added or removed a data
// or delete file in a planned partition, and the table's schema, partition
// spec and contract are the plan's, the plan's replace means exactly what it
// meant at the base, and it is committed on the new head instead, still as
// one compare-and-swap on that head. iceberg-go's own validation of a file
// replace is table-wide (any concurrent append fails it), hence this one.

// rebaseAttempts bounds how often a commit is tried again on a main that
// keeps moving under it.
const rebaseAttempts = 10

// movedSince says why a plan whose base is base cannot be committed on the
// table's current main, or "" when no commit since the base touched a
// planned partition (values maps each planned value to its key). Main
// must still descend from the base: a rollback of main since the plan is a
// conflict, since the plan's fingerprints describe a base main dropped.
//
// It also lists the data files those commits added outside the planned
// partitions, for the checks that depend on the rest of the table.
func movedSince(ctx context.Context, fsys icebergio.IO, meta table.Metadata, base *int64, c *contract.Contract, values map[string]string) (string, []addedFile, error) {
	head := meta.CurrentSnapshot()
	if head == nil {
		if base != nil {
			return fmt.Sprintf("main holds no snapshot now, the plan's base was snapshot %d", *base), nil, nil
		}
		return "", nil, nil
	}
	lookup := func(id int64) *table.Snapshot { return meta.SnapshotByID(id) }
	var since []table.Snapshot
	found := base == nil
	for _, s := range table.AncestorsOf(head.SnapshotID, lookup) {
		if base != nil && s.SnapshotID == *base {
			found = true
			break
		}
		since = append(since, s)
	}
	if !found {
		return fmt.Sprintf("main (at snapshot %d) no longer descends from the plan's base snapshot %d: it was rolled back or replaced since the plan", head.SnapshotID, *base), nil, nil
	}
	// Oldest first: the conflict named is the first that happened.
	var added []addedFile
	for _, s := range slices.Backward(since) {
		why, more, err := touched(ctx, fsys, &s, c, values)
		if why != "" || err != nil {
			return why, nil, err
		}
		added = append(added, more...)
	}
	return "", added, nil
}

// addedFile is a data file a snapshot since the plan's base added outside
// the planned partitions.
type addedFile struct {
	path, partition string // the partition's value
	snapshot        *table.Snapshot
}

// touched says how snapshot s changed one of the planned partitions, or "".
// Only manifests s wrote can hold its changes; in them, the entries it
// added or deleted are its changes (a rewritten manifest carries earlier
// files as existing).
func touched(ctx context.Context, fsys icebergio.IO, s *table.Snapshot, c *contract.Contract, values map[string]string) (string, []addedFile, error) {
	manifests, err := s.Manifests(fsys)
	if err != nil {
		return "", nil, fmt.Errorf("read manifest list of snapshot %d: %w", s.SnapshotID, err)
	}
	var added []addedFile
	op := "unknown operation"
	if s.Summary != nil {
		op = string(s.Summary.Operation)
	}
	at := time.UnixMilli(s.TimestampMs).UTC().Format(time.RFC3339)
	for _, m := range manifests {
		if m.SnapshotID() != s.SnapshotID {
			continue
		}
		if err := ctx.Err(); err != nil {
			return "", nil, err
		}
		if int(m.PartitionSpecID()) != c.SpecID {
			return fmt.Sprintf("snapshot %d (%s, %s) wrote files of partition spec %d, not the table's %d", s.SnapshotID, op, at, m.PartitionSpecID(), c.SpecID), nil, nil
		}
		entries, err := m.FetchEntries(fsys, false)
		if err != nil {
			return "", nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			if e.Status() == iceberg.EntryStatusEXISTING || e.SnapshotID() != s.SnapshotID {
				continue
			}
			df := e.DataFile()
			value := c.PartitionOf(df)
			key, ok := values[value]
			if !ok {
				if e.Status() == iceberg.EntryStatusADDED && df.ContentType() == iceberg.EntryContentData {
					added = append(added, addedFile{path: df.FilePath(), partition: value, snapshot: s})
				}
				continue
			}
			verb, kind := "added", "data file"
			if e.Status() == iceberg.EntryStatusDELETED {
				verb = "removed"
			}
			if df.ContentType() != iceberg.EntryContentData {
				kind = "delete file"
			}
			return fmt.Sprintf("snapshot %d (%s, %s) %s %s %s in partition %s", s.SnapshotID, op, at, verb, kind, df.FilePath(), key), nil, nil
		}
	}
	return "", added, nil
}

// describeSnapshot names a snapshot for a message: id, operation, time.
func describeSnapshot(s *table.Snapshot) string {
	op := "unknown operation"
	if s.Summary != nil {
		op = string(s.Summary.Operation)
	}
	return fmt.Sprintf("snapshot %d (%s, %s)", s.SnapshotID, op, time.UnixMilli(s.TimestampMs).UTC().Format(time.RFC3339))
}

// plannedValues maps a plan's partition values to their keys.
func plannedValues(plan *Plan) map[string]string {
	out := make(map[string]string, len(plan.Partitions))
	for _, pp := range plan.Partitions {
		out[pp.Value] = pp.Key
	}
	return out
}

// rebase checks that plan can be committed on tbl's main as it is now,
// which has moved since the plan's base, and points the plan's replace at
// the files main holds there: the same files, since no commit touched
// them. It says why not, or "".
func rebase(ctx context.Context, tbl *table.Table, plan *Plan) (string, error) {
	meta := tbl.Metadata()
	c, err := contract.Of(meta)
	if err != nil {
		return "", fmt.Errorf("table %s: %w", plan.Table, err)
	}
	if got := c.Summary(); !reflect.DeepEqual(got, plan.Contract) {
		return fmt.Sprintf("the table's schema, partition spec or contract changed since the plan (%+v, planned under %+v)", got, plan.Contract), nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return "", err
	}
	why, added, err := movedSince(ctx, fsys, meta, plan.BaseSnapshotID, c, plannedValues(plan))
	if why != "" || err != nil {
		return why, err
	}
	// What the stage judged against the rest of the table is judged again
	// against what those commits added there: a record they brought into
	// another partition that this run stages too would be counted twice.
	if why, err := movedInto(ctx, fsys, c, plan, added); why != "" || err != nil {
		if why != "" {
			why += "; stage the run again declaring both partitions"
		}
		return why, err
	}
	applies := len(c.Grain) > 0 && !slices.Contains(c.Grain, c.Partition.Column)
	if applies && len(added) > 0 && !slices.ContainsFunc(plan.Checks, func(c Check) bool { return c.At == "commit" }) {
		plan.Checks = append(plan.Checks, Check{Name: "moved records", Result: "passed", At: "commit"})
	}
	all, err := baseFiles(ctx, fsys, meta.CurrentSnapshot(), c)
	if err != nil {
		return "", err
	}
	old := map[string][]iceberg.DataFile{}
	for _, pp := range plan.Partitions {
		if !slices.Equal(paths(all[pp.Value]), filePaths(pp.OldFiles)) {
			// No commit since the base touched it, so this cannot be; say
			// so rather than replace what the plan did not see.
			return fmt.Sprintf("partition %s holds other files than the plan replaces", pp.Key), nil
		}
		old[pp.Value] = all[pp.Value]
	}
	plan.oldFiles, plan.contract = old, c
	return "", nil
}

// addedSince lists the data files the snapshots on main since from added
// outside the given partition values, oldest first.
func addedSince(ctx context.Context, fsys icebergio.IO, meta table.Metadata, from int64, c *contract.Contract, values map[string]string) ([]addedFile, error) {
	head := meta.CurrentSnapshot()
	if head == nil {
		return nil, nil
	}
	var since []table.Snapshot
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		if s.SnapshotID == from {
			break
		}
		since = append(since, s)
	}
	var out []addedFile
	for _, s := range slices.Backward(since) {
		manifests, err := s.Manifests(fsys)
		if err != nil {
			return nil, fmt.Errorf("read manifest list of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range manifests {
			if m.SnapshotID() != s.SnapshotID {
				continue
			}
			entries, err := m.FetchEntries(fsys, false)
			if err != nil {
				return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			for _, e := range entries {
				df := e.DataFile()
				if _, ours := values[c.PartitionOf(df)]; e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == s.SnapshotID &&
					df.ContentType() == iceberg.EntryContentData && !ours {
					out = append(out, addedFile{path: df.FilePath(), partition: c.PartitionOf(df), snapshot: &s})
				}
			}
		}
	}
	return out, nil
}
