package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknownCommandsAreUsageErrors: a misspelled command or argument,
// anywhere in the tree, exits 2 and creates nothing, so that a script never
// takes a printed help for success; a command that only groups others
// needs one of them. It prints its cause and one line pointing at the
// help of the command that was meant, not pages of flags above the cause.
func TestUnknownCommandsAreUsageErrors(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		args  []string
		usage string // the usage printed: the command's where one was meant
	}{
		{[]string{"bogus"}, "Run 'lakeswap --help' for usage."},
		{[]string{"table", "bogus"}, "Run 'lakeswap table --help' for usage."},
		{[]string{"table"}, "Run 'lakeswap table --help' for usage."},
		{[]string{"table", "create", "extra", "--schema", "x.yaml"}, "Run 'lakeswap table create --help' for usage."},
		{[]string{"history", "extra", "--table", "a.b"}, "Run 'lakeswap history --help' for usage."},
		{[]string{"history", "--table", "a.b", "--limit", "-1"}, "Run 'lakeswap history --help' for usage."},
		{[]string{"history", "--table", "a.b", "--limit", "x"}, `invalid argument "x" for "--limit" flag: not a number`},
		{[]string{"publish", "--table", "a.b", "--bogus"}, "unknown flag: --bogus\nRun 'lakeswap publish --help' for usage.\n"},
		{[]string{"version", "extra"}, "Run 'lakeswap version --help' for usage."},
	} {
		code, out, errs := cli(t, home, c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, c.usage) || strings.Contains(errs, "Flags:") || strings.Count(errs, "\n") > 3 {
			t.Errorf("lakeswap %s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, out, errs, exitUsage, c.usage)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("a usage error created %v in the home", entries)
	}
}

// TestVersion: --version and version say lakeswap's version; version -o
// json also gives Go's, iceberg-go's and arrow-go's, and whether the SQL
// engine is built in.
func TestVersion(t *testing.T) {
	home := t.TempDir()
	code, out, _ := cli(t, home, "--version")
	if code != 0 || !strings.HasPrefix(out, "lakeswap ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	code, out, errs := cli(t, home, "-o", "json", "version")
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil {
		t.Fatalf("version -o json: exit %d, %v: %s %s", code, err, out, errs)
	}
	if v.Version == "" || !strings.HasPrefix(v.Go, "go") || !strings.HasPrefix(v.IcebergGo, "v") || !strings.HasPrefix(v.ArrowGo, "v18.") {
		t.Errorf("version -o json: %+v", v)
	}
	if want := os.Getenv("LAKESWAP_WANT_ENGINE"); want != "" && v.SQLEngine != (want == "duckdb") {
		t.Errorf("version says the SQL engine is built in: %v; make test asks for engine %s", v.SQLEngine, want)
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("version opened a catalog: %v", entries)
	}
}

// TestTableCreateRefusesWhatPublishRefuses: a contract every publish would
// refuse (a string or a double additive, an unknown check) is refused by
// table create, naming the column, and creates no table. A money column
// (decimal) is additive: TestMoneyTable.
func TestTableCreateRefusesWhatPublishRefuses(t *testing.T) {
	home := t.TempDir()
	for _, contract := range []string{"additive: [ratio]", "additive: [name]", "checks: {id: [positive]}"} {
		schema := write(t, t.TempDir(), "s.yaml", `table: shop.money
columns:
  - {name: day, type: date, required: true}
  - {name: id, type: long, required: true}
  - {name: amount, type: "decimal(12,2)"}
  - {name: name, type: string}
  - {name: ratio, type: double}
identifier: [day, id]
partition: [{column: day, transform: identity}]
`+contract+"\n")
		code, _, errs := cli(t, home, "table", "create", "--schema", schema)
		col := strings.Trim(strings.Fields(contract)[len(strings.Fields(contract))-1], "[]}")
		if col == "positive" {
			col = "id"
		}
		if code != exitUsage || !strings.Contains(errs, `"`+col+`"`) {
			t.Errorf("table create with %s: exit %d: %s; want exit %d naming %s", contract, code, errs, exitUsage, col)
		}
	}
	if code, _, _ := cli(t, home, "history", "--table", "shop.money"); code == 0 {
		t.Error("a refused table create left a table")
	}
}

// TestRollbackRetried: an orchestrator that retries a rollback that
// succeeded gets exit 0 and when it was done, and nothing is committed
// twice, for a whole and for a scoped rollback.
func TestRollbackRetried(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.createDaily()
	s.must("publish", "--run-id", "first", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))
	s.must("publish", "--run-id", "second", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t))
	for _, args := range [][]string{{"--run", "second"}, {"--run", "first", "--scoped"}} {
		s.must(append([]string{"rollback", "--table", "retail.daily_orders"}, args...)...)
		meta := s.metadata("daily_orders")
		out := s.must(append([]string{"rollback", "--table", "retail.daily_orders"}, args...)...)
		if !strings.Contains(out, "was already rolled back at") || !strings.Contains(out, "nothing was committed now") {
			t.Errorf("rollback %v again: %s", args, out)
		}
		if s.metadata("daily_orders") != meta {
			t.Errorf("rollback %v again committed", args)
		}
	}
}

