package swap_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
)

// The test binary, started with these, applies a plan and exits: the
// second process of TestApplyInAnotherProcess.
const (
	envApplyPlan = "LAKESWAP_TEST_APPLY_PLAN"
	envApplyHome = "LAKESWAP_TEST_APPLY_HOME"
)

// applyProcess reads a plan from a JSON file, applies it to the embedded
// catalog in home, prints the result's status and returns 0, or prints the
// error and returns 1.
func applyProcess(planFile, home string) int {
	fail := func(err error) int { fmt.Println("error:", err); return 1 }
	raw, err := os.ReadFile(planFile)
	if err != nil {
		return fail(err)
	}
	var plan swap.Plan
	if err := json.Unmarshal(raw, &plan); err != nil {
		return fail(err)
	}
	cfg, err := catalog.Resolve(catalog.Settings{Home: home, ConfigFile: os.DevNull, Getenv: func(string) string { return "" }})
	if err != nil {
		return fail(err)
	}
	cat, err := catalog.Open(context.Background(), cfg)
	if err != nil {
		return fail(err)
	}
	defer cat.Close()
	res, err := (&swap.Publisher{Catalog: cat}).Apply(context.Background(), swap.ApplyOptions{}, &plan)
	if err != nil {
		if errors.Is(err, outcome.ErrConflict) {
			fmt.Println("conflict:", err)
			return 4
		}
		return fail(err)
	}
	fmt.Printf("%s %d\n", res.Status, res.SnapshotID)
	return 0
}

// apply runs applyProcess in a process of its own.
func apply(t *testing.T, home string, plan *swap.Plan) (int, string) {
	t.Helper()
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envApplyPlan+"="+file, envApplyHome+"="+home)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), strings.TrimSpace(string(out))
}

// TestApplyInAnotherProcess: a plan staged here, written as JSON and
// committed by another process gives the table a publish gives; applied
// again it commits nothing and keeps the run's files; a plan whose base
// moved is refused as a conflict and touches no file.
func TestApplyInAnotherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs in the full tier (make test)")
	}
	e := newEnv(t)
	published := table.Identifier{"retail", "published"}
	if _, err := catalog.CreateTable(e.ctx, e.cat, published, retail.Spec()); err != nil {
		t.Fatal(err)
	}
	batch1, batch2 := fixture(t, retail.AfterBatch1), fixture(t, retail.AfterBatch2)
	for _, ident := range []table.Identifier{e.ident, published} {
		if _, err := e.pub.Publish(e.ctx, swap.Request{Table: ident, Partitions: fixtureRange, Source: retail.NewSource(batch1)}); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(batch2), RunID: "planned-1"})
	if err != nil || !plan.Staged {
		t.Fatalf("stage: %v", err)
	}
	byPublish, err := e.pub.Publish(e.ctx, swap.Request{Table: published, Partitions: fixtureRange, Source: retail.NewSource(batch2)})
	if err != nil {
		t.Fatal(err)
	}

	code, out := apply(t, e.home, plan)
	if code != 0 || !strings.HasPrefix(out, "published ") {
		t.Fatalf("apply in another process: exit %d: %s", code, out)
	}
	got, want := e.daily(), readDaily(t, e.ctx, e.tableNamed(published))
	if !slices.Equal(got, want) {
		t.Errorf("applied table holds %v, the published one %v", got, want)
	}
	head := e.table().CurrentSnapshot()
	rec, _ := runrecord.Read(head.Summary.Properties)
	if rec.RunID != "planned-1" || rec.Fingerprint != byPublish.Plan.Fingerprint.Hash {
		t.Errorf("head records %+v; want run planned-1 with the publish's fingerprint %s", rec, byPublish.Plan.Fingerprint.Hash)
	}
	if vr, err := audit.Of(e.pub.Catalog).VerifyRun(e.ctx, e.ident, "planned-1", 0); err != nil || !vr.OK {
		t.Errorf("verify the applied run: %v", err)
	}

	meta, files := e.table().MetadataLocation(), e.allFiles()
	if code, out := apply(t, e.home, plan); code != 0 || out != fmt.Sprintf("already-published %d", head.SnapshotID) {
		t.Errorf("the same plan again: exit %d: %s; want already-published %d", code, out, head.SnapshotID)
	}
	if e.table().MetadataLocation() != meta || !slices.Equal(e.allFiles(), files) {
		t.Error("applying the plan again changed the table or its files")
	}

	stale, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(batch1), RunID: "planned-2"})
	if err != nil {
		t.Fatal(err)
	}
	e.mustPublish(retail.Only(batch1, "2026-01-02"), "2026-01-02") // main moves on
	meta, files = e.table().MetadataLocation(), e.allFiles()
	code, out = apply(t, e.home, stale)
	if code != 4 || !strings.Contains(out, "main moved") {
		t.Errorf("a plan whose base moved: exit %d: %s; want a conflict", code, out)
	}
	if !strings.Contains(out, "staged files were left under") {
		t.Errorf("the conflict does not say where the plan's files were left: %s", out)
	}
	// A plan read back may be old and its files since committed, so a
	// conflict leaves them: the table and every file stay as they were.
	if e.table().MetadataLocation() != meta || !slices.Equal(e.allFiles(), files) {
		t.Error("a conflicting plan changed the table or its files")
	}

	// A commit to another partition since the plan: the plan is applied
	// on the new main, and both changes hold.
	later, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: []string{"2026-01-01"}, Source: retail.NewSource(batch1), RunID: "planned-3"})
	if err != nil {
		t.Fatal(err)
	}
	other := e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-09", Channel: "app", OrderCount: 2, AmountCents: 20}}, "2026-01-09")
	if code, out := apply(t, e.home, later); code != 0 || !strings.HasPrefix(out, "published ") {
		t.Fatalf("a plan whose base moved elsewhere: exit %d: %s; want it applied", code, out)
	}
	head = e.table().CurrentSnapshot()
	if *head.ParentSnapshotID != other.SnapshotID {
		t.Errorf("the plan was committed on %d, want on the other commit %d", *head.ParentSnapshotID, other.SnapshotID)
	}
	rows := e.daily()
	if n, _ := group(rows, "2026-01-09", "app"); n != 2 {
		t.Errorf("the other commit's partition reads %d orders, want 2", n)
	}
	if got, want := retail.Only(rows, "2026-01-01"), retail.Only(batch1, "2026-01-01"); !slices.Equal(got, want) {
		t.Errorf("2026-01-01 = %v, want %v", got, want)
	}
}

