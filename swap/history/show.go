package history

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/jsonid"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// RunView is a committed run as a person looks at it: each partition it
// replaced, before and after, read back from the table's snapshots.
type RunView struct {
	Table string `json:"table"`
	RunID string `json:"run_id"`
	// Snapshots are the run's snapshots, oldest first (one, or one a
	// batch).
	Snapshots jsonid.Ints `json:"snapshots"`
	Time      time.Time   `json:"time"`
	Source    string      `json:"source,omitempty"`
	// JobVersion, Rejected and Reconciled are a SQL job's.
	JobVersion  string                          `json:"job_version,omitempty"`
	Rejected    map[string]int64                `json:"rejected,omitempty"`
	Reconciled  map[string]map[string]exact.Sum `json:"reconciled,omitempty"`
	Fingerprint string                          `json:"fingerprint"`
	// Checks are the run's checks as it recorded them, name=verdict
	// (passed, allowed by a flag, not run); none for a run recorded before
	// lakeswap recorded them.
	Checks []string `json:"checks"`
	// Restated, LateDecision and Watermark are the run's decisions on
	// frozen partitions and on rows that arrived late, and the arrival
	// time its job read up to (of a run in batches, its last batch's).
	Restated     *runrecord.Restatement  `json:"restated_frozen,omitempty"`
	LateDecision *runrecord.LateDecision `json:"late_decision,omitempty"`
	Watermark    string                  `json:"watermark,omitempty"`
	Rows         int64                   `json:"rows"`
	Sums         map[string]exact.Sum    `json:"sums"`
	// Scales are the decimal sums' scales: 1234 at scale 2 is 12.34.
	Scales     map[string]int  `json:"scales,omitempty"`
	Partitions []PartitionView `json:"partitions"`
	// RolledBack says the run was undone since: when, and main set back
	// to which snapshot, or the snapshot of a scoped rollback of it (To);
	// the figures are what the run committed, which main no longer holds.
	RolledBack *Undone `json:"rolled_back,omitempty"`
}

// Undone is how a run was undone: main set back past it (a rollback)
// or a snapshot of its own that put back the run's partitions (Scoped).
type Undone struct {
	Time   time.Time `json:"time"`
	To     int64     `json:"snapshot_id,string"`
	Scoped bool      `json:"scoped"`
}

// undoneBy finds the last rollback of a run: a scoped rollback's
// snapshot, or main set back past the run's snapshots.
func undoneBy(meta table.Metadata, runID string) *Undone {
	scoped, _ := runrecord.ScopedRollback(runID)
	if s := runrecord.Find(meta, scoped); s != nil {
		return &Undone{Time: time.UnixMilli(s.TimestampMs).UTC(), To: s.SnapshotID, Scoped: true}
	}
	var out *Undone
	for _, r := range rollbacksOf(meta) {
		if slices.Contains(r.Runs, runID) {
			out = &Undone{Time: r.Time, To: r.To}
		}
	}
	return out
}

// PartitionView is one partition of a run: its rows, sums and fingerprint
// in the snapshot the run replaced and in the one it committed, and the
// data files it removed and added.
type PartitionView struct {
	Partition string             `json:"partition"`
	Before    verify.Fingerprint `json:"before"`
	After     verify.Fingerprint `json:"after"`
	Removed   []string           `json:"removed_files"`
	Added     []string           `json:"added_files"`
	// Changes are the keys added, removed and changed at the grain, with
	// a few of each and their values (a partition too large to hold its
	// keys says so).
	Changes *verify.Changes `json:"changes,omitempty"`
}

// showMaxRows is the most rows, before and after together, show --run
// and report compare at the grain in one partition, beside the figures
// they print: past it they say so and point to diff, which compares any
// number (its memory is bounded; its time is a read of both sides, and
// of the keys named again).
const showMaxRows = 2_000_000

// grainChanges compares a partition's rows at the grain in two snapshots;
// maxRows (0: any number) leaves out a partition with more rows.
func grainChanges(ctx context.Context, a, b *snapshot.At, value string, rows int64, keys int, maxRows int64) (*verify.Changes, error) {
	if len(a.Contract.Grain) == 0 {
		return nil, nil
	}
	if maxRows > 0 && rows > maxRows {
		return &verify.Changes{Skipped: fmt.Sprintf("not compared at the grain: %s rows, more than %s (lakeswap diff compares any number)", words.Number(rows), words.Number(maxRows))}, nil
	}
	d := verify.NewDiffer(b.Contract)
	d.Keys = keys
	side := func(at *snapshot.At) verify.Rows {
		return func(fn func(arrow.RecordBatch) (bool, error)) error {
			acc := verify.NewAccumulator(b.Contract, "", nil) // only to conform batches
			for _, path := range snapshot.DataPaths(at.Live[value]) {
				done, err := snapshot.EachBatch(ctx, at.FS, acc, path, fn)
				if err != nil || done {
					return err
				}
			}
			return nil
		}
	}
	ch, err := d.Compare(ctx, side(a), side(b))
	if err != nil {
		return nil, err
	}
	return &ch, nil
}

