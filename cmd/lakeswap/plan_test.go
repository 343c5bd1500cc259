package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
)

// batch2Input writes the retail fixture's corrected batch as NDJSON.
func batch2Input(t *testing.T) string {
	t.Helper()
	rows, err := retail.Daily(retail.AfterBatch2)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "batch2.ndjson")
	if err := retail.WriteNDJSON(in, rows); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestPlanThenApply, on every site: plan commits nothing and writes a plan
// with its id and what it changes at the grain; apply refuses it without
// approval, with a wrong id, once edited by hand, or once a staged file is
// altered in place or gone, each time leaving the table and its files as
// they were; approved, it gives the table, fingerprint and history a
// publish of the same input gives.
func TestPlanThenApply(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		in := batch2Input(t)
		twin := newSite(t, s.name)
		twin.createDaily()
		twin.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, in)
		_, published, _ := twin.cli("-o", "json", "history", "--table", "retail.daily_orders")

		s.createDaily()
		before, files := s.mainState("daily_orders"), s.data()
		unchanged := func(what string) {
			t.Helper()
			if s.mainState("daily_orders") != before || !slices.Equal(s.data(), files) {
				t.Errorf("%s changed the table or its files", what)
			}
		}
		planPath := filepath.Join(t.TempDir(), "plan.json")
		code, out, errs := s.cli("-o", "json", "plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", planPath, in)
		if code != 0 {
			t.Fatalf("plan: exit %d: %s%s", code, out, errs)
		}
		var planned struct {
			PlanID string `json:"plan_id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(out), &planned); err != nil || planned.Status != "planned" || len(planned.PlanID) != 64 {
			t.Fatalf("plan -o json: %v\n%s", err, out)
		}
		if s.mainState("daily_orders") != before {
			t.Fatal("plan changed main")
		}
		if staged := s.data(); len(staged) <= len(files) {
			t.Fatal("plan staged no file")
		}
		files = s.data()
		if code, _, errs := s.cli("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", planPath, in); code != exitUsage || !strings.Contains(errs, "never overwritten") {
			t.Errorf("plan over an existing plan file: exit %d: %s", code, errs)
		}
		if !slices.Equal(s.data(), files) {
			t.Error("a plan refused for its --out staged files")
		}
		code, text, _ := s.cli("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", filepath.Join(t.TempDir(), "p2.json"), in)
		for _, want := range []string{"this will replace 2 partitions of retail.daily_orders", "27,500 -> 15,500 (-12,000)",
			"+0 -0 ~1", "+1 -0 ~1", "order_date=2026-01-02: added channel=store | changed channel=web"} {
			if code != 0 || !strings.Contains(text, want) {
				t.Errorf("plan summary: exit %d, want %q:\n%s", code, want, text)
			}
		}
		files = s.data() // with both plans' staged files

		if code, _, errs := s.cli("apply", planPath); code != exitUsage || !strings.Contains(errs, "--approve") {
			t.Errorf("apply without approval: exit %d: %s", code, errs)
		}
		unchanged("apply without approval")
		if code, _, errs := s.cli("apply", planPath, "--approve", "000000000000"); code != exitRefused {
			t.Errorf("apply with a wrong id: exit %d: %s", code, errs)
		}
		unchanged("apply with a wrong id")
		raw := mustRead(t, planPath)
		var pf map[string]any
		if err := json.Unmarshal(raw, &pf); err != nil {
			t.Fatal(err)
		}
		pf["plan"].(map[string]any)["source"] = "files:something-else.csv"
		hand, _ := json.Marshal(pf)
		edited := write(t, t.TempDir(), "edited.json", string(hand))
		if code, _, errs := s.cli("apply", edited, "--approve", planned.PlanID); code != exitRefused || !strings.Contains(errs, "edited") {
			t.Errorf("apply of a plan edited by hand: exit %d: %s", code, errs)
		}
		unchanged("apply of an edited plan")

		code, out, errs = s.cli("-o", "json", "apply", planPath, "--approve", planned.PlanID[:12], "--recheck")
		if code != 0 {
			t.Fatalf("apply: exit %d: %s%s", code, out, errs)
		}
		var applied struct {
			PlanID string `json:"plan_id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(out), &applied); err != nil {
			t.Fatal(err)
		}
		if applied.Status != "published" || applied.PlanID != planned.PlanID {
			t.Errorf("apply gave %+v; want published", applied)
		}
		if after := s.data(); s.mainState("daily_orders") == before || len(after) < len(files) {
			t.Error("apply did not commit")
		}
		_, history, _ := s.cli("-o", "json", "history", "--table", "retail.daily_orders")
		if got, want := runsOf(t, history), runsOf(t, published); !slices.Equal(got, want) {
			t.Errorf("history after plan and apply:\n%v\nafter publish:\n%v", got, want)
		}

		// Another plan, whose staged files are tampered with before apply.
		before = s.mainState("daily_orders")
		other := filepath.Join(t.TempDir(), "other.json")
		if code, _, errs := s.cli("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", other, newHomeInput(t)); code != 0 {
			t.Fatalf("second plan: exit %d: %s", code, errs)
		}
		second, err := swap.ReadPlan(other)
		if err != nil {
			t.Fatal(err)
		}
		// One staged file altered in place, its size kept: only its
		// checksum tells.
		altered := second.Plan.Partitions[1].NewFiles[0].Path
		body := s.read(altered)
		body[len(body)/2] ^= 0xff
		s.write(altered, body)
		files = s.data()
		if code, _, errs := s.cli("apply", other, "--approve", second.PlanID); code != exitConflict || !strings.Contains(errs, "changed since the plan") || !strings.Contains(errs, altered) {
			t.Errorf("apply with a staged file altered: exit %d, want %d naming %s: %s", code, exitConflict, altered, errs)
		}
		unchanged("apply with a staged file altered")
		s.remove(second.Plan.Partitions[0].NewFiles[0].Path)
		files = s.data()
		if code, _, errs := s.cli("apply", other, "--approve", second.PlanID); code != exitConflict || !strings.Contains(errs, "is gone since the plan") {
			t.Errorf("apply with a staged file gone: exit %d: %s", code, errs)
		}
		unchanged("apply with a staged file gone")
	})
}

