package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/testenv"
)

var noEnv = func(string) string { return "" }

// cli runs lakeswap as a user would, against the embedded catalog in home.
func cli(t *testing.T, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	shortTier(t)
	var out, errb bytes.Buffer
	code = mainWithEnv(context.Background(), append([]string{"--home", home, "--config", os.DevNull}, args...), &out, &errb, noEnv)
	return code, out.String(), errb.String()
}

const schemaYAML = `table: retail.daily_orders
columns:
  - {name: order_date, type: date, required: true}
  - {name: channel, type: string, required: true}
  - {name: order_count, type: long, required: true}
  - {name: amount_cents, type: long, required: true}
identifier: [order_date, channel]
partition: [{column: order_date, transform: identity}]
additive: [order_count, amount_cents]
checks: {amount_cents: [non-negative], order_count: [non-negative]}
`

// newHome creates the retail table through the CLI and publishes the first
// load, so that every later refusal has something to leave unchanged.
func newHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	schema := write(t, home, "daily_orders.yaml", schemaYAML)
	if code, _, errs := cli(t, home, "table", "create", "--schema", schema); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	rows, err := retail.Daily(retail.AfterBatch1)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(home, "batch1.ndjson")
	if err := retail.WriteNDJSON(in, rows); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01..2026-01-02", in); code != 0 {
		t.Fatalf("first publish: exit %d: %s", code, errs)
	}
	return home
}

