package swap

import (
	"testing"

	"github.com/lakeswap/lakeswap/parquetio"
)

// TestKeptHashesStayWithinTheKeys: the grain hashes kept across a run's
// partitions stop at the keys it may hold; past them no partition keeps
// any, and the checks read the staged files (kept says so). Within them,
// a hash kept twice, in two partitions or in one, sends the check to the
// files too, to name it.
func TestKeptHashesStayWithinTheKeys(t *testing.T) {
	stagedPlan := func(hashes ...[]uint64) *run {
		plan := &run{Plan: &Plan{}}
		for _, h := range hashes {
			plan.Partitions = append(plan.Partitions, PartitionPlan{NewFiles: make([]parquetio.File, 1), grainHashes: h})
		}
		return plan
	}
	plan := stagedPlan([]uint64{1, 2}, []uint64{3, 4})
	b := &keptBudget{max: 3}
	for i := range plan.Partitions {
		b.take(&plan.Partitions[i])
	}
	b.settle(plan)
	if _, ok := kept(plan); ok {
		t.Errorf("4 hashes kept under a bound of 3: %v, %v", plan.Partitions[0].grainHashes, plan.Partitions[1].grainHashes)
	}
	plan = stagedPlan([]uint64{1, 2}, []uint64{3, 4})
	b = &keptBudget{max: 4}
	for i := range plan.Partitions {
		b.take(&plan.Partitions[i])
	}
	b.settle(plan)
	if n, ok := kept(plan); !ok || n != 4 || !keptDistinct(plan) {
		t.Errorf("4 distinct hashes under a bound of 4: kept %d, %v; distinct %v", n, ok, keptDistinct(plan))
	}
	if keptDistinct(stagedPlan([]uint64{1, 2}, []uint64{2, 5})) {
		t.Error("a hash kept in two partitions was taken for distinct keys")
	}
	if _, ok := keptKeys(stagedPlan([]uint64{1, 2}, []uint64{2, 5})); ok {
		t.Error("keptKeys answered for a hash kept in two partitions")
	}
	if _, ok := keptKeys(stagedPlan([]uint64{1, 1}, []uint64{2})); ok {
		t.Error("keptKeys answered for a hash kept twice in one partition")
	}
}