// runsOf is what a history in JSON says of each run on main: its
// partitions, rows, sums and fingerprint.
func runsOf(t *testing.T, history string) []string {
	t.Helper()
	var h struct {
		Main []struct {
			Operation  string           `json:"operation"`
			Partitions []string         `json:"partitions"`
			Rows       int64            `json:"rows"`
			Sums       map[string]int64 `json:"sums"`
			Hash       string           `json:"fingerprint"`
		} `json:"main"`
	}
	if err := json.Unmarshal([]byte(history), &h); err != nil {
		t.Fatalf("history: %v\n%s", err, history)
	}
	var out []string
	for _, r := range h.Main {
		out = append(out, fmt.Sprint(r))
	}
	return out
}

// newHomeInput is the first load's rows, which differ from batch 2.
func newHomeInput(t *testing.T) string {
	t.Helper()
	rows, err := retail.Daily(retail.AfterBatch1)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "batch1.ndjson")
	if err := retail.WriteNDJSON(in, rows); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestRepublishIdenticalCommitsNothing, on every site: publishing input the
// partitions already hold, under a new run id, exits 0 saying unchanged,
// with no new snapshot and no file left behind.
func TestRepublishIdenticalCommitsNothing(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		before, files := s.metadata("daily_orders"), s.files()
		code, out, errs := s.cli("publish", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t))
		if code != 0 || !strings.Contains(out, "unchanged") || !strings.Contains(out, "nothing was committed") {
			t.Fatalf("identical republish: exit %d: %s%s", code, out, errs)
		}
		if s.metadata("daily_orders") != before || !slices.Equal(s.files(), files) {
			t.Error("an identical republish changed the table or left files")
		}

		// The same as a plan: "no changes", and its apply is a no-op that
		// says so and removes the plan's staged files, which nothing
		// references.
		plan := filepath.Join(t.TempDir(), "plan.json")
		if out := s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", plan, newHomeInput(t)); !strings.Contains(out, "no changes: every partition of retail.daily_orders already holds the planned content") {
			t.Errorf("plan of identical input: %s", out)
		}
		pf, err := swap.ReadPlan(plan)
		if err != nil {
			t.Fatal(err)
		}
		if out := s.must("apply", plan, "--approve", pf.PlanID); !strings.Contains(out, "unchanged") || !strings.Contains(out, "nothing was committed; removed the 2 files") {
			t.Errorf("apply of a plan with no changes: %s", out)
		}
		if s.metadata("daily_orders") != before || !slices.Equal(s.files(), files) {
			t.Error("applying a plan with no changes changed the table or left files")
		}
		if out := s.must("apply", plan, "--approve", pf.PlanID); !strings.Contains(out, "unchanged") || s.metadata("daily_orders") != before {
			t.Errorf("apply of a plan with no changes, again: %s", out)
		}
	})
}

