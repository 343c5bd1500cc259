package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"
)

// goSyntax is what Go prints of a value a message should have put in
// words: a slice ([shop daily_sales]), a map, a pointer, a nil, a bad verb.
var goSyntax = regexp.MustCompile(`%!|<nil>|map\[|&\{|\b0xc0|\[\]|\[[A-Za-z0-9_.]+( [A-Za-z0-9_.]+)+\]`)

// messages collects, over every test of the package, the lines lakeswap
// printed in Go's syntax.
var messages struct {
	sync.Mutex
	runs int
	bad  []string
}

// checkMessages is textWritten in the tests: every line a run printed,
// on stderr and on stdout unless it printed JSON, is checked.
func checkMessages(args []string, stdout, stderr []byte) {
	texts := []string{string(stderr)}
	if !slices.Contains(args, "json") {
		texts = append(texts, string(stdout))
	}
	messages.Lock()
	defer messages.Unlock()
	messages.runs++
	for _, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			if goSyntax.MatchString(line) {
				messages.bad = append(messages.bad, fmt.Sprintf("lakeswap %s: %s", strings.Join(args, " "), line))
			}
		}
	}
}

// reportMessages fails the test run when any message was in Go's syntax.
func reportMessages() int {
	messages.Lock()
	defer messages.Unlock()
	fmt.Fprintf(os.Stderr, "%d runs' messages checked for Go syntax, %d lines in it\n", messages.runs, len(messages.bad))
	for _, b := range messages.bad {
		fmt.Fprintln(os.Stderr, "FAIL: message in Go syntax:", b)
	}
	if len(messages.bad) > 0 {
		return 1
	}
	return 0
}

// TestRowsOutsideTheRunOneLineAPartition: a run that declared the wrong
// days is refused with one line for each partition its rows fall in, with
// their count and the first file:line, not a line a row; the table is left
// as it was. Files route (CSV here; every file format reaches the same
// split).
func TestRowsOutsideTheRunOneLineAPartition(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", filepath.Join(firstBackfill, "daily_sales.yaml")); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	var in strings.Builder
	in.WriteString("sale_date,store,orders,revenue\n2026-01-01,oslo,1,1.00\n")
	for i := range 100_000 {
		fmt.Fprintf(&in, "2026-02-%02d,s%d,1,1.00\n", 1+i%2, i)
	}
	path := write(t, t.TempDir(), "wrong-month.csv", in.String())
	before := tableMetadata(t, home, "shop", "daily_sales")
	code, _, errs := cli(t, home, "publish", "--table", "shop.daily_sales", "--partitions", "sale_date=2026-01-01", path)
	if code != exitRefused {
		t.Fatalf("publish: exit %d, want %d: %s", code, exitRefused, errs)
	}
	var outside []string
	for _, l := range strings.Split(errs, "\n") {
		if strings.Contains(l, "outside-partitions") {
			outside = append(outside, l)
		}
	}
	if len(outside) != 2 || !strings.Contains(outside[0], "partition sale_date=2026-02-01 (") || !strings.Contains(outside[0], "wrong-month.csv:3)") ||
		!strings.Contains(outside[0], "50,000 rows are outside") || !strings.Contains(outside[1], "wrong-month.csv:4)") {
		t.Errorf("want two lines, 50000 rows in each of 2026-02-01 (first at line 3) and 2026-02-02 (line 4); got:\n%s", strings.Join(outside, "\n"))
	}
	if after := tableMetadata(t, home, "shop", "daily_sales"); after != before {
		t.Errorf("a refused publish changed the table: metadata %s, was %s", after, before)
	}
}

func tableMetadata(t *testing.T, home string, ident ...string) string {
	t.Helper()
	tbl, err := openHome(t, home).LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.MetadataLocation()
}

// TestOneNumberFormat: a count is written one way in text, with a comma
// between thousands, by plan, apply, show, history and the report page,
// and as a plain number in JSON. A sum is a value of its column and is
// written as the column holds it (order_count=3000).
func TestOneNumberFormat(t *testing.T) {
	home := newHome(t)
	var b strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&b, "{\"order_date\":\"2026-02-01\",\"channel\":\"c%04d\",\"order_count\":2,\"amount_cents\":100}\n", i)
	}
	in := write(t, home, "feb.ndjson", b.String())
	plan := filepath.Join(t.TempDir(), "feb.json")
	code, text, errs := cli(t, home, "plan", "--table", "retail.daily_orders", "--partitions", "order_date=2026-02-01", "--run-id", "feb", "--out", plan, in)
	if code != 0 || !strings.Contains(text, "0 -> 1,500 (+1,500)") {
		t.Fatalf("plan: exit %d, want 0 -> 1,500 (+1,500): %s%s", code, text, errs)
	}
	id := regexp.MustCompile(`\b[0-9a-f]{12}\b`).FindString(text)
	if code, text, errs := cli(t, home, "apply", plan, "--approve", id); code != 0 || !strings.Contains(text, "1,500") || strings.Contains(text, "1500") {
		t.Errorf("apply: exit %d, want 1,500 and never 1500: %s%s", code, text, errs)
	}
	for _, args := range [][]string{{"show", "--table", "retail.daily_orders", "--run", "feb"}, {"history", "--table", "retail.daily_orders"}} {
		if code, text, errs := cli(t, home, args...); code != 0 || !strings.Contains(text, "1,500") || strings.Contains(text, "1500") {
			t.Errorf("%v: exit %d, want 1,500 and never 1500: %s%s", args, code, text, errs)
		}
	}
	page := filepath.Join(t.TempDir(), "feb.html")
	if code, _, errs := cli(t, home, "report", "--table", "retail.daily_orders", "--run", "feb", "--out", page); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if html := string(mustRead(t, page)); !strings.Contains(html, ">1,500<") || strings.Contains(html, ">1500<") {
		t.Error("the report page does not write 1,500 as text does")
	}
	if code, out, errs := cli(t, home, "-o", "json", "show", "--table", "retail.daily_orders", "--run", "feb"); code != 0 || !strings.Contains(out, `"rows": 1500`) || strings.Contains(out, "1,500") {
		t.Errorf("show -o json: exit %d, want rows 1500 as a number: %s%s", code, out, errs)
	}
}

