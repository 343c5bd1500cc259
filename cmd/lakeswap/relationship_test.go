//go:build !noduckdb

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// customersJobs writes a customers job (from raw/customers.ndjson, by
// signup day) and an orders job (from raw/orders.ndjson, by order day,
// reading the customers of the same day), both tables' schemas, the
// orders' customer_id checked against the customers, and creates both
// tables. It returns the folder.
func customersJobs(t *testing.T, s *site) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "customers.table.yaml", `table: shop.customers
columns:
  - {name: customer_id, type: string, required: true}
  - {name: signup_date, type: date, required: true}
identifier: [customer_id]
partition: [{column: signup_date, transform: identity}]
`)
	write(t, dir, "orders.table.yaml", `table: shop.orders
columns:
  - {name: order_id, type: string, required: true}
  - {name: order_date, type: date, required: true}
  - {name: customer_id, type: string}
identifier: [order_id]
partition: [{column: order_date, transform: identity}]
checks: {customer_id: ["relationship:shop.customers(customer_id)"]}
`)
	write(t, dir, "customers.yaml", `table: shop.customers
sources: {raw: {path: raw/customers.ndjson}}
sql: SELECT customer_id, CAST(signup_date AS DATE) AS signup_date FROM raw WHERE CAST(signup_date AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
`)
	write(t, dir, "orders.yaml", `table: shop.orders
sources:
  raw: {path: raw/orders.ndjson}
  customers: {table: shop.customers, partitions: same}
sql: |
  SELECT o.order_id, CAST(o.order_date AS DATE) AS order_date, o.customer_id
  FROM raw AS o
  WHERE CAST(o.order_date AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
`)
	write(t, filepath.Join(dir, "raw"), "customers.ndjson", `{"customer_id":"c1","signup_date":"2026-01-01"}
{"customer_id":"c2","signup_date":"2026-01-01"}
`)
	write(t, filepath.Join(dir, "raw"), "orders.ndjson", `{"order_id":"o1","order_date":"2026-01-01","customer_id":"c1"}
{"order_id":"o2","order_date":"2026-01-01","customer_id":"c2"}
{"order_id":"o3","order_date":"2026-01-01","customer_id":null}
`)
	s.must("table", "create", "--schema", filepath.Join(dir, "customers.table.yaml"))
	s.must("table", "create", "--schema", filepath.Join(dir, "orders.table.yaml"))
	return dir
}

