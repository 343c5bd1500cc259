package snapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/outcome"
)

// Loader loads a table: the part of a catalog reading one needs.
type Loader interface {
	LoadTable(context.Context, table.Identifier) (*table.Table, error)
}

// Whether a commit the catalog answered with an error (a timeout, a 5xx)
// landed is read from the table, never guessed: the table is loaded again
// up to SettleAttempts times, with backoff from SettleBackoff.
var (
	SettleAttempts = 5
	SettleBackoff  = 500 * time.Millisecond
)

// LookFor finds out whether a commit (of snapshot id, or moving main to
// it), sent on tbl's main and answered with cause, landed, as landed reads
// it in the table: nil if it did, an error matching outcome.ErrNotLanded if it
// did not, or outcome.ErrCommitUnknown if the table cannot tell. Found in the
// table's metadata, it landed. Absent, it did not if main has moved past
// the attempt (the commit was pinned to the old head, so it can never land
// now), or if two reloads a backoff apart both lack it.
func LookFor(ctx context.Context, cat Loader, log *slog.Logger, tbl *table.Table, runID string, id int64, cause error, landed func(table.Metadata) bool) error {
	cancelled := ctx.Err() != nil
	// An interrupted commit is still worth one look at the table.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	sent := tbl.CurrentSnapshot()
	wait, absent, last := SettleBackoff, 0, cause
	for attempt := 1; attempt <= SettleAttempts; attempt++ {
		if attempt > 1 {
			if cancelled {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w: %w", outcome.ErrCommitUnknown, errors.Join(cause, ctx.Err()))
			case <-time.After(wait):
			}
			wait *= 2
		}
		now, err := cat.LoadTable(ctx, tbl.Identifier())
		if err != nil {
			last = err
			log.Warn("the commit's outcome is unknown and the table cannot be read; trying again", "run", runID, "snapshot", id, "err", err)
			continue
		}
		if landed(now.Metadata()) {
			log.Warn("the catalog answered the commit with an error, but the commit landed", "run", runID, "snapshot", id, "answer", cause)
			return nil
		}
		head := now.CurrentSnapshot()
		moved := (head == nil) != (sent == nil) || head != nil && head.SnapshotID != sent.SnapshotID
		if absent++; moved {
			return fmt.Errorf("%w: the catalog answered %v, and main has moved past the snapshot the commit was pinned to without it (snapshot %d)", outcome.ErrNotLanded, cause, id)
		}
		if absent >= 2 {
			return fmt.Errorf("%w: the catalog answered %v, and the table, read back twice %s apart, does not hold its snapshot %d", outcome.ErrNotLanded, cause, wait/2, id)
		}
	}
	if last == cause {
		return fmt.Errorf("%w: %w (interrupted before the table showed whether it landed)", outcome.ErrCommitUnknown, cause)
	}
	return fmt.Errorf("%w: %w; reading the table back to find out failed: %w", outcome.ErrCommitUnknown, cause, last)
}

// AnsweredRefused says whether a commit the catalog answered as refused (a
// conflict) landed after all: a catalog, or the client or gateway before
// it, may answer so a request it sent again after the first applied (an
// SDK's retry of Glue's UpdateTable meets the version the first moved; a
// REST gateway's retry gets 409). One reload tells, before anything the
// commit wrote is removed; an error means the table could not be read,
// and the outcome is unknown.
func AnsweredRefused(ctx context.Context, cat Loader, tbl *table.Table, id int64) (landed bool, err error) {
	now, err := cat.LoadTable(context.WithoutCancel(ctx), tbl.Identifier())
	if err != nil {
		return false, err
	}
	return now.Metadata().SnapshotByID(id) != nil, nil
}
