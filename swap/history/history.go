package history

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/runrecord"
)

// History lists main's snapshots, newest first, and apart from them, in
// the order the table keeps them, the snapshots main no longer reaches (a
// rolled-back run).
func (r Reader) History(ctx context.Context, ident table.Identifier) (main []runrecord.Entry, off []runrecord.Entry, err error) {
	t, err := snapshot.OpenTable(ctx, r.Catalog, ident)
	if err != nil {
		return nil, nil, err
	}
	meta := t.Meta
	load := t.Runs
	onMain := map[int64]bool{}
	if head := meta.CurrentSnapshot(); head != nil {
		for i, s := range table.AncestorsOf(head.SnapshotID, func(id int64) *table.Snapshot { return meta.SnapshotByID(id) }) {
			e := load.Entry(s)
			e.Current = i == 0
			main = append(main, e)
			onMain[s.SnapshotID] = true
		}
	}
	staged := runrecord.Unpublished(meta)
	for _, s := range meta.Snapshots() {
		if !onMain[s.SnapshotID] {
			e := load.Entry(s)
			e.Staged = staged[s.SnapshotID]
			off = append(off, e)
		}
	}
	return main, off, nil
}

// Rollback is main set back to a snapshot older than the one it held, as
// the table's snapshot log records it: a rollback that points main back
// commits no snapshot of its own, so the log is where it shows.
type Rollback struct {
	Time time.Time `json:"time"`
	// To is the snapshot main was set to, From the one it held before.
	To   int64 `json:"to_snapshot_id,string"`
	From int64 `json:"from_snapshot_id,string"`
	// Runs are the runs main no longer held after it: those of the
	// snapshots from From back to To, newest first.
	Runs []string `json:"runs"`
}

// Rollbacks lists the times main was set back, oldest first.
func (r Reader) Rollbacks(ctx context.Context, ident table.Identifier) ([]Rollback, error) {
	tbl, err := r.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return rollbacksOf(tbl.Metadata()), nil
}

// rollbacksOf lists, from a table's snapshot log, the times main was set
// back, oldest first.
func rollbacksOf(meta table.Metadata) []Rollback {
	var out []Rollback
	var prev *table.Snapshot
	for entry := range meta.SnapshotLogs() {
		cur := meta.SnapshotByID(entry.SnapshotID)
		if cur == nil {
			prev = nil // expired since: what came before it is not known
			continue
		}
		if prev != nil && cur.SnapshotID != prev.SnapshotID && cur.TimestampMs < prev.TimestampMs {
			r := Rollback{Time: time.UnixMilli(entry.TimestampMs).UTC(), To: cur.SnapshotID, From: prev.SnapshotID, Runs: []string{}}
			for s := prev; s != nil && s.SnapshotID != cur.SnapshotID; {
				if s.Summary != nil {
					if id := s.Summary.Properties[runrecord.PropRunID]; id != "" && !slices.Contains(r.Runs, id) {
						r.Runs = append(r.Runs, id)
					}
				}
				if s.ParentSnapshotID == nil {
					break
				}
				s = meta.SnapshotByID(*s.ParentSnapshotID)
			}
			out = append(out, r)
		}
		prev = cur
	}
	return out
}

// RunStatus is what the table's history says of a run: whether it landed,
// as which snapshots, and whether main still holds them.
type RunStatus struct {
	RunID  string `json:"run_id"`
	Landed bool   `json:"landed"`
	// Snapshots are the run's snapshots, oldest first.
	Snapshots []runrecord.Entry `json:"snapshots,omitempty"`
	// OnMain says main holds what the run committed: its partitions hold
	// now the files it committed (a rollback, whole or scoped, or a later
	// commit to them, ends that).
	OnMain bool `json:"on_main"`
	// Partitions counts the partitions the run committed, and Replaced
	// lists those main no longer holds as the run left them (a rollback,
	// or a later commit to them); both only where the run's record is read.
	Partitions int      `json:"partitions"`
	Replaced   []string `json:"replaced_since,omitempty"`
	Main       int64    `json:"main_snapshot_id,omitempty,string"`
	// RollbackTarget is the snapshot the run's tag keeps, if it has one.
	RollbackTarget *int64 `json:"rollback_target,omitempty,string"`
	// Batches, for a run committed in batches, is how many it has,
	// CommittedBatches how many of them it committed, and OnMainBatches
	// how many of those main holds.
	Batches          int `json:"batches,omitempty"`
	CommittedBatches int `json:"committed_batches,omitempty"`
	OnMainBatches    int `json:"on_main_batches,omitempty"`
	// Complete says the run committed all it has to: its one snapshot,
	// or every batch.
	Complete bool `json:"complete"`
	// ReleaseUnchanged is, for a release that committed nothing to the
	// table (its partitions held the release's content already), the
	// table's snapshot the release tagged.
	ReleaseUnchanged int64 `json:"release_unchanged_snapshot_id,omitempty,string"`
}

