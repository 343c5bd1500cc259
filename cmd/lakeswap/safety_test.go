package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"gopkg.in/yaml.v3"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/history"
)

const twoDays = "order_date=2026-01-01..2026-01-02"

// TestReusedRunID is the reported case: a second publish under a run id
// the table already records used to delete the first run's live files.
// Now the same input is reported as published, other input is refused,
// and the first run's files and snapshot stay.
func TestReusedRunID(t *testing.T) {
	home := newHome(t)
	dir := t.TempDir()
	same := write(t, dir, "r.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,5\n2026-01-02,web,1,5\n")
	other := write(t, dir, "o.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,6\n2026-01-02,web,1,5\n")
	empty := write(t, dir, "e.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,5\n")
	publish := func(in string) (int, string, string) {
		return cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--run-id", "job-42", in)
	}
	if code, _, errs := publish(same); code != 0 {
		t.Fatalf("first publish: exit %d: %s", code, errs)
	}
	meta, files := metadataLocation(t, home), warehouseFiles(t, home)
	for _, tc := range []struct {
		name, in string
		code     int
		say      string
	}{
		{"same input", same, exitOK, "already published in snapshot"},
		{"other input", other, exitRefused, "already used by snapshot"},
		{"an emptied partition", empty, exitRefused, "empty-partition"},
		{"same input again", same, exitOK, "already published in snapshot"},
	} {
		code, out, errs := publish(tc.in)
		if code != tc.code || !strings.Contains(out+errs, tc.say) {
			t.Errorf("%s: exit %d, want %d saying %q:\n%s%s", tc.name, code, tc.code, tc.say, out, errs)
		}
		if got := metadataLocation(t, home); got != meta {
			t.Errorf("%s moved the table from %s to %s", tc.name, meta, got)
		}
		if got := warehouseFiles(t, home); !slices.Equal(got, files) {
			t.Errorf("%s changed the files:\nbefore %v\nafter  %v", tc.name, files, got)
		}
		if code, _, errs := cli(t, home, "verify", "--table", "retail.daily_orders", "--run", "job-42"); code != 0 {
			t.Errorf("after %s, verify job-42: exit %d: %s", tc.name, code, errs)
		}
	}
}

