//go:build !noduckdb

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/testenv"
)

// retailJobs copies the shipped retail jobs, their SQL and their tables'
// schemas into a folder of their own, raw/ holding events, and creates
// both tables on the site. It returns the folder.
func retailJobs(t *testing.T, s *site, events string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"orders_fact.yaml", "orders_fact.sql", "daily_orders.yaml", "daily_orders.sql", "orders_fact.table.yaml", "daily_orders.table.yaml"} {
		copyInto(t, filepath.Join("..", "..", "examples", "retail", f), filepath.Join(dir, f))
	}
	if err := os.MkdirAll(filepath.Join(dir, "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "raw"), "batch.ndjson", events)
	s.must("table", "create", "--schema", filepath.Join(dir, "orders_fact.table.yaml"))
	s.must("table", "create", "--schema", filepath.Join(dir, "daily_orders.table.yaml"))
	return dir
}

// releaseEvents are two orders a day on 2026-01-01 and 2026-01-02, their
// amounts moved by n: each n is other content for both tables.
func releaseEvents(n int) string {
	var b strings.Builder
	for i, o := range []struct{ id, day, channel string }{{"o1", "01", "web"}, {"o2", "01", "app"}, {"o3", "02", "web"}, {"o4", "02", "store"}} {
		ts := fmt.Sprintf("2026-01-%sT1%d:00:00Z", o.day, i)
		fmt.Fprintf(&b, `{"event_id":"e%d-%d","order_id":%q,"channel":%q,"order_ts":%q,"updated_at":%q,"source_version":1,"amount_cents":%d,"ingested_at":%q}`+"\n",
			i, n, o.id, o.channel, ts, ts, 1000+100*i+n, ts)
	}
	return b.String()
}

// releaseOf reads, from a metadata file, the run its current snapshot
// records and the release tags it holds.
func releaseOf(t *testing.T, s *site, loc string) (run string, tags []string) {
	t.Helper()
	meta, err := table.ParseMetadataBytes(s.read(loc))
	if err != nil {
		t.Fatalf("read %s: %v", loc, err)
	}
	if cur := meta.CurrentSnapshot(); cur != nil && cur.Summary != nil {
		run = cur.Summary.Properties[runrecord.PropRunID]
	}
	for name := range meta.Refs() {
		if strings.HasPrefix(name, swap.ReleaseTagPrefix) {
			tags = append(tags, name)
		}
	}
	return run, tags
}

// TestReleaseRetail, on every site (publish, plan then apply, rollback):
// lineage names raw events -> orders_fact -> daily_orders with the
// partition mapping; the retail jobs rebuilt with --downstream land as one
// release, each table's snapshot recording the release and tagged with it;
// an identical release commits nothing and leaves no file; a release
// planned and applied lands as one; rollback --run of a release restores
// both tables' fingerprints, and status and verify answer for both.
func TestReleaseRetail(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		dir := retailJobs(t, s, releaseEvents(0))
		facts := filepath.Join(dir, "orders_fact.yaml")

		out := s.must("lineage", "--table", "retail.orders_fact", "--jobs", dir, "--partitions", twoDays)
		for _, want := range []string{"raw/*.ndjson -> retail.orders_fact", "retail.orders_fact -> retail.daily_orders", "partitions: same", "stale in retail.daily_orders:", "2026-01-01,2026-01-02"} {
			if !strings.Contains(out, want) {
				t.Errorf("lineage lacks %q:\n%s", want, out)
			}
		}

		publish := func(run string, extra ...string) (int, releaseView, string) {
			t.Helper()
			args := append([]string{"publish", "-o", "json", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", run}, extra...)
			code, stdout, errs := s.cli(args...)
			var v releaseView
			if stdout != "" {
				if err := json.Unmarshal([]byte(stdout), &v); err != nil {
					t.Fatalf("%s: %v: %s", run, err, stdout)
				}
			}
			return code, v, errs
		}
		code, v, errs := publish("r1")
		if code != 0 || v.Status != swap.StatusPublished || len(v.Tables) != 2 {
			t.Fatalf("the first release: exit %d, %+v: %s", code, v, errs)
		}
		if v.Tables[0].Plan.Table != "retail.orders_fact" || v.Tables[1].Plan.Table != "retail.daily_orders" {
			t.Errorf("the release staged %s then %s; want the facts before what reads them", v.Tables[0].Plan.Table, v.Tables[1].Plan.Table)
		}
		r1 := map[string]string{"orders_fact": s.metadata("orders_fact"), "daily_orders": s.metadata("daily_orders")}
		current := map[string]string{}
		for name, loc := range r1 {
			run, tags := releaseOf(t, s, loc)
			if run != "r1" || !slices.Contains(tags, swap.ReleaseTag("r1")) {
				t.Errorf("%s holds run %q, release tags %v; want r1, tagged %s", name, run, tags, swap.ReleaseTag("r1"))
			}
			meta, err := table.ParseMetadataBytes(s.read(loc))
			if err != nil {
				t.Fatal(err)
			}
			current["retail."+name] = fmt.Sprint(meta.CurrentSnapshot().SnapshotID)
		}
		for name, loc := range r1 {
			meta, _ := table.ParseMetadataBytes(s.read(loc))
			props := meta.CurrentSnapshot().Summary.Properties
			var named map[string]string
			if err := json.Unmarshal([]byte(props[runrecord.PropReleaseSnapshots]), &named); err != nil || !maps.Equal(named, current) {
				t.Errorf("%s records the release's snapshots as %s; want %v", name, props[runrecord.PropReleaseSnapshots], current)
			}
			if props[runrecord.PropRelease] != `["retail.orders_fact","retail.daily_orders"]` {
				t.Errorf("%s records the release's tables as %s", name, props[runrecord.PropRelease])
			}
		}

		// The same release again commits nothing and leaves no file.
		files := s.files()
		if code, v, errs := publish("r1-again"); code != 0 || v.Status != swap.StatusUnchanged {
			t.Errorf("an identical release: exit %d %s: %s; want unchanged", code, v.Status, errs)
		}
		if s.metadata("orders_fact") != r1["orders_fact"] || s.metadata("daily_orders") != r1["daily_orders"] {
			t.Error("an identical release committed")
		}
		if now := s.files(); !slices.Equal(now, files) {
			t.Errorf("an identical release left files: %v", fileDiff(files, now))
		}

		// Another writer changes daily_orders; the release that puts it
		// back leaves the facts as they are, yet tags their snapshot too,
		// so that a reader pins both tables of it.
		input := write(t, t.TempDir(), "other.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,1\n2026-01-01,app,1,1\n")
		s.must("publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", "--run-id", "other-writer", "--allow-implausible", input)
		if code, v, errs := publish("r1b"); code != 0 || v.Status != swap.StatusPublished || v.Tables[0].Status != swap.StatusUnchanged {
			t.Fatalf("a release that changes daily_orders alone: exit %d %+v: %s", code, v, errs)
		}
		if run, tags := releaseOf(t, s, s.metadata("orders_fact")); run != "r1" || !slices.Contains(tags, swap.ReleaseTag("r1b")) {
			t.Errorf("the facts, unchanged by r1b, hold run %q and tags %v; want r1's snapshot tagged %s", run, tags, swap.ReleaseTag("r1b"))
		}
		if out := s.must("status", "--table", "retail.orders_fact", "--run", "r1b"); !strings.Contains(out, "committed nothing to retail.orders_fact") {
			t.Errorf("status of r1b on the facts it left unchanged:\n%s", out)
		}
		if out := s.must("verify", "--table", "retail.orders_fact", "--run", "r1b"); !strings.Contains(out, "committed nothing to retail.orders_fact") || !strings.Contains(out, "retail.daily_orders, of the same release: run r1b") {
			t.Errorf("verify of r1b on the facts it left unchanged:\n%s", out)
		}
		if code, _, errs := s.cli("rollback", "--table", "retail.orders_fact", "--run", "r1b"); code == 0 || !strings.Contains(errs, "committed nothing to this table") {
			t.Errorf("rollback of r1b from the facts it left unchanged: exit %d: %s", code, errs)
		}
		r1 = map[string]string{"orders_fact": s.metadata("orders_fact"), "daily_orders": s.metadata("daily_orders")}

		// The release's id again, for other content: refused once the
		// facts are staged, before what reads them is computed.
		write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(2))
		files = s.files()
		if code, _, errs := publish("r1"); code != exitRefused || !strings.Contains(errs, "was already used") || strings.Contains(errs, "daily_orders") {
			t.Errorf("release id r1 again for other content: exit %d: %s; want refused on the facts alone", code, errs)
		}
		if s.metadata("orders_fact") != r1["orders_fact"] || s.metadata("daily_orders") != r1["daily_orders"] || !slices.Equal(s.files(), files) {
			t.Error("the refused reuse of a release id changed a table or left files")
		}

		// Planned, approved and applied: both tables in one commit.
		write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(5))
		var planned releaseView
		if err := json.Unmarshal([]byte(s.must("plan", "-o", "json", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", "r2", "--out", t.TempDir())), &planned); err != nil {
			t.Fatal(err)
		}
		if s.metadata("orders_fact") != r1["orders_fact"] || s.metadata("daily_orders") != r1["daily_orders"] {
			t.Error("planning the release committed")
		}
		args := []string{"apply", "-o", "json"}
		for _, p := range planned.Tables {
			args = append(args, p.File, "--approve", p.PlanID)
		}
		var applied releaseView
		if err := json.Unmarshal([]byte(s.must(args...)), &applied); err != nil || applied.Status != swap.StatusPublished {
			t.Fatalf("apply of the release: %v %+v", err, applied)
		}
		for i, p := range applied.Tables { // each table's result names the plan approved for it
			if want := planned.Tables[slices.IndexFunc(planned.Tables, func(v planView) bool { return v.Result.Plan.Table == p.Result.Plan.Table })].PlanID; want == "" || p.PlanID != want {
				t.Errorf("the release's table %d (%s) answers for plan %q; want %q", i, p.Result.Plan.Table, p.PlanID, want)
			}
		}
		for _, name := range []string{"orders_fact", "daily_orders"} {
			if run, _ := releaseOf(t, s, s.metadata(name)); run != "r2" {
				t.Errorf("%s holds run %q after the apply; want r2", name, run)
			}
		}
		// Applied again, the plans settle as the release published.
		applied = releaseView{}
		if err := json.Unmarshal([]byte(s.must(args...)), &applied); err != nil || applied.Status != swap.StatusAlreadyPublished {
			t.Errorf("the release's plans applied again: %v %s; want already published", err, applied.Status)
		}
		if out := s.must("status", "--table", "retail.orders_fact", "--run", "r2"); !strings.Contains(out, "retail.daily_orders: snapshot") {
			t.Errorf("status of the release does not answer for daily_orders:\n%s", out)
		}
		if out := s.must("history", "--table", "retail.daily_orders"); !strings.Contains(out, "run r2 is a release: released with retail.orders_fact in one commit") {
			t.Errorf("history does not say r2 is a release:\n%s", out)
		}
		if out := s.must("verify", "--table", "retail.daily_orders", "--run", "r2"); strings.Count(out, ": ok") != 2 {
			t.Errorf("verify of the release does not check both tables:\n%s", out)
		}

		// Rolled back whole, both tables' fingerprints restored.
		var rb rollbackView
		if err := json.Unmarshal([]byte(s.must("rollback", "-o", "json", "--table", "retail.daily_orders", "--run", "r2")), &rb); err != nil {
			t.Fatal(err)
		}
		if len(rb.Tables) != 2 {
			t.Fatalf("the rollback of the release names %d tables: %+v", len(rb.Tables), rb)
		}
		for _, tr := range rb.Tables {
			if !tr.Verified {
				t.Errorf("%s was not restored to its fingerprint before the release: %+v", tr.Table, tr)
			}
		}
		for name, want := range map[string]string{"orders_fact": "r1", "daily_orders": "r1b"} {
			if run, _ := releaseOf(t, s, s.metadata(name)); run != want {
				t.Errorf("%s holds run %q after the rollback; want %s back", name, run, want)
			}
		}
	})
}

// fileDiff lists the files one listing has and the other has not.
func fileDiff(before, after []string) []string {
	var out []string
	for _, f := range after {
		if !slices.Contains(before, f) {
			out = append(out, "+"+f)
		}
	}
	for _, f := range before {
		if !slices.Contains(after, f) {
			out = append(out, "-"+f)
		}
	}
	return out
}

// TestReleaseReadersNeverSeeAMix, on SQLite, PostgreSQL and REST: while 20
// releases rebuild orders_fact and daily_orders, a reader reads both
// tables' catalog rows in one SQL transaction over and over (on REST, it
// loads the tables one after another through the catalog and pins the
// second by the first's release tag), and never sees one table of a
// release beside the other of another.
func TestReleaseReadersNeverSeeAMix(t *testing.T) {
	t.Parallel() // writers and readers of its own: runs beside other tests
	for _, name := range []string{"sqlite+local", "postgres+minio", "rest+minio"} {
		t.Run(name, func(t *testing.T) {
			s := newSite(t, name)
			dir := retailJobs(t, s, releaseEvents(0))
			facts := filepath.Join(dir, "orders_fact.yaml")
			release := func(n int) {
				t.Helper()
				write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(n))
				s.must("publish", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", fmt.Sprintf("rel-%02d", n))
			}
			release(0)

			read := readPair(t, s)
			var mu sync.Mutex
			seen := map[string]bool{}
			var mixed []string
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					select {
					case <-stop:
						return
					default:
					}
					a, b, err := read()
					if err != nil {
						mu.Lock()
						mixed = append(mixed, "read: "+err.Error())
						mu.Unlock()
						return
					}
					mu.Lock()
					seen[a] = true
					if a != b {
						mixed = append(mixed, a+" beside "+b)
					}
					mu.Unlock()
				}
			}()
			for n := 1; n <= 20; n++ {
				release(n)
			}
			close(stop)
			<-done
			if len(mixed) > 0 {
				t.Fatalf("the reader saw the tables of different releases together: %v", mixed[:min(len(mixed), 5)])
			}
			if len(seen) < 3 {
				t.Errorf("the reader saw %d releases over 20; it did not read while they landed", len(seen))
			}
		})
	}
}

