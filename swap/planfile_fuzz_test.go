package swap_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lakeswap/lakeswap/swap"
)

// FuzzDecodePlan: any bytes given to apply, show or discard as a plan file
// are refused with the file's name or read as a plan; a plan read back and
// written again keeps its id, and its id says whether it was edited.
func FuzzDecodePlan(f *testing.F) {
	base := int64(7)
	plan := &swap.Plan{RunID: "r", Attempt: "0a1b2c3d", Table: "retail.daily_orders", BaseSnapshotID: &base, PartitionColumn: "order_date",
		Partitions: []swap.PartitionPlan{{Value: "2026-01-01", Key: "order_date=2026-01-01", Prefix: "file:///w/order_date=2026-01-01/run-r-0a1b2c3d"}}, Staged: true}
	raw, _ := json.Marshal(swap.PlanFile{PlanID: swap.PlanID(plan), Plan: plan})
	f.Add(raw)
	f.Add([]byte(`{"plan_id":"x","plan":null}`))
	f.Add([]byte(`{"plan":{"partitions":[{"value":"\ud800"}]}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		pf, err := swap.DecodePlan("p.json", raw)
		if err != nil {
			if !strings.Contains(err.Error(), "p.json") {
				t.Fatalf("a refusal that does not name the file: %v", err)
			}
			return
		}
		id := swap.PlanID(pf.Plan)
		again, err := json.Marshal(pf)
		if err != nil {
			t.Fatalf("a plan read back does not marshal: %v", err)
		}
		back, err := swap.DecodePlan("p.json", again)
		if err != nil {
			t.Fatalf("a plan written again does not read: %v", err)
		}
		if utf8.Valid(raw) && swap.PlanID(back.Plan) != id {
			t.Fatalf("a plan written and read again changed its id")
		}
		if (pf.Unedited("apply") == nil) != (pf.PlanID == id) {
			t.Fatalf("Unedited disagrees with the id")
		}
	})
}
