package main

// Run files tried as a careless or hostile user would (sqlite+local): a
// write that fails part way, a run file gone (status, rollback, a rerun),
// two writers racing.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakeswap/lakeswap/runrecord"
)

// runDays is n days from 2025-01-01, one row each, as NDJSON, and the
// selector naming them.
func runDays(t *testing.T, n, cents int) (string, string) {
	t.Helper()
	var b strings.Builder
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		fmt.Fprintf(&b, `{"order_date":"%s","channel":"web","order_count":1,"amount_cents":%d}`+"\n", start.AddDate(0, 0, i).Format(time.DateOnly), cents)
	}
	return write(t, t.TempDir(), "in.ndjson", b.String()), "order_date=2025-01-01.." + start.AddDate(0, 0, n-1).Format(time.DateOnly)
}

// runSite is a local site with eng.days holding run "big" of n days,
// and the run file its summary names.
func runSite(t *testing.T, n int) (*site, string) {
	t.Helper()
	s := newSite(t, "sqlite+local")
	s.must("table", "create", "--table", "eng.days", "--schema", filepath.Join("..", "..", "examples", "retail", "daily_orders.table.yaml"))
	in, sel := runDays(t, n, 100)
	s.must("publish", "--run-id", "big", "--table", "eng.days", "--partitions", sel, in)
	return s, runFileOf(t, s, "big")
}

func runFileOf(t *testing.T, s *site, run string) string {
	t.Helper()
	_, loaded, done := engineTable(t, s, "days")
	defer done()
	snap := runrecord.Find(loaded.Metadata(), run)
	if snap == nil {
		t.Fatalf("no snapshot records run %s", run)
	}
	file := snap.Summary.Properties[runrecord.PropRunFile]
	if file == "" {
		t.Fatalf("run %s has no run file", run)
	}
	return file
}

func localPathOf(loc string) string { return strings.TrimPrefix(loc, "file://") }

