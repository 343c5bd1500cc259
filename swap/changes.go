package swap

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	icebergio "github.com/apache/iceberg-go/io"
	"golang.org/x/sync/errgroup"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// grainChanges compares each declared partition's staged rows with the rows
// it holds at the base, at the grain: what the plan's summary shows the
// person who approves it. A partition with more rows at the base than
// maxRows (when set) is not compared, and says so. keys is how many keys
// of each kind each partition names with their values (0: a few).
func grainChanges(ctx context.Context, fsys icebergio.IO, c *contract.Contract, plan *run, maxRows int64, keys, par int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(par)
	for i := range plan.Partitions {
		pp := &plan.Partitions[i]
		g.Go(func() error {
			ch, err := changesOf(gctx, fsys, c, pp, maxRows, keys)
			if err != nil {
				return fmt.Errorf("compare partition %s with the table: %w", pp.Key, err)
			}
			pp.Changes = &ch
			return nil
		})
	}
	return g.Wait()
}

func changesOf(ctx context.Context, fsys icebergio.IO, c *contract.Contract, pp *PartitionPlan, maxRows int64, keys int) (verify.Changes, error) {
	if pp.OldFingerprint.Hash == pp.Fingerprint.Hash && pp.OldFingerprint.Rows == pp.Fingerprint.Rows {
		return verify.Changes{}, nil
	}
	if maxRows > 0 && pp.OldFingerprint.Rows > maxRows {
		return verify.Changes{Skipped: fmt.Sprintf("not compared at the grain: %d rows at the base, more than --memory-limit lets lakeswap hold (%d)", pp.OldFingerprint.Rows, maxRows)}, nil
	}
	d := verify.NewDiffer(c)
	d.Keys = keys
	add := func(fn func(arrow.RecordBatch) error) func(arrow.RecordBatch) (bool, error) {
		return func(rec arrow.RecordBatch) (bool, error) { return false, fn(rec) }
	}
	if err := baseRows(ctx, fsys, c, pp, d.AddOld); err != nil {
		return verify.Changes{}, err
	}
	if err := eachBatch(ctx, fsys, c, pp.NewFiles, add(d.AddNew)); err != nil {
		return verify.Changes{}, err
	}
	if d.NeedsRemovedNames() {
		done := false
		err := baseRows(ctx, fsys, c, pp, func(rec arrow.RecordBatch) (err error) {
			if !done {
				done, err = d.NameRemoved(rec)
			}
			return err
		})
		if err != nil {
			return verify.Changes{}, err
		}
	}
	return d.Changes(), nil
}

// eachBatch reads files in the contract's schema, batch by batch, until fn
// says it is done.
func eachBatch(ctx context.Context, fsys icebergio.IO, c *contract.Contract, files []parquetio.File, fn func(arrow.RecordBatch) (bool, error)) error {
	acc := verify.NewAccumulator(c, "", nil) // only to conform batches
	for _, f := range files {
		done, err := fileBatches(ctx, fsys, acc, f.Path, fn)
		if err != nil || done {
			return err
		}
	}
	return nil
}

func fileBatches(ctx context.Context, fsys icebergio.IO, acc *verify.Accumulator, path string, fn func(arrow.RecordBatch) (bool, error)) (bool, error) {
	rr, err := snapshot.Open(ctx, fsys, path)
	if err != nil {
		return false, err
	}
	defer rr.Release()
	for rr.Next() {
		rec, err := acc.Project(rr.RecordBatch())
		if err != nil {
			return false, fmt.Errorf("%s does not read as the table's schema: %w", path, err)
		}
		done, err := fn(rec)
		rec.Release()
		if err != nil || done {
			return done, err
		}
	}
	return false, rr.Err()
}
