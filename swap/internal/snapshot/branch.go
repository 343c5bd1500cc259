package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/runrecord"
)

// A plan's staged snapshot is committed to a branch of its own, built on
// the plan's base, so that any engine can query what the plan would
// publish before anyone approves it (write-audit-publish). Main and its
// readers are untouched; apply moves main to the branch's snapshot, and
// discard, a refused apply and gc remove the branch with its snapshot.
const PlanBranchPrefix = "lakeswap-plan-"

// PlanBranch names the audit branch of a plan: its run and attempt, so
// that two plans of one run id (shards, a plan made again) never share one.
func PlanBranch(runID, attempt string) string {
	return PlanBranchPrefix + runID + "-" + attempt
}

// BranchAt reads where the branch name points in meta: its snapshot id,
// or false when the table has no such branch.
func BranchAt(meta table.Metadata, name string) (int64, bool) {
	for n, ref := range meta.Refs() {
		if n == name && ref.SnapshotRefType == table.BranchRef {
			return ref.SnapshotID, true
		}
	}
	return 0, false
}

// Staged says whether snapshot id of meta is what a plan of runID
// staged on the branch name, as lakeswap made it: a name of a plan's
// branch, and a snapshot whose summary names that branch and that run.
// A plan file edited to name another branch (main) names none.
func Staged(meta table.Metadata, name string, id int64, runID string) bool {
	s := meta.SnapshotByID(id)
	return strings.HasPrefix(name, PlanBranchPrefix) && s != nil && s.Summary != nil &&
		s.Summary.Properties[runrecord.PropAuditBranch] == name && s.Summary.Properties[runrecord.PropRunID] == runID
}

// OnBranch is how the table shows a commit that points branch at id.
func OnBranch(name string, id int64) func(table.Metadata) bool {
	return func(m table.Metadata) bool {
		at, ok := BranchAt(m, name)
		return ok && at == id
	}
}

// Holds is how the table shows a commit that moved main to id or past it.
func Holds(id int64) func(table.Metadata) bool {
	return func(m table.Metadata) bool {
		head := m.CurrentSnapshot()
		return head != nil && table.IsAncestorOf(head.SnapshotID, id, func(i int64) *table.Snapshot { return m.SnapshotByID(i) })
	}
}

// DropBranch removes a plan's branch and its snapshot in one commit,
// pinned to the branch at id, then the metadata files that snapshot alone
// wrote (its manifest list and the manifests it added), one by one. A
// branch that is gone, or points elsewhere (someone committed to it), is
// left as it is: dropped says whether this call removed it.
func DropBranch(ctx context.Context, cat Catalog, log *slog.Logger, tbl *table.Table, wfs icebergio.WriteFileIO, name string, id int64) (dropped bool, err error) {
	meta := tbl.Metadata()
	if at, ok := BranchAt(meta, name); !ok || at != id {
		return false, nil
	}
	if head := meta.CurrentSnapshot(); head != nil && head.SnapshotID == id {
		return false, nil // main holds it: the plan was applied
	}
	snap := meta.SnapshotByID(id)
	if snap == nil || snap.Summary == nil || !Staged(meta, name, id, snap.Summary.Properties[runrecord.PropRunID]) {
		return false, nil // not a plan's branch as lakeswap made it
	}
	// Main is pinned too: an engine moving main to the snapshot meanwhile
	// makes this commit fail rather than lose main's snapshot.
	var head *int64
	if h := meta.CurrentSnapshot(); h != nil {
		head = &h.SnapshotID
	}
	reqs := []table.Requirement{table.AssertTableUUID(meta.TableUUID()), table.AssertRefSnapshotID(name, &id), table.AssertRefSnapshotID(table.MainBranch, head)}
	if inUse(meta, name, id) {
		// Another ref holds the snapshot or builds on it (an engine moved
		// main to it, tagged it, branched off it): the ref alone goes,
		// and the snapshot and its files stay the table's.
		tc := table.TableCommit{Identifier: tbl.Identifier(), Requirements: reqs, Updates: []table.Update{table.NewRemoveSnapshotRefUpdate(name)}}
		gone := func(m table.Metadata) bool { _, ok := BranchAt(m, name); return !ok }
		if err := Send(ctx, cat, log, name, []*Change{{Table: tbl, Commit: tc, ID: id, Landed: gone}}); err != nil {
			return false, fmt.Errorf("remove branch %s: %w", name, err)
		}
		return true, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return false, err
	}
	own, err := ownFiles(fsys, snap)
	if err != nil {
		return false, fmt.Errorf("list the files of branch %s: %w", name, err)
	}
	tc := table.TableCommit{Identifier: tbl.Identifier(), Requirements: reqs,
		Updates: []table.Update{table.NewRemoveSnapshotRefUpdate(name), table.NewRemoveSnapshotsUpdate([]int64{id}, false)}}
	gone := func(m table.Metadata) bool { return m.SnapshotByID(id) == nil }
	if err := Send(ctx, cat, log, name, []*Change{{Table: tbl, Commit: tc, ID: id, Landed: gone}}); err != nil {
		return false, fmt.Errorf("remove branch %s: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
	defer cancel()
	for _, f := range own {
		if err := wfs.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Warn("remove a file of a plan's branch", "branch", name, "path", f, "err", err)
		}
	}
	return true, nil
}

// inUse says whether a snapshot a plan's branch holds is the table's
// beyond the branch: main held it once (its log), another ref holds it
// or a snapshot built on it, or any snapshot descends from it (whose
// manifests may be its).
func inUse(meta table.Metadata, branch string, id int64) bool {
	for e := range meta.SnapshotLogs() {
		if e.SnapshotID == id {
			return true
		}
	}
	byID := func(i int64) *table.Snapshot { return meta.SnapshotByID(i) }
	for name, ref := range meta.Refs() {
		if name != branch && table.IsAncestorOf(ref.SnapshotID, id, byID) {
			return true
		}
	}
	for _, s := range meta.Snapshots() {
		if s.SnapshotID != id && s.ParentSnapshotID != nil && table.IsAncestorOf(*s.ParentSnapshotID, id, byID) {
			return true
		}
	}
	return false
}

// ownFiles are the metadata files snapshot s alone wrote: its manifest
// list, and the manifests it added (another snapshot's are shared).
func ownFiles(fsys icebergio.IO, s *table.Snapshot) ([]string, error) {
	if s == nil {
		return nil, nil
	}
	mfs, err := s.Manifests(fsys)
	if err != nil {
		return nil, err
	}
	out := []string{s.ManifestList}
	for _, m := range mfs {
		if m.SnapshotID() == s.SnapshotID {
			out = append(out, m.FilePath())
		}
	}
	return out, nil
}

// PlanBranches lists the table's plan branches: name -> snapshot id.
func PlanBranches(meta table.Metadata) map[string]int64 {
	out := map[string]int64{}
	for name, ref := range meta.Refs() {
		if ref.SnapshotRefType == table.BranchRef && strings.HasPrefix(name, PlanBranchPrefix) {
			out[name] = ref.SnapshotID
		}
	}
	return out
}

// BranchAge is how long a plan's branch has been waiting, from its
// snapshot's time.
func BranchAge(meta table.Metadata, id int64, now time.Time) time.Duration {
	s := meta.SnapshotByID(id)
	if s == nil {
		return 0
	}
	return now.Sub(time.UnixMilli(s.TimestampMs))
}