// TestRunFileWriteFailureLeavesOthers: two runs whose
// detail is the same (the same content put back into the same days: A,
// then B, then C = A's content under a new run id) share one
// content-addressed run file, and WriteRunFile rewrites it in place
// (os.WriteFile: truncate, then write). A later run whose write fails
// part way (a full disk; here a file size limit) says "nothing was
// committed", and has destroyed run A's committed record: verify --run A
// fails, and so would rollback, status and resume.
func TestRunFileWriteFailureLeavesOthers(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit") // util-linux
	if err != nil {
		t.Fatal(err)
	}
	const days = 500 // a run file of ~52 KB; SQLite's WAL index needs 32 KB
	s, fileA := runSite(t, days)
	inB, sel := runDays(t, days, 200)
	s.must("publish", "--run-id", "b", "--table", "eng.days", "--partitions", sel, inB)
	inA, _ := runDays(t, days, 100)
	cmd := s.command("publish", "--run-id", "c", "--table", "eng.days", "--partitions", sel, inA)
	cmd.Args = append([]string{prlimit, "--fsize=40000", "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = prlimit
	out, err := cmd.CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("write run file ")) || bytes.Contains(out, []byte("write run file "+fileA)) {
		t.Fatalf("run c, limited to 40000-byte files, was meant to fail writing a run file of its own, not run big's %s: %v\n%s", fileA, err, out)
	}
	for _, f := range s.files() {
		if strings.Contains(f, "/lakeswap/runs/") && f != fileA && f != runFileOf(t, s, "b") {
			t.Errorf("run c's failed write left %s", f)
		}
	}
	if code, _, errs := s.cli("verify", "--table", "eng.days", "--run", "big"); code != 0 {
		t.Errorf("a later run's failed write (it said nothing was committed) broke run big's record: verify exits %d: %s", code, errs)
	}
}

// TestRunFileMissingStatus: status answers whether a run
// landed from the table's history; the summary records the run id, so a
// run whose run file is gone landed. status says "commit outcome unknown"
// (exit 5), the answer that tells an orchestrator nothing is known.
func TestRunFileMissingStatus(t *testing.T) {
	s, file := runSite(t, 30)
	if err := os.Remove(localPathOf(file)); err != nil {
		t.Fatal(err)
	}
	code, out, errs := s.cli("-o", "json", "status", "--table", "eng.days", "--run", "big")
	if code != 0 || !strings.Contains(out, `"landed": true`) || !strings.Contains(out, "problem") {
		t.Errorf("status of a run that landed (its run file missing) exits %d: %s%s", code, out, errs)
	}
}

// TestRunFileMissingRollback: a full rollback points main at
// the snapshot the run replaced; it needs the run's partitions only for
// its check. With the run file gone the run cannot be rolled back at
// all, not even with --force: the way back of the run is lost with its
// detail.
func TestRunFileMissingRollback(t *testing.T) {
	s, _ := runSite(t, 30)
	in, sel := runDays(t, 30, 300)
	s.must("publish", "--run-id", "bad", "--table", "eng.days", "--partitions", sel, in)
	if err := os.Remove(localPathOf(runFileOf(t, s, "bad"))); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := s.cli("rollback", "--table", "eng.days", "--run", "bad"); code != 0 || !strings.Contains(out, "warning: the rollback is not checked") {
		t.Errorf("rollback of run bad, whose run file is missing, exits %d: %s%s", code, out, errs)
	}
	if got := verifiesRun(s, "big"); !got {
		t.Errorf("after the rollback main does not hold run big")
	}
}

// TestRunFileRefusedCommitRemovesIt: two writers race for the same
// days; the loser's commit is refused ("nothing was committed ... removed
// the manifest files the refused commit wrote; removed the files it
// staged"), but its run file, written before the commit through the raw
// IO (not the RecordingIO RemoveWritten empties), stayed: named by no
// snapshot, until gc's grace had passed. The same holds for a scoped
// rollback's commitUndo.
func TestRunFileRefusedCommitRemovesIt(t *testing.T) {
	s, _ := runSite(t, 30)
	barrier := t.TempDir()
	var outs [2]bytes.Buffer
	var cmds [2]*exec.Cmd
	for i := range cmds {
		in, sel := runDays(t, 30, 200+i)
		cmds[i] = s.command("publish", "--table", "eng.days", "--partitions", sel, in)
		cmds[i].Env = append(cmds[i].Env, testCommitBarrier+"="+barrier+":2")
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	failed := 0
	for i := range cmds {
		if cmds[i].Wait() != nil {
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("%d of the two racing writers failed, not 1:\n%s\n%s", failed, outs[0].String(), outs[1].String())
	}
	_, tbl, done := engineTable(t, s, "days")
	named := map[string]bool{}
	for _, sn := range tbl.Metadata().Snapshots() {
		named[sn.Summary.Properties[runrecord.PropRunFile]] = true
	}
	done()
	for _, f := range s.files() {
		if strings.Contains(f, "/lakeswap/runs/") && !named[f] {
			t.Errorf("the refused commit left run file %s, named by no snapshot", f)
		}
	}
}

// TestRunFileMissingRerun: a rerun of a recorded run id whose
// run file cannot be read stages the run again, then fails in rerun
// before it discards the attempt: the 30 staged files stay (only gc,
// after its grace period, takes them), and the error says nothing of
// them.
func TestRunFileMissingRerun(t *testing.T) {
	s, file := runSite(t, 30)
	if err := os.Remove(localPathOf(file)); err != nil {
		t.Fatal(err)
	}
	before := len(s.files())
	in, sel := runDays(t, 30, 100)
	code, _, errs := s.cli("publish", "--run-id", "big", "--table", "eng.days", "--partitions", sel, in)
	if code == 0 || !strings.Contains(errs, localPathOf(file)) {
		t.Fatalf("the rerun of a run whose run file is gone: exit %d: %s", code, errs)
	}
	if after := len(s.files()); after != before {
		t.Errorf("the failed rerun left %d file(s) behind: %s", after-before, errs)
	}
}

// verifiesRun reports whether verify --run passes.
func verifiesRun(s *site, run string) bool {
	code, _, _ := s.cli("verify", "--table", "eng.days", "--run", run)
	return code == 0
}

// TestGCRunFiles: gc lists and removes a run file no snapshot names once
// it is older than the grace (a commit whose outcome was never settled
// left it, or its snapshot expired), and keeps one a snapshot names,
// however old, a young one (an attempt about to commit) and one of a run
// whose attempt still holds its files (a commit that may land late).
func TestGCRunFiles(t *testing.T) {
	s, named := runSite(t, 30)
	dir := filepath.Dir(localPathOf(named))
	old, young := filepath.Join(dir, strings.Repeat("a", 64)+".json"), filepath.Join(dir, strings.Repeat("b", 64)+".json")
	for _, f := range []string{old, young} {
		if err := os.WriteFile(f, []byte(`{"run_id":"lost"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An old run file of a run whose attempt still holds its files: its
	// commit may yet land, naming it.
	held := filepath.Join(dir, strings.Repeat("c", 64)+".json")
	if err := os.WriteFile(held, []byte(`{"run_id":"late"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	holds := filepath.Join(filepath.Dir(filepath.Dir(dir)), "lakeswap", "holds")
	if err := os.MkdirAll(holds, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	if err := os.WriteFile(filepath.Join(holds, "late-0123abcd.json"), []byte(`{"run_id":"late","attempt":"0123abcd","kind":"run","created":"`+now+`","refreshed":"`+now+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-48 * time.Hour)
	for _, f := range []string{old, held, localPathOf(named)} {
		if err := os.Chtimes(f, long, long); err != nil {
			t.Fatal(err)
		}
	}
	meta := s.metadata("eng.days")
	out := s.must("gc", "--table", "eng.days")
	if !strings.Contains(out, old) || strings.Contains(out, young) || strings.Contains(out, held) || strings.Contains(out, localPathOf(named)) {
		t.Errorf("dry run lists, want only %s:\n%s", old, out)
	}
	s.must("gc", "--table", "eng.days", "--yes")
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("gc --yes left the unnamed run file past the grace: %v", err)
	}
	for _, f := range []string{young, held, localPathOf(named)} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("gc --yes removed %s: %v", f, err)
		}
	}
	if s.metadata("eng.days") != meta {
		t.Error("gc of run files moved the table")
	}
	if code, out, errs := s.cli("verify", "--table", "eng.days", "--run", "big"); code != 0 {
		t.Errorf("verify --run big after gc: exit %d: %s%s", code, out, errs)
	}
}
