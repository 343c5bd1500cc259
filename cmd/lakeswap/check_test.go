package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCheck: a table whose days run up to two days ago, ten rows a day,
// passes check; it fails --max-age shorter than its newest day's age, and
// once its newest day holds half its rows the volume check fails, each
// naming what it found. -o json carries each check's verdict.
func TestCheck(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.must("table", "create", "--schema", write(t, s.home, "daily_orders.yaml", schemaYAML))
	today := time.Now().UTC().Truncate(24 * time.Hour)
	first, last := today.AddDate(0, 0, -9), today.AddDate(0, 0, -2)
	days := func(rows map[string]int) string {
		var b strings.Builder
		b.WriteString("order_date,channel,order_count,amount_cents\n")
		for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
			n := 10
			if v, ok := rows[d.Format(time.DateOnly)]; ok {
				n = v
			}
			for c := range n {
				fmt.Fprintf(&b, "%s,c%d,1,100\n", d.Format(time.DateOnly), c)
			}
		}
		return b.String()
	}
	span := "order_date=" + first.Format(time.DateOnly) + ".." + last.Format(time.DateOnly)
	s.must("publish", "--table", "retail.daily_orders", "--partitions", span, write(t, t.TempDir(), "all.csv", days(nil)))

	out := s.must("check", "--table", "retail.daily_orders", "--max-age", "3d")
	for _, want := range []string{"ok   freshness: newest partition order_date=" + last.Format(time.DateOnly), "ok   volume:", "ok   last run verified:"} {
		if !strings.Contains(out, want) {
			t.Errorf("check of a fresh table lacks %q:\n%s", want, out)
		}
	}
	if code, out, _ := s.cli("check", "--table", "retail.daily_orders", "--max-age", "12h"); code != 1 || !strings.Contains(out, "FAIL freshness") {
		t.Errorf("check --max-age 12h of a table whose newest day ended a day ago: exit %d:\n%s", code, out)
	}

	newest := last.Format(time.DateOnly)
	s.must("publish", "--table", "retail.daily_orders", "--partitions", "order_date="+newest, write(t, t.TempDir(), "half.csv", halfDay(newest)))
	code, stdout, _ := s.cli("check", "-o", "json", "--table", "retail.daily_orders")
	var wrapped struct {
		Result checkResult `json:"result"` // a failed check's error object carries it
	}
	if err := json.Unmarshal([]byte(stdout), &wrapped); err != nil {
		t.Fatalf("check -o json: %v: %s", err, stdout)
	}
	if code != 1 || wrapped.Result.Status != "failed" || len(wrapped.Result.Checks) != 3 || wrapped.Result.Checks[0].OK ||
		!strings.Contains(wrapped.Result.Checks[0].Message, "rows 5 against a mean of 10") || !wrapped.Result.Checks[1].OK ||
		wrapped.Result.Checks[2].Name != "contract" || !wrapped.Result.Checks[2].OK {
		t.Errorf("check of a table whose newest day halved: exit %d %+v", code, wrapped.Result)
	}

	// A check set since the rows were published: check judges the rows
	// against it, the newest day or the days --partitions selects.
	s.must("table", "set", "--table", "retail.daily_orders", "check.amount_cents=non-negative;range:0..50")
	if code, out, _ := s.cli("check", "--table", "retail.daily_orders", "--volume-band", "off"); code != 1 ||
		!strings.Contains(out, "FAIL contract: 1 partition of 1 breaks the table's contract") || !strings.Contains(out, "order_date="+newest+": value 100 is outside the range (check range:0..50)") {
		t.Errorf("check of rows a new range check refuses: exit %d:\n%s", code, out)
	}
	if code, out, _ := s.cli("check", "--table", "retail.daily_orders", "--volume-band", "off", "--partitions", "order_date="+last.AddDate(0, 0, -3).Format(time.DateOnly)+".."+newest); code != 1 || !strings.Contains(out, "4 partitions of 4 break") {
		t.Errorf("check --partitions of four days: exit %d:\n%s", code, out)
	}
	if code, out, _ := s.cli("check", "--table", "retail.daily_orders", "--volume-band", "off", "--contract=false"); code != 0 || strings.Contains(out, "contract") {
		t.Errorf("check --contract=false: exit %d:\n%s", code, out)
	}
}

// halfDay is five rows of a day, as CSV.
func halfDay(day string) string {
	var b strings.Builder
	b.WriteString("order_date,channel,order_count,amount_cents\n")
	for c := range 5 {
		fmt.Fprintf(&b, "%s,c%d,1,100\n", day, c)
	}
	return b.String()
}
