//go:build !noduckdb

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

// guardsTable is the table every guard scenario runs on: one row per
// order, in the day it was placed.
const guardsTable = `table: m.orders
columns:
  - {name: order_id, type: string, required: true}
  - {name: order_date, type: date, required: true}
  - {name: amount_cents, type: long, required: true}
identifier: [order_id]
partition: [{column: order_date, transform: identity}]
additive: [amount_cents]
checks: {amount_cents: [non-negative]}
`

const guardsHeader = "order_id,order_date,amount_cents"

// guardScenario is one guard's scenario file (testdata/guards/*.txt): the
// rows the table holds, rows that should trip the guard and the
// substring the refusal names, rows that should pass (with flags, the
// override where the guard takes one), and the routes it does not apply
// to, each with why.
type guardScenario struct {
	file, guard    string
	partitions     []string
	basePartitions []string // the base's, where they differ
	set            []string // table set after the base
	flags          []string // the passing run's
	reconcile      string   // a job's reconcile query
	base, trip     []string
	pass           []string
	tripWants      string
	tripOn         map[string]string // route -> what its refusal names, where it says it otherwise
	tripJobSQL     string            // the job's SQL for the trip, where the rows alone do not trip it
	tripNA         string            // why no input trips it
	notApplicable  map[string]string // route -> why ("all": every route)
	// lookback is the job's (3650d unless said): rows with a fourth
	// field say when they arrived; a job's run stamps the others with
	// its own time, long after their days.
	lookback string
	// tripRunID, when set, is the run id the trip runs under.
	tripRunID string
	// rollbackAfter is what a rollback's trip commits after the run it
	// rolls back ("release": a release over its days).
	rollbackAfter string
	// A file of several for one guard is a variant, named by its file:
	// the routes it runs on (the others are not its subject), and how it
	// differs from the common scenario.
	name          string
	routes        []string
	partitionSpec string   // the table's partition: line, where not order_date
	optional      []string // columns the table leaves nullable
	// known are the ids m.known holds (its column id), the table a
	// relationship check of the scenario reads.
	known       []string
	tripExit    int    // the trip's exit code, where not the route's refusal
	jobSQL      string // the job's SQL, where not the rows' casts
	lagIngested string // the job's lag ingested_at expression
	// files a job reads in place of the rows as CSV, in trip and in
	// pass: each a name and its lines (NDJSON as is; for Parquet, a
	// query whose result the file holds).
	files map[string][]guardFile
	// then is a job's run after the base, over thenPartitions (with a
	// gap, say), before the trip and the pass.
	then           []string
	thenPartitions []string
	// holds, where given, is what the table holds in the scenario's
	// partitions after the pass (else the pass's rows): the same rows
	// published again change nothing.
	holds []string
	// verifyFrom is a table the passing release leaves unchanged: the
	// release is verified from it, then again with a file of the
	// release on m.orders damaged.
	verifyFrom  string
	pinUpstream bool             // the release's downstream pins the upstream's snapshot, in the trip
	tripShard   map[int][]string // flags of shard i in the trip
}

type guardFile struct {
	name  string
	lines []string
}

