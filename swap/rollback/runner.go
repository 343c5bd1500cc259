package rollback

import (
	"context"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
)

// Runner rolls back the runs of one catalog's tables.
type Runner struct {
	Catalog table.CatalogIO
	Logger  *slog.Logger // nil: discard
	// Retention is how long the tags of a scoped rollback keep its
	// snapshots from expiry; 0 is the default.
	Retention time.Duration
	// Restage starts an attempt of run runID that writes rows back as new
	// data files of the table, held (as a publish's attempt is) until it
	// ends. A scoped rollback puts back this way a partition whose old
	// files cannot simply be put back: delete files applied to them. Nil:
	// such a rollback is refused.
	Restage func(ctx context.Context, tbl *table.Table, runID string) (Restager, error)
	// Guards judge every rollback before it commits (Frozen,
	// ReleaseShares); swap's Publisher gives those of swap.Guards.
	Guards []Guard
}

// Restager is one held attempt that writes rows back (Runner.Restage).
type Restager interface {
	// Write writes a partition's rows (each yields them, in the
	// contract's schema) as new data files, described for a commit, and
	// names every file it created, even when it fails.
	Write(ctx context.Context, c *contract.Contract, value string, each func(func(arrow.RecordBatch) error) error) (files []iceberg.DataFile, created []string, err error)
	// End ends the attempt: its hold is released when release says
	// the commit landed or surely did not, else only no longer refreshed.
	End(ctx context.Context, release bool)
}

func (l *Runner) log() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}
