//go:build !noduckdb

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/job"
)

// retailCopy copies the retail example's jobs, SQL, schemas and tests
// into a folder of their own.
func retailCopy(t *testing.T) string {
	t.Helper()
	from := filepath.Join("..", "..", "examples", "retail")
	dir := t.TempDir()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if strings.HasSuffix(p, ".go") || strings.HasPrefix(rel, "raw") {
			return nil
		}
		copyInto(t, p, filepath.Join(dir, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// testWith runs lakeswap test with lakeswap.yaml listing the folder's jobs.
func testWith(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	shortTier(t)
	cfg := write(t, t.TempDir(), "lakeswap.yaml", "jobs: ["+dir+"]\n")
	var out, errb bytes.Buffer
	code := mainWithEnv(context.Background(), append([]string{"--home", t.TempDir(), "--config", cfg}, args...), &out, &errb, noEnv)
	return code, out.String(), errb.String()
}

// TestJobTests: lakeswap test runs the retail example's tests on their
// fixtures alone (no catalog, no table) and passes; changing the
// newest-wins ordering of orders_fact.sql makes the test of the moved
// order fail, naming o100 and each column it got wrong, and in JSON too.
func TestJobTests(t *testing.T) {
	dir := retailCopy(t)
	code, out, errs := testWith(t, dir, "test")
	if code != 0 {
		t.Fatalf("test: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"ok   orders_fact/first_load: 5 rows in order_date=2026-01-01..2026-01-02",
		"ok   orders_fact/moved_order_and_stale_event: 6 rows in order_date=2026-01-01..2026-01-02",
		"ok   daily_orders/both_batches: 5 rows in order_date=2026-01-01,2026-01-02",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("test: want %q in\n%s", want, out)
		}
	}

	sql := filepath.Join(dir, "orders_fact.sql")
	b, _ := os.ReadFile(sql)
	oldest := strings.Replace(string(b), "source_version, 'ASC NULLS FIRST'", "source_version, 'DESC NULLS FIRST'", 1)
	if oldest == string(b) {
		t.Fatal("orders_fact.sql no longer orders versions by source_version")
	}
	write(t, dir, "orders_fact.sql", oldest)
	code, out, _ = testWith(t, dir, "test", filepath.Join(dir, "orders_fact.yaml"))
	if code != 1 || !strings.Contains(out, "FAIL orders_fact/moved_order_and_stale_event: 6 made, 6 expected") ||
		!strings.Contains(out, `  order_id="o100": order_date is 2026-01-01, expected 2026-01-02; amount_cents is 12000, expected 10000;`) ||
		strings.Contains(out, "daily_orders") {
		t.Errorf("newest-wins broken: exit %d\n%s", code, out)
	}
	code, out, _ = testWith(t, dir, "-o", "json", "test", "--test", "moved_order_and_stale_event", filepath.Join(dir, "orders_fact.yaml"))
	var res struct {
		Result testResults `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.Result.Passed || len(res.Result.Tests) != 1 {
		t.Fatalf("-o json: exit %d, %v\n%s", code, err, out)
	}
	var o100 *job.TestProblem
	for i, p := range res.Result.Tests[0].Problems {
		if p.Key == `order_id="o100"` {
			o100 = &res.Result.Tests[0].Problems[i]
		}
	}
	if o100 == nil || o100.Kind != "differs" || len(o100.Columns) == 0 ||
		o100.Columns[0] != (job.ColumnDiff{Column: "order_date", Made: "2026-01-01", Expected: "2026-01-02"}) {
		t.Errorf("-o json: o100 is %+v", o100)
	}
}

// TestJobTestsRefuse: a test that cannot be run says what is missing
// (a source's fixture, the table's schema file, a known key of
// test.yaml), and what the job gets wrong beyond its rows (the rows its
// rules reject, its reconciliation) fails the test, named.
func TestJobTestsRefuse(t *testing.T) {
	dir := retailCopy(t)
	orders := filepath.Join(dir, "orders_fact.yaml")
	first := filepath.Join(dir, "tests", "orders_fact", "first_load")

	if err := os.Remove(filepath.Join(first, "raw_events.ndjson")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := testWith(t, dir, "test", "--test", "first_load", orders)
	if code != 1 || !strings.Contains(out, "FAIL orders_fact/first_load: no fixture for source raw_events in "+first+": put its rows in raw_events.csv") {
		t.Errorf("no fixture: exit %d\n%s", code, out)
	}
	copyInto(t, filepath.Join("..", "..", "examples", "retail", "raw", "batch1.ndjson"), filepath.Join(first, "raw_events.ndjson"))

	spec, _ := os.ReadFile(filepath.Join(first, "test.yaml"))
	write(t, first, "test.yaml", strings.Replace(string(spec), "order_id is null: 1", "order_id is null: 2", 1))
	code, out, _ = testWith(t, dir, "test", "--test", "first_load", orders)
	if code != 1 || !strings.Contains(out, `  the reject rules refused 1 "amount_cents < 0", 1 "order_id is null"`) || !strings.Contains(out, `the test expects 1 "amount_cents < 0", 2 "order_id is null"`) {
		t.Errorf("rejects: exit %d\n%s", code, out)
	}
	write(t, first, "test.yaml", "partition: [order_date=2026-01-01]\n")
	code, out, _ = testWith(t, dir, "test", "--test", "first_load", orders)
	if code != 1 || !strings.Contains(out, `unknown key "partition"`) {
		t.Errorf("unknown key: exit %d\n%s", code, out)
	}
	write(t, first, "test.yaml", "partitions: [order_date=2026-01-01]\n")
	code, out, _ = testWith(t, dir, "test", "--test", "first_load", orders)
	if code != 1 || !strings.Contains(out, "expected.csv holds rows of partition order_date=2026-01-02, outside the test's partitions (order_date=2026-01-01)") {
		t.Errorf("expected outside: exit %d\n%s", code, out)
	}

	// daily_orders without its app orders: its rows are wrong, and so is
	// its reconciliation with the facts.
	daily := filepath.Join(dir, "daily_orders.sql")
	b, _ := os.ReadFile(daily)
	write(t, dir, "daily_orders.sql", strings.Replace(string(b), "GROUP BY order_date, channel", "AND channel <> 'app'\nGROUP BY order_date, channel", 1))
	code, out, _ = testWith(t, dir, "test", filepath.Join(dir, "daily_orders.yaml"))
	if code != 1 || !strings.Contains(out, `  order_date=2026-01-01, channel="app": expected, not produced: order_count=1, amount_cents=3500`) ||
		!strings.Contains(out, "  order_date=2026-01-01: the reconciliation query says 3 rows, the job made 2") {
		t.Errorf("daily_orders without app: exit %d\n%s", code, out)
	}

	write(t, dir, "daily_orders.sql", string(b))
	write(t, first, "test.yaml", string(spec))

	// The facts' fixture, typed by orders_fact's schema file: a column
	// missing, a value no date, or no schema file, each said of the
	// fixture.
	both := filepath.Join(dir, "tests", "daily_orders", "both_batches")
	facts, _ := os.ReadFile(filepath.Join(both, "facts.csv"))
	dailyJob := filepath.Join(dir, "daily_orders.yaml")
	for fixture, why := range map[string]string{
		regexp.MustCompile(`,[^,\n]*\n`).ReplaceAllString(string(facts), "\n"):            "source facts: its fixture has no column event_id, which the table has",
		strings.Replace(string(facts), "2026-01-02,web,10000", "2026-01-xx,web,10000", 1): "source facts: its fixture holds a value the table's column cannot",
	} {
		write(t, both, "facts.csv", fixture)
		if code, out, _ := testWith(t, dir, "test", dailyJob); code != 1 || !strings.Contains(out, why) {
			t.Errorf("want %q: exit %d\n%s", why, code, out)
		}
	}
	write(t, both, "facts.csv", string(facts))
	schema := filepath.Join(dir, "orders_fact.table.yaml")
	spec, _ = os.ReadFile(schema)
	if err := os.Remove(schema); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := testWith(t, dir, "test", dailyJob); code != 1 || !strings.Contains(out, "source facts reads table retail.orders_fact: its fixture facts.csv is typed by that table's schema file") {
		t.Errorf("a table source's CSV fixture with no schema file: exit %d\n%s", code, out)
	}
	// The table's assertions run on the rows the job made; one reading
	// another table, and relationships, are named as not judged.
	write(t, dir, "orders_fact.table.yaml", string(spec)+
		"assertions: {small: \"SELECT order_id FROM rows WHERE amount_cents > 9500\", known: \"SELECT * FROM rows ANTI JOIN retail.customers USING (order_id)\"}\n")
	code, out, _ = testWith(t, dir, "test", "--test", "first_load", orders)
	if code != 1 || !strings.Contains(out, `  assertion small returned 1 row, and must return none: order_id="o100"`) ||
		!strings.Contains(out, "  not judged on fixtures: assertion known (reads a table the test does not have)") {
		t.Errorf("assertions in a test: exit %d\n%s", code, out)
	}
	write(t, dir, "orders_fact.table.yaml", string(spec))

	// Expected rows that repeat a key, and a folder whose expected rows
	// are misnamed, fail, saying so.
	exp, _ := os.ReadFile(filepath.Join(first, "expected.csv"))
	write(t, first, "expected.csv", string(exp)+"o100,2026-01-01,web,12000,1,2026-01-01T10:00:00Z,e1\n")
	if code, out, _ := testWith(t, dir, "test", "--test", "first_load", orders); code != 1 || !strings.Contains(out, `  order_id="o100": the expected rows hold this key 2 times`) {
		t.Errorf("expected rows repeating a key: exit %d\n%s", code, out)
	}
	if err := os.Rename(filepath.Join(first, "expected.csv"), filepath.Join(first, "expected.CSV")); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := testWith(t, dir, "test", orders); code != 1 || !strings.Contains(out, "FAIL orders_fact/first_load: no expected.csv or expected.ndjson in "+first) {
		t.Errorf("a misnamed expected file: exit %d\n%s", code, out)
	}

	if err := os.Remove(filepath.Join(dir, "daily_orders.table.yaml")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = testWith(t, dir, "test", filepath.Join(dir, "daily_orders.yaml"))
	if code != 1 || !strings.Contains(out, "no schema file of table retail.daily_orders in "+dir) {
		t.Errorf("no schema file: exit %d\n%s", code, out)
	}
	code, _, errs := testWith(t, dir, "test", "--test", "nonesuch")
	if code != exitUsage || !strings.Contains(errs, "no job has a test nonesuch") {
		t.Errorf("--test nonesuch: exit %d\n%s", code, errs)
	}
}