// TestRelationshipCheck: a relationship check refuses a day whose orders
// reference a customer the customers table does not hold, naming the
// check, the partition, the order and the count, and changes nothing;
// the same day passes inside a release that adds the customer in the
// same commit; a null is no reference; table describe lists the check.
func TestRelationshipCheck(t *testing.T) {
	s := newSite(t, "sqlite+local")
	dir := customersJobs(t, s)
	orders, customers := filepath.Join(dir, "orders.yaml"), filepath.Join(dir, "customers.yaml")
	s.must("publish", "--job", customers, "--partitions", "signup_date=2026-01-01")
	s.must("publish", "--job", orders, "--partitions", "order_date=2026-01-01")

	// Day two: an order of c3, who signed up that day, and one of c404.
	write(t, filepath.Join(dir, "raw"), "customers.ndjson", `{"customer_id":"c1","signup_date":"2026-01-01"}
{"customer_id":"c2","signup_date":"2026-01-01"}
{"customer_id":"c3","signup_date":"2026-01-02"}
`)
	write(t, filepath.Join(dir, "raw"), "orders.ndjson", `{"order_id":"o1","order_date":"2026-01-01","customer_id":"c1"}
{"order_id":"o2","order_date":"2026-01-01","customer_id":"c2"}
{"order_id":"o3","order_date":"2026-01-01","customer_id":null}
{"order_id":"o4","order_date":"2026-01-02","customer_id":"c3"}
`)
	before := s.files()
	code, _, errs := s.cli("publish", "--job", orders, "--partitions", "order_date=2026-01-02")
	if code != exitRefused || !strings.Contains(errs, `partition order_date=2026-01-02 column customer_id: 1 row holds a customer_id that shop.customers does not hold (check relationship:shop.customers(customer_id)): order_id="o4" (customer_id="c3")`) {
		t.Fatalf("an order of a customer not yet published: exit %d\n%s", code, errs)
	}
	if after := s.files(); !slices.Equal(before, after) {
		t.Errorf("a refused run changed the warehouse:\nbefore %v\nafter  %v", before, after)
	}

	// The customers and the orders reading them, as one release: the
	// orders see c3 as the release leaves the customers.
	s.must("publish", "--job", customers, "--downstream", "--jobs", dir, "--partitions", "signup_date=2026-01-02")
	rows := s.must("-o", "json", "table", "describe", "--table", "shop.orders")
	if !strings.Contains(rows, `relationship:shop.customers(customer_id)`) {
		t.Errorf("table describe does not list the check:\n%s", rows)
	}
	out := s.must("history", "--table", "shop.orders")
	if !strings.Contains(out, "2026-01-02") {
		t.Errorf("the release did not publish the orders of 2026-01-02:\n%s", out)
	}

	// lakeswap check judges the relationship on the newest partition:
	// kept, then broken once c3 is gone from the customers.
	if code, out, _ := s.cli("check", "--table", "shop.orders", "--volume-band", "off", "--verified=false"); code != 0 || !strings.Contains(out, "ok   contract: partition order_date=2026-01-02 keeps") {
		t.Errorf("check of the orders: exit %d\n%s", code, out)
	}
	write(t, filepath.Join(dir, "raw"), "customers.ndjson", `{"customer_id":"c1","signup_date":"2026-01-01"}
{"customer_id":"c2","signup_date":"2026-01-01"}
`)
	s.must("publish", "--job", customers, "--partitions", "signup_date=2026-01-02", "--allow-empty")
	if code, out, _ := s.cli("check", "--table", "shop.orders", "--volume-band", "off", "--verified=false"); code != 1 ||
		!strings.Contains(out, `FAIL contract: 1 partition of 1 breaks the table's contract (grain; required columns; checks customer_id relationship:shop.customers(customer_id)), 1 finding in all; the first: order_date=2026-01-02: 1 row holds a customer_id that shop.customers does not hold`) {
		t.Errorf("check of orders whose customer is gone: exit %d\n%s", code, out)
	}
	write(t, filepath.Join(dir, "raw"), "customers.ndjson", `{"customer_id":"c1","signup_date":"2026-01-01"}
{"customer_id":"c2","signup_date":"2026-01-01"}
{"customer_id":"c3","signup_date":"2026-01-02"}
`)

	// An order of a customer no release adds is refused inside one too.
	write(t, filepath.Join(dir, "raw"), "orders.ndjson", `{"order_id":"o4","order_date":"2026-01-02","customer_id":"c3"}
{"order_id":"o5","order_date":"2026-01-02","customer_id":"c404"}
`)
	before = s.files()
	code, _, errs = s.cli("publish", "--job", customers, "--downstream", "--jobs", dir, "--partitions", "signup_date=2026-01-02")
	if code != exitRefused || !strings.Contains(errs, `order_id="o5" (customer_id="c404")`) || !strings.Contains(errs, "shop.customers as the release leaves it") {
		t.Errorf("a release whose orders reference a missing customer: exit %d\n%s", code, errs)
	}
	if after := s.files(); !slices.Equal(before, after) {
		t.Errorf("a refused release changed the warehouse:\nbefore %v\nafter  %v", before, after)
	}

	// The same rule as an assertion over the staged rows and the
	// customers table as main holds it (c3 gone since), named in its SQL.
	s.must("table", "set", "--table", "shop.orders", "check.customer_id=",
		"assert.known_customers=SELECT o.order_id, o.customer_id FROM rows AS o ANTI JOIN shop.customers AS c ON o.customer_id = c.customer_id WHERE o.customer_id IS NOT NULL")
	code, _, errs = s.cli("publish", "--job", orders, "--partitions", "order_date=2026-01-02")
	if code != exitRefused || !strings.Contains(errs, "assertion known_customers returned 2 rows, and must return none: ") ||
		!strings.Contains(errs, `order_id="o5", customer_id="c404"`) || !strings.Contains(errs, `order_id="o4", customer_id="c3"`) {
		t.Errorf("an assertion naming another table: exit %d\n%s", code, errs)
	}

	// A relationship between columns of other types, to no table or no
	// column, or to a column of nested values, is refused when set.
	meta := s.metadata("shop.orders")
	for set, why := range map[string]string{
		"check.order_date=relationship:shop.customers(customer_id)":   "shop.customers.customer_id is string, order_date is date: a relationship compares values of one type",
		"check.customer_id=relationship:shop.nonesuch(customer_id)":   "table shop.nonesuch cannot be read",
		"check.customer_id=relationship:shop.customers(nonesuch)":     "table shop.customers has no column nonesuch",
		"check.customer_id=relationship:shop.customers(profile.name)": "want relationship:NAMESPACE.TABLE(COLUMN), a top-level column",
	} {
		if code, _, errs := s.cli("table", "set", "--table", "shop.orders", set); code != exitUsage || !strings.Contains(errs, why) || s.metadata("shop.orders") != meta {
			t.Errorf("table set %s: exit %d\n%s", set, code, errs)
		}
	}
}

