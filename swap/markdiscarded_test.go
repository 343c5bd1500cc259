package swap_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lakeswap/lakeswap/swap"
)

// TestMarkDiscarded: marking a plan discarded keeps its id and content,
// its permissions, and a link to it, and marks the plan where it lies.
func TestMarkDiscarded(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fix.plan")
	pf, err := swap.WritePlan(file, &swap.Plan{RunID: "fix-1", Table: "shop.daily_sales"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o444); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.plan")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	if err := swap.MarkDiscarded(link, at); err != nil {
		t.Fatal(err)
	}
	got, err := swap.ReadPlan(file)
	if err != nil || got.DiscardedAt == nil || !got.DiscardedAt.Equal(at) || got.PlanID != pf.PlanID || got.Unedited("apply") != nil || got.NotDiscarded("apply") == nil {
		t.Fatalf("the marked plan: %v, marked %v, id %s (was %s), edited %v", err, got.DiscardedAt, got.PlanID, pf.PlanID, got.Unedited("apply"))
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to the plan is no longer a link: %v %v", st.Mode(), err)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o444 {
		t.Errorf("the plan's permissions: %v, want 0444 (%v)", st.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("marking left %d files in the plan's folder, want the plan and its link", len(entries))
	}
}