// TestImplausibleShrinkIsRefused, on every site: a partition shrunk to 30%
// of its rows is refused at plan time, naming the partition and the
// figures, and passes with --allow-implausible, which the plan shows as a
// warning; a band set per run moves the line.
func TestImplausibleShrinkIsRefused(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--schema", write(t, s.home, "daily_orders.yaml", schemaYAML))
		full := orderLines(2_000, 2) // 1,000 rows a day
		dir := t.TempDir()
		s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, writeCSVLines(t, filepath.Join(dir, "full.csv"), full))
		// Day 1 keeps 30% of its rows; day 2 stays whole.
		var shrunk []string
		for i, l := range full {
			if i%2 == 1 || i < 600 {
				shrunk = append(shrunk, l)
			}
		}
		in := writeCSVLines(t, filepath.Join(dir, "shrunk.csv"), shrunk)
		before, files := s.metadata("daily_orders"), s.files()
		code, out, errs := s.cli("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", filepath.Join(dir, "p.json"), in)
		if out != "" {
			t.Errorf("a refused plan printed a plan:\n%s", out)
		}
		if code != exitRefused || !strings.Contains(errs, "implausible partition order_date=2026-01-01: rows 1,000 -> 300 (0.30x)") || strings.Contains(errs, "order_date=2026-01-02") {
			t.Errorf("plan of a shrunk partition: exit %d, want %d naming 2026-01-01 and its figures:\n%s", code, exitRefused, errs)
		}
		if s.metadata("daily_orders") != before || !slices.Equal(s.files(), files) {
			t.Error("a refused plan changed the table or left files")
		}
		code, out, errs = s.cli("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--allow-implausible", "--out", filepath.Join(dir, "p.json"), in)
		if code != 0 || !strings.Contains(out, "warning: allowed (--allow-implausible): implausible partition order_date=2026-01-01: rows 1,000 -> 300") {
			t.Errorf("plan with --allow-implausible: exit %d, want a warning naming the partition: %s%s", code, out, errs)
		}
		s.must("discard", filepath.Join(dir, "p.json"))
		s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--plausible-band", "0.1:4", in)
		full2 := writeCSVLines(t, filepath.Join(dir, "full2.csv"), full)
		if code, _, _ := s.cli("publish", "--table", "retail.daily_orders", "--partitions", twoDays, full2); code != exitRefused {
			t.Errorf("growing 300 rows back to 1,000 (3.3x): exit %d, want %d", code, exitRefused)
		}
		s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--allow-implausible", full2)
	})
}

// TestBuildTwiceFromFiles, on every site: --build-twice reads the inputs
// again and, for files that do not change, publishes as without it.
func TestBuildTwiceFromFiles(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		before := s.metadata("daily_orders")
		if out := s.must("publish", "--build-twice", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t)); !strings.Contains(out, "published") {
			t.Errorf("--build-twice: %s", out)
		}
		if s.metadata("daily_orders") == before {
			t.Error("--build-twice committed nothing")
		}
	})
}

// TestLongRunsShownByTheirEnds: history shows a run of 30 partitions as
// their range and count, not one by one.
func TestLongRunsShownByTheirEnds(t *testing.T) {
	home := t.TempDir()
	schema := write(t, home, "daily_orders.yaml", schemaYAML)
	if code, _, errs := cli(t, home, "table", "create", "--schema", schema); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	in := writeCSVLines(t, filepath.Join(t.TempDir(), "month.csv"), orderLines(300, 30))
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01..2026-01-30", in); code != 0 {
		t.Fatalf("publish: exit %d: %s", code, errs)
	}
	code, out, _ := cli(t, home, "history", "--table", "retail.daily_orders")
	want := "order_date=2026-01-01..30 (30)"
	if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "order_date=2026-01-15") {
		t.Errorf("history: exit %d, want %q:\n%s", code, want, out)
	}
}

