package swap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
)

// Whether a commit the catalog answered with an error (a timeout, a 5xx)
// landed is read from the table, never guessed: the table is loaded again
// up to settleAttempts times, with backoff from settleBackoff.
var (
	settleAttempts = 5
	settleBackoff  = 500 * time.Millisecond
)

// settle finds out whether a publish's commit id, answered with cause,
// landed (lookFor), and says what to do if it did not or if that is not
// known.
func (p *Publisher) settle(ctx context.Context, tbl *table.Table, plan *Plan, id int64, cause error) (int64, error) {
	err := p.lookFor(ctx, tbl, plan.RunID, id, cause, func(m table.Metadata) bool { return m.SnapshotByID(id) != nil })
	switch {
	case err == nil:
		return id, nil
	case errors.Is(err, ErrNotLanded):
		return 0, &OpError{Op: "commit", Table: plan.Table, RunID: plan.RunID, Err: err,
			Hint: fmt.Sprintf("nothing was committed as far as the table shows; run the publish again with the same run id (should the commit land late after all, the rerun finds it and reports it); the files staged by attempt %s were kept, and `lakeswap gc --table %s` removes them once past its grace period", plan.Attempt, plan.Table)}
	}
	return 0, &OpError{Op: "commit", Table: plan.Table, RunID: plan.RunID, Err: err,
		Hint: fmt.Sprintf("the commit would be snapshot %d; `lakeswap status --table %s --run %s` answers from the table's history whether it landed; the files staged by attempt %s were kept, since the commit may reference them",
			id, plan.Table, plan.RunID, plan.Attempt)}
}

// lookFor finds out whether a commit (of snapshot id, or moving main to
// it), sent on tbl's main and answered with cause, landed, as landed reads
// it in the table: nil if it did, an error matching ErrNotLanded if it
// did not, or ErrCommitUnknown if the table cannot tell. Found in the
// table's metadata, it landed. Absent, it did not if main has moved past
// the attempt (the commit was pinned to the old head, so it can never land
// now), or if two reloads a backoff apart both lack it.
func (p *Publisher) lookFor(ctx context.Context, tbl *table.Table, runID string, id int64, cause error, landed func(table.Metadata) bool) error {
	cancelled := ctx.Err() != nil
	// An interrupted commit is still worth one look at the table.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	sent := tbl.CurrentSnapshot()
	wait, absent, last := settleBackoff, 0, cause
	for attempt := 1; attempt <= settleAttempts; attempt++ {
		if attempt > 1 {
			if cancelled {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w: %w", ErrCommitUnknown, errors.Join(cause, ctx.Err()))
			case <-time.After(wait):
			}
			wait *= 2
		}
		now, err := p.Catalog.LoadTable(ctx, tbl.Identifier())
		if err != nil {
			last = err
			p.log().Warn("the commit's outcome is unknown and the table cannot be read; trying again", "run", runID, "snapshot", id, "err", err)
			continue
		}
		if landed(now.Metadata()) {
			p.log().Warn("the catalog answered the commit with an error, but the commit landed", "run", runID, "snapshot", id, "answer", cause)
			return nil
		}
		head := now.CurrentSnapshot()
		moved := (head == nil) != (sent == nil) || head != nil && head.SnapshotID != sent.SnapshotID
		if absent++; moved {
			return fmt.Errorf("%w: the catalog answered %v, and main has moved past the snapshot the commit was pinned to without it (snapshot %d)", ErrNotLanded, cause, id)
		}
		if absent >= 2 {
			return fmt.Errorf("%w: the catalog answered %v, and the table, read back twice %s apart, does not hold its snapshot %d", ErrNotLanded, cause, wait/2, id)
		}
	}
	if last == cause {
		return fmt.Errorf("%w: %w (interrupted before the table showed whether it landed)", ErrCommitUnknown, cause)
	}
	return fmt.Errorf("%w: %w; reading the table back to find out failed: %w", ErrCommitUnknown, cause, last)
}

// Each publish tags, in its commit, the snapshot it replaces
// (lakeswap-before-<run id>: the run's rollback target) and the snapshot it
// makes (lakeswap-run-<run id>: the run's record), so that snapshot expiry
// by any engine keeps both for the retention, and a rollback of the run
// stays possible while main moves on.
const (
	RollbackTagPrefix = "lakeswap-before-"
	RunTagPrefix      = "lakeswap-run-"
)

// DefaultRollbackRetention is how long a run's tags keep its snapshots
// from expiry when the publisher does not say.
const DefaultRollbackRetention = 30 * 24 * time.Hour

// RollbackTag names the tag that keeps run's rollback target.
func RollbackTag(runID string) string { return RollbackTagPrefix + runID }

// RunTag names the tag that keeps run's own snapshot.
func RunTag(runID string) string { return RunTagPrefix + runID }

// rollbackTag tags the snapshot a run replaces. Iceberg measures a tag's
// age from its snapshot's time, so the tag of an old snapshot is given
// that age now plus the retention.
func (p *Publisher) rollbackTag(runID string, base *table.Snapshot) table.Update {
	age := max(time.Since(time.UnixMilli(base.TimestampMs)), 0)
	return table.NewSetSnapshotRefUpdate(RollbackTag(runID), base.SnapshotID, table.TagRef, (age + p.retention()).Milliseconds(), 0, 0)
}

// runTag tags the snapshot a run makes, with the tag name.
func (p *Publisher) runTag(name string, id int64) table.Update {
	return table.NewSetSnapshotRefUpdate(name, id, table.TagRef, p.retention().Milliseconds(), 0, 0)
}

// runTagName names the tag of a run's snapshot: one for each batch of a
// run committed in batches (lakeswap-run-<run id>-batch-<k>), so that
// expiry keeps every batch, and with them the run's way back.
func runTagName(plan *Plan) string {
	if k, _, ok := strings.Cut(plan.BatchOf, "/"); ok {
		return RunTag(plan.RunID) + "-batch-" + k
	}
	return RunTag(plan.RunID)
}

func (p *Publisher) retention() time.Duration {
	if p.RollbackRetention <= 0 {
		return DefaultRollbackRetention
	}
	return p.RollbackRetention
}