// Status answers from the table's history alone whether a run landed: the
// question a commit whose answer was lost leaves open.
func (r Reader) Status(ctx context.Context, ident table.Identifier, runID string) (*RunStatus, error) {
	t, err := snapshot.OpenTable(ctx, r.Catalog, ident)
	if err != nil {
		return nil, err
	}
	fsys := t.FS
	meta := t.Meta
	load := t.Runs
	st := &RunStatus{RunID: runID}
	snaps := runrecord.FindAll(meta, runID)
	for _, s := range snaps {
		st.Snapshots = append(st.Snapshots, load.Entry(s))
	}
	if s := meta.SnapshotByName(snapshot.RollbackTag(runID)); s != nil {
		st.RollbackTarget = &s.SnapshotID
	}
	head := meta.CurrentSnapshot()
	if head != nil {
		st.Main = head.SnapshotID
	}
	st.Landed = len(snaps) > 0
	if !st.Landed {
		if s := meta.SnapshotByName(snapshot.ReleaseTag(runID)); s != nil {
			st.ReleaseUnchanged = s.SnapshotID
		}
		return st, nil
	}
	c, err := contract.Of(meta)
	if err != nil {
		return nil, err
	}
	now, err := snapshot.Files(ctx, fsys, head, c)
	if err != nil {
		return nil, err
	}
	committed, held := map[string]bool{}, map[string]bool{}
	st.OnMain = true
	for i := range snaps {
		s := &snaps[i]
		rec, _, err := load.Snapshot(s)
		if err != nil {
			// The run landed, as its summary says; which partitions it
			// holds is its run file's (the entry names the problem), so
			// main holds it as far as main descends from it.
			st.OnMain = st.OnMain && head != nil && table.IsAncestorOf(head.SnapshotID, s.SnapshotID, func(id int64) *table.Snapshot { return meta.SnapshotByID(id) })
			if _, of, ok := strings.Cut(rec.Batch, "/"); ok {
				st.Batches, _ = strconv.Atoi(of)
				committed[rec.Batch], held[rec.Batch] = true, held[rec.Batch] || st.OnMain
			}
			continue
		}
		then, err := snapshot.Files(ctx, fsys, s, c)
		if err != nil {
			return nil, err
		}
		holds := true
		for _, v := range rec.Partitions {
			st.Partitions++
			if !slices.Equal(snapshot.Paths(now[v]), snapshot.Paths(then[v])) {
				holds = false
				st.Replaced = append(st.Replaced, c.Partition.Key(v))
			}
		}
		st.OnMain = st.OnMain && holds
		if _, of, ok := strings.Cut(rec.Batch, "/"); ok {
			st.Batches, _ = strconv.Atoi(of)
			committed[rec.Batch] = true
			held[rec.Batch] = held[rec.Batch] || holds
		}
	}
	st.CommittedBatches = len(committed)
	for _, h := range held {
		if h {
			st.OnMainBatches++
		}
	}
	st.Complete = st.Batches == 0 || st.CommittedBatches == st.Batches
	return st, nil
}

// SnapshotFiles lists the live data files of a table's snapshot (0: the
// one main holds), with their sizes, and says which snapshot that was: what
// a job reads of a table it is pinned to. A data file the job's engine
// cannot read as it is, is listed as a CopiedInput, to be read through a
// copy lakeswap writes (Applied.Copy): one that deletes apply to (a
// merge-on-read table's), and every file of a snapshot whose columns were
// renamed, or a name given to another field, since files were written
// (the engine reads a file's columns by name; the copy is read by field
// id). Delete files are not listed themselves.
func (r Reader) SnapshotFiles(ctx context.Context, ident table.Identifier, snapshotID int64) (int64, []runrecord.Input, error) {
	if snapshotID == 0 {
		tbl, err := r.Catalog.LoadTable(ctx, ident)
		if err != nil {
			return 0, nil, err
		}
		head := tbl.CurrentSnapshot()
		if head == nil {
			return 0, nil, fmt.Errorf("table %s has no snapshot to read", strings.Join(ident, "."))
		}
		snapshotID = head.SnapshotID
	}
	meta, fsys, files, err := snapshot.LoadFiles(ctx, r.Catalog, ident, snapshotID)
	if err != nil {
		return 0, nil, err
	}
	byName, err := renamed(meta, snapshotID, schemaAt(meta, snapshotID))
	if err != nil {
		return 0, nil, fmt.Errorf("table %s: %w", strings.Join(ident, "."), err)
	}
	// Every data file, of any partition spec or none: all hold rows of the
	// table. Delete files are applied, not listed.
	name := strings.Join(ident, ".")
	var out []runrecord.Input
	for _, f := range files {
		switch {
		case f.ContentType() != iceberg.EntryContentData:
		case snapshot.Deleted(fsys, f.FilePath()) || !byName:
			out = append(out, runrecord.Input{URL: CopiedInput(name, snapshotID, f.FilePath()), Size: f.FileSizeBytes()})
		default:
			out = append(out, runrecord.Input{URL: f.FilePath(), Size: f.FileSizeBytes()})
		}
	}
	return snapshotID, out, nil
}