func readGuardScenario(t *testing.T, path string) *guardScenario {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := &guardScenario{file: filepath.Base(path), name: strings.TrimSuffix(filepath.Base(path), ".txt"),
		notApplicable: map[string]string{}, tripOn: map[string]string{}, files: map[string][]guardFile{}, tripShard: map[int][]string{}}
	var block *[]string
	phase := "" // the block's: base, trip or pass
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		word, rest, _ := strings.Cut(line, " ")
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case word == "guard":
			sc.guard = rest
		case word == "partitions":
			sc.partitions = strings.Split(rest, ",")
		case word == "base-partitions":
			sc.basePartitions = strings.Split(rest, ",")
		case word == "set":
			sc.set = append(sc.set, rest)
		case word == "flags":
			sc.flags = strings.Fields(rest)
		case word == "reconcile":
			sc.reconcile = rest
		case word == "lookback":
			sc.lookback = rest
		case word == "trip-run-id":
			sc.tripRunID = rest
		case word == "rollback-after":
			sc.rollbackAfter = rest
		case word == "routes":
			sc.routes = strings.Split(rest, ",")
		case word == "partition-spec":
			sc.partitionSpec = rest
		case word == "optional":
			sc.optional = append(sc.optional, rest)
		case word == "known":
			var prefix string
			var count int
			if _, err := fmt.Sscan(rest, &prefix, &count); err != nil {
				t.Fatalf("%s:%d: known PREFIX COUNT", path, n)
			}
			for i := range count {
				sc.known = append(sc.known, fmt.Sprintf("%s%d", prefix, i))
			}
		case word == "trip-exit":
			sc.tripExit, err = strconv.Atoi(rest)
			if err != nil {
				t.Fatalf("%s:%d: trip-exit CODE", path, n)
			}
		case word == "job-sql":
			sc.jobSQL = rest
		case word == "lag-ingested":
			sc.lagIngested = rest
		case word == "verify-from":
			sc.verifyFrom = rest
		case word == "trip-pins-upstream":
			sc.pinUpstream = true
		case word == "trip-shard":
			i, flags, _ := strings.Cut(rest, " ")
			k, err := strconv.Atoi(i)
			if err != nil {
				t.Fatalf("%s:%d: trip-shard I FLAGS", path, n)
			}
			sc.tripShard[k] = strings.Fields(flags)
		case word == "file":
			if phase != "trip" && phase != "pass" {
				t.Fatalf("%s:%d: a file belongs to the trip or the pass", path, n)
			}
			sc.files[phase] = append(sc.files[phase], guardFile{name: rest})
			files := sc.files[phase]
			block = &files[len(files)-1].lines
		case word == "holds":
			block, phase = &sc.holds, word
		case word == "then":
			block, phase, sc.thenPartitions = &sc.then, word, strings.Split(rest, ",")
		case word == "base":
			block, phase = &sc.base, word
		case word == "trip":
			block, phase, sc.tripWants = &sc.trip, word, rest
		case word == "pass":
			block, phase = &sc.pass, word
		case word == "trip-on":
			route, wants, ok := strings.Cut(rest, ": ")
			if !ok {
				t.Fatalf("%s:%d: trip-on ROUTE: SUBSTRING", path, n)
			}
			sc.tripOn[route] = wants
		case word == "trip-job-sql":
			sc.tripJobSQL = rest
		case word == "na-trip":
			sc.tripNA = rest
		case word == "na":
			route, why, ok := strings.Cut(rest, ": ")
			if !ok {
				t.Fatalf("%s:%d: na ROUTE: WHY", path, n)
			}
			sc.notApplicable[route] = why
		case word == "gen":
			// AMOUNT+ gives each row its own amount: AMOUNT, AMOUNT+1, ...
			var day, prefix, arrived, amounts string
			var count int
			f := strings.Fields(rest)
			if len(f) == 5 {
				arrived, rest = ","+f[4], strings.Join(f[:4], " ")
			}
			_, err := fmt.Sscan(rest, &day, &prefix, &count, &amounts)
			amount, aerr := strconv.Atoi(strings.TrimSuffix(amounts, "+"))
			if err != nil || aerr != nil || block == nil {
				t.Fatalf("%s:%d: gen DAY PREFIX COUNT AMOUNT[+] [ARRIVED], in a block", path, n)
			}
			step := 0
			if strings.HasSuffix(amounts, "+") {
				step = 1
			}
			for i := range count {
				*block = append(*block, fmt.Sprintf("%s%d,%s,%d%s", prefix, i, day, amount+step*i, arrived))
			}
		case block != nil:
			*block = append(*block, line)
		default:
			t.Fatalf("%s:%d: %q is neither a directive nor a row of a block", path, n, line)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return sc
}

// guardRun is one route's run of a scenario's rows on a site: its exit
// code and what it printed.
type guardRun struct {
	code      int
	out, errs string
}

// guardRoute runs rows through one route a run can take, declaring the
// partitions, with flags; setup runs after the table holds the base and
// before the run, so that a route can make its own history first.
type guardRoute struct {
	name string
	// refused is the exit code of a refusal on this route.
	refused int
	run     func(t *testing.T, g *guardSite, rows []string, flags []string) guardRun
}

// guardSite is a site with the scenario's table, and the scenario.
type guardSite struct {
	*site
	sc    *guardScenario
	n     int    // runs so far, for file names and run ids
	daily bool   // m.daily, which a release rebuilds, exists
	phase string // of the run: base, trip or pass
}

// tableYAML is the scenario's table.
func (g *guardSite) tableYAML() string {
	spec := guardsTable
	for _, col := range g.sc.optional {
		spec = regexp.MustCompile(`(\{name: `+col+`, type: \w+), required: true\}`).ReplaceAllString(spec, "$1}")
	}
	if g.sc.partitionSpec == "" {
		return spec
	}
	return strings.Replace(spec, "partition: [{column: order_date, transform: identity}]", "partition: "+g.sc.partitionSpec, 1)
}

// knownTable holds the ids a relationship check of a scenario reads.
const knownTable = `table: m.known
columns:
  - {name: id, type: string, required: true}
  - {name: day, type: date, required: true}
identifier: [id]
partition: [{column: day, transform: identity}]
`

func (g *guardSite) next() int { g.n++; return g.n }

// input writes rows as a CSV file.
func (g *guardSite) input(rows []string) string {
	return write(g.t, g.t.TempDir(), fmt.Sprintf("in-%d.csv", g.next()), csvOf(rows))
}

// csvOf is rows as a CSV file's text: with when they arrived, where they
// say so.
func csvOf(rows []string) string {
	header := guardsHeader
	if len(rows) > 0 && strings.Count(rows[0], ",") == 3 {
		header += ",ingested_at"
	}
	return header + "\n" + strings.Join(rows, "\n") + "\n"
}