// TestApplyRefusesForeignFiles: a plan edited to name files outside its own
// prefix, which a failed apply would remove, is refused before anything.
func TestApplyRefusesForeignFiles(t *testing.T) {
	e := newEnv(t)
	first := e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2))})
	if err != nil {
		t.Fatal(err)
	}
	plan.Partitions[0].NewFiles[0].Path = first.Plan.Partitions[0].NewFiles[0].Path
	files := e.allFiles()
	if _, err := e.pub.Apply(e.ctx, swap.ApplyOptions{}, plan); err == nil || !strings.Contains(err.Error(), "outside the run's prefix") {
		t.Errorf("apply of a plan naming a live file: %v, want a refusal", err)
	}
	if !slices.Equal(e.allFiles(), files) {
		t.Error("the refused plan changed the files")
	}
}

// TestApplyAdoptedPlanInAnotherProcess: a plan that adopts files another
// engine wrote, staged here and applied by another process, commits those
// files where they are and gives the table a publish of the same rows
// gives; a plan adopting files a snapshot has since taken is refused.
func TestApplyAdoptedPlanInAnotherProcess(t *testing.T) {
	e := newEnv(t)
	batch2 := fixture(t, retail.AfterBatch2)
	files := writeForAdoption(t, e, "engine", batch2)
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Adopt: files, RunID: "adopted-1"})
	if err != nil || !plan.Staged {
		t.Fatalf("stage: %v (%+v)", err, plan)
	}
	again, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Adopt: files, RunID: "adopted-2"})
	if err != nil || !again.Staged {
		t.Fatalf("stage again: %v", err)
	}
	if code, out := apply(t, e.home, plan); code != 0 || !strings.HasPrefix(out, "published ") {
		t.Fatalf("apply in another process: exit %d: %s", code, out)
	}
	if got := e.daily(); !slices.Equal(got, retail.Only(batch2, fixtureRange...)) {
		t.Errorf("the table holds %v after adopting batch 2", got)
	}
	live := map[string]bool{}
	for _, f := range e.dataFiles() {
		live[f] = true
	}
	for _, f := range files {
		if !live[strings.TrimPrefix(f, "file://")] {
			t.Errorf("adopted file %s is gone", f)
		}
	}
	meta := e.table().MetadataLocation()
	if code, out := apply(t, e.home, again); code == 0 || !strings.Contains(out, "already references") {
		t.Errorf("a plan adopting files a snapshot has taken: exit %d: %s", code, out)
	}
	if e.table().MetadataLocation() != meta {
		t.Error("the refused plan changed the table")
	}
}

