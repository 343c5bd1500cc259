package swap

import (
	"context"
	"errors"
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
// person who approves it. Each comparison holds req.ChangesMemory of keys
// and past it sorts them on local disk (req.SpillDir), so a partition of
// any size is compared.
func grainChanges(ctx context.Context, fsys icebergio.IO, c *contract.Contract, plan *run, req *Request) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelism(req.Parallelism))
	for i := range plan.Partitions {
		pp := &plan.Partitions[i]
		g.Go(func() error {
			ch, err := changesOf(gctx, fsys, c, pp, req)
			if err != nil {
				return fmt.Errorf("compare partition %s with the table: %w", pp.Key, err)
			}
			pp.Changes = &ch
			return nil
		})
	}
	return g.Wait()
}

// errEnough stops a read that has what it wanted.
var errEnough = errors.New("read enough")

func changesOf(ctx context.Context, fsys icebergio.IO, c *contract.Contract, pp *PartitionPlan, req *Request) (verify.Changes, error) {
	if pp.OldFingerprint.Hash == pp.Fingerprint.Hash && pp.OldFingerprint.Rows == pp.Fingerprint.Rows {
		return verify.Changes{}, nil
	}
	d := verify.NewDiffer(c)
	d.Keys, d.Memory, d.SpillDir = req.ChangesKeys, req.ChangesMemory, req.SpillDir
	old := func(fn func(arrow.RecordBatch) (bool, error)) error {
		err := baseRows(ctx, fsys, c, pp, func(rec arrow.RecordBatch) error {
			done, err := fn(rec)
			if err == nil && done {
				return errEnough
			}
			return err
		})
		if errors.Is(err, errEnough) {
			return nil
		}
		return err
	}
	staged := func(fn func(arrow.RecordBatch) (bool, error)) error {
		return eachBatch(ctx, fsys, c, pp.NewFiles, fn)
	}
	return d.Compare(ctx, old, staged)
}

// eachBatch reads files in the contract's schema, batch by batch, until fn
// says it is done.
func eachBatch(ctx context.Context, fsys icebergio.IO, c *contract.Contract, files []parquetio.File, fn func(arrow.RecordBatch) (bool, error)) error {
	acc := verify.NewAccumulator(c, "", nil) // only to conform batches
	for _, f := range files {
		done, err := snapshot.EachBatch(ctx, fsys, acc, f.Path, fn)
		if err != nil || done {
			return err
		}
	}
	return nil
}
