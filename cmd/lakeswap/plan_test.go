package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
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

// TestPlanThenApply: plan commits nothing and writes a plan with its id;
// apply refuses it without approval, with a wrong id, once edited by hand
// or once a staged file is gone, each time leaving the table as it was;
// approved, it gives the table a publish of the same input gives.
func TestPlanThenApply(t *testing.T) {
	in := batch2Input(t)
	twin := newHome(t)
	code, out, errs := cli(t, twin, "-o", "json", "publish", "--table", "retail.daily_orders", "--partitions", twoDays, in)
	if code != 0 {
		t.Fatalf("publish: exit %d: %s", code, errs)
	}
	var published struct {
		Plan struct {
			Fingerprint struct{ Hash string } `json:"fingerprint"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &published); err != nil {
		t.Fatal(err)
	}

	home := newHome(t)
	before, files := metadataLocation(t, home), warehouseFiles(t, home)
	planPath := filepath.Join(t.TempDir(), "plan.json")
	code, out, errs = cli(t, home, "-o", "json", "plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", planPath, in)
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
	if metadataLocation(t, home) != before {
		t.Fatal("plan changed the table")
	}
	code, text, _ := cli(t, home, "plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", filepath.Join(t.TempDir(), "p2.json"), in)
	if code != 0 || !strings.Contains(text, "this will replace 2 partitions of retail.daily_orders") || !strings.Contains(text, "->") {
		t.Errorf("plan summary: exit %d:\n%s", code, text)
	}

	unchanged := func(what string) {
		t.Helper()
		if metadataLocation(t, home) != before {
			t.Errorf("%s changed the table", what)
		}
	}
	if code, _, errs := cli(t, home, "apply", planPath); code != exitUsage || !strings.Contains(errs, "--approve") {
		t.Errorf("apply without approval: exit %d: %s", code, errs)
	}
	unchanged("apply without approval")
	if code, _, errs := cli(t, home, "apply", planPath, "--approve", "000000000000"); code != exitRefused {
		t.Errorf("apply with a wrong id: exit %d: %s", code, errs)
	}
	unchanged("apply with a wrong id")
	raw, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(t.TempDir(), "edited.json")
	var pf map[string]any
	if err := json.Unmarshal(raw, &pf); err != nil {
		t.Fatal(err)
	}
	pf["plan"].(map[string]any)["source"] = "files:something-else.csv"
	hand, _ := json.Marshal(pf)
	if err := os.WriteFile(edited, hand, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := cli(t, home, "apply", edited, "--approve", planned.PlanID); code != exitRefused || !strings.Contains(errs, "edited") {
		t.Errorf("apply of a plan edited by hand: exit %d: %s", code, errs)
	}
	unchanged("apply of an edited plan")

	code, out, errs = cli(t, home, "-o", "json", "apply", planPath, "--approve", planned.PlanID[:12], "--recheck")
	if code != 0 {
		t.Fatalf("apply: exit %d: %s%s", code, out, errs)
	}
	var applied struct {
		PlanID string `json:"plan_id"`
		Status string `json:"status"`
		Plan   struct {
			Fingerprint struct{ Hash string } `json:"fingerprint"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &applied); err != nil {
		t.Fatal(err)
	}
	if applied.Status != "published" || applied.PlanID != planned.PlanID || applied.Plan.Fingerprint.Hash != published.Plan.Fingerprint.Hash {
		t.Errorf("apply gave %+v; want published with the publish's fingerprint %s", applied, published.Plan.Fingerprint.Hash)
	}
	if metadataLocation(t, home) == before || len(warehouseFiles(t, home)) <= len(files) {
		t.Error("apply did not commit")
	}

	// A plan whose staged file is removed before it is applied.
	before = metadataLocation(t, home)
	other := filepath.Join(t.TempDir(), "other.json")
	if code, _, errs := cli(t, home, "plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", other, newHomeInput(t)); code != 0 {
		t.Fatalf("second plan: exit %d: %s", code, errs)
	}
	raw, _ = os.ReadFile(other)
	var second planFile
	if err := json.Unmarshal(raw, &second); err != nil {
		t.Fatal(err)
	}
	// One staged file altered in place, its size kept: only its checksum
	// tells.
	altered := strings.TrimPrefix(second.Plan.Partitions[1].NewFiles[0].Path, "file://")
	body, err := os.ReadFile(altered)
	if err != nil {
		t.Fatal(err)
	}
	body[len(body)/2] ^= 0xff
	if err := os.WriteFile(altered, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := cli(t, home, "apply", other, "--approve", second.PlanID); code != exitConflict || !strings.Contains(errs, "changed since the plan") || !strings.Contains(errs, altered) {
		t.Errorf("apply with a staged file altered: exit %d, want %d naming %s: %s", code, exitConflict, altered, errs)
	}
	unchanged("apply with a staged file altered")
	if err := os.Remove(strings.TrimPrefix(second.Plan.Partitions[0].NewFiles[0].Path, "file://")); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := cli(t, home, "apply", other, "--approve", second.PlanID); code != exitConflict || !strings.Contains(errs, "is gone since the plan") {
		t.Errorf("apply with a staged file gone: exit %d: %s", code, errs)
	}
	unchanged("apply with a staged file gone")
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

// TestRepublishIdenticalCommitsNothing: publishing input the partitions
// already hold, under a new run id, exits 0 saying unchanged, with no new
// snapshot and no file left behind.
func TestRepublishIdenticalCommitsNothing(t *testing.T) {
	home := newHome(t)
	before, files := metadataLocation(t, home), warehouseFiles(t, home)
	code, out, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t))
	if code != 0 || !strings.Contains(out, "unchanged") || !strings.Contains(out, "nothing was committed") {
		t.Fatalf("identical republish: exit %d: %s%s", code, out, errs)
	}
	if metadataLocation(t, home) != before || strings.Join(warehouseFiles(t, home), " ") != strings.Join(files, " ") {
		t.Error("an identical republish changed the table or left files")
	}
}

// TestImplausibleShrinkIsRefused: a partition shrunk to 30% of its rows is
// refused at plan time, naming the partition and the figures, and passes
// with --allow-implausible; a band set per run moves the line.
func TestImplausibleShrinkIsRefused(t *testing.T) {
	home := t.TempDir()
	schema := write(t, home, "daily_orders.yaml", schemaYAML)
	if code, _, errs := cli(t, home, "table", "create", "--schema", schema); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	full := orderLines(2_000, 2) // 1,000 rows a day
	dir := t.TempDir()
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", twoDays, writeCSVLines(t, filepath.Join(dir, "full.csv"), full)); code != 0 {
		t.Fatalf("first load: exit %d: %s", code, errs)
	}
	// Day 1 keeps 30% of its rows; day 2 stays whole.
	var shrunk []string
	for i, l := range full {
		if i%2 == 1 || i < 600 {
			shrunk = append(shrunk, l)
		}
	}
	in := writeCSVLines(t, filepath.Join(dir, "shrunk.csv"), shrunk)
	before := metadataLocation(t, home)
	code, _, errs := cli(t, home, "plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", filepath.Join(dir, "p.json"), in)
	if code != exitRefused || !strings.Contains(errs, "implausible partition order_date=2026-01-01: rows 1000 -> 300 (0.30x)") || strings.Contains(errs, "order_date=2026-01-02") {
		t.Errorf("plan of a shrunk partition: exit %d, want %d naming 2026-01-01 and its figures:\n%s", code, exitRefused, errs)
	}
	if metadataLocation(t, home) != before {
		t.Error("a refused plan changed the table")
	}
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--plausible-band", "0.1:4", in); code != 0 {
		t.Errorf("with a wider band: exit %d: %s", code, errs)
	}
	full2 := writeCSVLines(t, filepath.Join(dir, "full2.csv"), full)
	if code, _, _ := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", twoDays, full2); code != exitRefused {
		t.Errorf("growing 300 rows back to 1,000 (3.3x): exit %d, want %d", code, exitRefused)
	}
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--allow-implausible", full2); code != 0 {
		t.Errorf("with --allow-implausible: exit %d: %s", code, errs)
	}
}

