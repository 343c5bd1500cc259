package swap

import (
	"context"
	"errors"
	"fmt"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// settle finds out whether a publish's commit id, answered with cause,
// landed (lookFor), and says what to do if it did not or if that is not
// known.
func (p *Publisher) settle(ctx context.Context, tbl *table.Table, plan *Plan, id int64, cause error) (int64, error) {
	err := snapshot.LookFor(ctx, p.Catalog, p.log(), tbl, plan.RunID, id, cause, func(m table.Metadata) bool { return m.SnapshotByID(id) != nil })
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

// runTagName names the tag of a run's snapshot: one for each batch of a
// run committed in batches (lakeswap-run-<run id>-batch-<k>), so that
// expiry keeps every batch, and with them the run's way back.
func runTagName(plan *Plan) string {
	if k, _, ok := strings.Cut(plan.BatchOf, "/"); ok {
		return RunTag(plan.RunID) + "-batch-" + k
	}
	return RunTag(plan.RunID)
}