// arrived stamps the rows that do not say when they arrived with the
// run's own time: each run of the site later than the last, months after
// the rows' days.
func (g *guardSite) arrived(rows []string) []string {
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(g.next()) * time.Hour).Format(time.RFC3339)
	out := make([]string, len(rows))
	for i, r := range rows {
		if strings.Count(r, ",") == 2 {
			r += "," + at
		}
		out[i] = r
	}
	return out
}

// job writes in dir the scenario's job over rows (their arrival tracked,
// as the job's late policy reads it) and its input, and returns the
// job's file. Owning, the job keeps the rows of its days alone ($from
// to $to), as a job run by --since-last over a source of every day does.
//
// Where the scenario gives files for the run's phase, the job reads them
// (the folder in/) rather than the rows, and tracks no arrival.
func (g *guardSite) job(dir string, rows []string, owning bool) string {
	sql := cmp.Or(g.sc.jobSQL, "SELECT order_id, CAST(order_date AS DATE) AS order_date, CAST(amount_cents AS BIGINT) AS amount_cents FROM src")
	if g.sc.tripJobSQL != "" && g.phase == "trip" {
		sql = g.sc.tripJobSQL
	}
	if owning {
		sql = "SELECT * FROM (" + sql + ") WHERE CAST(order_date AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)"
	}
	src, lag := "in.csv", "\nlag: {event_time: \"CAST(order_date AS TIMESTAMP)\", ingested_at: "+strconv.Quote(cmp.Or(g.sc.lagIngested, "CAST(ingested_at AS TIMESTAMP)"))+"}"
	if files := g.sc.files[g.phase]; len(files) > 0 {
		src, lag = "in/", ""
		for _, f := range files {
			g.sourceFile(filepath.Join(dir, "in"), f)
		}
	} else {
		write(g.t, dir, "in.csv", csvOf(g.arrived(rows)))
	}
	spec := "table: m.orders\nsources:\n  src: {path: " + src + "}\nsql: " + strconv.Quote(sql) + "\n" +
		"lookback: " + cmp.Or(g.sc.lookback, "3650d") + lag + "\n"
	if g.sc.reconcile != "" {
		spec += "reconcile: " + strconv.Quote(g.sc.reconcile) + "\n"
	}
	return write(g.t, dir, "job.yaml", spec)
}

// sourceFile writes one of the scenario's files in dir: NDJSON as its
// lines say, Parquet as the result of its one line, a query.
func (g *guardSite) sourceFile(dir string, f guardFile) {
	path := filepath.Join(dir, f.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		g.t.Fatal(err)
	}
	if !strings.HasSuffix(f.name, ".parquet") {
		write(g.t, dir, f.name, strings.Join(f.lines, "\n")+"\n")
		return
	}
	if err := fileEngine(g.t, fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet)", strings.Join(f.lines, " "), source.SQLString(path))); err != nil {
		g.t.Fatal(err)
	}
}

// scenarioFiles is the SQL engine the guard scenarios write their files with, one
// for the test process: an engine takes 14 ms of CPU to open, and the
// scenarios wrote files through hundreds of them. It is left unconfined.
var scenarioFiles struct {
	sync.Mutex
	eng *source.SQLEngine
}

// fileEngine runs a statement that writes files on the shared engine.
func fileEngine(t *testing.T, q string) error {
	scenarioFiles.Lock()
	defer scenarioFiles.Unlock()
	if scenarioFiles.eng == nil {
		dir, err := os.MkdirTemp("", "lakeswap-files-engine-")
		if err != nil {
			t.Fatal(err)
		}
		if scenarioFiles.eng, err = source.OpenSQLEngine(dir, 256<<20); err != nil {
			t.Fatal(err)
		}
	}
	return scenarioFiles.eng.Exec(context.Background(), q)
}

// dailyTable is the table a release rebuilds beside m.orders: each day's
// orders and amount, read from m.orders as the release leaves it.
const dailyTable = `table: m.daily
columns:
  - {name: order_date, type: date, required: true}
  - {name: orders, type: long, required: true}
  - {name: amount_cents, type: long, required: true}
identifier: [order_date]
partition: [{column: order_date, transform: identity}]
additive: [orders, amount_cents]
`

const dailyJob = `table: m.daily
sources:
  o: {table: m.orders, partitions: same}
sql: "SELECT order_date, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount_cents) AS BIGINT) AS amount_cents FROM o WHERE order_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE) GROUP BY order_date"
`

func (g *guardSite) selector() string { return "order_date=" + strings.Join(g.sc.partitions, ",") }

func (g *guardSite) cli(args ...string) guardRun {
	code, out, errs := g.site.cli(args...)
	return guardRun{code, out, errs}
}

// publishArgs are a publish of the table with the scenario's partitions.
func (g *guardSite) publishArgs(cmd string, flags []string) []string {
	return append([]string{cmd, "--table", "m.orders", "--partitions", g.selector()}, flags...)
}

