package swap

import (
	"context"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/runrecord"
)

// History lists main's snapshots, newest first, and apart from them, in
// the order the table keeps them, the snapshots main no longer reaches (a
// rolled-back run).
func (p *Publisher) History(ctx context.Context, ident table.Identifier) (main []runrecord.Entry, off []runrecord.Entry, err error) {
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, nil, err
	}
	meta := tbl.Metadata()
	onMain := map[int64]bool{}
	if head := meta.CurrentSnapshot(); head != nil {
		for i, s := range table.AncestorsOf(head.SnapshotID, func(id int64) *table.Snapshot { return meta.SnapshotByID(id) }) {
			e := runrecord.EntryOf(s)
			e.Current = i == 0
			main = append(main, e)
			onMain[s.SnapshotID] = true
		}
	}
	for _, s := range meta.Snapshots() {
		if !onMain[s.SnapshotID] {
			off = append(off, runrecord.EntryOf(s))
		}
	}
	return main, off, nil
}

// RunStatus is what the table's history says of a run: whether it landed,
// as which snapshots, and whether main still holds them.
type RunStatus struct {
	RunID  string `json:"run_id"`
	Landed bool   `json:"landed"`
	// Snapshots are the run's snapshots, oldest first.
	Snapshots []runrecord.Entry `json:"snapshots,omitempty"`
	// OnMain says main holds the run's newest snapshot or descends from it.
	OnMain bool  `json:"on_main"`
	Main   int64 `json:"main_snapshot_id,omitempty"`
	// RollbackTarget is the snapshot the run's tag keeps, if it has one.
	RollbackTarget *int64 `json:"rollback_target,omitempty"`
	// Batches, for a run committed in batches, is how many it has, and
	// OnMainBatches how many of them main holds: the run is complete when
	// they are equal.
	Batches       int  `json:"batches,omitempty"`
	OnMainBatches int  `json:"on_main_batches,omitempty"`
	Complete      bool `json:"complete"`
}

// Status answers from the table's history alone whether a run landed: the
// question a commit whose answer was lost leaves open.
func (p *Publisher) Status(ctx context.Context, ident table.Identifier, runID string) (*RunStatus, error) {
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	st := &RunStatus{RunID: runID}
	for _, s := range runrecord.FindAll(meta, runID) {
		st.Snapshots = append(st.Snapshots, runrecord.EntryOf(s))
	}
	if s := meta.SnapshotByName(RollbackTag(runID)); s != nil {
		st.RollbackTarget = &s.SnapshotID
	}
	head := meta.CurrentSnapshot()
	if head != nil {
		st.Main = head.SnapshotID
	}
	st.Landed = len(st.Snapshots) > 0
	places := map[string]bool{}
	st.OnMain = st.Landed && head != nil
	for _, e := range st.Snapshots {
		on := head != nil && table.IsAncestorOf(head.SnapshotID, e.SnapshotID, func(id int64) *table.Snapshot { return meta.SnapshotByID(id) })
		st.OnMain = st.OnMain && on
		if _, of, ok := strings.Cut(e.Batch, "/"); ok {
			st.Batches, _ = strconv.Atoi(of)
			if on {
				places[e.Batch] = true
			}
		}
	}
	st.OnMainBatches = len(places)
	st.Complete = st.Landed && (st.Batches == 0 || st.OnMainBatches == st.Batches)
	return st, nil
}
