package snapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/outcome"
)

// Change is one table's share of a commit, built and not yet sent: a
// publish's replace, a scoped rollback's, or main pointed back.
type Change struct {
	Table *table.Table
	// Tx is the commit built as a transaction (sent alone, with the
	// checks iceberg-go runs on it); else Commit holds it.
	Tx     *table.Transaction
	Commit table.TableCommit
	// Written records what the commit wrote before it was sent, removed
	// when it is refused; nil when it wrote nothing.
	Written *RecordingIO
	// ID is the snapshot the commit adds, or points main at.
	ID int64
	// Landed reads in the table whether the commit landed.
	Landed func(table.Metadata) bool
	// Shared says another process's commit leaves the table as this one
	// would (main moved to a snapshot that exists, a plan's branch): an
	// answer that the commit was refused is then believed, since the
	// table cannot tell the two apart.
	Shared bool
}

// Adds is how the table shows a commit that adds snapshot id.
func Adds(id int64) func(table.Metadata) bool {
	return func(m table.Metadata) bool { return m.SnapshotByID(id) != nil }
}

// PointsAt is how the table shows a commit that moves main to id.
func PointsAt(id int64) func(table.Metadata) bool {
	return func(m table.Metadata) bool { return m.CurrentSnapshot() != nil && m.CurrentSnapshot().SnapshotID == id }
}

// Refused is a commit the catalog refused, every table of it: nothing
// landed, and what the commits wrote was removed (Removed says so). It
// matches table.ErrCommitFailed when a requirement failed (main, the
// schema or the spec moved), catalog.ErrNotApplied when the catalog
// failed before it applied anything, and catalog.ErrNoReleases when it
// cannot commit several tables as one.
type Refused struct {
	Err     error
	Removed string
}

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// tablesCommitter is a catalog that commits several tables as one change.
type tablesCommitter interface {
	CommitTables(ctx context.Context, commits []table.TableCommit) error
}

// Send is every commit lakeswap makes: it sends changes as one catalog
// operation (one table's commit, or the catalog's commit across tables
// for several) and settles the answer from the tables themselves. It
// returns nil when every change landed; a *Refused when none did and the
// catalog said so; an error matching outcome.ErrNotLanded when the answer
// was an error and the tables show none landed; or one matching
// outcome.ErrCommitUnknown when they cannot tell, or tell that some did.
func Send(ctx context.Context, cat Catalog, log *slog.Logger, runID string, changes []*Change) error {
	err := send(ctx, cat, changes)
	if err == nil {
		return nil
	}
	refused := errors.Is(err, table.ErrCommitFailed) || errors.Is(err, catalog.ErrNotApplied) || errors.Is(err, catalog.ErrNoReleases)
	if !refused {
		return settle(ctx, cat, log, runID, changes, err)
	}
	// Answered refused: a request sent again after the first applied is
	// answered so (an SDK's retry, a gateway's). The tables tell, before
	// anything the commit wrote is removed.
	look, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for _, c := range changes {
		now, lerr := cat.LoadTable(look, c.Table.Identifier())
		if lerr != nil {
			return settle(ctx, cat, log, runID, changes, errors.Join(err, lerr))
		}
		if !c.Shared && c.Landed(now.Metadata()) {
			log.Warn("the catalog answered the commit as refused, but it landed (a retried request)", "run", runID, "snapshot", c.ID, "answer", err)
			return settle(ctx, cat, log, runID, changes, err)
		}
	}
	var removed []string
	for _, c := range changes {
		if c.Written != nil {
			removed = append(removed, RemoveWritten(ctx, log, c.Table, c.Written))
		}
	}
	return &Refused{Err: err, Removed: strings.Join(removed, "; ")}
}

// send makes the one catalog operation.
func send(ctx context.Context, cat Catalog, changes []*Change) error {
	if len(changes) == 1 && changes[0].Tx != nil {
		_, err := changes[0].Tx.Commit(ctx)
		return err
	}
	commits := make([]table.TableCommit, len(changes))
	for i, c := range changes {
		commits[i] = c.Commit
	}
	if len(changes) == 1 {
		_, _, err := cat.CommitTable(ctx, commits[0].Identifier, commits[0].Requirements, commits[0].Updates)
		return err
	}
	many, ok := cat.(tablesCommitter)
	if !ok {
		return fmt.Errorf("%w: %w", catalog.ErrNoReleases, catalog.ErrNotApplied)
	}
	return many.CommitTables(ctx, commits)
}

// settle finds out, after an answer that says nothing sure, whether the
// commit landed: on every table, or on none.
func settle(ctx context.Context, cat Loader, log *slog.Logger, runID string, changes []*Change, cause error) error {
	landed, lost := 0, 0
	var unknown, notLanded error
	for _, c := range changes {
		err := LookFor(ctx, cat, log, c.Table, runID, c.ID, cause, c.Landed)
		switch {
		case err == nil:
			landed++
		case errors.Is(err, outcome.ErrNotLanded):
			lost, notLanded = lost+1, err
		default:
			unknown = err
		}
	}
	switch {
	case landed == len(changes):
		return nil
	case lost == len(changes):
		if len(changes) == 1 {
			return notLanded
		}
		return fmt.Errorf("%w: %v", outcome.ErrNotLanded, cause)
	case unknown == nil:
		unknown = fmt.Errorf("%w: %v; %d of the commit's %d tables hold it", outcome.ErrCommitUnknown, cause, landed, len(changes))
	}
	return unknown
}