// TestDiscard, on every site: discarding a plan never applied removes
// exactly its staged files, leaves the table, and marks the plan, which
// apply then refuses as discarded; a plan that was applied is refused, and
// its files stay the table's.
func TestDiscard(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		before, files := s.mainState("daily_orders"), s.content()
		plan := filepath.Join(t.TempDir(), "plan.json")
		s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", plan, batch2Input(t))
		if len(s.files()) <= len(files) {
			t.Fatal("plan staged no file")
		}
		if out := s.must("discard", plan); !strings.Contains(out, "removed the 2 files") {
			t.Errorf("discard: %s", out)
		}
		if s.mainState("daily_orders") != before || !slices.Equal(s.content(), files) {
			t.Errorf("after discard the table or its files differ:\n%v\nwant\n%v", s.content(), files)
		}
		// The plan is marked: apply says it was discarded (not a conflict
		// and a list of files gone), and commits nothing; show says so.
		discarded, err := swap.ReadPlan(plan)
		if err != nil || discarded.DiscardedAt == nil || discarded.Unedited("apply") != nil {
			t.Fatalf("the discarded plan: %v, marked %v, edited %v", err, discarded.DiscardedAt, discarded.Unedited("apply"))
		}
		code, _, errs := s.cli("apply", plan, "--approve", discarded.PlanID)
		if code != exitUsage || !strings.Contains(errs, "was discarded at "+discarded.DiscardedAt.Format(time.RFC3339)) || strings.Contains(errs, "conflict") {
			t.Errorf("apply of a discarded plan: exit %d, want %d naming when it was discarded: %s", code, exitUsage, errs)
		}
		if s.mainState("daily_orders") != before || !slices.Equal(s.content(), files) {
			t.Errorf("apply of a discarded plan changed the table or its files")
		}
		if out := s.must("show", plan); !strings.Contains(out, "discarded at ") {
			t.Errorf("show of a discarded plan does not say so: %s", out)
		}

		// A plan edited to name another file, with or without its id made
		// to match, and a plan of another catalog's table, remove nothing.
		victim := write(t, t.TempDir(), "notes.txt", "keep me")
		s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", plan+"2", batch2Input(t))
		pf, err := swap.ReadPlan(plan + "2")
		if err != nil {
			t.Fatal(err)
		}
		pf.Plan.Partitions[0].Prefix = "file://" + filepath.Dir(victim)
		pf.Plan.Partitions[0].NewFiles[0].Path = "file://" + victim
		for _, fix := range []bool{false, true} {
			if fix {
				pf.PlanID = swap.PlanID(pf.Plan)
			}
			raw, _ := json.Marshal(pf)
			edited := write(t, t.TempDir(), "edited.json", string(raw))
			if code, _, errs := s.cli("discard", edited); code == 0 {
				t.Errorf("discard of an edited plan (id made to match: %v): exit 0: %s", fix, errs)
			}
			if string(mustRead(t, victim)) != "keep me" {
				t.Fatal("discard of an edited plan removed a file it never staged")
			}
		}
		elsewhere := newSite(t, "sqlite+local")
		elsewhere.createDaily()
		if code, _, errs := elsewhere.cli("discard", plan+"2"); code == 0 || !strings.Contains(errs, "is it a plan of this table?") {
			t.Errorf("discard in another catalog: exit %d: %s", code, errs)
		}
		s.must("discard", plan+"2")

		applied := filepath.Join(t.TempDir(), "applied.json")
		s.must("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", applied, batch2Input(t))
		pf, err = swap.ReadPlan(applied)
		if err != nil {
			t.Fatal(err)
		}
		s.must("apply", applied, "--approve", pf.PlanID)
		kept := s.files()
		if code, _, errs := s.cli("discard", applied); code == 0 || !strings.Contains(errs, "was applied") {
			t.Errorf("discard of an applied plan: exit %d: %s", code, errs)
		}
		if !slices.Equal(s.files(), kept) {
			t.Error("discard of an applied plan removed files")
		}
	})
}