// readPair is how the test's reader reads both tables: on a SQL catalog,
// both rows in one transaction, each metadata file then read for the run
// its current snapshot records; on REST, orders_fact loaded, then
// daily_orders pinned by the release tag of orders_fact's run.
func readPair(t *testing.T, s *site) func() (string, string, error) {
	cache := map[string]string{}
	runOf := func(loc string) string {
		if run, ok := cache[loc]; ok {
			return run
		}
		run, _ := releaseOf(t, s, loc)
		cache[loc] = run
		return run
	}
	cfg := siteConfig(t, s)
	if cfg.Props["type"] == "rest" {
		ctx, cat, _, err := openPublisher(context.Background(), cfg, noLog())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cat.Close() })
		return func() (string, string, error) {
			a, err := cat.LoadTable(ctx, table.Identifier{"retail", "orders_fact"})
			if err != nil {
				return "", "", err
			}
			run := a.CurrentSnapshot().Summary.Properties[runrecord.PropRunID]
			b, err := cat.LoadTable(ctx, table.Identifier{"retail", "daily_orders"})
			if err != nil {
				return "", "", err
			}
			pinned := b.Metadata().SnapshotByName(swap.ReleaseTag(run))
			if pinned == nil {
				return run, "no snapshot tagged " + swap.ReleaseTag(run), nil
			}
			return run, pinned.Summary.Properties[runrecord.PropRunID], nil
		}
	}
	db, err := sql.Open(cfg.Props["sql.driver"], cfg.Props["uri"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	iso := sql.LevelRepeatableRead // one snapshot for the transaction on PostgreSQL
	if cfg.Props["sql.driver"] == "sqlite" {
		iso = sql.LevelDefault // a read transaction of SQLite's is one snapshot
	}
	return func() (string, string, error) {
		ctx := context.Background()
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: iso, ReadOnly: cfg.Props["sql.driver"] != "sqlite"})
		if err != nil {
			return "", "", err
		}
		defer tx.Rollback() //nolint:errcheck
		locs := map[string]string{}
		for _, name := range []string{"orders_fact", "daily_orders"} {
			var loc string
			if err := tx.QueryRowContext(ctx, "SELECT metadata_location FROM iceberg_tables WHERE table_name = $1", name).Scan(&loc); err != nil {
				return "", "", err
			}
			locs[name] = loc
		}
		if err := tx.Commit(); err != nil {
			return "", "", err
		}
		return runOf(locs["orders_fact"]), runOf(locs["daily_orders"]), nil
	}
}

