package swap

import (
	"context"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/swap/internal/hold"
)

// notePending writes in the plan's hold what the list of plans waiting
// for approval shows of it (gc's Pending): its id, who made it, its
// partitions and figures, its branch and file. The hold stays until the
// plan is applied or discarded, or gc's plan retention passes.
func (p *Publisher) notePending(ctx context.Context, tbl *table.Table, plan *run, req Request) {
	note := &hold.PlanNote{PlanID: PlanID(plan.Plan), Table: plan.Table, File: req.PlanFile, PlannedBy: req.PlannedBy,
		Rows: plan.Fingerprint.Rows, BaseRows: plan.BaseFingerprint.Rows, Sums: plan.Fingerprint.Sums, BaseSums: plan.BaseFingerprint.Sums, Scales: plan.Contract.Scales,
		Branch: plan.Branch, BranchID: plan.BranchSnapshotID}
	for _, pp := range plan.Partitions {
		note.Partitions = append(note.Partitions, pp.Key)
	}
	now := time.Now().UTC()
	rec := hold.Record{RunID: plan.RunID, Attempt: plan.Attempt, Kind: "plan", Created: now, Refreshed: now, Plan: note}
	if err := hold.Note(ctx, p.holds(tbl), p.log(), hold.Location(tbl.Metadata(), plan.RunID, plan.Attempt), rec); err != nil {
		p.log().Warn("the plan is not in the list of plans waiting", "run", plan.RunID, "err", err)
	}
}