// planAndApply plans rows, then applies the plan unless it was refused;
// between, between runs (a concurrent writer, say). Where the scenario
// is a job's (its rows say when they arrived, or it reconciles), a job
// plans them, and a process of its own applies the plan: what the job
// decided and records is read back from the plan file alone.
func (g *guardSite) planAndApply(rows, flags []string, between func()) guardRun {
	plan := filepath.Join(g.t.TempDir(), fmt.Sprintf("plan-%d.json", g.next()))
	args := append(g.publishArgs("plan", flags), "--out", plan, g.input(rows))
	ofJob := g.sc.lookback != "" || g.sc.reconcile != ""
	if ofJob {
		dir := g.t.TempDir()
		args = append([]string{"plan", "--job", g.job(dir, rows, false), "--partitions", g.selector(), "--rejects", filepath.Join(dir, "rejects.ndjson"), "--out", plan}, flags...)
	}
	r := g.cli(args...)
	if r.code != 0 {
		return r
	}
	pf, err := swap.ReadPlan(plan)
	if err != nil {
		g.t.Fatal(err)
	}
	if between != nil {
		between()
	}
	if !ofJob {
		return g.cli("apply", plan, "--approve", pf.PlanID)
	}
	var out, errs bytes.Buffer
	apply := g.command("apply", plan, "--approve", pf.PlanID)
	apply.Stdout, apply.Stderr = &out, &errs
	if err := apply.Run(); err != nil && apply.ProcessState == nil {
		g.t.Fatal(err)
	}
	return guardRun{apply.ProcessState.ExitCode(), out.String(), errs.String()}
}

// byPartition splits rows by their day, in the order of the scenario's
// partitions; a row of an undeclared day goes with the first.
func (g *guardSite) byPartition(rows []string) [][]string {
	out := make([][]string, len(g.sc.partitions))
	for _, r := range rows {
		f := strings.Split(r, ",")
		i := max(slices.Index(g.sc.partitions, f[1]), 0)
		out[i] = append(out[i], r)
	}
	return out
}

// guardRoutes are the routes a run of rows can take.
var guardRoutes = []guardRoute{
	{name: "publish", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		return g.cli(append(g.publishArgs("publish", flags), g.input(rows))...)
	}},
	{name: "plan+apply", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		return g.planAndApply(rows, flags, nil)
	}},
	{name: "batches", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		return g.cli(append(g.publishArgs("publish", append([]string{"--commit-per-partition"}, flags...)), g.input(rows))...)
	}},
	{name: "shards", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		// Where the rows say when they arrived, shards of a job's run.
		runID := fmt.Sprintf("sharded-%d", g.next())
		job := ""
		if g.sc.lookback != "" {
			job = g.job(t.TempDir(), rows, true)
		}
		var plans, ids []string
		for i, part := range g.byPartition(rows) {
			plan := filepath.Join(t.TempDir(), fmt.Sprintf("shard-%d.json", i))
			args := append([]string{"plan", "--partitions", "order_date=" + g.sc.partitions[i], "--run-id", runID, "--out", plan}, flags...)
			if g.phase == "trip" {
				args = append(args, g.sc.tripShard[i]...)
			}
			if job != "" {
				args = append(args, "--job", job, "--rejects", filepath.Join(t.TempDir(), "rejects.ndjson"))
			} else {
				args = append(args, "--table", "m.orders", g.input(part))
			}
			if r := g.cli(args...); r.code != 0 {
				for _, p := range plans {
					g.must("discard", p)
				}
				return r
			}
			pf, err := swap.ReadPlan(plan)
			if err != nil {
				t.Fatal(err)
			}
			plans, ids = append(plans, plan), append(ids, pf.PlanID)
		}
		r := g.cli(append(append([]string{"apply"}, plans...), "--approve", strings.Join(ids, ","))...)
		if r.code != 0 { // refused at apply: what the shards staged is discarded, as its hint says
			for _, p := range plans {
				g.must("discard", p)
			}
		}
		return r
	}},
	{name: "rebase", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		// Another writer commits a day the run does not declare between
		// its plan and its apply: the apply rebases over it.
		return g.planAndApply(rows, flags, func() {
			g.must("publish", "--table", "m.orders", "--partitions", "order_date=2099-01-01", g.input([]string{fmt.Sprintf("w%d,2099-01-01,1", g.n)}))
		})
	}},
	{name: "resume", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		// Killed as it commits, then run again under the same run id.
		runID := fmt.Sprintf("resumed-%d", g.next())
		in := g.input(rows)
		kill := g.command(append(g.publishArgs("publish", flags), "--run-id", runID, in)...)
		kill.Env = append(kill.Env, "LAKESWAP_TEST_KILL_AT_COMMIT=1")
		out, err := kill.CombinedOutput()
		if err == nil {
			t.Fatalf("the run to be killed at its commit finished:\n%s", out)
		}
		return g.cli(append(g.publishArgs("publish", flags), "--run-id", runID, in)...)
	}},
	{name: "job", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		dir := t.TempDir()
		return g.cli(append([]string{"publish", "--job", g.job(dir, rows, false), "--partitions", g.selector(), "--rejects", filepath.Join(dir, "rejects.ndjson")}, flags...)...)
	}},
	{name: "since-last", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		// The days of the rows that arrived since the last job's run,
		// which published the base.
		dir := t.TempDir()
		return g.cli(append([]string{"publish", "--job", g.job(dir, rows, true), "--since-last", "--rejects", filepath.Join(dir, "rejects.ndjson")}, flags...)...)
	}},
	{name: "release", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		// m.orders and m.daily, which reads it, as one release.
		dir := t.TempDir()
		up := g.job(dir, rows, false)
		daily := dailyJob
		if g.sc.pinUpstream && g.phase == "trip" {
			tbl, done := tableOf(t, g.site, "m.orders")
			daily = strings.Replace(daily, "{table: m.orders, partitions: same}", fmt.Sprintf("{table: m.orders, snapshot: %d, partitions: same}", tbl.CurrentSnapshot().SnapshotID), 1)
			done()
		}
		write(t, dir, "daily.yaml", daily)
		return g.cli(append([]string{"publish", "--job", up, "--downstream", "--jobs", dir, "--partitions", g.selector()}, flags...)...)
	}},
	{name: "adopt", refused: exitRefused, run: func(t *testing.T, g *guardSite, rows, flags []string) guardRun {
		// Parquet files another engine wrote under the table's location,
		// one a day, typed as the engine reads the CSV.
		files := adoptable(t, g, rows)
		return g.cli(append(g.publishArgs("publish", append([]string{"--adopt"}, flags...)), files...)...)
	}},
}

