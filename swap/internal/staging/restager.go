package staging

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/swap/internal/hold"
)

// Hook gives the file IO staged files are written through, from the
// table's own (swap.Publisher.StagingIO: lakeswap's S3 store plugs in
// there); nil writes through the table's own IO.
type Hook func(ctx context.Context, table icebergio.IO) (icebergio.WriteFileIO, error)

// IO is the file IO an attempt's files are written and removed through:
// hook's, or the table's own.
func IO(ctx context.Context, hook Hook, fsys icebergio.IO) (icebergio.WriteFileIO, error) {
	if hook != nil {
		return hook(ctx, fsys)
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return nil, errors.New("the table's file IO cannot write")
	}
	return wfs, nil
}

// Holds is where a table's holds are written: its staging IO.
func Holds(hook Hook, tbl *table.Table) hold.Store {
	return func(ctx context.Context) (icebergio.WriteFileIO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return IO(ctx, hook, fsys)
	}
}

// Restager is one held attempt of a run that writes rows back as new data
// files of a table: a scoped rollback's, for a partition whose old files
// cannot simply be put back (delete files applied to them).
type Restager struct {
	hook           Hook
	log            *slog.Logger
	tbl            *table.Table
	runID, attempt string
	stop           func()
}

// Restage starts an attempt of run runID, held (as a publish's attempt is)
// until it ends.
func Restage(ctx context.Context, hook Hook, log *slog.Logger, tbl *table.Table, runID string) (*Restager, error) {
	r := &Restager{hook: hook, log: log, tbl: tbl, runID: runID, attempt: NewAttempt()}
	var err error
	loc := hold.Location(tbl.Metadata(), runID, r.attempt)
	if r.stop, err = hold.WhileRunning(ctx, Holds(hook, tbl), log, runID, r.attempt, loc); err != nil {
		return nil, fmt.Errorf("hold the rollback's files: %w", err)
	}
	return r, nil
}

// Write writes a partition's rows (each yields them, in the contract's
// schema) under the attempt's folder as new data files, described for a
// commit as a publish describes its staged files, and names every file it
// created, even when it fails.
func (r *Restager) Write(ctx context.Context, c *contract.Contract, value string, each func(func(arrow.RecordBatch) error) error) ([]iceberg.DataFile, []string, error) {
	fsys, err := r.tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	wfs, err := IO(ctx, r.hook, fsys)
	if err != nil {
		return nil, nil, err
	}
	meta := r.tbl.Metadata()
	prefix, err := Prefix(meta, c.Partition, value, r.runID, r.attempt)
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
		df, err := Describe(ctx, fsys, meta, c, f.Path, meta.CurrentSchema(), props, value)
		if err != nil {
			return nil, w.Created(), fmt.Errorf("describe %s: %w", f.Path, err)
		}
		out = append(out, df)
	}
	return out, w.Created(), nil
}

// End ends the attempt: its hold is removed when done says the commit
// landed or surely did not, else only no longer refreshed.
func (r *Restager) End(ctx context.Context, done bool) {
	if r.stop != nil {
		r.stop()
		r.stop = nil
	}
	if done {
		hold.RemoveAttempts(ctx, Holds(r.hook, r.tbl), r.log, r.tbl.Metadata(), r.runID, []string{r.attempt})
	}
}