// TestShardsApplyAsOneSnapshot, on every site: three processes plan three
// disjoint thirds of a backfill under one run id against one base; apply
// of the three commits one snapshot holding them all, with the table and
// fingerprint one publish of the whole gives. Overlapping partial plans,
// and plans of other run ids, are refused with the table unchanged.
func TestShardsApplyAsOneSnapshot(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		const days = "order_date=2026-01-01..2026-01-06"
		s.must("table", "create", "--schema", write(t, s.home, "daily_orders.yaml", schemaYAML))
		dir := t.TempDir()
		lines := orderLines(600, 6)
		s.must("publish", "--table", "retail.daily_orders", "--partitions", days, writeCSVLines(t, filepath.Join(dir, "first.csv"), lines))
		// Every amount ten times, and so every row changed; each shard's
		// input holds its own days only, as each task of the backfill
		// computes them.
		shardLines := make([][]string, 3)
		for i := range lines {
			lines[i] += "0"
			day := int(lines[i][9] - '1') // 2026-01-0D
			shardLines[day/2] = append(shardLines[day/2], lines[i])
		}
		in := writeCSVLines(t, filepath.Join(dir, "second.csv"), lines)
		shardIn := make([]string, 3)
		for i, l := range shardLines {
			shardIn[i] = writeCSVLines(t, filepath.Join(dir, fmt.Sprintf("second-%d.csv", i)), l)
		}
		twin := newSite(t, s.name)
		twin.must("table", "create", "--schema", write(t, twin.home, "daily_orders.yaml", schemaYAML))
		twin.must("publish", "--table", "retail.daily_orders", "--partitions", days, writeCSVLines(t, filepath.Join(dir, "first.csv"), orderLines(600, 6)))
		whole := twin.must("-o", "json", "publish", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", days, in)

		before, files := s.mainState("daily_orders"), s.files()
		thirds := []string{"order_date=2026-01-01..2026-01-02", "order_date=2026-01-03..2026-01-04", "order_date=2026-01-05..2026-01-06"}
		plans := make([]string, 3)
		var cmds []*exec.Cmd
		var outs []*bytes.Buffer
		for i, third := range thirds {
			plans[i] = filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
			cmd := s.command("plan", "--run-id", "backfill-jan", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", third, "--out", plans[i], shardIn[i])
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs = append(cmds, cmd), append(outs, &out)
		}
		ids := make([]string, 3)
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("plan of %s: %v: %s", thirds[i], err, outs[i])
			}
			pf, err := swap.ReadPlan(plans[i])
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = pf.PlanID
		}
		if s.mainState("daily_orders") != before {
			t.Fatal("planning changed main")
		}
		staged := s.content()

		// A fourth plan overlapping the second, and one of another run.
		overlap := filepath.Join(dir, "overlap.json")
		s.must("plan", "--run-id", "backfill-jan", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-03..2026-01-04", "--out", overlap, shardIn[1])
		pf, _ := swap.ReadPlan(overlap)
		code, _, errs := s.cli("apply", plans[0], plans[1], overlap, "--approve", ids[0]+","+ids[1]+","+pf.PlanID)
		if code != exitRefused || !strings.Contains(errs, "partition order_date=2026-01-03 is in two partial plans") {
			t.Errorf("apply of overlapping plans: exit %d: %s", code, errs)
		}
		s.must("discard", overlap)
		stranger := filepath.Join(dir, "stranger.json")
		s.must("plan", "--run-id", "another", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-03..2026-01-04", "--out", stranger, shardIn[1])
		pf, _ = swap.ReadPlan(stranger)
		if code, _, errs := s.cli("apply", plans[0], stranger, "--approve", ids[0], "--approve", pf.PlanID); code != exitRefused || !strings.Contains(errs, "share a run id") {
			t.Errorf("apply of plans of two runs: exit %d: %s", code, errs)
		}
		s.must("discard", stranger)
		if code, _, errs := s.cli("apply", plans[0], plans[1], plans[2], "--approve", ids[0]+","+ids[1]); code != exitRefused || !strings.Contains(errs, "shard-2.json") {
			t.Errorf("apply of three plans with two approved: exit %d: %s", code, errs)
		}
		if s.mainState("daily_orders") != before || !slices.Equal(s.content(), staged) {
			t.Fatal("a refused apply changed the table or its files")
		}

		out := s.must("-o", "json", "apply", plans[2], plans[0], plans[1], "--approve", ids[0], "--approve", ids[1], "--approve", ids[2])
		var applied, published struct {
			PlanIDs []string `json:"plan_ids"`
			Status  string   `json:"status"`
			Plan    struct {
				Partitions  []struct{ Value string } `json:"partitions"`
				Fingerprint struct{ Hash string }    `json:"fingerprint"`
			} `json:"plan"`
		}
		if err := json.Unmarshal([]byte(out), &applied); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(whole), &published); err != nil {
			t.Fatal(err)
		}
		if applied.Status != "published" || len(applied.Plan.Partitions) != 6 || applied.Plan.Fingerprint.Hash != published.Plan.Fingerprint.Hash {
			t.Errorf("apply of three shards: %s, %d partitions, fingerprint %s; want published, 6, %s",
				applied.Status, len(applied.Plan.Partitions), applied.Plan.Fingerprint.Hash, published.Plan.Fingerprint.Hash)
		}
		_, history, _ := s.cli("-o", "json", "history", "--table", "retail.daily_orders")
		_, want, _ := twin.cli("-o", "json", "history", "--table", "retail.daily_orders")
		if got, want := runsOf(t, history), runsOf(t, want); !slices.Equal(got, want) {
			t.Errorf("history after the shards:\n%v\nafter one publish of the whole:\n%v", got, want)
		}
		if len(s.files()) <= len(files) {
			t.Error("the shards committed nothing")
		}
		meta := s.metadata("daily_orders")
		if out := s.must("apply", plans[1], "--approve", ids[1]); !strings.Contains(out, "already published") || s.metadata("daily_orders") != meta {
			t.Errorf("one shard applied again after the whole: %s", out)
		}
	})
}

