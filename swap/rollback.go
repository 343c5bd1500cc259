package swap

import (
	"context"
	"fmt"
	"maps"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/swap/internal/hold"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

// Rollback points main back at the snapshot a run replaced, or, scoped,
// gives the run's partitions back what they held (rollback.Runner), judged
// by the rollback guards of the one list and writing rows back, where it
// must, as a held attempt of the publisher's.
func (p *Publisher) Rollback(ctx context.Context, req rollback.Request) (*rollback.Result, error) {
	p.progress().Step("rollback")
	r := &rollback.Runner{Catalog: p.Catalog, Logger: p.Logger, Retention: p.RollbackRetention, Restage: p.restage, Guards: rollbackGuards()}
	return r.Rollback(ctx, req)
}

// restager is a scoped rollback's attempt at writing rows back.
type restager struct {
	p              *Publisher
	tbl            *table.Table
	runID, attempt string
	stop           func()
}

// restage starts a held attempt of run runID (a scoped rollback's) that
// writes rows back as new data files (rollback.Restager).
func (p *Publisher) restage(ctx context.Context, tbl *table.Table, runID string) (rollback.Restager, error) {
	r := &restager{p: p, tbl: tbl, runID: runID, attempt: newAttempt()}
	var err error
	loc := hold.Location(tbl.Metadata(), runID, r.attempt)
	if r.stop, err = hold.WhileRunning(ctx, p.holds(tbl), p.log(), runID, r.attempt, loc); err != nil {
		return nil, fmt.Errorf("hold the rollback's files: %w", err)
	}
	return r, nil
}

// Write writes a partition's rows under the attempt's folder and
// describes the files as a publish describes its staged files.
func (r *restager) Write(ctx context.Context, c *contract.Contract, value string, each func(func(arrow.RecordBatch) error) error) ([]iceberg.DataFile, []string, error) {
	fsys, err := r.tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	wfs, err := r.p.stagingIO(ctx, fsys)
	if err != nil {
		return nil, nil, err
	}
	meta := r.tbl.Metadata()
	prefix, err := stagingPrefix(meta, c.Partition, value, r.runID, r.attempt)
	if err != nil {
		return nil, nil, err
	}
	w := parquetio.NewWriter(wfs, prefix, c.Arrow, parquetio.Options{DeltaIntegers: c.DeltaIntegers})
	if err := each(w.Write); err != nil {
		w.Abort()
		return nil, w.Created(), err
	}
	files, err := w.Close()
	if err != nil {
		return nil, w.Created(), err
	}
	props := maps.Clone(meta.Properties())
	for _, f := range c.Partition.Fields {
		props["write.metadata.metrics.column."+f.Name] = "full"
	}
	var out []iceberg.DataFile
	for _, f := range files {
		df, err := describeFile(ctx, fsys, meta, c, f.Path, meta.CurrentSchema(), props, value)
		if err != nil {
			return nil, w.Created(), fmt.Errorf("describe %s: %w", f.Path, err)
		}
		out = append(out, df)
	}
	return out, w.Created(), nil
}

// End stops refreshing the attempt's hold, and removes it when release
// says the commit's outcome is known.
func (r *restager) End(ctx context.Context, release bool) {
	if r.stop != nil {
		r.stop()
		r.stop = nil
	}
	if release {
		hold.RemoveAttempts(ctx, r.p.holds(r.tbl), r.p.log(), r.tbl.Metadata(), r.runID, []string{r.attempt})
	}
}