// ShowRun reads a run back from the table: for each partition it
// replaced, the rows, sums and fingerprint before and after, and the files
// removed and added. It reads those partitions' files in both snapshots.
func (r Reader) ShowRun(ctx context.Context, ident table.Identifier, runID string) (*RunView, error) {
	t, err := snapshot.OpenTable(ctx, r.Catalog, ident)
	if err != nil {
		return nil, err
	}
	fsys := t.FS
	meta := t.Meta
	name := strings.Join(ident, ".")
	snaps := runrecord.FindAll(meta, runID)
	if len(snaps) == 0 {
		hint := "`lakeswap history --table " + name + "` lists the runs; `lakeswap status --table " + name + " --run " + runID + "` says whether it committed nothing, finding its content there already (unchanged)"
		if branches := runrecord.StagedOn(meta, runID); len(branches) > 0 {
			hint = fmt.Sprintf("run %s is staged on the audit branch %s by a plan not applied yet: `lakeswap plans --table %s` lists it, `lakeswap show PLAN` shows what it would change",
				runID, strings.Join(branches, ", "), name)
		}
		return nil, &outcome.OpError{Op: "show", Table: name, RunID: runID, Err: fmt.Errorf("%w: no snapshot of %s records run %s", outcome.ErrRunNotFound, name, runID),
			Hint: hint}
	}
	load := runrecord.NewLoader(fsys)
	v := &RunView{Table: name, RunID: runID, Sums: map[string]exact.Sum{}, Partitions: []PartitionView{}, Checks: []string{},
		RolledBack: undoneBy(meta, runID)}
	for i := range snaps {
		s := &snaps[i]
		rec, _, err := load.Snapshot(s)
		if err != nil {
			return nil, fmt.Errorf("show run %s: %w", runID, err)
		}
		v.Snapshots = append(v.Snapshots, s.SnapshotID)
		v.Time = time.UnixMilli(s.TimestampMs).UTC()
		v.Source, v.JobVersion, v.Fingerprint = rec.Source, rec.JobVersion, rec.Fingerprint
		if len(v.Checks) == 0 {
			v.Checks = rec.Checks
		}
		v.Rows += rec.Rows
		for k, n := range rec.Sums {
			v.Sums[k] = v.Sums[k].Add(n)
		}
		if rec.Rejected != nil {
			v.Rejected = rec.Rejected
		}
		v.Watermark = cmp.Or(rec.Watermark, v.Watermark)
		if r := rec.Restated; r != nil && v.Restated == nil {
			v.Restated = r
		} else if r != nil { // a batch's share
			v.Restated.Partitions = append(v.Restated.Partitions, r.Partitions...)
		}
		if d := rec.LateDecision; d != nil && v.LateDecision == nil {
			v.LateDecision = d
		} else if d != nil { // a batch's share
			v.LateDecision.Partitions = append(v.LateDecision.Partitions, d.Partitions...)
			for day, n := range d.Rows {
				v.LateDecision.Rows[day] = n
			}
		}
		for k, m := range rec.Reconciled {
			if v.Reconciled == nil {
				v.Reconciled = map[string]map[string]exact.Sum{}
			}
			v.Reconciled[k] = m
		}
		after, err := snapshot.Load(ctx, r.Catalog, ident, s.SnapshotID)
		if err != nil {
			return nil, err
		}
		v.Scales = after.Contract.Summary().Scales
		var before *snapshot.At
		if rec.BaseSnapshotID != nil {
			if before, err = snapshot.Load(ctx, r.Catalog, ident, *rec.BaseSnapshotID); err != nil {
				return nil, fmt.Errorf("show run %s: the snapshot it replaced: %w", runID, err)
			}
		}
		for _, value := range rec.Partitions {
			key := after.Contract.Partition.Key(value)
			// A partition of an empty table held no rows.
			pv := PartitionView{Partition: key, Before: verify.NewAccumulator(after.Contract, key, nil).Result()}
			if pv.After, err = after.Fingerprint(ctx, value); err != nil {
				return nil, err
			}
			was := map[string]bool{}
			if before != nil {
				if pv.Before, err = before.Fingerprint(ctx, value); err != nil {
					return nil, err
				}
				for _, p := range snapshot.DataPaths(before.Live[value]) {
					was[p] = true
				}
			}
			now := map[string]bool{}
			for _, p := range snapshot.DataPaths(after.Live[value]) {
				now[p] = true
				if !was[p] {
					pv.Added = append(pv.Added, p)
				}
			}
			for p := range was {
				if !now[p] {
					pv.Removed = append(pv.Removed, p)
				}
			}
			slices.Sort(pv.Added)
			slices.Sort(pv.Removed)
			if before != nil && pv.Before.Hash != pv.After.Hash {
				if pv.Changes, err = grainChanges(ctx, before, after, value, pv.Before.Rows+pv.After.Rows, r.Keys, showMaxRows); err != nil {
					return nil, err
				}
			}
			v.Partitions = append(v.Partitions, pv)
		}
	}
	if len(snaps) > 1 {
		// A run in batches: its fingerprint is its partitions' together,
		// as it printed it, not its last batch's.
		parts := map[string]verify.Fingerprint{}
		for _, p := range v.Partitions {
			parts[p.Partition] = p.After
		}
		fp := verify.Combine(parts)
		v.Fingerprint = fp.Hash
	}
	return v, nil
}

