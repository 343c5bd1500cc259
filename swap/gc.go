package swap

import (
	"context"

	"github.com/lakeswap/lakeswap/swap/gc"
)

// GC removes what attempts that never committed left behind (package gc).
func (p *Publisher) GC(ctx context.Context, req gc.Request) (*gc.Result, error) {
	c := &gc.Collector{Catalog: p.Catalog, StagingIO: p.StagingIO, Logger: p.Logger}
	return c.Run(ctx, req)
}

// Pending lists the table's plans waiting for approval (gc.Pending).
func (p *Publisher) Pending(ctx context.Context, req gc.Request) ([]gc.Pending, error) {
	c := &gc.Collector{Catalog: p.Catalog, StagingIO: p.StagingIO, Logger: p.Logger}
	return c.Pending(ctx, req)
}