// writeForAdoption writes rows a file a partition under the table's
// location, in folder, as another engine would, and returns the locations.
func writeForAdoption(t *testing.T, e *env, folder string, rows []retail.DailyOrder) []string {
	t.Helper()
	loc := e.table().Location()
	var files []string
	for _, day := range fixtureRange {
		rr, err := retail.NewSource(rows).Open(e.ctx, day)
		if err != nil {
			t.Fatal(err)
		}
		w := parquetio.NewWriter(icebergio.LocalFS{}, loc+"/data/"+folder+"/"+day, rr.Schema(), parquetio.Options{})
		for rr.Next() {
			if err := w.Write(rr.RecordBatch()); err != nil {
				t.Fatal(err)
			}
		}
		rr.Release()
		written, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range written {
			files = append(files, f.Path)
		}
	}
	return files
}

// TestApplyRefusesAlteredAdoptedFiles: an adopted file altered in place
// after staging, its size kept, is refused by its checksum before any
// commit.
func TestApplyRefusesAlteredAdoptedFiles(t *testing.T) {
	e := newEnv(t)
	files := writeForAdoption(t, e, "engine", fixture(t, retail.AfterBatch2))
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Adopt: files})
	if err != nil || !plan.Staged {
		t.Fatalf("stage: %v", err)
	}
	local := strings.TrimPrefix(files[1], "file://")
	body, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	body[len(body)/2] ^= 0xff
	if err := os.WriteFile(local, body, 0o644); err != nil {
		t.Fatal(err)
	}
	meta := e.table().MetadataLocation()
	if code, out := apply(t, e.home, plan); code != 4 || !strings.Contains(out, "changed since the plan") {
		t.Errorf("apply after an adopted file was altered: exit %d: %s", code, out)
	}
	if e.table().MetadataLocation() != meta {
		t.Error("the refused plan changed the table")
	}
}

// TestApplyRefusesChangedAdoptedFiles: a plan whose adopted file was
// rewritten after staging is refused, before any commit.
func TestApplyRefusesChangedAdoptedFiles(t *testing.T) {
	e := newEnv(t)
	batch2 := fixture(t, retail.AfterBatch2)
	files := writeForAdoption(t, e, "engine", batch2)
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Adopt: files})
	if err != nil || !plan.Staged {
		t.Fatalf("stage: %v", err)
	}
	// The engine writes the day again, with other rows.
	local := strings.TrimPrefix(files[0], "file://")
	if err := os.Remove(local); err != nil {
		t.Fatal(err)
	}
	rewritten := writeForAdoption(t, e, "engine-again", fixture(t, retail.AfterBatch1))
	raw, err := os.ReadFile(strings.TrimPrefix(rewritten[0], "file://"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	meta := e.table().MetadataLocation()
	if code, out := apply(t, e.home, plan); code == 0 || !strings.Contains(out, "changed since") {
		t.Errorf("apply after the file changed: exit %d: %s", code, out)
	}
	if e.table().MetadataLocation() != meta {
		t.Error("the refused plan changed the table")
	}
}

// TestApplyLeavesTheApprovedPlan: the plan a person approved is a value.
// Applying it, rebased over another writer's commit (the guards judge
// again at commit) and again as a rerun, leaves the document given as it
// was approved, its plan id the same; what the apply adds is the result's.
func TestApplyLeavesTheApprovedPlan(t *testing.T) {
	e := newEnv(t)
	batch1 := fixture(t, retail.AfterBatch1)
	e.mustPublish(batch1, fixtureRange...)
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: []string{"2026-01-01"}, Source: retail.NewSource(fixture(t, retail.AfterBatch2)), RunID: "approved"})
	if err != nil {
		t.Fatal(err)
	}
	approved, id := plan.Checks, swap.PlanID(plan)
	e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-09", Channel: "app", OrderCount: 2, AmountCents: 20}}, "2026-01-09")
	res, err := e.pub.Apply(e.ctx, swap.ApplyOptions{}, plan)
	if err != nil || res.Status != swap.StatusPublished {
		t.Fatalf("apply: %v (%v)", err, res)
	}
	if swap.PlanID(plan) != id || !slices.Equal(plan.Checks, approved) {
		t.Errorf("apply changed the approved plan: id %s, was %s; checks %+v, were %+v", swap.PlanID(plan), id, plan.Checks, approved)
	}
	if res.Plan == plan || res.CommittedOn == *plan.BaseSnapshotID {
		t.Errorf("the result's plan is the one approved, or was committed on its base (%d): want the apply's own, rebased", res.CommittedOn)
	}
	if _, err := e.pub.Apply(e.ctx, swap.ApplyOptions{}, plan); err != nil || swap.PlanID(plan) != id {
		t.Errorf("applied again: %v; the plan's id %s, approved as %s", err, swap.PlanID(plan), id)
	}
}

// nilJob is a swap.Job no method of which may be called.
type nilJob struct{}

