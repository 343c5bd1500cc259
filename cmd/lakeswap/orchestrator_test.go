package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOrchestratorAnswers drives lakeswap as an orchestrator does, with
// its own run ids and -o json, and checks the documented answer at each
// step: publish, status, a retry, a run that finds its content already
// there, a conflict, a rollback, status again.
func TestOrchestratorAnswers(t *testing.T) {
	for _, name := range []string{"sqlite+local", "postgres+minio"} {
		t.Run(name, func(t *testing.T) {
			s := newSite(t, name)
			s.createDaily()
			in := batch2Input(t)
			type answer struct {
				SchemaVersion int    `json:"schema_version"`
				Status        string `json:"status"`
				RunID         string `json:"run_id"`
				SnapshotID    string `json:"snapshot_id"`
				Kind          string `json:"kind"`
				Message       string `json:"message"`
				Hint          string `json:"hint"`
			}
			ask := func(want int, args ...string) answer {
				t.Helper()
				code, out, errs := s.cli(append([]string{"-o", "json"}, args...)...)
				var a answer
				if err := json.Unmarshal([]byte(out), &a); err != nil || a.SchemaVersion != 1 {
					t.Fatalf("%v: not a JSON document of schema_version 1 (%v):\n%s%s", args, err, out, errs)
				}
				if code != want {
					t.Fatalf("%v: exit %d, want %d:\n%s%s", args, code, want, out, errs)
				}
				return a
			}

			first := ask(0, "publish", "--run-id", "dag-1", "--table", "retail.daily_orders", "--partitions", twoDays, in)
			if first.Status != "published" || first.SnapshotID == "" {
				t.Fatalf("publish: %+v", first)
			}
			if st := ask(0, "status", "--table", "retail.daily_orders", "--run", "dag-1"); st.Status != "on-main" || st.SnapshotID != first.SnapshotID {
				t.Errorf("status after publish: %+v", st)
			}
			// A retry of the same task, after a lost answer.
			if again := ask(0, "publish", "--run-id", "dag-1", "--table", "retail.daily_orders", "--partitions", twoDays, in); again.Status != "already-published" || again.SnapshotID != first.SnapshotID {
				t.Errorf("retry: %+v", again)
			}
			// Another run of the same content commits nothing: the table,
			// its metadata and data files, stays as it was; the run's
			// record is kept beside them, and status answers from it.
			meta, data := s.mainState("daily_orders"), s.data()
			if same := ask(0, "publish", "--run-id", "dag-2", "--table", "retail.daily_orders", "--partitions", twoDays, in); same.Status != "unchanged" {
				t.Errorf("the same content again: %+v", same)
			}
			if s.mainState("daily_orders") != meta || !slices.Equal(s.data(), data) {
				t.Errorf("an unchanged run changed the table")
			}
			if st := ask(0, "status", "--table", "retail.daily_orders", "--run", "dag-2"); st.Status != "unchanged" || st.SnapshotID != first.SnapshotID {
				t.Errorf("status of an unchanged run: %+v, want unchanged at snapshot %s", st, first.SnapshotID)
			}
			if code, text, errs := s.cli("status", "--table", "retail.daily_orders", "--run", "dag-2"); code != 0 || !strings.Contains(text, "run dag-2 is unchanged") || !strings.Contains(text, "as snapshot "+first.SnapshotID) {
				t.Errorf("status of an unchanged run, as text: exit %d: %s%s", code, text, errs)
			}
			// A plan of the same content: planned, then applied as a no-op.
			samePlan := filepath.Join(t.TempDir(), "dag-2p.json")
			planned2 := ask(0, "plan", "--run-id", "dag-2p", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", samePlan, in)
			if planned2.Status != "planned" && planned2.Status != "unchanged" {
				t.Errorf("plan of the same content: %+v", planned2)
			}
			t.Logf("plan of the same content: %s", planned2.Status)
			if planned2.Status == "planned" {
				var pid struct {
					PlanID string `json:"plan_id"`
				}
				_, out, _ := s.cli("-o", "json", "show", samePlan)
				_ = json.Unmarshal([]byte(out), &pid)
				if a := ask(0, "apply", samePlan, "--approve", pid.PlanID); a.Status != "unchanged" {
					t.Errorf("apply of a plan of the same content: %+v", a)
				}
			}
			if st := ask(0, "status", "--table", "retail.daily_orders", "--run", "dag-2p"); st.Status != "unchanged" || st.SnapshotID != first.SnapshotID {
				t.Errorf("status of an unchanged plan's run: %+v (plan said %s)", st, planned2.Status)
			}
			if st := ask(exitError, "status", "--table", "retail.daily_orders", "--run", "dag-never"); st.Kind != "not-found" {
				t.Errorf("status of an unknown run: %+v", st)
			}

			// A conflict: a plan, then another run on its partitions.
			plan := filepath.Join(t.TempDir(), "dag-3.json")
			planned := ask(0, "plan", "--run-id", "dag-3", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", plan, newHomeInput(t))
			ask(0, "publish", "--run-id", "dag-4", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t))
			pf := planOf(t, plan)
			conflict := ask(exitConflict, "apply", plan, "--approve", pf.PlanID)
			if conflict.Kind != "conflict" || !strings.Contains(conflict.Hint, " discard "+plan+"`") || strings.Contains(conflict.Message, "refresh and try again") {
				t.Errorf("a conflict on apply: %+v", conflict)
			}
			if code, out, _ := s.cli("apply", plan, "--approve", pf.PlanID); code != exitConflict || strings.Contains(out, "OLD") || strings.Contains(out, "published") {
				t.Errorf("a conflict prints the run as if it had published: exit %d\n%s", code, out)
			}
			// The hint's way on works: discard removes what the plan staged.
			s.must("discard", plan)
			for _, f := range s.data() {
				if strings.Contains(f, "/run-dag-3-") {
					t.Errorf("after discard the plan's file %s is left", f)
				}
			}
			_ = planned

			// A rollback, and status of the run it undid.
			ask(0, "rollback", "--table", "retail.daily_orders", "--run", "dag-4")
			if st := ask(0, "status", "--table", "retail.daily_orders", "--run", "dag-4"); st.Status != "off-main" {
				t.Errorf("status after the rollback: %+v", st)
			}
		})
	}
}
