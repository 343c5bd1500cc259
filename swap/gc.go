package swap

import (
	"context"

	"github.com/lakeswap/lakeswap/swap/gc"
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
