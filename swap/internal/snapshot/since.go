package snapshot

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/manifest"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

// MovedSince says why a plan whose base is base cannot be committed on the
// table's current main, or "" when no commit since the base touched a
// planned partition (values maps each planned value to its key). Main
// must still descend from the base: a rollback of main since the plan is a
// conflict, since the plan's fingerprints describe a base main dropped.
//
// It also lists the data files those commits added outside the planned
// partitions, for the checks that depend on the rest of the table.
func MovedSince(ctx context.Context, fsys icebergio.IO, meta table.Metadata, base *int64, c *contract.Contract, values map[string]string) (string, []Added, error) {
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
	var added []Added
	for _, s := range slices.Backward(since) {
		why, more, err := Touched(ctx, fsys, &s, c, values)
		if why != "" || err != nil {
			return why, nil, err
		}
		added = append(added, more...)
	}
	return "", added, nil
}

// Touched says how snapshot s changed one of the planned partitions, or "".
// Only manifests s wrote can hold its changes; in them, the entries it
// added or deleted are its changes (a rewritten manifest carries earlier
// files as existing).
func Touched(ctx context.Context, fsys icebergio.IO, s *table.Snapshot, c *contract.Contract, values map[string]string) (string, []Added, error) {
	var added []Added
	op := "unknown operation"
	if s.Summary != nil {
		op = string(s.Summary.Operation)
	}
	at := time.UnixMilli(s.TimestampMs).UTC().Format(time.RFC3339)
	for read, err := range manifest.Walk(ctx, fsys, s, false, writtenBy(s)) {
		if err != nil {
			return "", nil, err
		}
		m, entries := read.File, read.Entries
		if int(m.PartitionSpecID()) != c.SpecID {
			// Files of an earlier spec added may hold rows of any
			// partition. One taken out (a run rewriting it) is judged
			// by who needs it: a plan that rewrites it finds it gone.
			if slices.ContainsFunc(entries, func(e iceberg.ManifestEntry) bool {
				return e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == s.SnapshotID
			}) {
				return fmt.Sprintf("snapshot %d (%s, %s) wrote files of partition spec %d, not the table's %d", s.SnapshotID, op, at, m.PartitionSpecID(), c.SpecID), nil, nil
			}
			continue
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
					added = append(added, Added{Path: df.FilePath(), Partition: value, Snapshot: s})
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

// Describe names a snapshot for a message: id, operation, time.
func Describe(s *table.Snapshot) string {
	op := "unknown operation"
	if s.Summary != nil {
		op = string(s.Summary.Operation)
	}
	return fmt.Sprintf("snapshot %d (%s, %s)", s.SnapshotID, op, time.UnixMilli(s.TimestampMs).UTC().Format(time.RFC3339))
}

// AddedSince lists the data files the snapshots on main since from added
// outside the given partition values, oldest first.
func AddedSince(ctx context.Context, fsys icebergio.IO, meta table.Metadata, from int64, c *contract.Contract, values map[string]string) ([]Added, error) {
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
	var out []Added
	for _, s := range slices.Backward(since) {
		for m, err := range manifest.Walk(ctx, fsys, &s, false, writtenBy(&s)) {
			if err != nil {
				return nil, err
			}
			for _, e := range m.Entries {
				df := e.DataFile()
				if _, ours := values[c.PartitionOf(df)]; e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == s.SnapshotID &&
					df.ContentType() == iceberg.EntryContentData && !ours {
					out = append(out, Added{Path: df.FilePath(), Partition: c.PartitionOf(df), Snapshot: &s})
				}
			}
		}
	}
	return out, nil
}

// writtenBy keeps the manifests snapshot s wrote: only they can hold its
// changes.
func writtenBy(s *table.Snapshot) func(iceberg.ManifestFile) bool {
	return func(m iceberg.ManifestFile) bool { return m.SnapshotID() == s.SnapshotID }
}

// Added is a data file a snapshot since the plan's base added outside
// the planned partitions.
type Added struct {
	Path, Partition string // the partition's value
	Snapshot        *table.Snapshot
}

// StillLive keeps the added files that live files (main's now, by
// partition) still hold: a file a later commit removed again (a
// merge-on-read delete of every row it held drops it) holds no record.
func StillLive(added []Added, live map[string][]iceberg.DataFile) []Added {
	held := map[string]bool{}
	for _, files := range live {
		for _, f := range files {
			held[f.FilePath()] = true
		}
	}
	var out []Added
	for _, a := range added {
		if held[a.Path] {
			out = append(out, a)
		}
	}
	return out
}

// EachKey calls fn with the hash of every row's grain in a file, and a
// function that writes the grain out as text (only for the few named).
func EachKey(ctx context.Context, fsys icebergio.IO, c *contract.Contract, path string, seed maphash.Seed, fn func(uint64, func() string)) error {
	// By field id: a grain column renamed since the file was written is
	// found under its old name.
	grain := make([]parquetio.Column, len(c.Grain))
	for i, g := range c.Grain {
		grain[i] = parquetio.Column{ID: c.Fields[g].ID, Name: c.Fields[g].Name}
	}
	var rr array.RecordReader
	var err error
	if d, ok := fsys.(*DeletesIO); ok && len(d.tasks[path]) > 0 {
		rr, err = Open(ctx, fsys, path) // every column, found below
	} else {
		rr, err = parquetio.OpenColumns(ctx, fsys, path, grain)
	}
	if errors.Is(err, parquetio.ErrNoColumn) {
		return nil // below: a grain column added since the file was written
	}
	if err != nil {
		return err
	}
	defer rr.Release()
	hasher := verify.NewKeyHasher(c, seed)
	defer hasher.Release()
	cols := make([]arrow.Array, len(c.Fields))
	var hashes []uint64
	for rr.Next() {
		rec := rr.RecordBatch()
		for i, g := range grain {
			idx := parquetio.FieldIndex(rec.Schema(), g)
			if idx < 0 {
				// A field added since (or dropped and added again) the
				// file was written: every key it holds is null, which the
				// fingerprint counts; no key to compare.
				release(cols)
				return nil
			}
			// As the table's type: an int widened to a long since the
			// file was written is read as a long, as readers read it.
			col, err := verify.ProjectColumn(rec.Column(idx), c.Arrow.Field(c.Grain[i]))
			if err != nil {
				release(cols)
				return fmt.Errorf("%s: column %s: %w", path, g.Name, err)
			}
			cols[c.Grain[i]] = col
		}
		hashes, err = hasher.Hashes(hashes[:0], cols, int(rec.NumRows()))
		if err != nil {
			release(cols)
			return err
		}
		for r, h := range hashes {
			fn(h, func() string {
				var b strings.Builder
				for i, g := range c.Grain {
					if i > 0 {
						b.WriteString(", ")
					}
					b.WriteString(grain[i].Name + "=" + verify.FormatValue(cols[g], r)) // text quoted, as every message shows a value
				}
				return b.String()
			})
		}
		release(cols)
	}
	return rr.Err()
}

// release releases and forgets the columns set in cols.
func release(cols []arrow.Array) {
	for i, c := range cols {
		if c != nil {
			c.Release()
			cols[i] = nil
		}
	}
}

// KeysAddedElsewhere names the first grain key that files added by other
// commits (added) hold and that ours (partition key -> files) hold too,
// with the snapshot and both partitions, or says "". what says what ours
// are ("this run stages", "the rollback puts back"). Snapshots of runID
// are left out: a run's own batches are its own.
func KeysAddedElsewhere(ctx context.Context, fsys icebergio.IO, c *contract.Contract, runID string, ours map[string][]string, added []Added, what string) (string, error) {
	if len(c.Grain) == 0 || c.Partition.InGrain(c.Grain) || len(added) == 0 {
		return "", nil
	}
	seed := maphash.MakeSeed()
	keys := map[uint64]int{} // grain hash -> index in added
	for i, a := range added {
		if a.Snapshot.Summary != nil {
			if rec, ok := runrecord.Read(a.Snapshot.Summary.Properties); ok && rec.RunID == runID {
				continue
			}
		}
		err := EachKey(ctx, fsys, c, a.Path, seed, func(h uint64, _ func() string) {
			if _, ok := keys[h]; !ok {
				keys[h] = i
			}
		})
		if err != nil {
			return "", fmt.Errorf("read %s, added by snapshot %d: %w", a.Path, a.Snapshot.SnapshotID, err)
		}
	}
	if len(keys) == 0 {
		return "", nil
	}
	partitions := make([]string, 0, len(ours))
	for k := range ours {
		partitions = append(partitions, k)
	}
	sort.Strings(partitions)
	for _, part := range partitions {
		for _, path := range ours[part] {
			var key string
			at := -1
			err := EachKey(ctx, fsys, c, path, seed, func(h uint64, k func() string) {
				if i, ok := keys[h]; ok && at < 0 {
					at, key = i, k()
				}
			})
			if err != nil {
				return "", fmt.Errorf("read %s: %w", path, err)
			}
			if at >= 0 {
				a := added[at]
				return fmt.Sprintf("%s added the record %s in partition %s, which %s in partition %s: committed, the table would hold it twice",
					Describe(a.Snapshot), key, verify.DisplayKey(c.Partition.Key(a.Partition)), what, verify.DisplayKey(part)), nil
			}
		}
	}
	return "", nil
}