func write(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// parquetFiles counts the data files in the home's warehouse.
func parquetFiles(t *testing.T, home string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(home, "warehouse"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && filepath.Ext(d.Name()) == ".parquet" {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func metadataLocation(t *testing.T, home string) string {
	t.Helper()
	cat := openHome(t, home)
	tbl, err := cat.LoadTable(context.Background(), []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl.MetadataLocation()
}

func openHome(t testing.TB, home string) *catalog.Catalog {
	t.Helper()
	cfg, err := catalog.Resolve(catalog.Settings{Home: home, ConfigFile: os.DevNull, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat
}

func TestPublishRefusesBadInput(t *testing.T) {
	cases := []struct {
		name, file, content string
		want                []string // every one must appear in stderr
	}{
		{"malformed NDJSON line", "in.ndjson",
			"{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n{\"order_date\":\"2026-01-02\",\"channel\":\"web\",\n",
			[]string{"in.ndjson:2", "malformed JSON"}},
		{"NDJSON line of null", "in.ndjson",
			"{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\nnull\n",
			[]string{"in.ndjson:2", "holds null, not an object"}},
		{"NDJSON line of an array", "in.ndjson",
			"[\"2026-01-01\",\"web\",1,5]\n",
			[]string{"in.ndjson:1", "holds an array, not an object"}},
		{"malformed CSV line", "in.csv",
			"order_date,channel,order_count,amount_cents\n2026-01-01,web,1,5\n2026-01-02,\"web,1,5\n",
			[]string{"in.csv:3"}},
		{"value of the wrong type in CSV", "in.csv",
			"order_date,channel,order_count,amount_cents\n2026-01-01,web,1,5\n2026-01-02,web,1,lots\n",
			[]string{"in.csv:3", "column amount_cents", "lots"}},
		{"value of the wrong type in NDJSON", "in.ndjson",
			"{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":\"one\",\"amount_cents\":5}\n",
			[]string{"in.ndjson:1", "column order_count"}},
		{"row outside the declared partitions", "in.ndjson",
			"{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n{\"order_date\":\"2026-01-02\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n{\"order_date\":\"2026-01-03\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n",
			[]string{"in.ndjson:3", "order_date=2026-01-03", "outside-partitions"}},
		{"negative amount", "in.ndjson",
			"{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n{\"order_date\":\"2026-01-02\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":-7}\n",
			[]string{"order_date=2026-01-02", "row 1", "in.ndjson:2", "column amount_cents", "negative"}},
		{"duplicate grain", "in.ndjson",
			"{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n{\"order_date\":\"2026-01-02\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n{\"order_date\":\"2026-01-02\",\"channel\":\"web\",\"order_count\":2,\"amount_cents\":5}\n",
			[]string{"order_date=2026-01-02", "row 2", "in.ndjson:3", "duplicate-grain", `grain order_date=2026-01-02, channel="web" repeats row 1 (`, "in.ndjson:2)"}},
		// A repeated key after another finding is still named: the rows
		// after the first finding go on to local files for it.
		{"duplicate grain after a check", "in.ndjson",
			"{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n{\"order_date\":\"2026-01-02\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":-5}\n{\"order_date\":\"2026-01-02\",\"channel\":\"web\",\"order_count\":2,\"amount_cents\":5}\n",
			[]string{"negative", `grain order_date=2026-01-02, channel="web" repeats row 1 (`, "in.ndjson:3"}},
		{"null grain value", "in.ndjson",
			"{\"order_date\":\"2026-01-01\",\"channel\":null,\"order_count\":1,\"amount_cents\":5}\n",
			[]string{"in.ndjson:1", "column channel", "required"}},
		{"zero rows for a declared partition", "in.ndjson",
			"{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n",
			[]string{"order_date=2026-01-02", "empty-partition", "--allow-empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := newHome(t)
			before, filesBefore := metadataLocation(t, home), parquetFiles(t, home)
			in := write(t, t.TempDir(), tc.file, tc.content)
			code, _, stderr := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01..2026-01-02", in)
			if code != exitRefused {
				t.Errorf("exit %d, want %d (refused); stderr:\n%s", code, exitRefused, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, stderr)
				}
			}
			if after := metadataLocation(t, home); after != before {
				t.Errorf("table moved from %s to %s on a refused publish", before, after)
			}
			if after := parquetFiles(t, home); after != filesBefore {
				t.Errorf("%d data files after a refused publish, %d before: staged files remain", after, filesBefore)
			}
		})
	}
}

func TestPublishAndHistoryJSON(t *testing.T) {
	home := newHome(t)
	code, out, errs := cli(t, home, "history", "--table", "retail.daily_orders", "-o", "json")
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, errs)
	}
	var h struct {
		Main []runrecord.Entry `json:"main"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("history -o json is not JSON: %v\n%s", err, out)
	}
	if len(h.Main) != 1 || h.Main[0].Rows != 4 || !h.Main[0].Sums["amount_cents"].Equal(exact.Of(36500)) || h.Main[0].Source != "files:batch1.ndjson" {
		t.Errorf("history %+v, want the first load: 4 rows, 36500 cents, source files:batch1.ndjson", h.Main)
	}
	code, out, errs = cli(t, home, "verify", "--table", "retail.daily_orders", "--run", h.Main[0].RunID)
	if code != 0 || !strings.Contains(out, ": ok") {
		t.Errorf("verify: exit %d, out %q, err %q", code, out, errs)
	}
}

// conflictSource lets another writer commit after the plan noted its base.
type conflictSource struct {
	source.Source
	other func()
	once  sync.Once
}

func (c *conflictSource) Open(ctx context.Context, p string) (array.RecordReader, error) {
	c.once.Do(c.other)
	return c.Source.Open(ctx, p)
}

func TestExitCodes(t *testing.T) {
	home := newHome(t)
	if code, _, _ := cli(t, home, "publish", "--table", "retail.daily_orders", "x.csv"); code != exitUsage {
		t.Errorf("publish without --partitions: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := cli(t, home, "publish", "--table", "daily_orders", "--partitions", "order_date=2026-01-01", "x.csv"); code != exitUsage {
		t.Errorf("publish to a name without namespace: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "day=2026-01-01", "x.csv"); code != exitUsage {
		t.Errorf("selector on the wrong column: exit %d, want %d", code, exitUsage)
	}

	// A commit by someone else to a planned partition between staging and
	// commit.
	cat := openHome(t, home)
	pub := &swap.Publisher{Catalog: cat}
	rows, _ := retail.Daily(retail.AfterBatch2)
	other := retail.NewSource([]retail.DailyOrder{{OrderDate: "2026-01-02", Channel: "app", OrderCount: 1, AmountCents: 1}})
	src := &conflictSource{Source: retail.NewSource(rows), other: func() {
		if _, err := pub.Publish(context.Background(), swap.Request{Table: []string{"retail", "daily_orders"}, Partitions: []string{"2026-01-02"}, Source: other}); err != nil {
			t.Errorf("other writer: %v", err)
		}
	}}
	_, err := pub.Publish(context.Background(), swap.Request{Table: []string{"retail", "daily_orders"}, Partitions: []string{"2026-01-01", "2026-01-02"}, Source: src, Parallelism: 1})
	if code := exitCode(err); code != exitConflict {
		t.Errorf("publish after a concurrent commit: exit %d (%v), want %d", code, err, exitConflict)
	}

	// Rolling back the first load now would drop the other writer's commit.
	code, out, _ := cli(t, home, "history", "--table", "retail.daily_orders", "-o", "json")
	var h struct {
		Main []runrecord.Entry `json:"main"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil || code != 0 {
		t.Fatalf("history: %v", err)
	}
	first := h.Main[len(h.Main)-1].RunID
	if code, _, errs := cli(t, home, "rollback", "--table", "retail.daily_orders", "--run", first); code != exitRollbackRefuse {
		t.Errorf("rollback behind a later commit: exit %d, want %d: %s", code, exitRollbackRefuse, errs)
	}
}

func TestMain(m *testing.M) {
	asLakeswap() // a process a test started, as the command: it exits
	jsonWritten = checkPrinted
	textWritten = checkMessages
	// lakeswap processes the tests start log theirs here (barrier.go).
	log, err := os.CreateTemp("", "lakeswap-json-*.log")
	if err != nil {
		panic(err)
	}
	log.Close()
	defer os.Remove(log.Name())
	os.Setenv(envJSONLog, log.Name())
	code := testenv.Run(m)
	os.Exit(max(code, validatePrinted(log.Name()), reportMessages()))
}

func TestDemoOnMinIO(t *testing.T) {
	testenv.MinIO(t) // the demo starts its own; this fails or skips as every S3 test does
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb bytes.Buffer
	if code := mainWithEnv(context.Background(), []string{"demo", "--s3", "--dir", dir}, &out, &errb, noEnv); code != 0 {
		t.Fatalf("demo --s3: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"warehouse s3://lakeswap-demo-", "daily_orders unchanged; no new snapshot: true", "the one before the bad run: true", "the branch gone: true", "demo ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo --s3 output lacks %q", want)
		}
	}
}

func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb bytes.Buffer
	if code := mainWithEnv(context.Background(), []string{"demo", "--dir", dir}, &out, &errb, noEnv); code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"rejected 3 source rows", "orders_fact: 5 orders, 36500 cents", `order_id="o100"): they moved`,
		"orders_fact unchanged, daily_orders unchanged; no new snapshot: true; 2026-01-02/web = 2 orders, 19000 cents",
		"after append 1: 2026-01-02/web = 4 orders, 38000 cents", "after append 2: 2026-01-02/web = 6 orders, 57000 cents",
		"refused (exit code 3)", "the one before the bad run: true", "order_date=2026-01-01 channel=store: amount_cents 7000 -> 7100",
		"applied: main is the branch's snapshot", "the branch gone: true", "its branch gone, main unmoved: true", "demo ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	for _, f := range []string{"catalog.db", "warehouse"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("demo home lacks %s: %v", f, err)
		}
	}
	// A second run starts afresh in the same home.
	if code := mainWithEnv(context.Background(), []string{"demo", "--dir", dir}, &out, &errb, noEnv); code != 0 {
		t.Fatalf("second demo run: exit %d\n%s", code, errb.String())
	}
	if !strings.Contains(out.String(), "release release-backfill: orders_fact and daily_orders published in one commit") {
		t.Error("the demo does not rebuild both tables as one release")
	}
	// The standing checks pass on what the demo leaves.
	for _, tbl := range []string{"retail.orders_fact", "retail.daily_orders"} {
		out.Reset()
		if code := mainWithEnv(context.Background(), []string{"--home", dir, "--config", os.DevNull, "check", "--table", tbl}, &out, &errb, noEnv); code != 0 || strings.Count(out.String(), "ok ") != 3 {
			t.Errorf("check --table %s after the demo: exit %d\n%s%s", tbl, code, out.String(), errb.String())
		}
		// And the whole table, what other engines prune on included.
		out.Reset()
		if code := mainWithEnv(context.Background(), []string{"--home", dir, "--config", os.DevNull, "verify", "--table", tbl}, &out, &errb, noEnv); code != 0 {
			t.Errorf("verify --table %s after the demo: exit %d\n%s%s", tbl, code, out.String(), errb.String())
		}
	}
}

func noLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
