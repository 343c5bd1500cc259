package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const factsYAML = `table: retail.orders_fact
columns:
  - {name: order_id, type: string, required: true}
  - {name: order_date, type: date, required: true}
  - {name: channel, type: string, required: true}
  - {name: amount_cents, type: long, required: true}
identifier: [order_id]
partition: [{column: order_date, transform: identity}]
additive: [amount_cents]
`

// factRows writes the fixture's orders at the fact grain after a batch as
// NDJSON.
func factRows(t *testing.T, stage string) string {
	t.Helper()
	raw, err := os.ReadFile("../../internal/retail/fixture/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var at struct {
		Facts []struct {
			OrderID     string `json:"order_id"`
			OrderDate   string `json:"order_date"`
			Channel     string `json:"channel"`
			AmountCents int64  `json:"amount_cents"`
		} `json:"orders_fact"`
	}
	if err := json.Unmarshal(doc[stage], &at); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range at.Facts {
		line, _ := json.Marshal(map[string]any{"order_id": f.OrderID, "order_date": f.OrderDate, "channel": f.Channel, "amount_cents": f.AmountCents})
		b.Write(line)
		b.WriteByte('\n')
	}
	return write(t, t.TempDir(), stage+".ndjson", b.String())
}

// TestMovedRecordNeedsBothPartitions, on every site: at the fact grain (one
// row per order_id, partitioned by order_date), batch 2 moves o100 from
// 2026-01-01 to 2026-01-02; replacing 2026-01-02 alone is refused, naming
// o100 and 2026-01-01, with the table and its files unchanged, and
// replacing both days passes.
func TestMovedRecordNeedsBothPartitions(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--schema", write(t, s.home, "facts.yaml", factsYAML))
		s.must("publish", "--table", "retail.orders_fact", "--partitions", twoDays, factRows(t, "after_batch1"))
		before, files := s.metadata("orders_fact"), s.files()
		batch2 := factRows(t, "after_batch1_and_batch2")
		// Only 2026-01-02's rows, as a job rebuilding that day alone would give.
		var day2 []string
		for _, l := range strings.Split(strings.TrimSpace(string(mustRead(t, batch2))), "\n") {
			if strings.Contains(l, `"2026-01-02"`) {
				day2 = append(day2, l)
			}
		}
		alone := write(t, t.TempDir(), "day2.ndjson", strings.Join(day2, "\n")+"\n")
		code, _, errs := s.cli("plan", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-02", "--out", filepath.Join(t.TempDir(), "p.json"), alone)
		if code != exitRefused || !strings.Contains(errs, "o100") || !strings.Contains(errs, "order_date=2026-01-01") || !strings.Contains(errs, "moved") {
			t.Errorf("replacing 2026-01-02 alone: exit %d, want %d naming o100 and 2026-01-01:\n%s", code, exitRefused, errs)
		}
		if s.metadata("orders_fact") != before || !slices.Equal(s.files(), files) {
			t.Error("the refused run changed the table or left files")
		}
		if out := s.must("publish", "--table", "retail.orders_fact", "--partitions", twoDays, batch2); !strings.Contains(out, "published") {
			t.Errorf("replacing both days: %s", out)
		}
	})
}