// badDaily is a job building daily_orders whose rows break its grain: a
// second table of a release refused by validation.
const badDaily = `table: retail.daily_orders
sources:
  facts: {table: retail.orders_fact, partitions: same}
sql: |
  SELECT order_date, 'web' AS channel, CAST(count(*) AS BIGINT) AS order_count, CAST(sum(amount_cents) AS BIGINT) AS amount_cents
  FROM facts WHERE order_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE) GROUP BY order_date, channel
`

// TestReleaseAllOrNothing, on SQLite and REST: a release whose second
// table is refused by validation, or whose second table another writer
// committed to between staging and the commit, commits nothing to either
// table and leaves no file it staged; an answer lost after the commit
// applied is settled as landed for both, and one lost before as landed
// for neither.
func TestReleaseAllOrNothing(t *testing.T) {
	t.Parallel() // waits out the outcome backoff: runs beside other tests
	for _, name := range []string{"sqlite+local", "rest+minio"} {
		t.Run(name, func(t *testing.T) {
			s := newSite(t, name)
			dir := retailJobs(t, s, releaseEvents(0))
			facts := filepath.Join(dir, "orders_fact.yaml")
			s.must("publish", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", "base")
			write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(7))
			before := map[string]string{"orders_fact": s.metadata("orders_fact"), "daily_orders": s.metadata("daily_orders")}
			files := s.files()
			unmoved := func(what string) {
				t.Helper()
				for name, loc := range before {
					if now := s.metadata(name); now != loc {
						t.Errorf("%s: %s moved from %s to %s", what, name, loc, now)
					}
				}
				if now := s.files(); !slices.Equal(now, files) {
					t.Errorf("%s left files: %v", what, fileDiff(files, now))
				}
			}

			// The second table refused by validation.
			bad := write(t, t.TempDir(), "bad_daily.yaml", badDaily)
			if code, _, errs := s.cli("publish", "--job", facts, "--job", bad, "--partitions", twoDays, "--run-id", "refused"); code != exitRefused || !strings.Contains(errs, "retail.daily_orders") {
				t.Errorf("a release whose second table breaks its grain: exit %d: %s; want refused naming retail.daily_orders", code, errs)
			}
			unmoved("the refused release")

			// Another writer commits to the second table's partition while
			// the release stands staged.
			ctx, cat, pub, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
			if err != nil {
				t.Fatal(err)
			}
			defer cat.Close()
			other := false
			pub.BeforeCommit = func(ctx context.Context, plan *swap.Plan) error {
				if plan.Table == "retail.daily_orders" && !other {
					other = true
					input := write(t, t.TempDir(), "other.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,1\n2026-01-01,app,1,1\n")
					s.must("publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", "--run-id", "other-writer", "--allow-implausible", input)
				}
				return nil
			}
			in := source.Options{MemoryLimit: 512 << 20}
			if cfg := siteConfig(t, s); s3store.UsesS3(cfg.Props) {
				if in.Store, err = inputStore(ctx, cfg.Props, os.Getenv); err != nil {
					t.Fatal(err)
				}
			}
			_, err = stageRelease(ctx, t, pub, dir, "conflicted", in).Publish(ctx, false)
			if !errors.Is(err, outcome.ErrConflict) || !strings.Contains(err.Error(), "retail.daily_orders") {
				t.Errorf("a release whose second table moved in its partition: %v; want a conflict naming retail.daily_orders", err)
			}
			if now := s.metadata("orders_fact"); now != before["orders_fact"] {
				t.Errorf("the conflicted release committed orders_fact: %s, was %s", now, before["orders_fact"])
			}
			if left := s.runFiles("conflicted"); len(left) > 0 {
				t.Errorf("the conflicted release left its staged files: %v", left)
			}
			s.must("rollback", "--table", "retail.daily_orders", "--run", "other-writer")

			// The facts commit nothing (their content is the release's
			// already), but daily_orders was read from them: another
			// writer committing to the facts before the release's commit
			// makes it conflict, and daily_orders stays as it was.
			write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(0))
			input := write(t, t.TempDir(), "other.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,1\n2026-01-01,app,1,1\n")
			s.must("publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", "--run-id", "other-daily", "--allow-implausible", input)
			daily := s.metadata("daily_orders")
			other = false
			pub.BeforeCommit = func(ctx context.Context, plan *swap.Plan) error {
				if plan.Table == "retail.daily_orders" && !other {
					other = true
					facts := write(t, t.TempDir(), "facts.csv", "order_id,order_date,channel,amount_cents,source_version,updated_at,event_id\n"+
						"x1,2026-01-02,web,5,1,2026-01-02T10:00:00Z,x1\nx2,2026-01-02,app,5,1,2026-01-02T10:00:00Z,x2\n")
					s.must("publish", "--table", "retail.orders_fact", "--partitions", "order_date=2026-01-02", "--run-id", "other-facts", "--allow-implausible", facts)
				}
				return nil
			}
			res, err := stageRelease(ctx, t, pub, dir, "read-moved", in).Publish(ctx, false)
			if !errors.Is(err, outcome.ErrConflict) || !strings.Contains(err.Error(), "retail.orders_fact") {
				t.Errorf("a release whose unchanged facts moved before its commit: %v (%+v); want a conflict naming retail.orders_fact", err, res)
			}
			if now := s.metadata("daily_orders"); now != daily {
				t.Error("the release committed daily_orders, read from facts that moved")
			}
			s.must("rollback", "--table", "retail.orders_fact", "--run", "other-facts")
			s.must("rollback", "--table", "retail.daily_orders", "--run", "other-daily")
			write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(7))
			before["daily_orders"], before["orders_fact"] = s.metadata("daily_orders"), s.metadata("orders_fact")
			files = s.files()
			pub.BeforeCommit = nil

			// Lost answers.
			lose := func(applied bool) {
				t.Helper()
				if s.rest != nil {
					s.rest.FailCommits(testenv.CommitFault{Status: 504, Applied: applied})
					return
				}
				pub.Catalog = &lostAnswer{TablesCommitter: cat, Catalog: cat, applied: applied}
			}
			lose(false)
			_, err = stageRelease(ctx, t, pub, dir, "lost-before", in).Publish(ctx, false)
			if !errors.Is(err, outcome.ErrNotLanded) {
				t.Errorf("an answer lost before the commit applied: %v; want not landed", err)
			}
			for name, loc := range before {
				if now := s.metadata(name); now != loc {
					t.Errorf("an answer lost before the commit: %s moved", name)
				}
			}
			lose(true)
			res, err = stageRelease(ctx, t, pub, dir, "lost-after", in).Publish(ctx, false)
			if err != nil || res.Status != swap.StatusPublished {
				t.Fatalf("an answer lost after the commit applied: %v %+v; want published", err, res)
			}
			for _, name := range []string{"orders_fact", "daily_orders"} {
				if run, _ := releaseOf(t, s, s.metadata(name)); run != "lost-after" {
					t.Errorf("%s holds run %q; want lost-after", name, run)
				}
			}
			if s.srv != nil {
				return
			}

			// The second table's commit differs on read-back (a file
			// overwritten once committed): the whole release goes back, in
			// one commit.
			before = map[string]string{"orders_fact": s.metadata("orders_fact"), "daily_orders": s.metadata("daily_orders")}
			write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(9))
			damage := &damagingRelease{TablesCommitter: cat, Catalog: cat, t: t}
			pub.Catalog = damage
			pub.BeforeCommit = func(ctx context.Context, plan *swap.Plan) error {
				if plan.Table == "retail.daily_orders" {
					damage.plan = plan
				}
				return nil
			}
			rel := stageRelease(ctx, t, pub, dir, "damaged", in)
			commits := cat.Commits()
			res, err = rel.Publish(ctx, false)
			if !errors.Is(err, outcome.ErrVerifyFailed) || res.Status != swap.StatusRolledBack {
				t.Fatalf("a release whose daily_orders differs once committed: %v, %+v; want rolled back", err, res)
			}
			if n := cat.Commits() - commits; n != 2 {
				t.Errorf("the release and its rollback took %d catalog commits; want 2, one each for both tables", n)
			}
			for name, loc := range before {
				run, _ := releaseOf(t, s, s.metadata(name))
				was, _ := releaseOf(t, s, loc)
				if run != was {
					t.Errorf("%s holds run %q after the release was rolled back; want %q", name, run, was)
				}
			}
		})
	}
}