// TestAssertions: a table's SQL assertion, set in place or in the schema
// file, refuses a run whose staged rows it returns, naming it and the
// rows, and changes nothing; written warn: it warns and the run lands; one
// that is no query refuses every run, saying so; table describe lists it.
func TestAssertions(t *testing.T) {
	home := newHome(t)
	set := func(kv string) {
		t.Helper()
		if code, _, errs := cli(t, home, "table", "set", "--table", "retail.daily_orders", kv); code != 0 {
			t.Fatalf("table set %s: exit %d: %s", kv, code, errs)
		}
	}
	set("assert.web_only_small=SELECT channel, amount_cents FROM rows WHERE channel = 'web' AND amount_cents > 10000")
	in := write(t, home, "big.ndjson", "{\"order_date\":\"2026-03-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":20000}\n{\"order_date\":\"2026-03-01\",\"channel\":\"app\",\"order_count\":1,\"amount_cents\":20000}\n")
	before := metadataLocation(t, home)
	code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-03-01", in)
	if code != exitRefused || !strings.Contains(errs, `assertion web_only_small returned 1 row, and must return none: channel="web", amount_cents=20000`) || metadataLocation(t, home) != before {
		t.Errorf("a row the assertion returns: exit %d: %s", code, errs)
	}
	_, out, _ := cli(t, home, "table", "describe", "--table", "retail.daily_orders")
	if !strings.Contains(out, "; assertions web_only_small\n") {
		t.Errorf("table describe:\n%s", out)
	}
	set("assert.web_only_small=warn:SELECT channel, amount_cents FROM rows WHERE channel = 'web' AND amount_cents > 10000")
	code, out, errs = cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-03-01", in)
	if code != 0 || !strings.Contains(out, "warning: check written warn: check: assertion web_only_small returned 1 row") {
		t.Errorf("a warn: assertion: exit %d: %s%s", code, out, errs)
	}
	// lakeswap check runs it on the newest partition, or those named.
	code, out, _ = cli(t, home, "check", "--table", "retail.daily_orders", "--volume-band", "off", "--verified=false")
	if code != 0 || !strings.Contains(out, "ok   contract: partition order_date=2026-03-01 keeps the table's contract (grain; required columns; checks amount_cents non-negative, order_count non-negative; assertions web_only_small); 1 warning: check written warn: check: assertion web_only_small returned 1 row") {
		t.Errorf("check, a warn: assertion: exit %d\n%s", code, out)
	}
	set("assert.web_only_small=SELECT channel, amount_cents FROM rows WHERE channel = 'web' AND amount_cents > 10000")
	code, out, _ = cli(t, home, "check", "--table", "retail.daily_orders", "--volume-band", "off", "--verified=false")
	if code != 1 || !strings.Contains(out, `FAIL contract: partition order_date=2026-03-01 breaks the table's contract (`) || !strings.Contains(out, `assertion web_only_small returned 1 row, and must return none: channel="web", amount_cents=20000`) {
		t.Errorf("check, an assertion the newest partition breaks: exit %d\n%s", code, out)
	}
	set("assert.web_only_small=")
	// One that is no query, or reads a column the rows do not have, is
	// refused when set; one that fails as it runs refuses the run.
	before = metadataLocation(t, home)
	for _, bad := range []string{"assert.typo=SELEC * FROM rows", "assert.typo=SELECT nonesuch FROM rows", "assert.typo=SELECT * FROM retail.nonesuch"} {
		if code, _, errs := cli(t, home, "table", "set", "--table", "retail.daily_orders", bad); code != exitUsage || !strings.Contains(errs, "assertion typo is no query over the view rows") || metadataLocation(t, home) != before {
			t.Errorf("table set %s: exit %d: %s", bad, code, errs)
		}
	}
	set("assert.boom=SELECT error('boom ' || channel) FROM rows")
	before = metadataLocation(t, home)
	code, _, errs = cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-03-02", write(t, home, "ok.ndjson", "{\"order_date\":\"2026-03-02\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":1}\n"))
	if code != exitRefused || !strings.Contains(errs, "assertion boom failed (") || !strings.Contains(errs, "boom web") || metadataLocation(t, home) != before {
		t.Errorf("an assertion that fails as it runs: exit %d: %s", code, errs)
	}
	// In the schema file.
	other := t.TempDir()
	schema := write(t, other, "s.yaml", strings.Replace(schemaYAML, "table: retail.daily_orders", "table: retail.small_orders", 1)+
		"assertions: {small: \"SELECT * FROM rows WHERE amount_cents > 100\"}\n")
	if code, _, errs := cli(t, home, "table", "create", "--schema", schema); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	code, _, errs = cli(t, home, "publish", "--table", "retail.small_orders", "--partitions", "order_date=2026-03-01", in)
	if code != exitRefused || !strings.Contains(errs, "assertion small returned 2 rows") {
		t.Errorf("an assertion of the schema file: exit %d: %s", code, errs)
	}
}

