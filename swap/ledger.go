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
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

// What a rollback, a check of a run or of the table, and a run's status
// answer (package rollback).
type (
	RollbackRequest = rollback.Request
	RollbackResult  = rollback.Result
	VerifyResult    = rollback.VerifyResult
	TableCheck      = rollback.TableCheck
	RunCheck        = rollback.RunCheck
	RunStatus       = rollback.RunStatus
)

// ledger reads and undoes runs through the publisher's catalog.
func (p *Publisher) ledger() *rollback.Ledger {
	return &rollback.Ledger{Catalog: p.Catalog, Logger: p.Logger, Retention: p.RollbackRetention, Restage: p.restage}
}

// Rollback points main back at the snapshot a run replaced, or, scoped,
// gives the run's partitions back what they held (rollback.Ledger.Rollback).
func (p *Publisher) Rollback(ctx context.Context, req RollbackRequest) (*RollbackResult, error) {
	p.progress().Step("rollback")
	return p.ledger().Rollback(ctx, req)
}

// VerifyRun recomputes a committed run's fingerprint from the table and
// compares it with what the run recorded.
func (p *Publisher) VerifyRun(ctx context.Context, ident table.Identifier, runID string, snapshotID int64) (*VerifyResult, error) {
	return p.ledger().VerifyRun(ctx, ident, runID, snapshotID)
}

// VerifyTable checks a snapshot of the whole table (main's head for 0):
// every grain key once, every run's partitions as the run recorded them.
func (p *Publisher) VerifyTable(ctx context.Context, ident table.Identifier, snapshotID int64) (*TableCheck, error) {
	return p.ledger().VerifyTable(ctx, ident, snapshotID)
}

// History lists main's snapshots, newest first, and those off main.
func (p *Publisher) History(ctx context.Context, ident table.Identifier) (main, off []runrecord.Entry, err error) {
	return p.ledger().History(ctx, ident)
}

// Status says what became of a run, from the table's history alone.
func (p *Publisher) Status(ctx context.Context, ident table.Identifier, runID string) (*RunStatus, error) {
	return p.ledger().Status(ctx, ident, runID)
}

// SnapshotFiles lists the data files of a snapshot (main's head for 0).
func (p *Publisher) SnapshotFiles(ctx context.Context, ident table.Identifier, snapshotID int64) (int64, []runrecord.Input, error) {
	return p.ledger().SnapshotFiles(ctx, ident, snapshotID)
}

// Applied reads the data files of a table's snapshot with their deletes
// applied (rollback.Applied).
type Applied = rollback.Applied

// OpenApplied plans, once, which deletes apply to the data files of a
// table's snapshot, for copies of those SnapshotFiles listed as
// rollback.DeletedInput.
func (p *Publisher) OpenApplied(ctx context.Context, table string, snapshotID int64) (*Applied, error) {
	return p.ledger().OpenApplied(ctx, table, snapshotID)
}

// ParseDeletedInput reads a listed data file that deletes apply to.
var ParseDeletedInput = rollback.ParseDeletedInput

// restage writes a partition's rows as new data files of the table under
// an attempt folder of run runID's own, and describes them for a commit as
// a publish describes its staged files. A scoped rollback puts back this
// way a partition whose old rows cannot be restored as the files that held
// them (delete files apply to them); each batch each yields is in the
// contract's schema. It returns the files written even when it fails, for
// the caller to remove.
func (p *Publisher) restage(ctx context.Context, tbl *table.Table, c *contract.Contract, value, runID string, each func(func(arrow.RecordBatch) error) error) ([]iceberg.DataFile, []string, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	wfs, err := p.stagingIO(ctx, fsys)
	if err != nil {
		return nil, nil, err
	}
	meta := tbl.Metadata()
	prefix, err := stagingPrefix(meta, c.Partition, value, runID, newAttempt())
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
