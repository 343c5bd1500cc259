// Package swap is lakeswap's publish protocol. A publish notes main's
// snapshot (the base) and the files each declared partition holds there,
// stages the new rows as Parquet under a prefix no earlier attempt used,
// validates and fingerprints them, commits one snapshot that replaces exactly
// the declared partitions' files on condition that main is still at the base,
// then reads the commit back and compares fingerprints. A run id the table
// already records is settled, not committed twice. Stage and Apply split a
// publish in two, so that a plan can be approved, stored as JSON and
// committed by another process. A rollback points main back at the snapshot
// a run replaced.
//
//	p := &swap.Publisher{Catalog: cat} // any Catalog: LoadTable, CommitTable
//	res, err := p.Publish(ctx, swap.Request{
//		Table:      table.Identifier{"retail", "daily_orders"},
//		Partitions: []string{"2026-01-01", "2026-01-02"},
//		Source:     src, // a source.Source: partition value -> array.RecordReader
//	})
//	switch {
//	case errors.Is(err, swap.ErrRefused):  // findings; nothing committed
//	case errors.Is(err, swap.ErrConflict): // main moved; nothing committed
//	}
package swap
