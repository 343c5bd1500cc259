package rollback

import (
	"log/slog"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/lakeswap/lakeswap/swap/internal/staging"
)

// Runner rolls back the runs of one catalog's tables.
type Runner struct {
	Catalog table.CatalogIO
	Logger  *slog.Logger // nil: discard
	// Retention is how long the tags of a scoped rollback keep its
	// snapshots from expiry; 0 is the default.
	Retention time.Duration
	// StagingIO gives the file IO a scoped rollback writes rows back
	// through, as swap.Publisher.StagingIO does a publish's staged files
	// (nil: the table's own): a partition whose old files cannot simply be
	// put back (delete files applied to them) gets its rows back as new
	// files, in an attempt held as a publish's is.
	StagingIO staging.Hook
	// Guards judge every rollback before it commits (Frozen,
	// ReleaseShares); swap's Publisher gives those of swap.Guards.
	Guards []Guard
}

func (l *Runner) log() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}
