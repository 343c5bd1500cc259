package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryCommandPrintsJSON: each command's -o json, on success and on
// failure, as a script reads it (each output is also validated against
// docs/json, as every output of the tests is): snapshot ids are strings
// that read back as the exact id, run_id and status are at the top, and a
// failure is one error object with the same top.
func TestEveryCommandPrintsJSON(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		type top struct {
			RunID      string          `json:"run_id"`
			SnapshotID json.RawMessage `json:"snapshot_id"`
			Status     string          `json:"status"`
			Code       int             `json:"code"`
			Kind       string          `json:"kind"`
		}
		run := func(wantCode int, args ...string) top {
			t.Helper()
			code, out, errs := s.cli(append([]string{"-o", "json"}, args...)...)
			var v top
			if err := json.Unmarshal([]byte(out), &v); err != nil || code != wantCode {
				t.Fatalf("lakeswap -o json %v: exit %d (want %d), %v: %s%s", args, code, wantCode, err, out, errs)
			}
			if len(v.SnapshotID) > 0 {
				id, err := strconv.Unquote(string(v.SnapshotID))
				if _, perr := strconv.ParseInt(id, 10, 64); err != nil || perr != nil {
					t.Errorf("%v: snapshot_id %s is not an id as a string", args, v.SnapshotID)
				}
			}
			return v
		}
		s.must("table", "create", "--schema", write(t, s.home, "daily_orders.yaml", schemaYAML))
		s.must("table", "describe", "--table", "retail.daily_orders")
		run(0, "table", "set", "--table", "retail.daily_orders", "lakeswap.plausible-band=0.1:10")
		if v := run(0, "publish", "--run-id", "j1", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t)); v.RunID != "j1" || v.Status != "published" || len(v.SnapshotID) == 0 {
			t.Errorf("publish: %+v", v)
		}
		if v := run(0, "publish", "--run-id", "j1", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t)); v.Status != "already-published" {
			t.Errorf("publish again: %+v", v)
		}
		plan := filepath.Join(t.TempDir(), "p.json")
		if v := run(0, "plan", "--run-id", "j2", "--out", plan, "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t)); v.Status != "planned" || v.RunID != "j2" {
			t.Errorf("plan: %+v", v)
		}
		run(0, "show", plan)
		discarded := filepath.Join(t.TempDir(), "d.json")
		run(0, "plan", "--run-id", "j3", "--out", discarded, "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))
		if v := run(0, "discard", discarded); v.Status != "discarded" || v.RunID != "j3" {
			t.Errorf("discard: %+v", v)
		}
		var planned struct {
			PlanID string `json:"plan_id"`
		}
		_ = json.Unmarshal([]byte(s.must("-o", "json", "show", plan)), &planned)
		applied := run(0, "apply", plan, "--approve", planned.PlanID)
		if applied.Status != "published" || applied.RunID != "j2" {
			t.Errorf("apply: %+v", applied)
		}
		if v := run(0, "status", "--table", "retail.daily_orders", "--run", "j2"); v.Status != "on-main" || string(v.SnapshotID) != string(applied.SnapshotID) {
			t.Errorf("status: %+v, want on-main at %s", v, applied.SnapshotID)
		}
		if v := run(0, "verify", "--table", "retail.daily_orders", "--run", "j2"); v.Status != "verified" {
			t.Errorf("verify: %+v", v)
		}
		run(0, "verify", "--table", "retail.daily_orders")
		run(0, "history", "--table", "retail.daily_orders")
		if v := run(0, "rollback", "--table", "retail.daily_orders", "--run", "j2"); v.Status != "rolled-back" || len(v.SnapshotID) == 0 {
			t.Errorf("rollback: %+v", v)
		}
		if v := run(0, "rollback", "--table", "retail.daily_orders", "--run", "j2"); v.Status != "already-rolled-back" {
			t.Errorf("rollback again: %+v", v)
		}
		if v := run(0, "status", "--table", "retail.daily_orders", "--run", "j2"); v.Status != "off-main" {
			t.Errorf("status after the rollback: %+v", v)
		}
		run(0, "gc", "--table", "retail.daily_orders")
		run(0, "version")
		run(0, "doctor")

		// Failures: one error object, its top filled from the result.
		bad := write(t, t.TempDir(), "bad.ndjson", `{"order_date":"2026-01-05","channel":"web","order_count":1,"amount_cents":1}`+"\n")
		if v := run(exitRefused, "publish", "--run-id", "j4", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", bad); v.Status != "refused" || v.RunID != "j4" || v.Kind != "refused" {
			t.Errorf("a refused publish: %+v", v)
		}
		if v := run(exitError, "status", "--table", "retail.daily_orders", "--run", "nowhere"); v.Code != exitError || v.RunID != "nowhere" {
			t.Errorf("status of no run: %+v", v)
		}
		if v := run(exitError, "verify", "--table", "retail.daily_orders", "--run", "nowhere"); v.RunID != "nowhere" || v.Status != v.Kind {
			t.Errorf("verify of no run: %+v", v)
		}
		if v := run(exitUsage, "table", "bogus"); v.Kind != "usage" || v.Status != "usage" {
			t.Errorf("an unknown command: %+v", v)
		}
		if v := run(exitUsage, "bogus"); v.Kind != "usage" {
			t.Errorf("an unknown command at the top: %+v", v)
		}
		if v := run(exitError, "history", "--table", "retail.nowhere"); !strings.Contains(v.Kind, "error") {
			t.Errorf("history of no table: %+v", v)
		}
	})
}
