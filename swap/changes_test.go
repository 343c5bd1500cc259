package swap_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
)

// A plan compares a partition whose keys pass the memory it may hold, at
// the grain, all the same: the keys wait sorted on disk in the spill
// folder, every change is counted, the keys named are the first in grain
// order with their values, the folder is left empty and the table is
// untouched.
func TestPlanComparesPastMemory(t *testing.T) {
	e := newEnv(t)
	const n = 80_000
	row := func(i int, cents int64) retail.DailyOrder {
		return retail.DailyOrder{OrderDate: "2026-01-01", Channel: fmt.Sprintf("c%06d", i), OrderCount: 1, AmountCents: cents}
	}
	var old, new []retail.DailyOrder
	for i := range n {
		old = append(old, row(i, int64(i)))
		switch i % 100 {
		case 7: // removed
		case 8: // changed
			new = append(new, row(i, int64(i)+100))
		default:
			new = append(new, row(i, int64(i)))
		}
	}
	for i := range n / 100 {
		new = append(new, row(n+i, 5)) // added
	}
	shuffle := rand.New(rand.NewPCG(5, 6))
	shuffle.Shuffle(len(old), func(i, j int) { old[i], old[j] = old[j], old[i] })
	shuffle.Shuffle(len(new), func(i, j int) { new[i], new[j] = new[j], new[i] })
	e.mustPublish(old, "2026-01-01")
	before := e.table().Metadata().CurrentSnapshot().SnapshotID

	spill := t.TempDir()
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: []string{"2026-01-01"}, Source: retail.NewSource(new),
		RunID: "compare-past-memory", Changes: true, ChangesMemory: 1, SpillDir: spill})
	if err != nil {
		t.Fatal(err)
	}
	ch := plan.Partitions[0].Changes
	if ch == nil || ch.Skipped != "" {
		t.Fatalf("partition not compared: %+v", ch)
	}
	if ch.Added != n/100 || ch.Removed != n/100 || ch.Changed != n/100 {
		t.Fatalf("added %d, removed %d, changed %d; want %d of each", ch.Added, ch.Removed, ch.Changed, n/100)
	}
	if want := []string{"channel=c000008", "channel=c000108", "channel=c000208"}; !slices.Equal(ch.ChangedKeys, want) {
		t.Errorf("changed keys %v, want %v", ch.ChangedKeys, want)
	}
	if want := []string{"channel=c080000", "channel=c080001", "channel=c080002"}; !slices.Equal(ch.AddedKeys, want) {
		t.Errorf("added keys %v, want %v", ch.AddedKeys, want)
	}
	last := ch.Values[len(ch.Values)-1]
	if got := fmt.Sprint(last.Key, " ", last.Columns); got != "channel=c000208 [{amount_cents 208 308}]" {
		t.Errorf("last key named: %s", got)
	}
	if left, _ := os.ReadDir(spill); len(left) != 0 {
		t.Errorf("the comparison left %d entries in the spill folder", len(left))
	}
	if after := e.table().Metadata().CurrentSnapshot().SnapshotID; after != before {
		t.Errorf("planning moved main from %d to %d", before, after)
	}

	// A spill folder that cannot be made is an error naming it, and the
	// table stays as it was.
	blocked := t.TempDir() + "/a-file"
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: []string{"2026-01-01"}, Source: retail.NewSource(new),
		RunID: "compare-blocked", Changes: true, ChangesMemory: 1, SpillDir: blocked})
	if err == nil || !strings.Contains(err.Error(), "a-file") || !strings.Contains(err.Error(), "2026-01-01") {
		t.Fatalf("got %v, want an error naming the spill folder and the partition", err)

	}
	if after := e.table().Metadata().CurrentSnapshot().SnapshotID; after != before {
		t.Errorf("a failed plan moved main from %d to %d", before, after)
	}
}
