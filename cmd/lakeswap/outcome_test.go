package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLostCommitAnswers: a catalog that answers a commit with an error
// leaves its outcome to be read from the table. One that applied the commit
// first: the run is found and published (exit 0). One that failed before
// applying it: the run did not land (exit 1), and status says so. One that
// stays unreachable: exit 5, and status, once the catalog answers again,
// says the run landed. No staged file is deleted in any of them.
func TestLostCommitAnswers(t *testing.T) {
	t.Parallel() // waits out the outcome backoff: runs beside other tests
	cases := []struct {
		fault  string
		code   int
		landed bool
		says   string
	}{
		{"after-commit", exitOK, true, ""},
		{"before-commit", exitError, false, "did not land"},
		{"unreachable", exitUnknown, true, "lakeswap status --table retail.daily_orders --run lost-unreachable"},
	}
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		in := batch2Input(t)
		for _, c := range cases {
			t.Run(c.fault, func(t *testing.T) {
				run := "lost-" + c.fault
				meta := s.metadata("daily_orders")
				cmd := s.command("publish", "--run-id", run, "--table", "retail.daily_orders", "--partitions", twoDays, in)
				if cmd.Env == nil {
					cmd.Env = os.Environ()
				}
				cmd.Env = append(cmd.Env, testCatalogFault+"="+c.fault)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				if code != c.code || !strings.Contains(stderr.String(), c.says) {
					t.Fatalf("publish with the catalog's answer lost (%s): exit %d, want %d saying %q: %s", c.fault, code, c.code, c.says, stderr.String())
				}
				staged := s.runFiles(run)
				if len(staged) != 2 {
					t.Errorf("the run's staged files: %v, want both kept", staged)
				}
				if moved := s.metadata("daily_orders") != meta; moved != c.landed {
					t.Errorf("metadata moved: %v, want %v", moved, c.landed)
				}
				scode, out, errs := s.cli("status", "--table", "retail.daily_orders", "--run", run)
				if c.landed && (scode != 0 || !strings.Contains(out, "run "+run+" landed as snapshot") || !strings.Contains(out, "main holds it")) {
					t.Errorf("status of a landed run: exit %d: %s%s", scode, out, errs)
				}
				if !c.landed && (scode != exitError || !strings.Contains(errs, "records run "+run+": it did not land")) {
					t.Errorf("status of a run that did not land: exit %d: %s%s", scode, out, errs)
				}
				if c.landed {
					if code, _, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", run); code != 0 {
						t.Errorf("verify: exit %d: %s", code, errs)
					}
					// Put the table back for the next case.
					s.must("rollback", "--table", "retail.daily_orders", "--run", run)
				}
				for _, f := range s.runFiles(run) {
					s.remove(f)
				}
			})
		}
	})
}

// TestLostAnswerToAScopedRollback: a scoped rollback whose commit the
// catalog answers with an error after applying it is found in the table
// and reported as done, not as a failure that a retry would then refuse.
func TestLostAnswerToAScopedRollback(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.createDaily()
	s.must("publish", "--run-id", "b2", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))
	other := write(t, t.TempDir(), "other.ndjson", "{\"order_date\":\"2026-01-05\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n")
	s.must("publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-05", other)
	cmd := s.command("rollback", "--scoped", "--run", "b2", "--table", "retail.daily_orders")
	cmd.Env = append(os.Environ(), testCatalogFault+"=after-commit")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rolled back run b2's partitions") {
		t.Fatalf("scoped rollback with its answer lost: %v: %s", err, out)
	}
	if st := s.must("status", "--table", "retail.daily_orders", "--run", "rollback-b2"); !strings.Contains(st, "main holds it") {
		t.Errorf("status of the rollback: %s", st)
	}
}

// TestLostAnswerToARollback: a rollback whose commit the catalog answers
// with an error after applying it is found in the table (main moved back)
// and reported as done, its fingerprint checked.
func TestLostAnswerToARollback(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.createDaily()
	s.must("publish", "--run-id", "b2", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))
	cmd := s.command("rollback", "--run", "b2", "--table", "retail.daily_orders")
	cmd.Env = append(os.Environ(), testCatalogFault+"=after-commit")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rolled back run b2") || !strings.Contains(string(out), "as recorded before the run") {
		t.Fatalf("rollback with its answer lost: %v: %s", err, out)
	}
	if code, out, _ := s.cli("status", "--table", "retail.daily_orders", "--run", "b2"); code != 0 || !strings.Contains(out, "main no longer holds it") {
		t.Errorf("status of the rolled-back run: exit %d: %s", code, out)
	}
}
