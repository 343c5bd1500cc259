package swap

import (
	"context"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/swap/gc"
	"github.com/lakeswap/lakeswap/swap/internal/hold"
)

type (
	// GCRequest says what gc may remove.
	GCRequest = gc.Request
	// GCItem is one thing gc removed, or would.
	GCItem = gc.Item
	// GCResult lists what gc found to remove and whether it did.
	GCResult = gc.Result
)

// GC removes what attempts that never committed left behind (package gc).
func (p *Publisher) GC(ctx context.Context, req GCRequest) (*GCResult, error) {
	c := &gc.Collector{Catalog: p.Catalog, StagingIO: p.stagingIO, Logger: p.Logger}
	return c.Run(ctx, req)
}

// holds is where a table's holds are written: its staging IO.
func (p *Publisher) holds(tbl *table.Table) hold.Store {
	return func(ctx context.Context) (icebergio.WriteFileIO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return p.stagingIO(ctx, fsys)
	}
}

// release removes a plan's holds, one per attempt that staged it (a plan
// merged from shards has several).
func (p *Publisher) release(ctx context.Context, tbl *table.Table, plan *Plan) {
	attempts := []string{plan.Attempt}
	for i := range plan.Partitions {
		if a := plan.Partitions[i].attemptOr(plan.Attempt); a != plan.Attempt {
			attempts = append(attempts, a)
		}
	}
	hold.Release(ctx, p.holds(tbl), p.log(), tbl.Metadata(), plan.RunID, attempts)
}