// TestRelationshipToItself: a relationship to the table's own column is
// judged on the table as the run leaves it: a parent and its child staged
// together pass, and a run that takes away a row still referenced is
// refused.
func TestRelationshipToItself(t *testing.T) {
	s := newSite(t, "sqlite+local")
	dir := t.TempDir()
	s.must("table", "create", "--schema", write(t, dir, "t.yaml", `table: shop.parts
columns:
  - {name: part_id, type: string, required: true}
  - {name: day, type: date, required: true}
  - {name: parent_id, type: string}
identifier: [part_id]
partition: [{column: day, transform: identity}]
checks: {parent_id: ["relationship:shop.parts(part_id)"]}
`))
	in := func(name string, rows ...string) string { return write(t, dir, name, strings.Join(rows, "\n")+"\n") }
	s.must("publish", "--table", "shop.parts", "--partitions", "day=2026-01-01..02",
		in("a.ndjson", `{"part_id":"p1","day":"2026-01-01","parent_id":null}`, `{"part_id":"p2","day":"2026-01-02","parent_id":"p1"}`))
	meta := s.metadata("shop.parts")
	code, _, errs := s.cli("publish", "--table", "shop.parts", "--partitions", "day=2026-01-01", in("b.ndjson", `{"part_id":"p3","day":"2026-01-01","parent_id":null}`))
	if code != exitRefused || !strings.Contains(errs, `the partitions the run leaves alone hold 1 value parent_id that shop.parts as the run leaves it does not hold (check relationship:shop.parts(part_id)): "p1"`) || s.metadata("shop.parts") != meta {
		t.Errorf("a run that takes away a parent still referenced: exit %d\n%s", code, errs)
	}
	// A parent and its child staged together pass; so does a child whose
	// parent another partition keeps.
	s.must("publish", "--table", "shop.parts", "--partitions", "day=2026-01-03", in("c.ndjson", `{"part_id":"p4","day":"2026-01-03","parent_id":"p5"}`, `{"part_id":"p5","day":"2026-01-03","parent_id":"p2"}`))
	if code, _, errs := s.cli("publish", "--table", "shop.parts", "--partitions", "day=2026-01-04", in("d.ndjson", `{"part_id":"p6","day":"2026-01-04","parent_id":"p9"}`)); code != exitRefused ||
		!strings.Contains(errs, `1 row holds a parent_id that shop.parts as the run leaves it does not hold (check relationship:shop.parts(part_id)): part_id="p6" (parent_id="p9")`) {
		t.Errorf("a child of no parent: exit %d\n%s", code, errs)
	}
}
