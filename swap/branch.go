package swap

// A plan's audit branch: the staged snapshot committed to a branch of the
// table, built on the plan's base, which any engine can query before a
// person approves the plan (write-audit-publish). Apply moves main to it
// when main is still at the base; otherwise the plan is committed on
// main's head as any plan is, and the branch goes.
import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// PlanBranchPrefix begins the name of every plan's audit branch.
const PlanBranchPrefix = snapshot.PlanBranchPrefix

// branchPlan commits the staged plan's snapshot to a branch of its own,
// on the plan's base, and records the branch in the plan. Main is never
// touched. A branch that cannot be made leaves the plan as it is, without
// one, and says why in its warnings: the plan still holds.
func (p *Publisher) branchPlan(ctx context.Context, plan *run) {
	if err := p.commitBranch(ctx, plan); err != nil {
		p.log().Warn("no audit branch for the plan", "run", plan.RunID, "err", err)
		plan.Branch, plan.BranchSnapshotID, plan.BranchMetadata, plan.onBranch = "", 0, "", ""
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("the plan has no audit branch to query (%v); its rows are read with lakeswap show", err))
	}
}

func (p *Publisher) commitBranch(ctx context.Context, plan *run) error {
	ident := plan.ident()
	now, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	// The snapshot is built on the base, whatever main holds now: main is
	// set back to the base in this process's copy of the metadata only,
	// which the table's sequence numbers and ids come from.
	b, err := table.MetadataBuilderFromBase(now.Metadata(), now.MetadataLocation())
	if err != nil {
		return err
	}
	if plan.BaseSnapshotID != nil {
		err = b.SetSnapshotRef(table.MainBranch, *plan.BaseSnapshotID, table.BranchRef)
	} else if now.CurrentSnapshot() != nil {
		err = b.RemoveSnapshotRef(table.MainBranch)
	}
	if err != nil {
		return err
	}
	meta, err := b.Build()
	if err != nil {
		return err
	}
	atBase := table.New(ident, meta, now.MetadataLocation(), now.FS, p.Catalog)
	name := snapshot.PlanBranch(plan.RunID, plan.Attempt)
	plan.onBranch = name
	defer func() { plan.onBranch = "" }()
	pc, err := p.prepareCommit(ctx, atBase, plan)
	if err != nil {
		return err
	}
	tc, err := pc.tx.TableCommit()
	if err != nil {
		pc.removeWritten(ctx, p)
		return err
	}
	var adds []table.Update
	for _, u := range tc.Updates {
		if u.Action() == table.UpdateAddSnapshot {
			adds = append(adds, u)
		}
	}
	adds = append(adds, table.NewSetSnapshotRefUpdate(name, pc.id, table.BranchRef, 0, 0, 0))
	tc = table.TableCommit{Identifier: ident, Updates: adds, Requirements: []table.Requirement{
		table.AssertTableUUID(now.Metadata().TableUUID()), table.AssertRefSnapshotID(name, nil)}}
	change := &snapshot.Change{Table: now, Commit: tc, Written: pc.written, ID: pc.id, Landed: snapshot.OnBranch(name, pc.id)}
	if err := snapshot.Send(ctx, p.Catalog, p.log(), plan.RunID, []*snapshot.Change{change}); err != nil {
		return err
	}
	plan.Branch, plan.BranchSnapshotID = name, pc.id
	if after, err := p.Catalog.LoadTable(ctx, ident); err == nil {
		plan.BranchMetadata = after.MetadataLocation()
	}
	return nil
}

// ident is the plan's table.
func (p *Plan) ident() table.Identifier {
	id, _ := catalog.ParseIdent(p.Table)
	return id
}

// branchHeld refuses, at apply, a plan whose audit branch someone else
// changed: committed to, or pointed elsewhere. What the branch holds then
// is not what was approved. A plan whose run the table records
// (applied already) is judged as a rerun instead.
func branchHeld(meta table.Metadata, plan *run) error {
	if plan.Branch == "" || plan.prior != nil {
		return nil
	}
	if !strings.HasPrefix(plan.Branch, PlanBranchPrefix) {
		return &outcome.RefusedError{Op: "apply", Table: plan.Table, Findings: []verify.Finding{{Kind: verify.KindCheck,
			Message: fmt.Sprintf("the plan names %q as its audit branch, which is not a name lakeswap gives a plan's branch (%s...): the plan was edited; plan again", plan.Branch, PlanBranchPrefix)}}}
	}
	// A branch removed (an apply refused before, gc, a person) takes
	// nothing with it that the plan relies on: the plan is committed on
	// main as one without a branch is, its staged files checked as ever.
	at, ok := snapshot.BranchAt(meta, plan.Branch)
	if !ok || at == plan.BranchSnapshotID {
		return nil
	}
	why := fmt.Sprintf("the plan's audit branch %s was changed after the plan: it holds snapshot %s, not the plan's snapshot %d; what the branch holds is not what was approved, and whoever committed to it may rely on it", plan.Branch, describeSnapshot(meta, at), plan.BranchSnapshotID)
	return &outcome.RefusedError{Op: "apply", Table: plan.Table, Findings: []verify.Finding{{Kind: verify.KindCheck, Message: why + "; nothing was committed; plan the run again"}}}
}