// TestTwoProcessesOneRunID: two processes started at once with one run id
// (an orchestrator retrying its job) never delete each other's files. In
// half the rounds both reach the commit together; in the other half they
// run as they come, so one may find the other's run already published. In
// every round exactly one snapshot records the run, it verifies, and the
// table holds its rows.
func TestTwoProcessesOneRunID(t *testing.T) {
	t.Parallel() // processes of its own: runs beside other tests
	s := newShared(t, s3store.MinPartSize)
	ctx, pub := s.open()
	const rounds = 20
	for round := range rounds {
		runID := fmt.Sprintf("job-%d", round)
		differ := round%4 >= 2 // the retry brought other rows
		var env []string
		if round%2 == 0 {
			env = []string{testCommitBarrier + "=" + t.TempDir() + ":2"}
		}
		type proc struct {
			cmd      *exec.Cmd
			out, err *bytes.Buffer
			cents    int64
		}
		var ps []proc
		for w := range 2 {
			cents := int64(round*100 + 1)
			if differ {
				cents += int64(w)
			}
			in := filepath.Join(t.TempDir(), "in.ndjson")
			if err := retail.WriteNDJSON(in, []retail.DailyOrder{
				{OrderDate: "2026-01-01", Channel: "web", OrderCount: 1, AmountCents: cents},
				{OrderDate: "2026-01-02", Channel: "web", OrderCount: 1, AmountCents: cents}}); err != nil {
				t.Fatal(err)
			}
			cmd, out, errb := s.command(env, "publish", "-o", "json", "--run-id", runID, "--table", "retail.daily_orders", "--partitions", twoDays, in)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ps = append(ps, proc{cmd, out, errb, cents})
		}
		var winner *proc
		for i := range ps {
			err := ps[i].cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			var res swap.Result
			_ = json.Unmarshal(ps[i].out.Bytes(), &res)
			switch {
			case code == exitOK && res.Status == "published":
				if winner != nil {
					t.Fatalf("round %d: both processes committed run %s", round, runID)
				}
				winner = &ps[i]
			case code == exitOK && res.Status == "already-published" && !differ,
				code == exitConflict,
				code == exitRefused && differ && strings.Contains(ps[i].err.String(), "already used"):
			default:
				t.Fatalf("round %d: process %d exit %d (%s): %s", round, i, code, res.Status, ps[i].err)
			}
		}
		if winner == nil {
			t.Fatalf("round %d: no process committed run %s", round, runID)
		}
		if r := s.run("verify", "--table", "retail.daily_orders", "--run", runID); r.code != 0 {
			t.Fatalf("round %d: verify %s: exit %d: %s", round, runID, r.code, r.stderr)
		}
		tbl, err := pub.Catalog.LoadTable(ctx, []string{"retail", "daily_orders"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, snap := range tbl.Metadata().Snapshots() {
			if snap.Summary != nil && snap.Summary.Properties[runrecord.PropRunID] == runID {
				n++
			}
		}
		rows, err := retail.ReadDaily(ctx, tbl)
		if err != nil {
			t.Fatalf("round %d: read the table back: %v", round, err)
		}
		if n != 1 || len(rows) != 2 || rows[0].AmountCents != winner.cents || rows[1].AmountCents != winner.cents {
			t.Fatalf("round %d: %d snapshots record %s; table holds %+v, want the winner's %d cents", round, n, runID, rows, winner.cents)
		}
	}
	// Every run ever committed still reads back whole.
	main, _, err := history.Of(pub.Catalog).History(ctx, []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range main {
		if r := s.run("verify", "--table", "retail.daily_orders", "--run", e.RunID); r.code != 0 {
			t.Errorf("verify run %s: exit %d: %s", e.RunID, r.code, r.stderr)
		}
	}
}

// TestCodesAndWords: each failure exits with the code that says what
// happened, and with -o json prints one error object.
func TestCodesAndWords(t *testing.T) {
	home := newHome(t)
	in := write(t, t.TempDir(), "in.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,5\n2026-01-02,web,1,5\n")
	txt := write(t, t.TempDir(), "in.txt", "order_date,channel,order_count,amount_cents\n")
	meta, files := metadataLocation(t, home), warehouseFiles(t, home)
	for _, tc := range []struct {
		name string
		args []string
		code int
		kind string
		say  []string
	}{
		{"verify an unknown run", []string{"verify", "--table", "retail.daily_orders", "--run", "nope"}, exitError, "not-found", []string{"no snapshot of the table records run nope"}},
		{"show an unknown run", []string{"show", "--table", "retail.daily_orders", "--run", "nope"}, exitError, "not-found", []string{"records run nope"}},
		{"verify an unknown snapshot", []string{"verify", "--table", "retail.daily_orders", "--snapshot", "42"}, exitError, "not-found", []string{"snapshot 42 is not in the table's metadata"}},
		{"roll back an unknown run", []string{"rollback", "--table", "retail.daily_orders", "--run", "nope"}, exitError, "not-found", []string{"run nope"}},
		{"negative parallelism", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--parallelism", "-1", in}, exitUsage, "usage", []string{"--parallelism -1"}},
		{"zero file size", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--target-file-size-mib", "0", in}, exitUsage, "usage", []string{"--target-file-size-mib 0"}},
		{"negative file size", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--target-file-size-mib", "-5", in}, exitUsage, "usage", []string{"--target-file-size-mib -5"}},
		{"month that does not exist", []string{"publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-13-01", in}, exitUsage, "usage", []string{`"2026-13-01"`, "order_date is a date column", "YYYY-MM-DD"}},
		{"slashes", []string{"publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026/01/01", in}, exitUsage, "usage", []string{`"2026/01/01"`, "YYYY-MM-DD"}},
		{"empty list item", []string{"publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01,", in}, exitUsage, "usage", []string{"stray comma"}},
		{"a word", []string{"publish", "--table", "retail.daily_orders", "--partitions", "order_date=abc", in}, exitUsage, "usage", []string{`"abc"`, "YYYY-MM-DD"}},
		{"an integer range on a date", []string{"publish", "--table", "retail.daily_orders", "--partitions", "order_date=1..3", in}, exitUsage, "usage", []string{`"1"`, "date column"}},
		{"a missing input file", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, "/no/such.csv"}, exitUsage, "usage", []string{"/no/such.csv does not exist"}},
		{"an unknown input format", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, txt}, exitUsage, "usage", []string{"in.txt: unknown format"}},
		{"a folder of other files", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, home}, exitUsage, "usage", []string{"which lakeswap does not read"}},
		{"an empty folder", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, t.TempDir()}, exitUsage, "usage", []string{"holds no .csv"}},
		{"a memory limit of nothing", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--memory-limit", "0.5", in}, exitUsage, "usage", []string{"at least 256MiB"}},
		{"a memory limit below the floor", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--memory-limit", "255MiB", in}, exitUsage, "usage", []string{"--memory-limit 255MiB", "at least 256MiB", "within the limit plus 128MiB"}},
		{"a memory limit without a unit it knows", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--memory-limit", "2 GiBs", in}, exitUsage, "usage", []string{"for example 2GiB"}},
		{"a glob matching nothing", []string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays, filepath.Join(home, "*.csv.gz")}, exitUsage, "usage", []string{"matches no file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := cli(t, home, append([]string{"-o", "json"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, errs)
			}
			var got jsonError
			dec := json.NewDecoder(strings.NewReader(out))
			if err := dec.Decode(&got); err != nil || dec.More() {
				t.Fatalf("stdout is not one JSON error object (%v):\n%s", err, out)
			}
			if got.Code != tc.code || got.Kind != tc.kind {
				t.Errorf("error object says %d %q, want %d %q", got.Code, got.Kind, tc.code, tc.kind)
			}
			if strings.Contains(got.Message, "hint:") {
				t.Errorf("the message repeats the hint: %q (hint %q)", got.Message, got.Hint)
			}
			if !strings.HasPrefix(out, "{\n  \"schema_version\": 1,\n") {
				t.Errorf("the error object does not open with its schema_version:\n%s", out)
			}
			for _, s := range tc.say {
				if !strings.Contains(got.Message, s) || !strings.Contains(errs, s) {
					t.Errorf("message %q (stderr %q) does not say %q", got.Message, errs, s)
				}
			}
			if got := metadataLocation(t, home); got != meta {
				t.Errorf("table moved from %s to %s", meta, got)
			}
			if got := warehouseFiles(t, home); !slices.Equal(got, files) {
				t.Errorf("files changed:\nbefore %v\nafter  %v", files, got)
			}
		})
	}
}

// homeDaily reads retail.daily_orders of an embedded catalog as a reader
// of the table would.
func homeDaily(t *testing.T, home string) []retail.DailyOrder {
	t.Helper()
	tbl, err := openHome(t, home).LoadTable(context.Background(), []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := retail.ReadDaily(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestCSVByteOrderMark: a CSV that starts with a byte-order mark, as
// spreadsheet exports do, is read like one without.
func TestCSVByteOrderMark(t *testing.T) {
	home := newHome(t)
	in := write(t, t.TempDir(), "bom.csv", "\ufefforder_date,channel,order_count,amount_cents\n2026-01-01,web,1,5\n2026-01-02,web,2,7\n")
	if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", twoDays, in); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if rows := homeDaily(t, home); len(rows) != 2 || rows[1].OrderCount != 2 || rows[1].AmountCents != 7 {
		t.Errorf("table holds %+v", rows)
	}
}

// TestDemoOnOwnEndpointLeavesConfig: after a demo on one's own S3 endpoint,
// the command the demo prints works as printed.
func TestDemoOnOwnEndpointLeavesConfig(t *testing.T) {
	srv := serverEnv(t)
	bucket := srv.NewBucket(t)
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb bytes.Buffer
	if code := mainWithEnv(context.Background(), []string{"demo", "--dir", dir, "--s3-endpoint", srv.Endpoint, "--s3-bucket", bucket}, &out, &errb, noEnv); code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	_, hint, ok := strings.Cut(out.String(), "lakeswap --config ")
	if !ok {
		t.Fatalf("demo prints no --config hint:\n%s", out.String())
	}
	hint, _, _ = strings.Cut(hint, "\n")
	args := append([]string{"--config"}, strings.Fields(hint)...)
	out.Reset()
	if code := mainWithEnv(context.Background(), append(args, "-o", "json"), &out, &errb, noEnv); code != 0 {
		t.Fatalf("lakeswap %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	var h struct {
		Main []runrecord.Entry `json:"main"`
	}
	if err := json.Unmarshal(out.Bytes(), &h); err != nil || len(h.Main) < 2 {
		t.Errorf("history after the demo: %v, %d entries:\n%s", err, len(h.Main), out.String())
	}
	raw, err := os.ReadFile(filepath.Join(dir, "lakeswap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")} {
		if secret != "" && strings.Contains(string(raw), secret) {
			t.Error("the demo's config holds a credential")
		}
	}
	if _, err := catalog.Resolve(catalog.Settings{ConfigFile: filepath.Join(dir, "lakeswap.yaml"), Getenv: noEnv}); err != nil {
		t.Errorf("the demo's config does not resolve: %v", err)
	}
}

const salesYAML = `table: geo.sales
columns:
  - {name: region, type: string, required: true}
  - {name: id, type: long, required: true}
  - {name: amount, type: long, required: true}
identifier: [region, id]
partition: [{column: region}]
additive: [amount]
`

// TestStringPartitionsFromTheCLI: string partition values that are path or
// list syntax are declared with the selector's quotes, published, listed
// unambiguously in the same quotes, and a value too long for a folder is
// refused before anything is read.
func TestStringPartitionsFromTheCLI(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", write(t, home, "sales.yaml", salesYAML)); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	in := write(t, t.TempDir(), "in.csv", "region,id,amount\nC,1,5\nC#,1,6\n\"a,b\",1,7\n,1,8\n")
	code, out, errs := cli(t, home, "publish", "--table", "geo.sales", "--partitions", `region=C,C#,"a,b",""`, in)
	if code != 0 {
		t.Fatalf("publish: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `region="a,b"`) {
		t.Errorf("the result does not quote the value holding a comma:\n%s", out)
	}
	code, out, _ = cli(t, home, "history", "--table", "geo.sales")
	if code != 0 || !strings.Contains(out, `region="",region=C,region=C#,region="a,b"`) {
		t.Errorf("history lists the partitions ambiguously:\n%s", out)
	}
	cat := openHome(t, home)
	tbl, err := cat.LoadTable(context.Background(), []string{"geo", "sales"})
	if err != nil {
		t.Fatal(err)
	}
	meta, files := tbl.MetadataLocation(), warehouseFiles(t, home)
	long := strings.Repeat("é", 50)
	code, _, errs = cli(t, home, "publish", "--table", "geo.sales", "--partitions", "region="+long, in)
	if code != exitUsage || !strings.Contains(errs, "folder name of 307 bytes") {
		t.Errorf("a value too long for a folder: exit %d, want %d: %s", code, exitUsage, errs)
	}
	code, _, errs = cli(t, home, "publish", "--table", "geo.sales", "--partitions", `region=""`, in)
	if code != exitRefused || !strings.Contains(errs, `outside the partitions this run declares (region="")`) {
		t.Errorf("rows outside the empty-string partition: exit %d: %s", code, errs)
	}
	if tbl, err = cat.LoadTable(context.Background(), []string{"geo", "sales"}); err != nil || tbl.MetadataLocation() != meta {
		t.Errorf("refusals moved the table: %v", err)
	}
	if got := warehouseFiles(t, home); !slices.Equal(got, files) {
		t.Errorf("refusals changed the files:\nbefore %v\nafter  %v", files, got)
	}
}

// TestJSONErrorBeforeOutputFlag: an error cobra meets before it reaches
// -o json still prints the JSON error object.
func TestJSONErrorBeforeOutputFlag(t *testing.T) {
	for _, args := range [][]string{{"publish", "--bogus", "-o", "json"}, {"bogus", "--output=json"}, {"history", "-ojson", "--nope"}} {
		code, out, _ := cli(t, t.TempDir(), args...)
		var got jsonError
		if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitUsage || got.Kind != "usage" {
			t.Errorf("%v: exit %d, stdout %q (%v); want one usage error object", args, code, out, err)
		}
	}
	// The last --output given wins, as it does once flags are parsed.
	if code, out, _ := cli(t, t.TempDir(), "publish", "--bogus", "-o", "json", "--output", "text"); code != exitUsage || out != "" {
		t.Errorf("--output text after -o json: exit %d, stdout %q; want no JSON", code, out)
	}
}

// loadCounter counts table loads.
type loadCounter struct {
	swap.Catalog
	loads int
}

func (c *loadCounter) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	c.loads++
	return c.Catalog.LoadTable(ctx, ident)
}

// TestPublishFilesLoadsTheTableTwice: the CLI's publish reads the contract
// for the selector from the load that stages, and loads once more to check
// the commit.
func TestPublishFilesLoadsTheTableTwice(t *testing.T) {
	home := newHome(t)
	in := write(t, t.TempDir(), "in.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,5\n2026-01-02,web,1,5\n")
	counter := &loadCounter{Catalog: openHome(t, home)}
	pub := &swap.Publisher{Catalog: counter}
	if _, err := (backfill.Files{Selectors: []string{twoDays}, Paths: []string{in}}).Run(context.Background(), pub, swap.Request{Table: []string{"retail", "daily_orders"}}, pub.Publish); err != nil {
		t.Fatal(err)
	}
	if counter.loads != 2 {
		t.Errorf("%d loads, want 2", counter.loads)
	}
}

// TestEmptyRunOnEmptyPartitions: --allow-empty on partitions that hold
// nothing, in a table with no snapshot yet or with one, commits nothing and
// says so, instead of failing or reporting an earlier snapshot as its own.
func TestEmptyRunOnEmptyPartitions(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", write(t, home, "daily_orders.yaml", schemaYAML)); code != 0 {
		t.Fatalf("table create: %s", errs)
	}
	empty := write(t, t.TempDir(), "empty.csv", "order_date,channel,order_count,amount_cents\n")
	for _, days := range []string{"order_date=2026-02-01", "order_date=2026-02-02"} {
		meta, files := metadataLocation(t, home), warehouseFiles(t, home)
		code, out, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", days, "--allow-empty", empty)
		if code != 0 || !strings.Contains(out, "unchanged") {
			t.Errorf("%s: exit %d: %s%s", days, code, out, errs)
		}
		if metadataLocation(t, home) != meta || !slices.Equal(warehouseFiles(t, home), files) {
			t.Errorf("%s: an empty run changed the table", days)
		}
		// The second round runs on a table with a snapshot.
		in := write(t, t.TempDir(), "in.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,5\n")
		if code, _, errs := cli(t, home, "publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", in); code != 0 {
			t.Fatalf("publish: %s", errs)
		}
	}
}

// TestCancelledVerificationIsNotACancel: an error that says verification
// stopped after a commit landed exits as landed, not verified, never as a
// cancelled run that changed nothing or as a rolled-back one.
func TestCancelledVerificationIsNotACancel(t *testing.T) {
	err := &outcome.OpError{Op: "verify", Err: fmt.Errorf("%w: %w", outcome.ErrLandedUnverified, context.Canceled)}
	if code := exitCode(err); code != exitLandedUnverified {
		t.Errorf("exit %d, want %d", code, exitLandedUnverified)
	}
	rollbackFailed := &outcome.OpError{Op: "verify", Err: fmt.Errorf("%w: %w", outcome.ErrLandedUnverified, fmt.Errorf("%w: differs", outcome.ErrVerifyFailed))}
	if code := exitCode(rollbackFailed); code != exitLandedUnverified {
		t.Errorf("a failed rollback: exit %d, want %d", code, exitLandedUnverified)
	}
}