// damagingRelease lets a release's commit land, then overwrites the first
// file it committed of plan with a file of the table's from before, as
// storage corruption would.
type damagingRelease struct {
	swap.TablesCommitter
	swap.Catalog
	t    *testing.T
	plan *swap.Plan
}

func (d *damagingRelease) CommitTables(ctx context.Context, commits []table.TableCommit) error {
	err := d.TablesCommitter.CommitTables(ctx, commits)
	if err == nil && d.plan != nil {
		pp := d.plan.Partitions[0]
		raw, rerr := os.ReadFile(strings.TrimPrefix(pp.OldFiles[0].Path, "file://"))
		if rerr == nil {
			rerr = os.WriteFile(strings.TrimPrefix(pp.NewFiles[0].Path, "file://"), raw, 0o644)
		}
		if rerr != nil {
			d.t.Fatal(rerr)
		}
		d.plan = nil
	}
	return err
}

// lostAnswer is a catalog that applies a release's commit, or not, and
// answers it with a gateway's timeout either way.
type lostAnswer struct {
	swap.TablesCommitter
	swap.Catalog
	applied bool
	once    bool
}

func (l *lostAnswer) CommitTables(ctx context.Context, commits []table.TableCommit) error {
	if l.once {
		return l.TablesCommitter.CommitTables(ctx, commits)
	}
	l.once = true
	if l.applied {
		if err := l.TablesCommitter.CommitTables(ctx, commits); err != nil {
			return err
		}
	}
	return errors.New("504 Gateway Timeout")
}