// describeSnapshot names a snapshot with what made it and when.
func describeSnapshot(meta table.Metadata, id int64) string {
	s := meta.SnapshotByID(id)
	if s == nil {
		return fmt.Sprintf("%d", id)
	}
	what := fmt.Sprintf("%d (made at %s", id, time.UnixMilli(s.TimestampMs).UTC().Format(time.RFC3339))
	if s.Summary != nil {
		what += " by " + string(s.Summary.Operation)
		for _, k := range []string{"engine-name", "app-id", runrecord.PropRunID} {
			if v := s.Summary.Properties[k]; v != "" {
				what += ", " + k + " " + v
			}
		}
	}
	return what + ")"
}

// fastForwards says whether the plan's apply can move main to the
// branch's snapshot as it is: a plan of one table committed whole, main
// at its base, the branch at its snapshot.
func fastForwards(tbl *table.Table, plan *run) bool {
	if plan.Branch == "" || plan.BranchSnapshotID == 0 || len(plan.Release) > 0 || plan.BatchOf != "" || !plan.whole {
		return false
	}
	if movedFrom(tbl.CurrentSnapshot(), plan.BaseSnapshotID) {
		return false
	}
	at, ok := snapshot.BranchAt(tbl.Metadata(), plan.Branch)
	return ok && at == plan.BranchSnapshotID && snapshot.Staged(tbl.Metadata(), plan.Branch, at, plan.RunID)
}

// fastForward is the commit that moves main to the branch's snapshot, as
// it was staged and queried, and removes the branch, pinned to main at
// the base, the branch at its snapshot, the schema and the spec; it tags
// the snapshot main leaves and the run's, as any publish does.
func (p *Publisher) fastForward(tbl *table.Table, plan *run) *snapshot.Change {
	meta, id := tbl.Metadata(), plan.BranchSnapshotID
	reqs := []table.Requirement{
		table.AssertTableUUID(meta.TableUUID()),
		table.AssertRefSnapshotID(table.MainBranch, plan.BaseSnapshotID),
		table.AssertRefSnapshotID(plan.Branch, &id),
		table.AssertCurrentSchemaID(meta.CurrentSchema().ID),
		table.AssertDefaultSpecID(meta.DefaultPartitionSpec()),
	}
	ups := []table.Update{table.NewSetSnapshotRefUpdate(table.MainBranch, id, table.BranchRef, 0, 0, 0), table.NewRemoveSnapshotRefUpdate(plan.Branch)}
	if head := tbl.CurrentSnapshot(); head != nil && meta.SnapshotByName(RollbackTag(plan.RunID)) == nil {
		ups = append(ups, snapshot.TagRollbackTarget(plan.RunID, head, p.RollbackRetention))
	}
	ups = append(ups, snapshot.TagStaged(runTagName(plan), meta.SnapshotByID(id), p.RollbackRetention))
	if _, ok := meta.Properties()[table.DefaultNameMappingKey]; plan.NameMapping && !ok {
		if mapping, err := json.Marshal(meta.CurrentSchema().NameMapping()); err == nil {
			ups = append(ups, table.NewSetPropertiesUpdate(iceberg.Properties{table.DefaultNameMappingKey: string(mapping)}))
		}
	}
	return &snapshot.Change{Table: tbl, Commit: table.TableCommit{Identifier: tbl.Identifier(), Requirements: reqs, Updates: ups}, ID: id, Landed: snapshot.Holds(id), Shared: true}
}

// dropBranch removes a plan's audit branch and its snapshot, unless main
// holds it (applied) or someone changed it, and says what it did.
func (p *Publisher) dropBranch(ctx context.Context, plan *Plan) string {
	if plan.Branch == "" {
		return ""
	}
	ctx = context.WithoutCancel(ctx)
	tbl, err := p.Catalog.LoadTable(ctx, plan.ident())
	if err != nil {
		return fmt.Sprintf("the plan's branch %s was left: %v", plan.Branch, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Sprintf("the plan's branch %s was left: %v", plan.Branch, err)
	}
	wfs, err := p.stagingIO(ctx, fsys)
	if err != nil {
		return fmt.Sprintf("the plan's branch %s was left: %v", plan.Branch, err)
	}
	dropped, err := snapshot.DropBranch(ctx, p.Catalog, p.log(), tbl, wfs, plan.Branch, plan.BranchSnapshotID)
	switch {
	case err != nil:
		return fmt.Sprintf("the plan's branch %s was left: %v", plan.Branch, err)
	case dropped:
		return "removed the plan's branch " + plan.Branch
	}
	if at, ok := snapshot.BranchAt(tbl.Metadata(), plan.Branch); ok && at != plan.BranchSnapshotID {
		return fmt.Sprintf("the plan's branch %s was left as it is: someone committed snapshot %d to it", plan.Branch, at)
	}
	return ""
}