// TestMissingTableNamesTheCatalog: a table the catalog does not hold is an
// error that names the catalog lakeswap looked in, and where it was
// configured, so that a catalog chosen by mistake shows.
func TestMissingTableNamesTheCatalog(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{{"history", "--table", "retail.nowhere"}, {"-o", "json", "status", "--table", "retail.nowhere", "--run", "r"}} {
		code, out, errs := cli(t, home, args...)
		if code == 0 || !strings.Contains(errs, "looked in catalog default (embedded, in "+home+")") {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
		if args[0] == "-o" && !strings.Contains(out, "looked in catalog default") {
			t.Errorf("%v: the JSON error does not name the catalog: %s", args, out)
		}
	}
}

// TestNoCredentialsIsOneLine: a catalog on S3 with no credentials anywhere
// in the AWS chain says so in one line naming the variables to set, not in
// the SDK's words, and commits nothing.
func TestNoCredentialsIsOneLine(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	conf := write(t, dir, "lakeswap.yaml", "catalog:\n  default:\n    type: sql\n    uri: file:"+filepath.Join(dir, "c.db")+
		"\n    sql.driver: sqlite\n    sql.dialect: sqlite\n    warehouse: s3://bucket/w\n    s3.endpoint: http://127.0.0.1:1\n")
	code, _, errs := cli(t, dir, "--config", conf, "history", "--table", "a.b")
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != exitError || len(lines) != 1 || !strings.Contains(errs, "no AWS credentials for S3: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") {
		t.Errorf("no credentials: exit %d, %d line(s):\n%s", code, len(lines), errs)
	}
}

// TestTableDescribeAndSet: describe shows a table's columns, partitioning,
// contract and last runs; set changes lakeswap's properties in one commit,
// and refuses (exit 2, the table unchanged) a value every publish would
// refuse, or a property that is not lakeswap's.
func TestTableDescribeAndSet(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.createDaily()
	s.must("publish", "--run-id", "first", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))
	out := s.must("table", "describe", "--table", "retail.daily_orders")
	for _, want := range []string{"order_date date, required", "partitioned by identity(order_date)", "grain order_date, channel", "first"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q:\n%s", want, out)
		}
	}
	meta := s.metadata("daily_orders")
	for _, bad := range []string{"lakeswap.plausible-band=2:1", "lakeswap.check.amount_cents=positive", "write.format.default=orc", "nokey"} {
		if code, _, errs := s.cli("table", "set", "--table", "retail.daily_orders", bad); code != exitUsage {
			t.Errorf("set %s: exit %d: %s", bad, code, errs)
		}
	}
	if s.metadata("daily_orders") != meta {
		t.Fatal("a refused set changed the table")
	}
	s.must("table", "set", "--table", "retail.daily_orders", "lakeswap.plausible-band=0.8:1.25")
	var info struct {
		Properties map[string]string `json:"lakeswap_properties"`
	}
	if err := json.Unmarshal([]byte(s.must("-o", "json", "table", "describe", "--table", "retail.daily_orders")), &info); err != nil || info.Properties["lakeswap.plausible-band"] != "0.8:1.25" {
		t.Errorf("after set: %v %v", info.Properties, err)
	}
	if s.metadata("daily_orders") == meta {
		t.Error("set committed nothing")
	}
	s.must("table", "set", "--table", "retail.daily_orders", "lakeswap.plausible-band=")
	info.Properties = nil // a fresh map: Unmarshal adds to one it is given
	if err := json.Unmarshal([]byte(s.must("-o", "json", "table", "describe", "--table", "retail.daily_orders")), &info); err != nil || info.Properties["lakeswap.plausible-band"] != "" {
		t.Errorf("after removing the band: %v %v", info.Properties, err)
	}
}

// TestRequestErrorsWithoutUsage: a request that names what does not exist
// (an input file, a job file) exits 2 naming it, without the command's
// usage, which is not what is wrong.
func TestRequestErrorsWithoutUsage(t *testing.T) {
	home := t.TempDir()
	missing := filepath.Join(t.TempDir(), "nope.csv")
	for _, args := range [][]string{
		{"publish", "--table", "a.b", "--partitions", "d=2026-01-01", missing},
		{"publish", "--job", missing + ".yaml", "--partitions", "d=2026-01-01"},
	} {
		code, _, errs := cli(t, home, args...)
		if code != exitUsage || !strings.Contains(errs, "nope.csv") || strings.Contains(errs, "Usage:") {
			t.Errorf("lakeswap %s: exit %d, want %d naming the file without the usage: %s", strings.Join(args, " "), code, exitUsage, errs)
		}
	}
}

// TestReadingCommandsNeverMakeACatalog: in a folder with no catalog, a
// command that only reads says there is none and how to make one (exit
// 1), and leaves the folder as empty as it found it; doctor too.
func TestReadingCommandsNeverMakeACatalog(t *testing.T) {
	for _, args := range [][]string{
		{"doctor"},
		{"history", "--table", "shop.sales"},
		{"show", "--table", "shop.sales", "--run", "r1"},
		{"status", "--table", "shop.sales", "--run", "r1"},
		{"verify", "--table", "shop.sales"},
		{"verify", "--table", "shop.sales", "--run", "r1"},
		{"check", "--table", "shop.sales"},
		{"diff", "--table", "shop.sales", "1", "2"},
		{"plans"},
		{"table", "describe", "--table", "shop.sales"},
	} {
		home := t.TempDir()
		code, out, errs := cli(t, home, args...)
		if code != exitError || !strings.Contains(out+errs, "no catalog here") || !strings.Contains(out+errs, "lakeswap table create") {
			t.Errorf("lakeswap %s in an empty folder: exit %d, want %d saying there is no catalog:\n%s%s", strings.Join(args, " "), code, exitError, out, errs)
		}
		if entries, _ := os.ReadDir(home); len(entries) > 0 {
			t.Errorf("lakeswap %s made %v in a folder with no catalog", strings.Join(args, " "), entries)
		}
	}
	// lineage reads job files, and no catalog: it answers, making none.
	home := t.TempDir()
	if code, _, errs := cli(t, home, "lineage", "--table", "shop.sales", "--jobs", t.TempDir()); code != 0 {
		t.Errorf("lineage: exit %d: %s", code, errs)
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("lineage made %v in a folder with no catalog", entries)
	}
}
