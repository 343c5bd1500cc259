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
	"github.com/lakeswap/lakeswap/swap/internal/hold"
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
	return &rollback.Ledger{Catalog: p.Catalog, Logger: p.Logger, Retention: p.RollbackRetention, Restage: p.restage, Guards: rollbackGuards()}
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

// ReleaseTables finds, from a table a release left unchanged, the tables
// of the release (nil if no table of the catalog records it).
func (p *Publisher) ReleaseTables(ctx context.Context, runID string, near table.Identifier) ([]string, error) {
	return p.ledger().ReleaseTables(ctx, runID, near)
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

// Rollback is main set back to an older snapshot (rollback.Rollback).
type Rollback = rollback.Rollback

// Rollbacks lists the times main was set back, oldest first.
func (p *Publisher) Rollbacks(ctx context.Context, ident table.Identifier) ([]Rollback, error) {
	return p.ledger().Rollbacks(ctx, ident)
}

// RunView is a committed run, partition by partition (rollback.RunView).
type RunView = rollback.RunView

// ShowRun reads a committed run back, partition by partition, before and
// after.
func (p *Publisher) ShowRun(ctx context.Context, ident table.Identifier, runID string) (*RunView, error) {
	return p.ledger().ShowRun(ctx, ident, runID)
}

// PartitionView is a partition before and after (rollback.PartitionView).
type PartitionView = rollback.PartitionView

// DiffView is what changed between two snapshots (rollback.DiffView).
type DiffView = rollback.DiffView

// Diff compares two snapshots of a table, partition by partition.
func (p *Publisher) Diff(ctx context.Context, ident table.Identifier, from, to string) (*DiffView, error) {
	return p.ledger().Diff(ctx, ident, from, to)
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

// Settle stops refreshing the attempt's hold, and removes it when release
// says the commit's outcome is known.
func (r *restager) Settle(ctx context.Context, release bool) {
	if r.stop != nil {
		r.stop()
		r.stop = nil
	}
	if release {
		hold.Release(ctx, r.p.holds(r.tbl), r.p.log(), r.tbl.Metadata(), r.runID, []string{r.attempt})
	}
}

type (
	// CheckRequest asks a table's standing checks.
	CheckRequest = rollback.CheckRequest
	// CheckLine is one standing check's verdict.
	CheckLine = rollback.CheckLine
)

// Check runs a table's standing checks: freshness, volume, the last run
// verified.
func (p *Publisher) Check(ctx context.Context, req CheckRequest) ([]CheckLine, error) {
	return p.ledger().Check(ctx, req)
}
