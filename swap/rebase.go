package swap

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
)

// A backfill of a year runs beside the table's daily jobs, so main moving
// since the plan is the rule, not the exception. As Iceberg's own
// ReplacePartitions validation does, lakeswap judges a moved main by
// partition: when no commit since the plan's base added or removed a data
// or delete file in a planned partition, and the table's schema, partition
// spec and contract are the plan's, the plan's replace means exactly what it
// meant at the base, and it is committed on the new head instead, still as
// one compare-and-swap on that head. iceberg-go's own validation of a file
// replace is table-wide (any concurrent append fails it), hence this one.

// plannedValues maps a plan's partition values to their keys.
func plannedValues(plan *run) map[string]string {
	out := make(map[string]string, len(plan.Partitions))
	for _, pp := range plan.Partitions {
		out[pp.Value] = pp.Key
	}
	return out
}

// rebase checks that plan can be committed on tbl's main as it is now,
// which has moved since the plan's base, and points the plan's replace at
// the files main holds there: the same files, since no commit touched
// them. It says why not, or "".
func rebase(ctx context.Context, tbl *table.Table, plan *run) (string, error) {
	meta := tbl.Metadata()
	c, err := contract.Of(meta)
	if err != nil {
		return "", fmt.Errorf("table %s: %w", plan.Table, err)
	}
	if got := c.Summary(); !reflect.DeepEqual(got, plan.Contract) {
		return fmt.Sprintf("the table's schema, partition spec or contract changed since the plan (%+v, planned under %+v)", got, plan.Contract), nil
	}
	if why := staleArrivals(meta, plan); why != "" {
		return why, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return "", err
	}
	why, added, err := snapshot.MovedSince(ctx, fsys, meta, plan.BaseSnapshotID, c, plannedValues(plan))
	if why != "" || err != nil {
		return why, err
	}
	// What the stage judged against the rest of the table is judged again
	// against what those commits added there: a record they brought into
	// another partition that this run stages too would be counted twice.
	// Their files are read as readers read them now, deletes applied (a
	// record added and deleted since is not there).
	all, err := snapshot.Files(ctx, fsys, meta.CurrentSnapshot(), c)
	if err != nil {
		return "", err
	}
	live, read := snapshot.StillLive(added, all), fsys
	if len(live) > 0 && len(c.Grain) > 0 && !c.Partition.InGrain(c.Grain) {
		if read, err = snapshot.WithDeletes(ctx, tbl, fsys, meta.CurrentSnapshot(), all); err != nil {
			return "", err
		}
	}
	if why, err := movedInto(ctx, read, c, plan, live); why != "" || err != nil {
		if why != "" {
			why += "; stage the run again declaring both partitions"
		}
		return why, err
	}
	applies := len(c.Grain) > 0 && !c.Partition.InGrain(c.Grain)
	if applies && len(added) > 0 && !slices.ContainsFunc(plan.Checks, func(c Check) bool { return c.At == "commit" }) {
		plan.Checks = append(plan.Checks, Check{Name: GuardMoved.Name, Result: Passed, At: "commit"})
	}
	old := map[string][]iceberg.DataFile{}
	for _, pp := range plan.Partitions {
		if !slices.Equal(snapshot.Paths(all[pp.Value]), pp.oldPaths()) {
			// No commit since the base touched it, so this cannot be; say
			// so rather than replace what the plan did not see.
			return fmt.Sprintf("partition %s holds other files than the plan replaces", pp.Key), nil
		}
		old[pp.Value] = all[pp.Value]
	}
	// The files of an earlier spec it rewrites are still there: no commit
	// writes under an earlier spec, but one may have rewritten them.
	if shares := plan.shares(); len(shares) > 0 {
		earlier, err := snapshot.Earlier(ctx, fsys, meta.CurrentSnapshot(), c)
		if err != nil {
			return "", err
		}
		plan.rewritten = map[string]iceberg.DataFile{}
		for _, df := range earlier {
			if slices.Contains(shares, df.FilePath()) {
				plan.rewritten[df.FilePath()] = df
			}
		}
		for _, path := range shares {
			if _, ok := plan.rewritten[path]; !ok {
				return fmt.Sprintf("%s, written under an earlier partition spec, which the plan rewrites, is no longer among the table's files", path), nil
			}
		}
	}
	plan.oldFiles, plan.contract = old, c
	return "", nil
}