// schemaAt is the schema a snapshot was committed with (the table's
// current one where the snapshot records none).
func schemaAt(meta table.Metadata, snapshotID int64) *iceberg.Schema {
	if snap := meta.SnapshotByID(snapshotID); snap != nil && snap.SchemaID != nil {
		for _, s := range meta.Schemas() {
			if s.ID == *snap.SchemaID {
				return s
			}
		}
	}
	return meta.CurrentSchema()
}

// renamed says whether a snapshot's files can be read by column name:
// false when a schema its files were written under (those of the snapshot
// and its ancestors) named a field otherwise, or gave a name to another
// field; nested fields are judged by their full names.
func renamed(meta table.Metadata, snapshotID int64, sc *iceberg.Schema) (byName bool, err error) {
	written := map[int]bool{sc.ID: true}
	for _, s := range table.AncestorsOf(snapshotID, meta.SnapshotByID) {
		if s.SchemaID != nil {
			written[*s.SchemaID] = true
		}
	}
	names, err := iceberg.IndexByName(sc)
	if err != nil {
		return false, err
	}
	for _, earlier := range meta.Schemas() {
		if !written[earlier.ID] || earlier.ID == sc.ID {
			continue
		}
		for name, id := range names {
			if was, ok := earlier.FindColumnName(id); ok && was != name {
				return false, nil
			}
			if was, ok := earlier.FindFieldByName(name); ok && was.ID != id {
				return false, nil
			}
		}
	}
	return true, nil
}

// CopiedInput names a data file of a table's snapshot that a job reads
// through a copy lakeswap writes, as a job's listing holds it:
// iceberg:<table>@<snapshot>#<file>.
func CopiedInput(table string, snapshotID int64, path string) string {
	return fmt.Sprintf("iceberg:%s@%d#%s", table, snapshotID, path)
}

// ParseCopiedInput reads what CopiedInput wrote.
func ParseCopiedInput(input string) (table string, snapshotID int64, path string, err error) {
	rest, ok := strings.CutPrefix(input, "iceberg:")
	table, rest, ok2 := strings.Cut(rest, "@")
	id, path, ok3 := strings.Cut(rest, "#")
	snapshotID, perr := strconv.ParseInt(id, 10, 64)
	if !ok || !ok2 || !ok3 || perr != nil {
		return "", 0, "", fmt.Errorf("%s does not name a table's data file at a snapshot", input)
	}
	return table, snapshotID, path, nil
}

// Applied reads the data files of one snapshot of a table as the
// snapshot's schema has them, with the deletes that apply to them
// applied: its scan is planned once, for every file.
type Applied struct {
	fsys   icebergio.IO
	table  string
	fields []iceberg.NestedField
	arrow  *arrow.Schema
}

// OpenApplied plans which deletes apply to the data files of a table's
// snapshot.
func (r Reader) OpenApplied(ctx context.Context, name string, snapshotID int64) (*Applied, error) {
	ident, err := catalog.ParseIdent(name)
	if err != nil {
		return nil, err
	}
	meta, fsys, _, err := snapshot.LoadFiles(ctx, r.Catalog, ident, snapshotID)
	if err != nil {
		return nil, err
	}
	sc := schemaAt(meta, snapshotID)
	as, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	return &Applied{fsys: fsys, table: name, fields: sc.Fields(), arrow: as}, nil
}

// Copy writes the rows of the data file at path, with its deletes applied
// and its columns read by field id as the snapshot's schema names them,
// to a local Parquet file dst, and says how many there are.
func (a *Applied) Copy(ctx context.Context, path, dst string) (int64, error) {
	return snapshot.CopyRows(ctx, a.fsys, path, dst, func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		return verify.ProjectTo(rec, a.arrow, a.fields)
	})
}
