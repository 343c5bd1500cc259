package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/testenv"
	"github.com/lakeswap/lakeswap/verify"
)

// TestValueDiffs: a corrected amount shows, for its key, the column that
// changed with the value before and after at the table's scale (revenue
// 190.99 -> 19.10), in plan, show PLAN, the plan's JSON, diff, show --run
// and the report page as headless Chromium renders it; a key added shows
// its row. --keys bounds the keys named.
func TestValueDiffs(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", filepath.Join(firstBackfill, "daily_sales.yaml")); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	dir := t.TempDir()
	week := write(t, dir, "week.csv", "sale_date,store,orders,revenue\n2026-01-01,berlin,10,190.99\n2026-01-01,lisbon,5,50.00\n")
	fix := write(t, dir, "fix.csv", "sale_date,store,orders,revenue\n2026-01-01,berlin,10,19.10\n2026-01-01,lisbon,5,50.00\n2026-01-01,oslo,1,7.50\n")
	if code, _, errs := cli(t, home, "publish", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-01", "--run-id", "week", week); code != 0 {
		t.Fatalf("publish: exit %d: %s", code, errs)
	}
	plan := filepath.Join(dir, "fix.json")
	code, out, errs := cli(t, home, "plan", "--allow-implausible", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-01", "--run-id", "fix", "--out", plan, fix)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	const changed, added = "store=berlin: revenue 190.99 -> 19.10", "store=oslo (added): orders 1, revenue 7.50"
	for _, want := range []string{changed, added} {
		if !strings.Contains(out, want) {
			t.Errorf("plan does not show %q:\n%s", want, out)
		}
	}
	if _, shown, _ := cli(t, home, "show", plan); !strings.Contains(shown, changed) {
		t.Errorf("show PLAN does not show %q:\n%s", changed, shown)
	}
	pf := planOf(t, plan)
	want := verify.KeyChange{Kind: "changed", Key: "store=berlin", Columns: []verify.ValueChange{{Column: "revenue", Old: "190.99", New: "19.10"}}}
	if ch := pf.Plan.Partitions[0].Changes; ch == nil || !hasKeyChange(ch.Values, want) {
		t.Errorf("the plan's JSON lacks %+v: %+v", want, ch)
	}
	if code, _, errs := cli(t, home, "apply", plan, "--approve", pf.PlanID); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, errs)
	}

	var d history.DiffView
	_, js, _ := cli(t, home, "-o", "json", "diff", "--table", "shop.daily_sales", "week", "fix")
	if err := json.Unmarshal([]byte(js), &d); err != nil || len(d.Partitions) != 1 || d.Partitions[0].Changes == nil || !hasKeyChange(d.Partitions[0].Changes.Values, want) {
		t.Errorf("diff -o json lacks %+v: %v\n%s", want, err, js)
	}
	if _, text, _ := cli(t, home, "diff", "--table", "shop.daily_sales", "week", "fix"); !strings.Contains(text, changed) {
		t.Errorf("diff does not show %q:\n%s", changed, text)
	}
	if _, text, _ := cli(t, home, "show", "--table", "shop.daily_sales", "--run", "fix"); !strings.Contains(text, changed) {
		t.Errorf("show --run does not show %q:\n%s", changed, text)
	}
	if _, text, _ := cli(t, home, "show", "--table", "shop.daily_sales", "--run", "fix", "--keys", "1"); strings.Count(text, "(added)")+strings.Count(text, "revenue 190.99") != 2 {
		t.Errorf("show --keys 1:\n%s", text)
	}

	browser := testenv.Tool(t, "chromium", "chromium-browser")
	page := filepath.Join(dir, "fix.html")
	if code, _, errs := cli(t, home, "report", "--table", "shop.daily_sales", "--run", "fix", "--out", page); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dom, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	row := regexp.MustCompile(`(?s)<tr data-key="store=berlin" data-column="revenue">(.*?)</tr>`).FindSubmatch(dom)
	if row == nil || !strings.Contains(string(row[1]), `data-field="old">190.99<`) || !strings.Contains(string(row[1]), `data-field="new">19.10<`) {
		t.Errorf("the rendered report does not show revenue 190.99 -> 19.10 for store=berlin: %q", row)
	}
}

func hasKeyChange(values []verify.KeyChange, want verify.KeyChange) bool {
	for _, v := range values {
		if v.Kind == want.Kind && v.Key == want.Key && len(v.Columns) == len(want.Columns) {
			same := true
			for i := range v.Columns {
				same = same && v.Columns[i] == want.Columns[i]
			}
			if same {
				return true
			}
		}
	}
	return false
}
