package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
)

// factLines writes orders at the fact grain (one row per order_id,
// partitioned by order_date) as NDJSON: id -> day.
func factLines(t *testing.T, orders map[string]string) string {
	t.Helper()
	var b strings.Builder
	for id, day := range orders {
		line, _ := json.Marshal(map[string]any{"order_id": id, "order_date": day, "channel": "web", "amount_cents": 100})
		b.Write(line)
		b.WriteByte('\n')
	}
	return write(t, t.TempDir(), "facts.ndjson", b.String())
}

// TestRebaseNeverCountsAKeyTwice, on every site, through plan then apply:
// a plan stages o9 in 2026-01-01; before it is applied another writer
// publishes o9 into 2026-01-02, which the plan does not declare. The apply
// would rebase over that commit (it touched no planned partition), but
// the moved-records check runs again against what it added: the apply is
// a conflict (exit 4) naming o9, the snapshot and both partitions, with
// the metadata location unchanged, and verify --table still finds the
// grain unique.
func TestRebaseNeverCountsAKeyTwice(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--schema", write(t, s.home, "facts.yaml", factsYAML))
		s.must("publish", "--table", "retail.orders_fact", "--partitions", twoDays, factLines(t, map[string]string{"o1": "2026-01-01", "o2": "2026-01-02"}))
		planFile := filepath.Join(t.TempDir(), "p.json")
		out := s.must("-o", "json", "plan", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-01", "--out", planFile,
			factLines(t, map[string]string{"o1": "2026-01-01", "o9": "2026-01-01"}))
		var plan struct {
			PlanID string `json:"plan_id"`
		}
		if err := json.Unmarshal([]byte(out), &plan); err != nil || plan.PlanID == "" {
			t.Fatalf("plan: %v\n%s", err, out)
		}
		s.must("publish", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-02",
			factLines(t, map[string]string{"o2": "2026-01-02", "o9": "2026-01-02"}))
		before := s.mainState("orders_fact")
		code, _, errs := s.cli("apply", planFile, "--approve", plan.PlanID)
		if code != exitConflict || !strings.Contains(errs, `order_id="o9"`) || !strings.Contains(errs, "order_date=2026-01-01") ||
			!strings.Contains(errs, "order_date=2026-01-02") || !strings.Contains(errs, "snapshot ") {
			t.Errorf("apply over a commit that brought o9 into another partition: exit %d, want %d naming o9, the snapshot and both partitions:\n%s", code, exitConflict, errs)
		}
		if got := s.mainState("orders_fact"); got != before {
			t.Errorf("the refused apply moved the table: %s -> %s", before, got)
		}
		if code, out, errs := s.cli("verify", "--table", "retail.orders_fact"); code != 0 {
			t.Errorf("verify --table after the refused apply: exit %d: %s%s", code, out, errs)
		}
		// A plan whose keys no commit since brought elsewhere is applied
		// over them, and its checks say the moved records passed again.
		planFile = filepath.Join(t.TempDir(), "p.json")
		out = s.must("-o", "json", "plan", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-01", "--out", planFile,
			factLines(t, map[string]string{"o1": "2026-01-01", "o10": "2026-01-01"}))
		if err := json.Unmarshal([]byte(out), &plan); err != nil {
			t.Fatal(err)
		}
		s.must("publish", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-02",
			factLines(t, map[string]string{"o2": "2026-01-02", "o9": "2026-01-02", "o11": "2026-01-02"}))
		out = s.must("-o", "json", "apply", planFile, "--approve", plan.PlanID)
		var res struct {
			CommittedOn int64 `json:"committed_on,string"`
			Plan        struct {
				Checks []swap.Check `json:"checks"`
			} `json:"plan"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(res.Plan.Checks, swap.Check{Name: "moved records", Result: "passed", At: "commit"}) || res.CommittedOn == 0 {
			t.Errorf("an apply rebased over another commit: checks %+v, committed on %d; want moved records passed again at commit", res.Plan.Checks, res.CommittedOn)
		}
	})
}

// TestConcurrentWritersNeverCountAKeyTwice: two processes publish disjoint
// partitions at the same moment (the commit barrier releases them
// together), each bringing the same new key, 20 rounds on PostgreSQL and
// MinIO. The first commit lands; the second, rebasing over it, finds the
// key and is a conflict. After every round, and over main's whole history
// at the end, verify --table finds the grain unique.
func TestConcurrentWritersNeverCountAKeyTwice(t *testing.T) {
	t.Parallel() // processes of its own: runs beside other tests
	s := newShared(t, s3store.MinPartSize)
	if r := s.run("table", "create", "--schema", write(t, s.dir, "facts.yaml", factsYAML)); r.code != 0 {
		t.Fatalf("table create: exit %d: %s", r.code, r.stderr)
	}
	const rounds = 20
	for round := range rounds {
		barrier := t.TempDir()
		key := fmt.Sprintf("n%d", round)
		type writer struct {
			cmd      *exec.Cmd
			out, err *bytes.Buffer
		}
		var ws []writer
		for w, day := range []string{"2026-01-01", "2026-01-02"} {
			// Each writer rebuilds its own day: its earlier key and the new one.
			in := factLines(t, map[string]string{fmt.Sprintf("d%d-%d", w, round): day, key: day})
			cmd, out, errb := s.command([]string{testCommitBarrier + "=" + barrier + ":2"},
				"publish", "--allow-implausible", "--table", "retail.orders_fact", "--partitions", "order_date="+day, in)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ws = append(ws, writer{cmd, out, errb})
		}
		landed, conflicts := 0, 0
		for i := range ws {
			err := ws[i].cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			switch {
			case code == exitOK:
				landed++
			case code == exitConflict && strings.Contains(ws[i].err.String(), `order_id="`+key+`"`):
				conflicts++
			case code == exitRefused && strings.Contains(ws[i].err.String(), "moved"):
				// Staged after the other landed: refused at stage time.
				conflicts++
			default:
				t.Fatalf("round %d: writer %d exit %d: %s%s", round, i, code, ws[i].out, ws[i].err)
			}
		}
		if landed != 1 || conflicts != 1 {
			t.Fatalf("round %d: %d landed, %d refused; want one each", round, landed, conflicts)
		}
		if r := s.run("verify", "--table", "retail.orders_fact"); r.code != 0 {
			t.Fatalf("round %d: verify --table: exit %d: %s%s", round, r.code, r.stdout, r.stderr)
		}

	}
	ctx, pub := s.open()
	tbl, err := pub.Catalog.LoadTable(ctx, []string{"retail", "orders_fact"})
	if err != nil {
		t.Fatal(err)
	}
	meta := tbl.Metadata()
	n := 0
	for _, snap := range table.AncestorsOf(meta.CurrentSnapshot().SnapshotID, meta.SnapshotByID) {
		if _, err := audit.Of(pub.Catalog).VerifyTable(ctx, []string{"retail", "orders_fact"}, snap.SnapshotID); err != nil {
			t.Errorf("snapshot %d of main's history: %v", snap.SnapshotID, err)
		}
		n++
	}
	if n < rounds {
		t.Errorf("main's history holds %d snapshots, want at least %d", n, rounds)
	}
}

// TestOnePlanAppliedAtOnce, on every site: one approved plan applied by
// three processes at once (released together at the commit) commits
// once; every process exits 0, one saying published and the others
// already published, one snapshot records the run, and it verifies.
func TestOnePlanAppliedAtOnce(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		planFile := filepath.Join(t.TempDir(), "p.json")
		in := writeCSVLines(t, filepath.Join(t.TempDir(), "in.csv"), orderLines(400, 2))
		out := s.must("-o", "json", "plan", "--allow-implausible", "--run-id", "approved-once", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", planFile, in)
		var plan struct {
			PlanID string `json:"plan_id"`
		}
		if err := json.Unmarshal([]byte(out), &plan); err != nil {
			t.Fatal(err)
		}
		barrier := t.TempDir()
		var cmds []*exec.Cmd
		var outs, errs []*bytes.Buffer
		for range 3 {
			cmd := s.command("-o", "json", "apply", planFile, "--approve", plan.PlanID)
			cmd.Env = append(cmd.Env, testCommitBarrier+"="+barrier+":3")
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs, errs = append(cmds, cmd), append(outs, &o), append(errs, &e)
		}
		statuses := map[string]int{}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Errorf("apply %d: %v: %s%s", i, err, outs[i], errs[i])
				continue
			}
			var res struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal(outs[i].Bytes(), &res)
			statuses[res.Status]++
		}
		if statuses["published"] != 1 || statuses["already-published"] != 2 {
			t.Errorf("three applies of one plan: %v, want one published and two already published", statuses)
		}
		if code, out, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", "approved-once"); code != 0 {
			t.Errorf("verify the run: exit %d: %s%s", code, out, errs)
		}
		if code, out, errs := s.cli("verify", "--table", "retail.daily_orders"); code != 0 {
			t.Errorf("verify --table: exit %d: %s%s", code, out, errs)
		}
	})
}

// TestBatchesNeverSplitAMove, on every site, in batches and their resume:
// o100 moves from 2026-01-02 to 2026-01-01 within a run committed one
// partition at a time. The plan shows the two days in one batch; the run,
// killed as it makes its second commit and resumed, never leaves main at a
// snapshot that holds o100 twice, which verify --table checks at every
// snapshot of main's history.
func TestBatchesNeverSplitAMove(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--schema", write(t, s.home, "facts.yaml", factsYAML))
		const threeDays = "order_date=2026-01-01..2026-01-03"
		s.must("publish", "--table", "retail.orders_fact", "--partitions", threeDays,
			factLines(t, map[string]string{"o1": "2026-01-01", "o100": "2026-01-02", "o2": "2026-01-02", "o3": "2026-01-03"}))
		moved := factLines(t, map[string]string{"o1": "2026-01-01", "o100": "2026-01-01", "o2": "2026-01-02", "o3": "2026-01-03", "o4": "2026-01-03"})
		out := s.must("plan", "--commit-per-partition", "--table", "retail.orders_fact", "--partitions", threeDays, "--out", filepath.Join(t.TempDir(), "p.json"), moved)
		if !strings.Contains(out, "in 2 batches") || !strings.Contains(out, "batch 1/2: order_date=2026-01-01, order_date=2026-01-02 (they exchange records)") {
			t.Errorf("the plan does not show the move's days in one batch:\n%s", out)
		}
		cmd := s.command("publish", "--commit-per-partition", "--run-id", "moves", "--table", "retail.orders_fact", "--partitions", threeDays, moved)
		cmd.Env = append(cmd.Env, "LAKESWAP_TEST_KILL_AT_COMMIT=2")
		if err := cmd.Run(); err == nil {
			t.Fatal("the publish told to die at its second commit exited 0")
		}
		if code, out, errs := s.cli("verify", "--table", "retail.orders_fact"); code != 0 {
			t.Errorf("verify --table between the batches: exit %d: %s%s", code, out, errs)
		}
		s.must("publish", "--commit-per-partition", "--run-id", "moves", "--table", "retail.orders_fact", "--partitions", threeDays, moved)
		ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
		if err != nil {
			t.Fatal(err)
		}
		defer cat.Close()
		tbl, err := cat.LoadTable(ctx, []string{"retail", "orders_fact"})
		if err != nil {
			t.Fatal(err)
		}
		meta := tbl.Metadata()
		n := 0
		for _, snap := range table.AncestorsOf(meta.CurrentSnapshot().SnapshotID, meta.SnapshotByID) {
			if code, out, errs := s.cli("verify", "--table", "retail.orders_fact", "--at", fmt.Sprint(snap.SnapshotID)); code != 0 {
				t.Errorf("verify --table at snapshot %d: exit %d: %s%s", snap.SnapshotID, code, out, errs)
			}
			n++
		}
		if n != 3 {
			t.Errorf("main's history holds %d snapshots, want the first load and two batches", n)
		}
	})
}

// TestOneRunNeverStagesAKeyTwice: an input that puts o9 in two of the
// run's partitions is refused naming o9 and both, on a new table (no other
// partition holds files) and on one whose other partitions hold files,
// through publish and plan; the table is unchanged.
func TestOneRunNeverStagesAKeyTwice(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", write(t, home, "facts.yaml", factsYAML)); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	twice := func() string {
		return write(t, t.TempDir(), "twice.ndjson", `{"order_id":"o1","order_date":"2026-01-01","channel":"web","amount_cents":1}
{"order_id":"o9","order_date":"2026-01-01","channel":"web","amount_cents":1}
{"order_id":"o9","order_date":"2026-01-02","channel":"web","amount_cents":1}
`)
	}
	for _, cmd := range [][]string{
		{"publish", "--table", "retail.orders_fact", "--partitions", twoDays},
		{"plan", "--table", "retail.orders_fact", "--partitions", twoDays, "--out", filepath.Join(t.TempDir(), "p.json")},
	} {
		before := warehouseFiles(t, home)
		code, _, errs := cli(t, home, append(cmd, twice())...)
		if code != exitRefused || !strings.Contains(errs, "o9") || !strings.Contains(errs, "order_date=2026-01-01") || !strings.Contains(errs, "order_date=2026-01-02") {
			t.Errorf("%s of o9 in two partitions: exit %d, want %d naming o9 and both days:\n%s", cmd[0], code, exitRefused, errs)
		}
		if after := warehouseFiles(t, home); !slices.Equal(before, after) {
			t.Errorf("%s: the refused run changed the warehouse: %v -> %v", cmd[0], before, after)
		}
	}
	// Shards staged apart, one key in each: applied together, refused.
	var files, ids []string
	for _, day := range []string{"2026-01-01", "2026-01-02"} {
		f := filepath.Join(t.TempDir(), "shard.json")
		code, out, errs := cli(t, home, "-o", "json", "plan", "--run-id", "sharded", "--table", "retail.orders_fact", "--partitions", "order_date="+day, "--out", f,
			factLines(t, map[string]string{"o7": day, "own-" + day: day}))
		var pv struct {
			PlanID string `json:"plan_id"`
		}
		if err := json.Unmarshal([]byte(out), &pv); code != 0 || err != nil {
			t.Fatalf("plan shard %s: exit %d, %v: %s", day, code, err, errs)
		}
		files, ids = append(files, f), append(ids, pv.PlanID)
	}
	before := dataOnly(warehouseFiles(t, home))
	code, _, errs := cli(t, home, "apply", files[0], files[1], "--approve", strings.Join(ids, ","))
	if code != exitRefused || !strings.Contains(errs, `order_id="o7"`) {
		t.Errorf("shards that each stage o7: exit %d, want %d naming o7: %s", code, exitRefused, errs)
	}
	if after := dataOnly(warehouseFiles(t, home)); !slices.Equal(before, after) {
		t.Errorf("the refused apply changed the warehouse: %v -> %v", before, after)
	}
	// With another partition holding files, the same check runs beside the
	// moved-records one.
	if code, _, errs := cli(t, home, "publish", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-05",
		factLines(t, map[string]string{"o5": "2026-01-05"})); code != 0 {
		t.Fatalf("publish 2026-01-05: exit %d: %s", code, errs)
	}
	before = warehouseFiles(t, home)
	if code, _, errs := cli(t, home, "publish", "--table", "retail.orders_fact", "--partitions", twoDays, twice()); code != exitRefused || !strings.Contains(errs, "o9") {
		t.Errorf("with another partition holding files: exit %d: %s", code, errs)
	}
	if after := warehouseFiles(t, home); !slices.Equal(before, after) {
		t.Error("the refused run changed the table's files or metadata")
	}
}

// TestScopedRollbackNeverCountsAKeyTwice: run R empties 2026-01-05, which
// held o5; another writer then publishes o5 into 2026-01-06. Undoing R
// with --scoped would put o5 back beside it: the rollback is refused
// (exit 7) naming o5, the snapshot and both partitions, and the table is
// unchanged.
func TestScopedRollbackNeverCountsAKeyTwice(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", write(t, home, "facts.yaml", factsYAML)); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	must := func(args ...string) {
		t.Helper()
		if code, out, errs := cli(t, home, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s%s", args, code, out, errs)
		}
	}
	must("publish", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-01,2026-01-05",
		factLines(t, map[string]string{"o1": "2026-01-01", "o5": "2026-01-05"}))
	must("publish", "--run-id", "R", "--allow-empty", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-05",
		write(t, t.TempDir(), "none.ndjson", ""))
	must("publish", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-06",
		factLines(t, map[string]string{"o5": "2026-01-06"}))
	before := warehouseFiles(t, home)
	code, _, errs := cli(t, home, "rollback", "--table", "retail.orders_fact", "--run", "R", "--scoped")
	if code != exitRollbackRefuse || !strings.Contains(errs, `order_id="o5"`) || !strings.Contains(errs, "order_date=2026-01-05") || !strings.Contains(errs, "order_date=2026-01-06") {
		t.Errorf("scoped rollback that would put o5 back: exit %d, want %d naming o5 and both days: %s", code, exitRollbackRefuse, errs)
	}
	if after := warehouseFiles(t, home); !slices.Equal(before, after) {
		t.Errorf("the refused rollback changed the warehouse")
	}
	if code, out, errs := cli(t, home, "verify", "--table", "retail.orders_fact"); code != 0 {
		t.Errorf("verify --table: exit %d: %s%s", code, out, errs)
	}
}