// DiffView is what changed between two snapshots of a table, partition by
// partition: those whose files differ, before and after.
type DiffView struct {
	Table      string          `json:"table"`
	From       int64           `json:"from_snapshot_id,string"`
	To         int64           `json:"to_snapshot_id,string"`
	Scales     map[string]int  `json:"scales,omitempty"`
	Partitions []PartitionView `json:"partitions"`
}

// Diff compares two snapshots of a table, each named by its id, a tag or
// branch, or a run id (the run's newest snapshot): for every partition
// whose data files differ, the rows, sums and fingerprint in each and the
// files only one of them holds. It reads those partitions' files in both.
func (r Reader) Diff(ctx context.Context, ident table.Identifier, from, to string) (*DiffView, error) {
	tbl, err := r.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	name := strings.Join(ident, ".")
	v := &DiffView{Table: name, Partitions: []PartitionView{}}
	if v.From, err = resolveSnapshot(meta, name, from); err != nil {
		return nil, err
	}
	if v.To, err = resolveSnapshot(meta, name, to); err != nil {
		return nil, err
	}
	a, err := snapshot.Load(ctx, r.Catalog, ident, v.From)
	if err != nil {
		return nil, err
	}
	b, err := snapshot.Load(ctx, r.Catalog, ident, v.To)
	if err != nil {
		return nil, err
	}
	v.Scales = b.Contract.Summary().Scales
	values := map[string]bool{}
	for value := range a.Live {
		values[value] = true
	}
	for value := range b.Live {
		values[value] = true
	}
	for _, value := range slices.Sorted(maps.Keys(values)) {
		before, after := snapshot.DataPaths(a.Live[value]), snapshot.DataPaths(b.Live[value])
		slices.Sort(before)
		slices.Sort(after)
		if slices.Equal(before, after) {
			continue
		}
		pv := PartitionView{Partition: b.Contract.Partition.Key(value)}
		if pv.Before, err = a.Fingerprint(ctx, value); err != nil {
			return nil, err
		}
		if pv.After, err = b.Fingerprint(ctx, value); err != nil {
			return nil, err
		}
		if pv.Changes, err = grainChanges(ctx, a, b, value, pv.Before.Rows+pv.After.Rows, r.Keys, 0); err != nil {
			return nil, fmt.Errorf("compare partition %s at the grain: %w", pv.Partition, err)
		}
		for _, p := range after {
			if _, found := slices.BinarySearch(before, p); !found {
				pv.Added = append(pv.Added, p)
			}
		}
		for _, p := range before {
			if _, found := slices.BinarySearch(after, p); !found {
				pv.Removed = append(pv.Removed, p)
			}
		}
		v.Partitions = append(v.Partitions, pv)
	}
	return v, nil
}

// resolveSnapshot finds the snapshot a person named: its id, a tag or
// branch, or a run id (the run's newest snapshot).
func resolveSnapshot(meta table.Metadata, name, ref string) (int64, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && meta.SnapshotByID(id) != nil {
		return id, nil
	}
	if s := meta.SnapshotByName(ref); s != nil {
		return s.SnapshotID, nil
	}
	if snaps := runrecord.FindAll(meta, ref); len(snaps) > 0 {
		newest := snaps[0]
		for _, s := range snaps {
			if s.TimestampMs >= newest.TimestampMs {
				newest = s
			}
		}
		return newest.SnapshotID, nil
	}
	return 0, &outcome.OpError{Op: "diff", Table: name, Err: fmt.Errorf("%w: %q is no snapshot id, tag, branch or run id of %s", outcome.ErrRunNotFound, ref, name),
		Hint: "`lakeswap history --table " + name + "` lists the snapshots and their runs"}
}
