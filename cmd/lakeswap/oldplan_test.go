package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPlanWrittenBeforeReadsAsBefore: a plan file as lakeswap wrote it
// before its JSON was all snake_case and its ids strings (base_snapshot_id
// a number; Path, Rows, Bytes and SHA256 in new_files) keeps its plan id:
// show reads it, and apply takes it approved by that id.
func TestPlanWrittenBeforeReadsAsBefore(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.createDaily()
	plan := filepath.Join(t.TempDir(), "plan.json")
	s.must("plan", "--run-id", "old", "--out", plan, "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))
	raw, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	old := regexp.MustCompile(`"base_snapshot_id": "(-?[0-9]+)"`).ReplaceAll(raw, []byte(`"base_snapshot_id": $1`))
	for _, k := range []string{"Path", "Rows", "Bytes", "SHA256"} {
		old = bytes.ReplaceAll(old, []byte(`"`+strings.ToLower(k)+`": `), []byte(`"`+k+`": `))
	}
	if bytes.Equal(old, raw) || !bytes.Contains(old, []byte(`"SHA256": `)) {
		t.Fatal("the plan did not take the old form")
	}
	// Its id as the lakeswap that wrote it computed it: of the plan's JSON.
	var doc struct {
		PlanID string          `json:"plan_id"`
		Plan   json.RawMessage `json:"plan"`
	}
	if err := json.Unmarshal(old, &doc); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc.Plan); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(compact.Bytes())
	id := hex.EncodeToString(sum[:])
	old = bytes.Replace(old, []byte(doc.PlanID), []byte(id), 1)
	if err := os.WriteFile(plan, old, 0o644); err != nil {
		t.Fatal(err)
	}

	if out := s.must("show", plan); !strings.Contains(out, "plan "+id[:12]) {
		t.Errorf("show of a plan written before: %s", out)
	}
	meta := s.metadata("daily_orders")
	s.must("apply", plan, "--approve", id)
	if s.metadata("daily_orders") == meta {
		t.Error("apply of a plan written before committed nothing")
	}
	s.must("verify", "--table", "retail.daily_orders", "--run", "old")
}
