package swap

import (
	"context"

	"github.com/lakeswap/lakeswap/swap/rollback"
)

// Rollback points main back at the snapshot a run replaced, or, scoped,
// gives the run's partitions back what they held (rollback.Runner), judged
// by the rollback guards of the one list and writing rows back, where it
// must, as a held attempt of the publisher's.
func (p *Publisher) Rollback(ctx context.Context, req rollback.Request) (*rollback.Result, error) {
	p.progress().Step("rollback")
	r := &rollback.Runner{Catalog: p.Catalog, Logger: p.Logger, Retention: p.RollbackRetention, StagingIO: p.StagingIO, Guards: rollbackGuards()}
	return r.Rollback(ctx, req)
}