// rollbackRoutes are the routes that undo a run: each meets the guards
// that judge a change to the table (a freeze), with args on the command.
var rollbackRoutes = []struct {
	name string
	args []string
}{
	{"rollback", nil},
	{"scoped rollback", []string{"--scoped"}},
	{"forced rollback", []string{"--force"}},
}

// adoptable writes rows as Parquet files under the table's location, one
// for each day, with the engine's reading of the CSV's types.
func adoptable(t *testing.T, g *guardSite, rows []string) []string {
	t.Helper()
	in := g.input(rows)
	tbl, done := tableOf(t, g.site, "m.orders")
	loc := strings.TrimPrefix(tbl.Location(), "file://")
	done()
	remote := ""
	if g.srv != nil { // written here, then put where the table's location is
		remote, loc = loc, t.TempDir()
	}
	var paths []string
	days := map[string]bool{}
	for _, r := range rows {
		days[strings.Split(r, ",")[1]] = true
	}
	for _, day := range slices.Sorted(maps.Keys(days)) {
		path := filepath.Join(loc, "data", "order_date="+day, fmt.Sprintf("adopted-%d.parquet", g.next()))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		q := fmt.Sprintf("COPY (SELECT * FROM read_csv(%s) WHERE CAST(order_date AS VARCHAR) = %s) TO %s (FORMAT parquet)", source.SQLString(in), source.SQLString(day), source.SQLString(path))
		if err := fileEngine(t, q); err != nil {
			t.Fatal(err)
		}
		if remote != "" {
			key := strings.TrimPrefix(strings.TrimPrefix(remote, "s3://"+g.bkt+"/"), "/") + strings.TrimPrefix(path, loc)
			if _, err := g.srv.Client.FPutObject(context.Background(), g.bkt, key, path, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			path = "s3://" + g.bkt + "/" + key
		}
		paths = append(paths, path)
	}
	return paths
}

// tableOf loads a table of the site's catalog, by NAMESPACE.NAME.
func tableOf(t *testing.T, s *site, name string) (*table.Table, func()) {
	t.Helper()
	ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, strings.Split(name, "."))
	if err != nil {
		cat.Close()
		t.Fatal(err)
	}
	return tbl, func() { cat.Close() }
}

// newGuardSite creates the scenario's table on a site of its own and
// publishes its base, as run base: through the job, its arrival tracked,
// where the route or the scenario reads when rows arrived; with the
// table a release rebuilds beside it, for the release.
func newGuardSite(t *testing.T, sc *guardScenario, route, siteName string) *guardSite {
	t.Helper()
	g := &guardSite{site: newSite(t, siteName), sc: sc, phase: "base"}
	g.must("table", "create", "--schema", write(t, g.home, "orders.yaml", g.tableYAML()))
	if len(sc.known) > 0 {
		g.must("table", "create", "--schema", write(t, g.home, "known.yaml", knownTable))
		in := write(t, t.TempDir(), "known.csv", "id,day\n"+strings.Join(sc.known, ",2026-01-01\n")+",2026-01-01\n")
		g.must("publish", "--table", "m.known", "--partitions", "day=2026-01-01", in)
	}
	if route == "release" {
		g.must("table", "create", "--schema", write(t, g.home, "daily.yaml", dailyTable))
		g.daily = true
	}
	parts := "order_date=" + cmp.Or(strings.Join(sc.basePartitions, ","), strings.Join(sc.partitions, ","))
	if route == "since-last" || sc.lookback != "" {
		dir := t.TempDir()
		g.must("publish", "--job", g.job(dir, sc.base, true), "--partitions", parts, "--run-id", "base", "--rejects", filepath.Join(dir, "rejects.ndjson"))
		if len(sc.then) > 0 {
			dir := t.TempDir()
			g.must("publish", "--job", g.job(dir, sc.then, true), "--partitions", "order_date="+strings.Join(sc.thenPartitions, ","), "--run-id", "then", "--rejects", filepath.Join(dir, "rejects.ndjson"))
		}
	} else {
		g.must("publish", "--table", "m.orders", "--partitions", parts, "--run-id", "base", g.input(sc.base))
	}
	if g.daily { // m.daily holds the base's days, as a release finds it
		dir := t.TempDir()
		g.must("publish", "--job", write(t, dir, "daily.yaml", dailyJob), "--partitions", parts, "--run-id", "base-daily", "--rejects", filepath.Join(dir, "rejects.ndjson"))
	}
	return g
}