// stageRelease stages the retail jobs of dir as release run, in this
// process, through pub, reading sources as in says.
func stageRelease(ctx context.Context, t *testing.T, pub *swap.Publisher, dir, run string, in source.Options) *swap.Release {
	t.Helper()
	rel := pub.NewRelease(run)
	for _, f := range []string{"orders_fact.yaml", "daily_orders.yaml"} {
		j, err := job.Load(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		ident, _ := swap.ParseTable(j.Table)
		req := swap.Request{Table: ident, RunID: run}
		_, err = j.Run(ctx, pub, req, job.RunOptions{Partitions: []string{twoDays}, RejectsFile: filepath.Join(t.TempDir(), "rejects.ndjson"),
			Inputs: in, Release: rel},
			func(ctx context.Context, req swap.Request) (*swap.Result, error) {
				p, err := rel.Stage(ctx, req)
				return &swap.Result{Plan: p}, err
			})
		if err != nil {
			t.Fatalf("stage %s: %v", f, err)
		}
	}
	return rel
}

// TestReleaseUsage: the jobs of a release in any order of --job are staged
// top first; a release that is not one table and what reads it, or asks
// for what a release cannot do, is refused before anything is read.
func TestReleaseUsage(t *testing.T) {
	s := newSite(t, "sqlite+local")
	dir := retailJobs(t, s, releaseEvents(0))
	facts, daily := filepath.Join(dir, "orders_fact.yaml"), filepath.Join(dir, "daily_orders.yaml")
	var v releaseView
	if err := json.Unmarshal([]byte(s.must("publish", "-o", "json", "--job", daily, "--job", facts, "--partitions", twoDays)), &v); err != nil {
		t.Fatal(err)
	}
	if v.Status != swap.StatusPublished || v.Tables[0].Plan.Table != "retail.orders_fact" {
		t.Errorf("--job daily --job facts: %s, first %s; want published, the facts staged first", v.Status, v.Tables[0].Plan.Table)
	}
	meta := []string{s.metadata("orders_fact"), s.metadata("daily_orders")}
	other := write(t, t.TempDir(), "other_facts.yaml", "table: retail.orders_fact\nsources:\n  raw: {path: "+filepath.Join(dir, "raw")+"}\nsql: SELECT 1\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"publish", "--job", facts, "--job", other, "--partitions", twoDays}, "two jobs of the release build retail.orders_fact"},
		{[]string{"publish", "--job", daily, "--downstream", "--jobs", dir, "--partitions", twoDays}, "no job reads retail.daily_orders"},
		{[]string{"publish", "--job", facts, "--job", daily, "--partitions", twoDays, "--batch", "1"}, "--batch"},
		{[]string{"publish", "--job", facts, "--job", daily, "--partitions", twoDays, "--table", "retail.orders_fact"}, "--table"},
		{[]string{"publish", "--job", facts, "--job", daily}, "--partitions is required"},
		{[]string{"plan", "--job", facts, "--job", daily, "--partitions", twoDays, "--out", filepath.Join(t.TempDir(), "p.json")}, "folder"},
	} {
		code, _, errs := s.cli(c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("lakeswap %s: exit %d: %s; want a usage error naming %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
	if s.metadata("orders_fact") != meta[0] || s.metadata("daily_orders") != meta[1] {
		t.Error("a refused release changed a table")
	}

	// A job reading a table of the release with partitions: all cannot
	// follow it: refused before anything is staged.
	all := write(t, t.TempDir(), "all_orders.yaml", strings.Replace(badDaily, "partitions: same", "partitions: all", 1))
	if code, _, errs := s.cli("publish", "--job", facts, "--job", all, "--partitions", twoDays); code != exitUsage || !strings.Contains(errs, "partitions: all") {
		t.Errorf("a release with a job reading partitions: all: exit %d: %s; want a usage error", code, errs)
	}

	// A month table below the facts, found by --downstream from the top
	// job whatever the order of --job, its month following from the days.
	write(t, dir, "monthly_orders.table.yaml", "table: retail.monthly_orders\ncolumns:\n  - {name: month_start, type: date, required: true}\n"+
		"  - {name: order_count, type: long, required: true}\n  - {name: amount_cents, type: long, required: true}\n"+
		"identifier: [month_start]\npartition: [{column: month_start, transform: month}]\nadditive: [order_count, amount_cents]\n")
	s.must("table", "create", "--schema", filepath.Join(dir, "monthly_orders.table.yaml"))
	write(t, dir, "monthly_orders.yaml", `table: retail.monthly_orders
sources:
  facts: {table: retail.orders_fact, partitions: month}
sql: |
  SELECT CAST(date_trunc('month', order_date) AS DATE) AS month_start, CAST(count(*) AS BIGINT) AS order_count, CAST(sum(amount_cents) AS BIGINT) AS amount_cents
  FROM facts WHERE order_date >= CAST($from || '-01' AS DATE) AND order_date < CAST($to || '-01' AS DATE) + INTERVAL 1 MONTH GROUP BY 1
`)
	write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(3))
	if err := json.Unmarshal([]byte(s.must("publish", "-o", "json", "--job", daily, "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays)), &v); err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, tv := range v.Tables {
		tables = append(tables, tv.Plan.Table+"="+string(tv.Status))
	}
	if v.Status != swap.StatusPublished || !slices.Contains(tables, "retail.monthly_orders=published") || len(tables) != 3 {
		t.Errorf("--job daily --job facts --downstream: %s %v; want all three tables published, the month table too", v.Status, tables)
	}

	// The top table refused: the release stops there, with its findings.
	meta = []string{s.metadata("orders_fact"), s.metadata("daily_orders")}
	files := s.files()
	if code, _, errs := s.cli("publish", "--job", facts, "--downstream", "--jobs", dir, "--partitions", "order_date=2026-01-01..2026-01-05"); code != exitRefused || !strings.Contains(errs, "order_date=2026-01-05") {
		t.Errorf("a release whose top table would wipe days: exit %d: %s; want refused naming them", code, errs)
	}
	if s.metadata("orders_fact") != meta[0] || s.metadata("daily_orders") != meta[1] || !slices.Equal(s.files(), files) {
		t.Error("the refused release changed a table or left files")
	}

	// The jobs lakeswap.yaml lists are those lineage and --downstream read.
	cfg := write(t, t.TempDir(), "lakeswap.yaml", "jobs:\n  - "+dir+"\n")
	var l lineageResult
	code, out, errs := s.cli("--home", s.home, "--config", cfg, "lineage", "-o", "json", "--table", "retail.orders_fact")
	var chains []string
	if err := json.Unmarshal([]byte(out), &l); err == nil {
		for _, c := range l.Chains {
			chains = append(chains, strings.Join(c, " -> "))
		}
	}
	if code != 0 || !slices.Contains(chains, "raw/*.ndjson -> retail.orders_fact -> retail.daily_orders") || !slices.Contains(chains, "raw/*.ndjson -> retail.orders_fact -> retail.monthly_orders") {
		t.Errorf("lineage from lakeswap.yaml's jobs: exit %d, %+v: %s", code, l, errs)
	}
}
