// Package rollback reads and undoes the runs a table's history records:
// it rolls a run back (main pointed at the snapshot the run replaced, or,
// scoped, the run's partitions given back what they held), verifies a run
// or the whole table against what the runs recorded, and answers what
// became of a run. It reads everything it needs from the table; swap's
// Publisher is its front door.
package rollback

import (
	"log/slog"
	"time"

	"github.com/apache/iceberg-go/table"
)

// Catalog is what a ledger needs of a catalog: loading a table and
// committing to it.
type Catalog = table.CatalogIO

// Ledger reads and undoes the runs of one catalog's tables.
type Ledger struct {
	Catalog Catalog
	Logger  *slog.Logger // nil: discard
	// Retention is how long the tags of a scoped rollback keep its
	// snapshots from expiry; 0 is the default.
	Retention time.Duration
}

func (l *Ledger) log() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}
