package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/swap"
)

// TestOrchestratorRunIDs: a run id is any printable text up to 200 bytes,
// an orchestrator's own id as it gives it: Airflow's, one with a slash,
// spaces and letters beyond ASCII, and one of 200 bytes whose escape is
// shortened. Each publishes, and is found by status, verify and rollback;
// plan then apply takes one too. Control characters, over 200 bytes and
// invalid UTF-8 are refused (exit 2) with nothing changed.
func TestOrchestratorRunIDs(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		long := strings.Repeat("ä/", 66) + "xx" // 200 bytes, 600 escaped
		for i, id := range []string{"scheduled__2026-01-01T00:00:00+00:00", "backfill März/2026 #1 ?x=1&y", ".hidden/../run", long} {
			in := batch2Input(t)
			if i%2 == 1 {
				in = newHomeInput(t)
			}
			meta := s.metadata("daily_orders")
			code, out, errs := s.cli("-o", "json", "publish", "--run-id", id, "--table", "retail.daily_orders", "--partitions", twoDays, in)
			var res struct {
				RunID string `json:"run_id"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.RunID != id {
				t.Fatalf("publish --run-id %q: exit %d: %s%s", id, code, out, errs)
			}
			if s.metadata("daily_orders") == meta {
				t.Fatalf("run %q committed nothing", id)
			}
			staged := s.runFiles(id)
			if len(staged) != 2 {
				t.Errorf("run %q: files %v, want 2 under run-%s-<attempt>", id, staged, swap.RunSegment(id))
			}
			for _, f := range append(staged, s.files()...) {
				if strings.Contains(f, "/.") {
					t.Errorf("a hidden file: %s", f)
				}
			}
			for _, f := range staged {
				if seg := strings.Split(f, "/"); len(seg[len(seg)-2]) > 255 {
					t.Errorf("a folder name of %d bytes: %s", len(seg[len(seg)-2]), f)
				}
			}
			if st := s.must("status", "--table", "retail.daily_orders", "--run", id); !strings.Contains(st, "main holds it") {
				t.Errorf("status --run %q: %s", id, st)
			}
			s.must("verify", "--table", "retail.daily_orders", "--run", id)
			if h := s.must("-o", "json", "history", "--table", "retail.daily_orders"); !strings.Contains(h, mustJSON(t, id)) {
				t.Errorf("history does not show run %q: %s", id, h)
			}
		}
		s.must("rollback", "--table", "retail.daily_orders", "--run", long)

		plan := filepath.Join(t.TempDir(), "p.json")
		id := "manual__2026-02-01T00:00:00+00:00"
		s.must("plan", "--run-id", id, "--out", plan, "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t))
		pf, err := swap.ReadPlan(plan)
		if err != nil || pf.Plan.RunID != id {
			t.Fatalf("plan of run %q: %v", id, err)
		}
		s.must("apply", plan, "--approve", pf.PlanID)
		s.must("verify", "--table", "retail.daily_orders", "--run", id)

		meta, files := s.metadata("daily_orders"), s.files()
		for _, bad := range []string{"tab\there", "bell\a", strings.Repeat("x", 201), "\xff\xfe", " ", "x "} {
			code, _, errs := s.cli("publish", "--run-id", bad, "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))
			if code != exitUsage || !strings.Contains(errs, "run id") {
				t.Errorf("publish --run-id %q: exit %d: %s; want %d", bad, code, errs, exitUsage)
			}
		}
		if s.metadata("daily_orders") != meta || len(s.files()) != len(files) {
			t.Error("a refused run id changed the table or its files")
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