// TestBuildTwiceFromFiles: --build-twice reads the inputs again and, for
// files that do not change, publishes as without it.
func TestBuildTwiceFromFiles(t *testing.T) {
	home := newHome(t)
	before := metadataLocation(t, home)
	if code, out, errs := cli(t, home, "publish", "--build-twice", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t)); code != 0 || !strings.Contains(out, "published") {
		t.Errorf("--build-twice: exit %d: %s%s", code, out, errs)
	}
	if metadataLocation(t, home) == before {
		t.Error("--build-twice committed nothing")
	}
}

// TestLongRunsShownByTheirEnds: history shows a run of 30 partitions by
// its first and last two and their count, not one by one.
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
	want := "order_date=2026-01-01,order_date=2026-01-02,...,order_date=2026-01-29,order_date=2026-01-30 (30 partitions)"
	if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "order_date=2026-01-15") {
		t.Errorf("history: exit %d, want %q:\n%s", code, want, out)
	}
}

// TestDiscard: discarding a plan never applied removes exactly its staged
// files and leaves the table; a plan that was applied is refused, and its
// files stay the table's.
func TestDiscard(t *testing.T) {
	home := newHome(t)
	before, files := metadataLocation(t, home), warehouseFiles(t, home)
	plan := filepath.Join(t.TempDir(), "plan.json")
	if code, _, errs := cli(t, home, "plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", plan, batch2Input(t)); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	if len(warehouseFiles(t, home)) <= len(files) {
		t.Fatal("plan staged no file")
	}
	if code, out, errs := cli(t, home, "discard", plan); code != 0 || !strings.Contains(out, "removed the 2 file(s)") {
		t.Errorf("discard: exit %d: %s%s", code, out, errs)
	}
	got := warehouseFiles(t, home)
	var parquet []string
	for _, f := range got {
		if strings.HasSuffix(f, ".parquet") {
			parquet = append(parquet, f)
		}
	}
	var want []string
	for _, f := range files {
		if strings.HasSuffix(f, ".parquet") {
			want = append(want, f)
		}
	}
	if metadataLocation(t, home) != before || strings.Join(parquet, " ") != strings.Join(want, " ") {
		t.Errorf("after discard the table or its data files differ:\n%v\nwant\n%v", parquet, want)
	}

	applied := filepath.Join(t.TempDir(), "applied.json")
	if code, _, errs := cli(t, home, "plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", applied, batch2Input(t)); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	pf, err := readPlanFile(applied)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := cli(t, home, "apply", applied, "--approve", pf.PlanID); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, errs)
	}
	kept := warehouseFiles(t, home)
	if code, _, errs := cli(t, home, "discard", applied); code == 0 || !strings.Contains(errs, "was applied") {
		t.Errorf("discard of an applied plan: exit %d: %s", code, errs)
	}
	if strings.Join(warehouseFiles(t, home), " ") != strings.Join(kept, " ") {
		t.Error("discard of an applied plan removed files")
	}
}
