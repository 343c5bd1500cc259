package rollback

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// The guards a rollback meets, as a run of the table does: a partition
// the table froze changes only with a reason the table records, and a
// release's share of a table is undone with the release, never alone.
// Each is a Guard; the ledger judges a rollback by its list
// (Runner.Guards), which swap's Publisher takes from swap.Guards, the one
// list of every guard.

// Undo is a rollback as its guards judge it, before it commits.
type Undo struct {
	Table *table.Table
	// To is the snapshot a full rollback points main back at; 0 for a
	// scoped rollback, which changes Changed (partition values) instead.
	To      int64
	Changed []string
	// Release is the release a full rollback undoes whole, if it is one.
	Release string
	Req     Request
	Now     time.Time
	// Restated is what a scoped rollback restates of the frozen
	// partitions it changes, with the request's reason: set by the frozen
	// guard, recorded with the rollback.
	Restated *runrecord.Restatement
}

// A Guard judges a rollback before it commits: an error refuses it,
// saying why.
type Guard struct {
	Name  string
	Judge func(ctx context.Context, u *Undo) error
}

// The rollback's judges of swap's guards frozen and release consistency.
var (
	Frozen        = Guard{Name: "frozen", Judge: judgeFrozen}
	ReleaseShares = Guard{Name: "release consistency", Judge: judgeReleaseShares}
)

// judge runs the ledger's guards over a rollback.
func (l *Runner) judge(ctx context.Context, u *Undo) error {
	for _, g := range l.Guards {
		if err := g.Judge(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

// judgeFrozen refuses a full rollback that changes a partition the table
// froze (it records nothing), and a scoped one unless the request
// restates them with a reason, which it then records.
func judgeFrozen(ctx context.Context, u *Undo) error {
	if u.To != 0 {
		return frozenByFullRollback(ctx, u.Table, u.To, u.Now, u.Release != "")
	}
	c, err := contract.Of(u.Table.Metadata())
	if err != nil {
		return err
	}
	frozen := frozenOf(c, u.Changed, u.Now)
	if len(frozen) == 0 {
		return nil
	}
	if u.Req.RestateFrozen == "" {
		return fmt.Errorf("it would change %s, frozen by the table's %s %s: restating a frozen partition needs --restate-frozen --reason TEXT, which the rollback records",
			displayKeys(frozen), contract.PropFreezeAfter, c.Freeze.Text)
	}
	slices.Sort(frozen)
	u.Restated = &runrecord.Restatement{Partitions: frozen, Reason: u.Req.RestateFrozen, DecidedBy: u.Req.DecidedBy}
	return nil
}

// judgeReleaseShares refuses a full rollback that takes from main a
// table's share of a release other than the one it undoes.
func judgeReleaseShares(_ context.Context, u *Undo) error {
	if u.To == 0 {
		return nil // a scoped rollback commits forward; main keeps every share, and a release's own run is refused scoped
	}
	return releaseShares(droppedFromMain(u.Table.Metadata(), u.To), u.Release)
}

// droppedFromMain lists main's snapshots that pointing main back at
// target takes out of main: its history from the head back to, not
// including, target.
func droppedFromMain(meta table.Metadata, target int64) []table.Snapshot {
	head := meta.CurrentSnapshot()
	if head == nil {
		return nil
	}
	var out []table.Snapshot
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		if s.SnapshotID == target {
			break
		}
		out = append(out, s)
	}
	return out
}

// releaseShares refuses dropping from main a snapshot that is one table's
// share of a release of several tables (other than release, the one
// being rolled back whole): the other tables would keep theirs, and the
// tables would disagree. A table the release left as it was holds no
// share of it: what changes it later (a run, a rollback) is a change of
// that table alone, as a publish is.
func releaseShares(dropped []table.Snapshot, release string) error {
	for _, s := range dropped {
		if s.Summary == nil {
			continue
		}
		r, _ := runrecord.Read(s.Summary.Properties)
		if len(r.Release) < 2 || r.RunID == release {
			continue
		}
		return fmt.Errorf("it would drop snapshot %d, this table's share of release %s (tables %s), while the other tables keep theirs, and the tables would disagree: roll the release back first (`lakeswap rollback --run %s` undoes it on every table), then this run", s.SnapshotID, r.RunID, strings.Join(r.Release, ", "), r.RunID)
	}
	return nil
}

// changedPartitions are the partitions, by value, whose data or delete
// files differ between two snapshots: what moving main from one to the
// other changes.
func changedPartitions(ctx context.Context, fsys icebergio.IO, c *contract.Contract, from, to *table.Snapshot) ([]string, error) {
	a, err := snapshot.Files(ctx, fsys, from, c)
	if err != nil {
		return nil, err
	}
	b, err := snapshot.Files(ctx, fsys, to, c)
	if err != nil {
		return nil, err
	}
	sorted := func(files []iceberg.DataFile) []string { return slices.Sorted(slices.Values(snapshot.Paths(files))) }
	var out []string
	for v, files := range a {
		if !slices.Equal(sorted(files), sorted(b[v])) {
			out = append(out, v)
		}
	}
	for v, files := range b {
		if _, ok := a[v]; !ok && len(files) > 0 {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out, nil
}

// frozenOf are the partitions among values (by value) that the table's
// lakeswap.freeze-after has frozen by now, as their keys.
func frozenOf(c *contract.Contract, values []string, now time.Time) []string {
	var out []string
	for _, v := range values {
		if at, ok := c.FrozenAt(v); ok && !now.Before(at) {
			out = append(out, c.Partition.Key(v))
		}
	}
	return out
}

// frozenByFullRollback refuses a full rollback (main pointed back, which
// records nothing) that changes a partition the table froze: the
// restatement must be recorded, which a scoped rollback does.
func frozenByFullRollback(ctx context.Context, tbl *table.Table, target int64, now time.Time, release bool) error {
	meta := tbl.Metadata()
	c, err := contract.Of(meta)
	if err != nil || c.Freeze == nil {
		return err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	changed, err := changedPartitions(ctx, fsys, c, meta.CurrentSnapshot(), meta.SnapshotByID(target))
	if err != nil {
		return err
	}
	keys := frozenOf(c, changed, now)
	switch {
	case len(keys) > 0 && release:
		// A release is rolled back whole, never scoped: the way back is
		// forward, a run that restates the days and is recorded.
		return fmt.Errorf("it would change %s, frozen by the table's %s %s, and pointing main back records nothing: publish what those partitions should hold with --restate-frozen --reason TEXT, which the run records",
			displayKeys(keys), contract.PropFreezeAfter, c.Freeze.Text)
	case len(keys) > 0:
		return fmt.Errorf("it would change %s, frozen by the table's %s %s, and pointing main back records nothing: undo the run with --scoped --restate-frozen --reason TEXT, which records the restatement in the table's history",
			displayKeys(keys), contract.PropFreezeAfter, c.Freeze.Text)
	}
	return nil
}

// displayKeys writes partition keys for a message.
func displayKeys(keys []string) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = verify.DisplayKey(k)
	}
	if len(out) > 5 {
		return strings.Join(out[:5], ", ") + " and " + words.Number(len(out)-5) + " more"
	}
	return strings.Join(out, ", ")
}