// TestLongPlanShowsWhatChanges: a plan of 30 partitions where every day
// loses a row, one day halves and one is unchanged lists every partition
// that changes, the one that halved first, and elides only the unchanged;
// lakeswap show prints the plan whole, and -o json the plan itself.
func TestLongPlanShowsWhatChanges(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", write(t, home, "daily_orders.yaml", schemaYAML)); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	const month = "order_date=2026-01-01..2026-01-30"
	lines := orderLines(300, 30)
	dir := t.TempDir()
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", month, writeCSVLines(t, filepath.Join(dir, "a.csv"), lines)); code != 0 {
		t.Fatalf("publish: exit %d: %s", code, errs)
	}
	var next []string
	seen := map[string]int{}
	for _, l := range lines {
		day := l[:10]
		seen[day]++
		switch {
		case day == "2026-01-20": // unchanged
		case day == "2026-01-15" && seen[day] > 5: // halves
			continue
		case day != "2026-01-15" && seen[day] == 1: // loses one row
			continue
		}
		next = append(next, l)
	}
	planFile := filepath.Join(dir, "p.json")
	code, out, errs := cli(t, home, "plan", "--table", "retail.daily_orders", "--partitions", month, "--out", planFile, writeCSVLines(t, filepath.Join(dir, "b.csv"), next))
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	rows := strings.Split(out, "\n")
	if len(rows) < 3 || !strings.HasPrefix(rows[2], "order_date=2026-01-15 ") { // after the title and the header
		t.Errorf("the partition that halved is not shown first:\n%s", out)
	}
	for d := 1; d <= 30; d++ {
		day := fmt.Sprintf("order_date=2026-01-%02d ", d)
		if d == 20 {
			if !strings.Contains(out, day+" ") && !strings.Contains(out, "unchanged (files kept)") {
				t.Errorf("the unchanged partition is not said to keep its files:\n%s", out)
			}
			continue
		}
		if !strings.Contains(out, day) {
			t.Errorf("the plan does not show %s, which changes:\n%s", day, out)
		}
	}
	for _, want := range []string{"total of 30", "29 changed", "this will replace 29 partitions", "1 declared partition holds the planned content already"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan summary lacks %q:\n%s", want, out)
		}
	}
	code, whole, errs := cli(t, home, "show", planFile)
	if code != 0 || strings.Contains(whole, "...") {
		t.Errorf("show: exit %d, want the plan whole: %s\n%s", code, errs, whole)
	}
	for d := 1; d <= 30; d++ {
		if !strings.Contains(whole, fmt.Sprintf("\norder_date=2026-01-%02d ", d)) {
			t.Errorf("show does not list order_date=2026-01-%02d:\n%s", d, whole)
		}
	}
	code, js, errs := cli(t, home, "-o", "json", "show", planFile)
	var pf struct {
		PlanID string `json:"plan_id"`
		Plan   struct {
			Partitions []struct {
				Key       string `json:"key"`
				Unchanged bool   `json:"unchanged"`
			} `json:"partitions"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(js), &pf); code != 0 || err != nil || len(pf.Plan.Partitions) != 30 || pf.PlanID == "" {
		t.Errorf("show -o json: exit %d, %v: %s%s", code, err, js, errs)
	}
}
