package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/swap"
)

// orderCols are the retail table's columns, as view reads them.
var orderCols = []string{"order_date", "channel", "order_count", "amount_cents"}

// viewAt is what iceberg-go's scan of the table reads at a snapshot, row
// by row as "key=value" text of the columns named, sorted: an
// independent reader pointed at a branch's snapshot.
func viewAt(t *testing.T, s *site, id int64, cols ...string) []string {
	t.Helper()
	scan := s.table("daily_orders").Scan(table.WithSnapshotID(id), table.WithSelectedFields(cols...))
	return scanned(t, context.Background(), scan, cols)
}

// mainView is what a reader of main reads of the retail table.
func mainView(t *testing.T, s *site) []string {
	t.Helper()
	head := s.table("daily_orders").CurrentSnapshot()
	if head == nil {
		return nil
	}
	return viewAt(t, s, head.SnapshotID, orderCols...)
}

// planOf reads a plan file.
func planOf(t *testing.T, file string) *swap.PlanFile {
	t.Helper()
	pf, err := swap.ReadPlan(file)
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// TestAuditBranch, on every site: plan commits the staged snapshot to a
// branch built on the base, main untouched; an independent reader at the
// branch's snapshot reads exactly the rows a publish of the same input
// gives; plans lists it; apply makes main's snapshot the branch's, the
// branch gone. A plan discarded leaves no ref and the table's files as
// they were; a plan whose table moved elsewhere is committed on the new
// head and its branch goes; a branch someone committed to is refused at
// apply, naming the change; gc removes a branch past the plan retention.
func TestAuditBranch(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		in := batch2Input(t)
		twin := newSite(t, s.name)
		twin.createDaily()
		twin.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, in)

		s.createDaily()
		before, content := s.mainState("daily_orders"), s.content()
		file := filepath.Join(t.TempDir(), "p.json")
		out := s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", file, in)
		pf := planOf(t, file)
		branch, id := pf.Plan.Branch, pf.Plan.BranchSnapshotID
		if !strings.HasPrefix(branch, swap.PlanBranchPrefix) || id == 0 {
			t.Fatalf("the plan records no audit branch: %q %d", branch, id)
		}
		if s.mainState("daily_orders") != before {
			t.Error("plan moved main or a ref but its branch")
		}
		for _, want := range []string{"VERSION AS OF '" + branch + "'", "snapshot_id=" + itoa(id), "snapshot_from_id => " + itoa(id)} {
			if !strings.Contains(out, want) {
				t.Errorf("plan does not print %q:\n%s", want, out)
			}
		}
		if shown := s.must("show", file); !strings.Contains(shown, "VERSION AS OF '"+branch+"'") {
			t.Errorf("show PLAN does not print the query of the branch:\n%s", shown)
		}
		if got, want := viewAt(t, s, id, orderCols...), mainView(t, twin); !slices.Equal(got, want) {
			t.Errorf("the branch's snapshot reads\n%v\na publish of the same input\n%v", got, want)
		}
		// The run is staged, not published: show --run points at the plan.
		if code, _, stderr := s.cli("show", "--table", "retail.daily_orders", "--run", pf.Plan.RunID); code == 0 ||
			!strings.Contains(stderr, "staged on the audit branch "+branch) || !strings.Contains(stderr, "lakeswap plans --table retail.daily_orders") {
			t.Errorf("show --run of a run only staged: exit %d\n%s", code, stderr)
		}
		var listed plansResult
		if err := json.Unmarshal([]byte(s.must("-o", "json", "plans", "--table", "retail.daily_orders")), &listed); err != nil ||
			len(listed.Plans) != 1 || listed.Plans[0].PlanID != pf.PlanID || listed.Plans[0].Branch != branch {
			t.Errorf("plans: %v %+v", err, listed)
		}

		s.must("apply", file, "--approve", pf.PlanID)
		meta := s.table("daily_orders").Metadata()
		if head := meta.CurrentSnapshot(); head == nil || head.SnapshotID != id {
			t.Errorf("after apply main is at %v, not the branch's snapshot %d", head, id)
		}
		if meta.SnapshotByName(branch) != nil {
			t.Error("apply left the branch")
		}
		if got, want := mainView(t, s), mainView(t, twin); !slices.Equal(got, want) {
			t.Errorf("after apply main reads\n%v\nwant\n%v", got, want)
		}
		if s.must("plans", "--table", "retail.daily_orders") != "no plan is waiting for approval\n" {
			t.Error("plans lists an applied plan")
		}

		// Discarded: the ref and what its snapshot wrote go.
		before, content = s.mainState("daily_orders"), s.content()
		file = filepath.Join(t.TempDir(), "discarded.json")
		s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", file, newHomeInput(t))
		pf = planOf(t, file)
		if s.table("daily_orders").Metadata().SnapshotByName(pf.Plan.Branch) == nil {
			t.Fatal("the second plan has no branch")
		}
		if out := s.must("discard", file); !strings.Contains(out, "removed the plan's branch "+pf.Plan.Branch) {
			t.Errorf("discard: %s", out)
		}
		meta = s.table("daily_orders").Metadata()
		if meta.SnapshotByName(pf.Plan.Branch) != nil || meta.SnapshotByID(pf.Plan.BranchSnapshotID) != nil {
			t.Error("discard left the branch or its snapshot")
		}
		if s.mainState("daily_orders") != before || !slices.Equal(s.content(), content) {
			t.Errorf("after discard the table's files differ:\n%v\nwant\n%v", s.content(), content)
		}

		// Main moved since the plan, elsewhere: committed on the new head,
		// the branch gone with its snapshot.
		file = filepath.Join(t.TempDir(), "moved.json")
		day := func(d string) string {
			return write(t, t.TempDir(), "day.ndjson", `{"order_date":"`+d+`","channel":"web","order_count":2,"amount_cents":20000}`+"\n")
		}
		s.must("plan", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", "--out", file, day("2026-01-01"))
		pf = planOf(t, file)
		s.must("publish", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-02", day("2026-01-02"))
		s.must("apply", file, "--approve", pf.PlanID)
		meta = s.table("daily_orders").Metadata()
		if head := meta.CurrentSnapshot(); head.SnapshotID == pf.Plan.BranchSnapshotID || meta.SnapshotByID(pf.Plan.BranchSnapshotID) != nil {
			t.Error("an apply on a moved main kept the branch's snapshot")
		}
		if meta.SnapshotByName(pf.Plan.Branch) != nil {
			t.Error("an apply on a moved main left the branch")
		}

		// Someone commits to the branch: apply refuses, naming it.
		file = filepath.Join(t.TempDir(), "changed.json")
		s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", file, in)
		pf = planOf(t, file)
		ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
		if err != nil {
			t.Fatal(err)
		}
		head := s.table("daily_orders").CurrentSnapshot().SnapshotID
		if _, _, err := cat.CommitTable(ctx, table.Identifier{"retail", "daily_orders"}, nil,
			[]table.Update{table.NewSetSnapshotRefUpdate(pf.Plan.Branch, head, table.BranchRef, 0, 0, 0)}); err != nil {
			t.Fatal(err)
		}
		cat.Close()
		before = s.mainState("daily_orders")
		code, _, errs := s.cli("apply", file, "--approve", pf.PlanID)
		if code != exitRefused || !strings.Contains(errs, pf.Plan.Branch+" was changed") || !strings.Contains(errs, itoa(head)) {
			t.Errorf("apply of a plan whose branch was changed: exit %d, want %d naming the branch and snapshot %d: %s", code, exitRefused, head, errs)
		}
		if s.mainState("daily_orders") != before {
			t.Error("a refused apply moved main")
		}
		if at := s.table("daily_orders").Metadata().SnapshotByName(pf.Plan.Branch); at == nil || at.SnapshotID != head {
			t.Error("a refused apply removed a branch someone committed to")
		}

		// gc removes a plan's branch past the plan retention.
		file = filepath.Join(t.TempDir(), "old.json")
		s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", file, newHomeInput(t))
		pf = planOf(t, file)
		cmd := s.command("gc", "--table", "retail.daily_orders", "--plan-retention", "1h", "--yes")
		cmd.Env = append(cmd.Env, envClock+"=2h")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), pf.Plan.Branch) {
			t.Errorf("gc: %v: %s", err, out)
		}
		if s.table("daily_orders").Metadata().SnapshotByName(pf.Plan.Branch) != nil {
			t.Error("gc left a plan's branch past the plan retention")
		}

		// A plan edited to name main as its branch, its id made to match,
		// is refused, main kept.
		file = filepath.Join(t.TempDir(), "edited.json")
		s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", file, in)
		pf = planOf(t, file)
		pf.Plan.Branch, pf.Plan.BranchSnapshotID = "main", s.table("daily_orders").CurrentSnapshot().SnapshotID
		pf.PlanID = swap.PlanID(pf.Plan)
		raw, _ := json.Marshal(pf)
		edited := write(t, t.TempDir(), "edited.json", string(raw))
		before = s.mainState("daily_orders")
		if code, _, errs := s.cli("apply", edited, "--approve", pf.PlanID); code != exitRefused || !strings.Contains(errs, "not a name lakeswap gives") {
			t.Errorf("apply of a plan edited to name main as its branch: exit %d: %s", code, errs)
		}
		if s.mainState("daily_orders") != before || s.table("daily_orders").CurrentSnapshot() == nil {
			t.Error("apply of a plan naming main as its branch moved main")
		}

		// --no-branch: the table's metadata as it was.
		meta0 := s.metadata("daily_orders")
		file = filepath.Join(t.TempDir(), "nobranch.json")
		s.must("plan", "--no-branch", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", file, newHomeInput(t))
		if pf = planOf(t, file); pf.Plan.Branch != "" || s.metadata("daily_orders") != meta0 {
			t.Errorf("plan --no-branch made branch %q or changed the table", pf.Plan.Branch)
		}
	})
}