// TestFlagsDocumented: docs/commands.md's table of publish's and plan's
// flags names every flag they take, so a reader scanning it misses none.
func TestFlagsDocumented(t *testing.T) {
	doc := string(mustRead(t, filepath.Join("..", "..", "docs", "commands.md")))
	root := newRoot(&globals{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	for _, name := range []string{"publish", "plan"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !strings.Contains(doc, "`--"+f.Name+"`") {
				t.Errorf("docs/commands.md does not name %s's flag --%s", name, f.Name)
			}
		})
	}
}

// TestWarnChecks: a check written warn: prints what breaks it and lets
// the run through; the same check without warn: refuses it.
func TestWarnChecks(t *testing.T) {
	home := newHome(t)
	if code, _, errs := cli(t, home, "table", "set", "--table", "retail.daily_orders", "check.amount_cents=non-negative;warn:range:0..10000"); code != 0 {
		t.Fatalf("table set: exit %d: %s", code, errs)
	}
	in := write(t, home, "big.ndjson", "{\"order_date\":\"2026-03-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":20000}\n")
	code, out, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-03-01", in)
	if code != 0 || !strings.Contains(out, "warning: check written warn: check partition order_date=2026-03-01 row 1 (") || !strings.Contains(out, "value 20000 is outside the range (check warn:range:0..10000)") {
		t.Errorf("publish past a warn: check: exit %d: %s%s", code, out, errs)
	}
	cli(t, home, "table", "set", "--table", "retail.daily_orders", "check.amount_cents=non-negative;range:0..10000")
	before := metadataLocation(t, home)
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-03-02", write(t, home, "big2.ndjson", strings.ReplaceAll(string(mustRead(t, in)), "03-01", "03-02"))); code != exitRefused || !strings.Contains(errs, "check range:0..10000") || metadataLocation(t, home) != before {
		t.Errorf("publish past the same check, refusing: exit %d: %s", code, errs)
	}
}

// TestUniqueSets: unique:COL judges the column with others as a set
// within each partition; a set that repeats is refused, naming the check,
// and the same values in other sets pass; unique-table judges across the
// table, a partition the run replaces aside.
func TestUniqueSets(t *testing.T) {
	home := newHome(t)
	if code, _, errs := cli(t, home, "table", "set", "--table", "retail.daily_orders", "check.order_count=non-negative;unique:amount_cents"); code != 0 {
		t.Fatalf("table set: exit %d: %s", code, errs)
	}
	row := func(day, channel string, count, amount int) string {
		return fmt.Sprintf("{\"order_date\":%q,\"channel\":%q,\"order_count\":%d,\"amount_cents\":%d}\n", day, channel, count, amount)
	}
	before := metadataLocation(t, home)
	code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-03-01",
		write(t, home, "twice.ndjson", row("2026-03-01", "web", 1, 5)+row("2026-03-01", "app", 1, 5)))
	if code != exitRefused || !strings.Contains(errs, "value repeats row 1 (") || !strings.Contains(errs, "(check unique:amount_cents)") || metadataLocation(t, home) != before {
		t.Errorf("a set twice in a partition: exit %d: %s", code, errs)
	}
	in := write(t, home, "once.ndjson", row("2026-03-01", "web", 1, 5)+row("2026-03-01", "app", 1, 6)+row("2026-03-02", "web", 1, 5))
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-03-01..02", in); code != 0 {
		t.Errorf("sets once each in their partitions: exit %d: %s", code, errs)
	}
	if code, _, errs := cli(t, home, "table", "set", "--table", "retail.daily_orders", "check.order_count=non-negative;unique-table:amount_cents"); code != 0 {
		t.Fatalf("table set: exit %d: %s", code, errs)
	}
	// 2026-03-02 holds (1, 5): a run of 2026-03-01 staging it again is
	// refused; one rebuilding both days is not.
	code, _, errs = cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-03-01",
		write(t, home, "again.ndjson", row("2026-03-01", "web", 1, 5)))
	if code != exitRefused || !strings.Contains(errs, `1 row holds a order_count, amount_cents another row of the table holds too (check unique-table:amount_cents): order_date=2026-03-01, channel="web" (order_count=1, amount_cents=5)`) {
		t.Errorf("a set another partition holds: exit %d: %s", code, errs)
	}
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-03-01..02",
		write(t, home, "moved.ndjson", row("2026-03-01", "web", 1, 5)+row("2026-03-02", "web", 1, 7))); code != 0 {
		t.Errorf("the set moved within the run's partitions: exit %d: %s", code, errs)
	}
}
