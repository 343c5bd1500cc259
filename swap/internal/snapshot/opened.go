package snapshot

import (
	"context"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/runrecord"
)

// Opened is a table loaded for reading its history: its metadata, its
// file IO, and the run records its snapshots name.
type Opened struct {
	Table *table.Table
	Meta  table.Metadata
	FS    icebergio.IO
	Runs  *runrecord.Loader
}

// OpenTable loads a table from the catalog for reading its history, the
// opening every reader of runs had written again.
func OpenTable(ctx context.Context, cat Loader, ident table.Identifier) (*Opened, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	return &Opened{Table: tbl, Meta: tbl.Metadata(), FS: fsys, Runs: runrecord.NewLoader(fsys)}, nil
}