// tablesMeta is the metadata location of each of the site's tables.
func (g *guardSite) tablesMeta() map[string]string {
	out := map[string]string{"m.orders": g.metadata("m.orders")}
	if g.daily {
		out["m.daily"] = g.metadata("m.daily")
	}
	return out
}

// setTable applies the scenario's table settings.
func (g *guardSite) setTable() {
	for _, kv := range g.sc.set {
		g.must("table", "set", "--table", "m.orders", kv)
	}
}

// TestGuardsByRoute: every guard of swap.Guards, on every route a run can
// take, from its scenario file (testdata/guards): rows that trip it are
// refused naming what the file says, with the table and its files as
// they were; rows that pass (with the override, where the guard takes
// one) are committed, and the table then holds them (the same rows again
// change nothing). A route a guard does not apply to says why in the
// file. A guard with no file, or a route missing from a file that is
// neither run nor said not to apply, fails the test. The matrix is
// logged: go test -run TestGuardsByRoute -v.
func TestGuardsByRoute(t *testing.T) {
	// The resume route runs the binary: built beside the other cells.
	go binOnce.Do(buildBinary)
	files, err := filepath.Glob(filepath.Join("testdata", "guards", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// A guard's scenario is its file named for it; its other files are
	// variants, each of some routes (a defect found where routes meet).
	scenarios := map[string][]*guardScenario{}
	for _, f := range files {
		sc := readGuardScenario(t, f)
		if len(sc.routes) > 0 {
			scenarios[sc.guard] = append(scenarios[sc.guard], sc)
		} else {
			scenarios[sc.guard] = append([]*guardScenario{sc}, scenarios[sc.guard]...)
		}
	}
	var routes []string
	for _, r := range guardRoutes {
		routes = append(routes, r.name)
	}
	for _, r := range rollbackRoutes {
		routes = append(routes, r.name)
	}
	for name := range scenarios {
		if !slices.ContainsFunc(swap.Guards, func(g *swap.Guard) bool { return g.Name == name }) {
			t.Errorf("testdata/guards holds a scenario of %q, which is no guard of swap.Guards", name)
		}
	}
	// On the embedded catalog always; on PostgreSQL and MinIO in the
	// full run.
	sites := []string{"sqlite+local"}
	if !testing.Short() {
		sites = append(sites, "postgres+minio")
	}
	for _, siteName := range sites {
		t.Run(siteName, func(t *testing.T) { guardMatrix(t, scenarios, routes, siteName) })
	}
}

// guardMatrix runs every cell of the matrix on a kind of site, in
// parallel, each cell on a site of its own, and logs the matrix.
func guardMatrix(t *testing.T, scenarios map[string][]*guardScenario, routes []string, siteName string) {
	if siteName != "sqlite+local" {
		serverEnv(t)
	}
	matrix := map[string]map[string]string{}
	variants := map[string]map[string]string{} // variant -> route -> cell
	var mu sync.Mutex
	t.Run("cells", func(t *testing.T) {
		for _, guard := range swap.Guards {
			scs := scenarios[guard.Name]
			matrix[guard.Name] = map[string]string{}
			if len(scs) == 0 || len(scs[0].routes) > 0 {
				t.Errorf("guard %q has no scenario file of every route in testdata/guards: write one", guard.Name)
				continue
			}
			for _, sc := range scs {
				variant := len(sc.routes) > 0
				if variant {
					variants[sc.name] = map[string]string{}
				}
				for _, r := range sc.routes {
					if !slices.Contains(routes, r) {
						t.Errorf("%s names route %q, which is none", sc.file, r)
					}
				}
				for _, route := range routes {
					_, na := sc.notApplicable[route]
					if _, all := sc.notApplicable["all"]; na || all || variant && !slices.Contains(sc.routes, route) {
						if !variant {
							matrix[guard.Name][route] = "n/a"
						}
						continue
					}
					name := guard.Name + "/" + route
					if variant {
						name += "/" + sc.name
					}
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						cell := runGuardCell(t, sc, route, siteName)
						mu.Lock()
						defer mu.Unlock()
						if variant {
							variants[sc.name][route] = cell
						}
						matrix[guard.Name][route] = mergeCells(matrix[guard.Name][route], cell)
					})
				}
			}
		}
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%-19s", "")
	for _, r := range routes {
		fmt.Fprintf(&b, " %-16s", r)
	}
	for _, guard := range swap.Guards {
		fmt.Fprintf(&b, "\n%-19s", guard.Name)
		for _, r := range routes {
			fmt.Fprintf(&b, " %-16s", matrix[guard.Name][r])
		}
	}
	for _, guard := range swap.Guards {
		for _, sc := range scenarios[guard.Name] {
			if len(sc.routes) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n  %s:", sc.name)
			for _, r := range sc.routes {
				fmt.Fprintf(&b, " %s %s;", r, variants[sc.name][r])
			}
		}
	}
	t.Logf("guards by route (trip/pass) on %s, then the variants:\n%s", siteName, b.String())
}

// mergeCells is a cell that a variant ran on as well: a failure shows; a
// trip of either shows as refused.
func mergeCells(a, b string) string {
	switch {
	case a == "" || a == "n/a":
		return b
	case strings.Contains(b, "FAILED"), strings.HasPrefix(b, "refused") && !strings.HasPrefix(a, "refused") && !strings.Contains(a, "FAILED"):
		return b
	}
	return a
}

// runGuardCell runs a scenario through one route: the trip, refused, then
// the pass, committed. It returns the cell as the matrix shows it.
func runGuardCell(t *testing.T, sc *guardScenario, route, siteName string) string {
	for _, r := range rollbackRoutes {
		if r.name == route {
			return runRollbackCell(t, sc, r.name, r.args, siteName)
		}
	}
	i := slices.IndexFunc(guardRoutes, func(r guardRoute) bool { return r.name == route })
	r := guardRoutes[i]
	g := newGuardSite(t, sc, route, siteName)
	g.setTable()
	cell := "n/a"
	if sc.tripNA == "" {
		// Files another engine wrote (to adopt) are its own, and stay.
		// A plan's audit branch, made and removed, leaves the table's
		// metadata a version on: main and the files are what stay.
		ours := func() []string {
			return slices.DeleteFunc(g.content(), func(f string) bool { return strings.Contains(f, "/adopted-") })
		}
		meta, files := g.mainState("m.orders"), ours()
		var flags []string
		if sc.tripRunID != "" {
			flags = []string{"--run-id", sc.tripRunID}
		}
		g.phase = "trip"
		got := r.run(t, g, sc.trip, flags)
		wants, refused := cmp.Or(sc.tripOn[route], sc.tripWants), cmp.Or(sc.tripExit, r.refused)
		cell = "refused"
		if got.code != refused || !strings.Contains(got.out+got.errs, wants) {
			t.Errorf("%s: rows that trip %s: exit %d: %s%s; want %d naming %q", sc.file, sc.guard, got.code, got.out, got.errs, refused, wants)
			cell = "FAILED"
		}
		if g.mainState("m.orders") != meta || !slices.Equal(ours(), files) {
			t.Errorf("%s: the refused run changed the table or left files", sc.file)
			cell = "FAILED"
		}
	}
	meta := g.metadata("m.orders")
	g.phase = "pass"
	got := r.run(t, g, sc.pass, sc.flags)
	if got.code != 0 {
		t.Errorf("%s: rows that pass %s: exit %d: %s%s", sc.file, sc.guard, got.code, got.out, got.errs)
		return cell + "/FAILED"
	}
	if g.metadata("m.orders") == meta {
		t.Errorf("%s: the passing run committed nothing", sc.file)
	}
	// The same rows again change nothing, on any table: through the
	// route where the rows say when they arrived (a file of rows cannot),
	// else as a file.
	tables := g.tablesMeta()
	again := guardRun{}
	switch {
	case sc.holds != nil:
		again = g.cli(append(g.publishArgs("publish", sc.flags), "--allow-empty", g.input(sc.holds))...)
	case sc.lookback != "" && route == "rebase": // without the writer between, which changes the table
		again = g.planAndApply(sc.pass, sc.flags, nil)
	case sc.lookback != "":
		again = r.run(t, g, sc.pass, sc.flags)
	default:
		again = g.cli(append(g.publishArgs("publish", sc.flags), g.input(sc.pass))...)
	}
	if again.code != 0 || !strings.Contains(again.out, "unchanged") || !maps.Equal(g.tablesMeta(), tables) {
		t.Errorf("%s: the passing rows again: exit %d: %s%s; want unchanged, every table as it was", sc.file, again.code, again.out, again.errs)
	}
	if sc.verifyFrom != "" && !g.verifiedFrom(sc.verifyFrom, got.out) {
		return cell + "/FAILED"
	}
	return cell + "/passed"
}

// verifiedFrom verifies the release that printed out from a table it left
// unchanged: its other tables are verified (ok), and a file of it on
// m.orders damaged fails the verify, naming m.orders.
func (g *guardSite) verifiedFrom(tbl, out string) bool {
	t := g.t
	m := regexp.MustCompile(`release (\S+) of`).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("%s: the passing run printed no release: %s", g.sc.file, out)
		return false
	}
	id := m[1]
	if v := g.cli("verify", "--table", tbl, "--run", id); v.code != 0 || !strings.Contains(v.out, "m.orders, of the same release: run "+id) {
		t.Errorf("%s: verify of release %s from %s: exit %d: %s%s; want m.orders verified", g.sc.file, id, tbl, v.code, v.out, v.errs)
		return false
	}
	i := slices.IndexFunc(g.files(), func(f string) bool {
		return strings.Contains(f, "/orders/data/") && strings.Contains(f, "run-"+id+"-") && strings.HasSuffix(f, ".parquet")
	})
	if i < 0 {
		t.Fatalf("%s: no data file of release %s", g.sc.file, id)
	}
	damaged := g.files()[i]
	if g.srv == nil {
		if err := os.WriteFile(strings.TrimPrefix(damaged, "file://"), []byte("not parquet"), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if _, err := g.srv.Client.PutObject(context.Background(), g.bkt, strings.TrimPrefix(damaged, "s3://"+g.bkt+"/"), strings.NewReader("not parquet"), 11, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := g.cli("verify", "--table", tbl, "--run", id); v.code == 0 || !strings.Contains(v.out+v.errs, "m.orders, of the same release") || !strings.Contains(v.errs, "cannot be read") {
		t.Errorf("%s: verify of release %s from %s with %s damaged: exit %d: %s%s; want a failure naming m.orders", g.sc.file, id, tbl, damaged, v.code, v.out, v.errs)
		return false
	}
	return true
}

// runRollbackCell runs a scenario through a rollback: the passing rows
// published as run r2 before the table's settings, then rolled back
// (with args); the settings make the rollback trip the guard. It passes
// with the scenario's flags where the rollback takes them (--scoped), or
// on a table without the settings.
func runRollbackCell(t *testing.T, sc *guardScenario, route string, args []string, siteName string) string {
	publishRuns := func(g *guardSite, trip bool) {
		g.must(append(g.publishArgs("publish", nil), "--run-id", "r2", "--allow-implausible", g.input(sc.pass))...)
		switch {
		case trip && sc.rollbackAfter == "release":
			// A release over the run's days, which a rollback of the run
			// would take from one of its tables.
			dir := t.TempDir()
			up := g.job(dir, sc.trip, false)
			write(t, dir, "daily.yaml", dailyJob)
			g.must("table", "create", "--schema", write(t, g.home, "daily.yaml", dailyTable))
			g.must("publish", "--job", up, "--downstream", "--jobs", dir, "--partitions", g.selector(), "--run-id", "r3", "--allow-implausible")
		case slices.Contains(args, "--force"):
			g.must("publish", "--table", "m.orders", "--partitions", "order_date=2099-01-01", "--run-id", "r3", g.input([]string{"w1,2099-01-01,1"}))
		}
	}
	rollback := append([]string{"rollback", "--table", "m.orders", "--run", "r2"}, args...)
	g := newGuardSite(t, sc, "rollback", siteName)
	publishRuns(g, true)
	g.setTable()
	meta, files := g.metadata("m.orders"), g.files()
	got := g.cli(rollback...)
	wants := cmp.Or(sc.tripOn[route], sc.tripWants)
	trip := "refused"
	if got.code != exitRollbackRefuse || !strings.Contains(got.errs, wants) {
		t.Errorf("%s: a rollback that trips %s: exit %d: %s%s; want %d naming %q", sc.file, sc.guard, got.code, got.out, got.errs, exitRollbackRefuse, wants)
		trip = "FAILED"
	}
	if g.metadata("m.orders") != meta || !slices.Equal(g.files(), files) {
		t.Errorf("%s: the refused rollback changed the table or left files", sc.file)
		trip = "FAILED"
	}
	if slices.Contains(args, "--scoped") {
		rollback = append(rollback, sc.flags...)
	} else {
		g = newGuardSite(t, sc, "rollback", siteName)
		publishRuns(g, false)
	}
	if got := g.cli(rollback...); got.code != 0 {
		t.Errorf("%s: a rollback that passes %s: exit %d: %s%s", sc.file, sc.guard, got.code, got.out, got.errs)
		return trip + "/FAILED"
	}
	// The base's rows again change nothing in the days r2 changed.
	if again := g.cli(append(g.publishArgs("publish", sc.flags), g.input(sc.base))...); again.code != 0 || !strings.Contains(again.out, "unchanged") {
		t.Errorf("%s: the base rows after the rollback: exit %d: %s%s; want unchanged", sc.file, again.code, again.out, again.errs)
		return trip + "/FAILED"
	}
	return trip + "/passed"
}
