package swap

import (
	"context"

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
