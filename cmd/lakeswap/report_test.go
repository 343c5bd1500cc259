package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/testenv"
)

// TestReportInChromium: report writes one self-contained page of a run
// (nothing loaded from the network), which headless Chromium renders: a
// screenshot is kept as the test's artifact, and the numbers in the
// rendered DOM are show -o json's. It never overwrites a file.
func TestReportInChromium(t *testing.T) {
	browser := testenv.Tool(t, "chromium", "chromium-browser")
	home := t.TempDir()
	weekAndFix(t, home)
	page := filepath.Join(t.TempDir(), "run.html")
	if code, out, errs := cli(t, home, "report", "--table", "shop.daily_sales", "--run", "fix-lisbon", "--out", page); code != 0 || !strings.Contains(out, "wrote "+page) {
		t.Fatalf("report: exit %d: %s%s", code, out, errs)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?i)(src|href)\s*=|https?://|@import`).Match(raw) {
		t.Errorf("the page loads something: %s", regexp.MustCompile(`(?i)(src|href)\s*=[^>]*|https?://\S*`).Find(raw))
	}
	if code, _, errs := cli(t, home, "report", "--table", "shop.daily_sales", "--run", "fix-lisbon", "--out", page); code != exitUsage || !strings.Contains(errs, page+" exists") || !strings.Contains(errs, "--out") {
		t.Errorf("a second report to the same file: exit %d, want %d: %s", code, exitUsage, errs)
	}
	if again, _ := os.ReadFile(page); string(again) != string(raw) {
		t.Error("a second report changed the first's file")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + t.TempDir()}
	artifacts := os.Getenv("LAKESWAP_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "lakeswap-test-artifacts")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifacts, "report-fix-lisbon.png")
	_ = os.Remove(shot)
	if out, err := exec.CommandContext(ctx, browser, append(flags, "--screenshot="+shot, "--window-size=1100,1400", "file://"+page)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v: %s", err, out)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("the screenshot %s: %v (want a rendered page)", shot, err)
	} else {
		t.Logf("screenshot of the report: %s", shot)
	}
	dom, err := exec.CommandContext(ctx, browser, append(flags, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}

	var v history.RunView
	_, js, _ := cli(t, home, "show", "--table", "shop.daily_sales", "--run", "fix-lisbon", "-o", "json")
	if err := json.Unmarshal([]byte(js), &v); err != nil || len(v.Partitions) != 2 {
		t.Fatalf("show -o json: %v: %s", err, js)
	}
	field := func(partition, name string) string {
		row := regexp.MustCompile(`(?s)<tr data-partition="` + regexp.QuoteMeta(partition) + `">(.*?)</tr>`).FindSubmatch(dom)
		if row == nil {
			return ""
		}
		m := regexp.MustCompile(`data-field="` + regexp.QuoteMeta(name) + `"[^>]*>([^<]*)<`).FindSubmatch(row[1])
		if m == nil {
			return ""
		}
		return string(m[1])
	}
	for _, p := range v.Partitions {
		for name, want := range map[string]string{
			"rows-before": scaled(exact.Of(p.Before.Rows), 0), "rows-after": scaled(exact.Of(p.After.Rows), 0),
			"orders-before": scaled(p.Before.Sums["orders"], 0), "orders-after": scaled(p.After.Sums["orders"], 0),
			"revenue-before": scaled(p.Before.Sums["revenue"], 2), "revenue-after": scaled(p.After.Sums["revenue"], 2),
		} {
			if got := field(p.Partition, name); got != want {
				t.Errorf("the rendered page shows %s %s = %q, show -o json %q", p.Partition, name, got, want)
			}
		}
	}
	if !strings.Contains(string(dom), `id="fingerprint">`+v.Fingerprint+"<") || !strings.Contains(string(dom), `id="sum-revenue">15,195.73<`) {
		t.Error("the rendered page lacks the run's fingerprint or its sum of revenue")
	}
	if n := strings.Count(string(dom), "<svg class=\"chart\""); n != 3 {
		t.Errorf("the page has %d charts, want 3 (rows, orders, revenue)", n)
	}
}
