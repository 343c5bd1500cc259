package snapshot

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

// FindRun returns the snapshot a run committed, by run id or snapshot id.
func FindRun(meta table.Metadata, runID string, snapshotID int64) (*table.Snapshot, error) {
	if runID != "" {
		if s := runrecord.Find(meta, runID); s != nil {
			return s, nil
		}
		if s := meta.SnapshotByName(ReleaseTag(runID)); s != nil {
			return nil, fmt.Errorf("%w: run %s is a release that committed nothing to this table (its partitions held the release's content already: snapshot %d, tagged %s); undo or check it on a table the release changed, which `lakeswap history` there names", outcome.ErrRunNotFound, runID, s.SnapshotID, ReleaseTag(runID))
		}
		return nil, fmt.Errorf("%w: no snapshot of the table records run %s; `lakeswap history` lists the runs, and `lakeswap status --run` says whether it committed nothing (unchanged)", outcome.ErrRunNotFound, runID)
	}
	if s := meta.SnapshotByID(snapshotID); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("%w: snapshot %d is not in the table's metadata; `lakeswap history` lists the snapshots", outcome.ErrRunNotFound, snapshotID)
}

// Fingerprints fingerprints partitions of a snapshot, keyed as
// column=value.
func Fingerprints(ctx context.Context, cat table.CatalogIO, ident table.Identifier, snapshotID int64, values []string) (map[string]verify.Fingerprint, error) {
	at, err := Load(ctx, cat, ident, snapshotID)
	if err != nil {
		return nil, err
	}
	out := map[string]verify.Fingerprint{}
	for _, value := range values {
		key := at.Contract.Partition.Key(value)
		fp, err := at.Fingerprint(ctx, value)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &UnreadableError{Partition: key, Err: err}
		}
		out[key] = fp
	}
	return out, nil
}

// UnreadableError is a partition whose files the snapshot references
// cannot be read (missing, or not decoding as the table's schema): what a
// check of the snapshot finds, not a failure to look.
type UnreadableError struct {
	Partition string
	Err       error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("a file of partition %s the snapshot references cannot be read: %v", e.Partition, e.Err)
}

func (e *UnreadableError) Unwrap() error { return e.Err }

// RolledBackAt finds when main was pointed back at target, the snapshot
// run replaced, after run was committed, and whether main descends from
// target still: the table's own record that the run was rolled back.
func RolledBackAt(meta table.Metadata, run *table.Snapshot, target int64) (time.Time, bool) {
	head := meta.CurrentSnapshot()
	if head == nil || !table.IsAncestorOf(head.SnapshotID, target, func(id int64) *table.Snapshot { return meta.SnapshotByID(id) }) {
		return time.Time{}, false
	}
	for e := range meta.SnapshotLogs() {
		if e.SnapshotID == target && e.TimestampMs >= run.TimestampMs {
			return time.UnixMilli(e.TimestampMs).UTC(), true
		}
	}
	return time.Time{}, false
}