func (*nilJob) Tracks() bool { panic("called") }
func (*nilJob) JudgeLate([]swap.PartitionPlan) (swap.Job, swap.Verdict) {
	panic("called")
}
func (*nilJob) Notes() []string { panic("called") }
func (*nilJob) JoinShard(swap.Job, []swap.PartitionPlan) (swap.Job, error) {
	panic("called")
}
func (*nilJob) Record(*runrecord.Record, []swap.PartitionPlan, bool) { panic("called") }
func (*nilJob) Stale(table.Metadata, *int64, string) string          { panic("called") }

// TestTypedNilJob: a request whose job is a nil pointer of a type that
// implements swap.Job is a run of no job, as a nil job is.
func TestTypedNilJob(t *testing.T) {
	e := newEnv(t)
	res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch1)), Job: (*nilJob)(nil)})
	if err != nil || res.Status != swap.StatusPublished || len(res.Plan.Job) != 0 {
		t.Fatalf("publish with a typed nil job: %v, %v, job %q", err, res, res.Plan.Job)
	}
	if got := e.daily(); len(got) == 0 {
		t.Error("the table holds no rows after the publish")
	}
}

// plainJob is a job that tracks no arrival and records nothing.
type plainJob struct {
	Version string `json:"version"`
}

func (j *plainJob) Tracks() bool { return false }
func (j *plainJob) JudgeLate([]swap.PartitionPlan) (swap.Job, swap.Verdict) {
	return j, swap.Verdict{}
}
func (j *plainJob) Notes() []string { return nil }
func (j *plainJob) JoinShard(swap.Job, []swap.PartitionPlan) (swap.Job, error) {
	return j, nil
}
func (j *plainJob) Record(*runrecord.Record, []swap.PartitionPlan, bool) {}
func (j *plainJob) Stale(table.Metadata, *int64, string) string          { return "" }

// TestShardsComputedOneWay: shards of one run, one computed by a job and
// one staged from its input, are refused together: the run would record
// the job for rows it did not compute. The table stays as it was.
func TestShardsComputedOneWay(t *testing.T) {
	e := newEnv(t)
	rows := fixture(t, retail.AfterBatch1)
	e.mustPublish(rows, fixtureRange...)
	byJob, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange[:1], Source: retail.NewSource(rows), RunID: "mixed", Job: &plainJob{Version: "v1"}})
	if err != nil {
		t.Fatal(err)
	}
	byInput, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange[1:], Source: retail.NewSource(rows), RunID: "mixed"})
	if err != nil {
		t.Fatal(err)
	}
	meta := e.table().MetadataLocation()
	read := func(json.RawMessage) (swap.Job, error) { return &plainJob{}, nil }
	_, err = e.pub.Apply(e.ctx, swap.ApplyOptions{Jobs: read}, byJob, byInput)
	var refused *outcome.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "computed one way") {
		t.Errorf("shards computed two ways: %v; want refused, naming how each was computed", err)
	}
	if e.table().MetadataLocation() != meta {
		t.Error("the refused apply changed the table")
	}
}

// TestApplyJobReaderAnswers: a job reader that reads no job from a plan's
// job is refused, not taken for a run of no job (its watermark would go
// unrecorded); a plan whose job is JSON null is a plan of no job, and its
// result says so as a plan lakeswap writes does, by leaving it out.
func TestApplyJobReaderAnswers(t *testing.T) {
	e := newEnv(t)
	rows := fixture(t, retail.AfterBatch1)
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(rows), RunID: "read", Job: &plainJob{Version: "v1"}})
	if err != nil {
		t.Fatal(err)
	}
	meta := e.table().MetadataLocation()
	for name, read := range map[string]swap.JobReader{
		"nil":       func(json.RawMessage) (swap.Job, error) { return nil, nil },
		"typed nil": func(json.RawMessage) (swap.Job, error) { return (*plainJob)(nil), nil },
	} {
		if _, err := e.pub.Apply(e.ctx, swap.ApplyOptions{Jobs: read}, plan); !errors.Is(err, outcome.ErrInvalidRequest) || !strings.Contains(err.Error(), "read no job") {
			t.Errorf("a reader that answers %s: %v; want an invalid request", name, err)
		}
	}
	if e.table().MetadataLocation() != meta {
		t.Fatal("a refused apply changed the table")
	}
	plan.Job = json.RawMessage("null")
	res, err := e.pub.Apply(e.ctx, swap.ApplyOptions{}, plan)
	if err != nil || res.Status != swap.StatusPublished || res.Plan.Job != nil {
		t.Errorf("a plan whose job is null: %v, %v, job %q; want published, no job", err, res, res.Plan.Job)
	}
}
