//go:build !noduckdb

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/rawevents"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/history"
)

// TestRetailJob, on every site: the shipped orders_fact job, run from the
// raw retail-orders batches, publishes the expected facts after batch 1;
// once batch 2 arrives, a backfill of 2026-01-02 alone is refused because
// o100 moved, the backfill of both days publishes the expected facts, and
// a rerun commits nothing. Each run records the job's version, its
// sources' listing and what its rules rejected, e6, e7 and e8, written to
// the rejects file.
func TestRetailJob(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))
		dir := t.TempDir()
		for _, f := range []string{"orders_fact.yaml", "orders_fact.sql"} {
			copyInto(t, filepath.Join("..", "..", "examples", "retail", f), filepath.Join(dir, f))
		}
		raw := filepath.Join(dir, "raw")
		copyInto(t, filepath.Join("..", "..", "internal", "retail", "fixture", "batch1.ndjson"), filepath.Join(raw, "batch1.ndjson"))
		jobFile := filepath.Join(dir, "orders_fact.yaml")
		publish := func(run, days string) (int, swap.Result, string) {
			t.Helper()
			rejects := filepath.Join(t.TempDir(), "rejects.ndjson")
			code, out, errs := s.cli("publish", "-o", "json", "--job", jobFile, "--run-id", run, "--rejects", rejects, "--partitions", days)
			var res swap.Result
			if code == 0 {
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatalf("%s: %v: %s", run, err, out)
				}
				b, _ := os.ReadFile(rejects)
				for _, e := range []string{`"event_id":"e6"`, `"event_id":"e7"`, `"event_id":"e8"`, `"reason":"order_id is null"`} {
					if !strings.Contains(string(b), e) {
						t.Errorf("%s: the rejects file lacks %s:\n%s", run, e, b)
					}
				}
			}
			return code, res, errs
		}
		check := func(res swap.Result, rows, cents int64) {
			t.Helper()
			fp := res.Plan.Fingerprint
			if fp.Rows != rows || !fp.Sums["amount_cents"].Equal(exact.Of(cents)) {
				t.Errorf("run %s: %d facts, %s cents; want %d and %d", res.Plan.RunID, fp.Rows, fp.Sums["amount_cents"], rows, cents)
			}
			j := jobOf(t, res.Plan)
			if j == nil || j.RejectedRows != 3 || len(j.Version) != 64 || len(j.SourcesHash) != 64 {
				t.Errorf("run %s records the job as %+v", res.Plan.RunID, j)
			}
		}

		code, res, errs := publish("batch-1", "order_date=2026-01-01..2026-01-02")
		if code != 0 {
			t.Fatalf("batch 1: exit %d: %s", code, errs)
		}
		check(res, 5, 36500)
		first := jobOf(t, res.Plan)

		copyInto(t, filepath.Join("..", "..", "internal", "retail", "fixture", "batch2.ndjson"), filepath.Join(raw, "batch2.ndjson"))
		meta := s.metadata("orders_fact")
		if code, _, errs := publish("alone", "order_date=2026-01-02"); code != exitRefused || !strings.Contains(errs, "o100") {
			t.Errorf("a backfill of 2026-01-02 alone: exit %d: %s; want refused naming o100", code, errs)
		}
		if s.metadata("orders_fact") != meta {
			t.Error("the refused backfill changed the table")
		}
		code, res, errs = publish("backfill", "order_date=2026-01-01..2026-01-02")
		if code != 0 || res.Status != "published" {
			t.Fatalf("the backfill: exit %d %s: %s", code, res.Status, errs)
		}
		check(res, 6, 39000)
		if j := jobOf(t, res.Plan); j.SourcesHash == first.SourcesHash || j.Version != first.Version {
			t.Errorf("job %+v after batch 2, %+v before: want the same version over other sources", j, first)
		}
		meta, main := s.metadata("orders_fact"), s.mainState("orders_fact")
		if code, res, errs := publish("rerun", "order_date=2026-01-01..2026-01-02"); code != 0 || res.Status != "unchanged" || s.metadata("orders_fact") != meta {
			t.Errorf("a rerun: exit %d %s: %s; want unchanged, nothing committed", code, res.Status, errs)
		}

		// A plan of the job, whose source changes before it is applied.
		batch3 := filepath.Join(raw, "batch3.ndjson")
		line := `{"event_id":"e20","order_id":"o200","channel":"app","order_ts":"2026-01-02T20:00:00Z","updated_at":"2026-01-02T20:00:00Z","source_version":1,"amount_cents":100,"ingested_at":"2026-01-02T20:01:00Z"}` + "\n"
		if err := os.WriteFile(batch3, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		planFile := filepath.Join(t.TempDir(), "plan.json")
		var planned struct {
			PlanID string `json:"plan_id"`
		}
		out := s.must("plan", "-o", "json", "--job", jobFile, "--run-id", "planned", "--out", planFile, "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01..2026-01-02")
		if err := json.Unmarshal([]byte(out), &planned); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(batch3, []byte(strings.Replace(line, `"amount_cents":100`, `"amount_cents":900`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := s.cli("apply", planFile, "--approve", planned.PlanID); code != exitConflict || !strings.Contains(errs, "sources of job") {
			t.Errorf("apply after a source file changed: exit %d: %s; want a conflict", code, errs)
		}
		if s.mainState("orders_fact") != main {
			t.Error("the refused apply changed the table")
		}
	})
}

// TestRetailJobsFromRaw, on every site: the shipped jobs, orders_fact
// from the raw events and daily_orders from the facts (the snapshot it
// read recorded), give exactly expected.json's daily groups after batch 1
// and after both batches; show, diff and report read the second run back
// with the oracle's figures before and after, and history's totals.
func TestRetailJobsFromRaw(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		dir := t.TempDir()
		for _, f := range []string{"orders_fact.yaml", "orders_fact.sql", "daily_orders.yaml", "daily_orders.sql"} {
			copyInto(t, filepath.Join("..", "..", "examples", "retail", f), filepath.Join(dir, f))
		}
		for _, f := range []string{"orders_fact.table.yaml", "daily_orders.table.yaml"} {
			s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", f))
		}
		stages := []struct{ batch, expected string }{{"batch1.ndjson", retail.AfterBatch1}, {"batch2.ndjson", retail.AfterBatch2}}
		for i, st := range stages {
			copyInto(t, filepath.Join("..", "..", "internal", "retail", "fixture", st.batch), filepath.Join(dir, "raw", st.batch))
			for _, j := range []string{"orders_fact", "daily_orders"} {
				s.must("publish", "--job", filepath.Join(dir, j+".yaml"), "--run-id", fmt.Sprintf("%s-%d", j, i+1),
					"--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01..2026-01-02")
			}
			want, err := retail.Daily(st.expected)
			if err != nil {
				t.Fatal(err)
			}
			if got := drillRows(t, s); !slices.Equal(got, want) {
				t.Errorf("daily_orders after %s:\n got %v\nwant %v", st.batch, got, want)
			}
		}
		// The runs are in the table's history.
		code, out, _ := s.cli("history", "-o", "json", "--table", "retail.daily_orders")
		if code != 0 || !strings.Contains(out, "daily_orders-2") {
			t.Errorf("history: %s", out)
		}
		// show, diff and report read the second run back as the oracle
		// reads it: each day's groups after batch 1, then after both.
		perDay := func(stage string) map[string][2]int64 {
			groups, err := retail.Daily(stage)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string][2]int64{}
			for _, g := range groups {
				d := out["order_date="+g.OrderDate]
				out["order_date="+g.OrderDate] = [2]int64{d[0] + g.OrderCount, d[1] + g.AmountCents}
			}
			return out
		}
		before, after := perDay(retail.AfterBatch1), perDay(retail.AfterBatch2)
		var h historyResult
		if err := json.Unmarshal([]byte(out), &h); err != nil || len(h.Main) == 0 || h.Main[0].RunID != "daily_orders-2" {
			t.Fatalf("history -o json: %v: %s", err, out)
		}
		var shown history.RunView
		var diffed history.DiffView
		if err := json.Unmarshal([]byte(s.must("-o", "json", "show", "--table", "retail.daily_orders", "--run", "daily_orders-2")), &shown); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(s.must("-o", "json", "diff", "--table", "retail.daily_orders", "daily_orders-1", "daily_orders-2")), &diffed); err != nil {
			t.Fatal(err)
		}
		if shown.Rows != h.Main[0].Rows || !shown.Sums["amount_cents"].Equal(h.Main[0].Sums["amount_cents"]) || shown.Fingerprint != h.Main[0].Fingerprint {
			t.Errorf("show: %d rows, sums %v, fingerprint %s; history: %d rows, sums %v, fingerprint %s", shown.Rows, shown.Sums, shown.Fingerprint, h.Main[0].Rows, h.Main[0].Sums, h.Main[0].Fingerprint)
		}
		for _, parts := range [][]history.PartitionView{shown.Partitions, diffed.Partitions} {
			if len(parts) != 2 {
				t.Errorf("show/diff: %d partitions, want 2", len(parts))
			}
			for _, p := range parts {
				n := func(s exact.Sum) int64 { v, _ := s.Int64(); return v }
				got := [2][2]int64{{n(p.Before.Sums["order_count"]), n(p.Before.Sums["amount_cents"])}, {n(p.After.Sums["order_count"]), n(p.After.Sums["amount_cents"])}}
				if want := [2][2]int64{before[p.Partition], after[p.Partition]}; got != want {
					t.Errorf("%s before and after (orders, cents): %v, the oracle %v", p.Partition, got, want)
				}
			}
		}
		page := filepath.Join(t.TempDir(), "run.html")
		s.must("report", "--table", "retail.daily_orders", "--run", "daily_orders-2", "--out", page)
		if raw, err := os.ReadFile(page); err != nil || !strings.Contains(string(raw), `id="sum-amount_cents">`+words.Number(after["order_date=2026-01-01"][1]+after["order_date=2026-01-02"][1])+"<") ||
			!strings.Contains(string(raw), `<tr data-partition="order_date=2026-01-02">`+"\n"+`<td>order_date=2026-01-02</td><td data-field="source-rows">2</td><td data-field="run-rows">2</td><td data-field="source-sums">amount_cents=23,500 order_count=3</td><td data-field="run-sums">amount_cents=23,500 order_count=3</td>`) {
			t.Errorf("report: %v", err)
		}
		// show prints the reconciliation per partition, as the run
		// recorded it.
		if out := s.must("show", "--table", "retail.daily_orders", "--run", "daily_orders-2"); !strings.Contains(out, "reconciled with the sources:") ||
			!regexp.MustCompile(`order_date=2026-01-02 +2 +2 +amount_cents=23,500 order_count=3 +amount_cents=23,500 order_count=3 *\n`).MatchString(out) {
			t.Errorf("show of a job's run:\n%s", out)
		}
	})
}

func copyInto(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReconciliation: a job whose SQL drops a row is refused at plan time
// by its reconciliation query, naming the partition and both figures, and
// the table is unchanged; the job without the drop passes, and the plan
// shows source and staged figures side by side.
func TestReconciliation(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))
	dir := t.TempDir()
	copyInto(t, filepath.Join("..", "..", "internal", "retail", "fixture", "batch1.ndjson"), filepath.Join(dir, "raw", "batch1.ndjson"))
	good, err := os.ReadFile(filepath.Join("..", "..", "examples", "retail", "orders_fact.sql"))
	if err != nil {
		t.Fatal(err)
	}
	indent := func(sql string) string { return "    " + strings.ReplaceAll(strings.TrimSpace(sql), "\n", "\n    ") }
	reconcile := "SELECT order_date, CAST(count(*) AS BIGINT) AS rows, CAST(sum(amount_cents) AS BIGINT) AS amount_cents\nFROM (\n" + string(good) + "\n) GROUP BY order_date"
	jobOf := func(name, sql string, more ...string) string {
		f := filepath.Join(dir, name+".yaml")
		body := "table: retail.orders_fact\nsources:\n  raw_events: {path: raw/*.ndjson}\nsql: |\n" + indent(sql) + "\nreconcile: |\n" + indent(reconcile) + "\n" + strings.Join(more, "") +
			"rejects:\n  - {reason: invalid, when: \"order_id IS NULL OR amount_cents < 0 OR try_cast(order_ts AS TIMESTAMPTZ) IS NULL OR channel NOT IN ('web', 'store', 'app')\"}\n"
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	dropping := jobOf("dropping", string(good)+"\n  AND order_id <> 'o101'")
	meta := s.metadata("orders_fact")
	code, out, errs := s.cli("plan", "--job", dropping, "--out", filepath.Join(t.TempDir(), "p.json"), "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01..2026-01-02")
	if code != exitRefused || !strings.Contains(errs, "order_date=2026-01-01") || !strings.Contains(errs, "the source says 4 rows, the run staged 3") || !strings.Contains(errs, "the source says a sum of 27,500, the run staged 22,500") ||
		!strings.Contains(errs, "the source's figures are the job's reconcile: query, for the run's partitions: SELECT order_date, CAST(count(*) AS BIGINT) AS rows") {
		t.Errorf("a job that drops a row: exit %d: %s%s; want refused naming the partition, both figures and the query", code, out, errs)
	}
	if s.metadata("orders_fact") != meta {
		t.Error("the refused plan changed the table")
	}
	// Within a stated tolerance, the difference is a warning; the
	// rows' beyond it still refuse.
	tolerant := jobOf("tolerant", string(good)+"\n  AND order_id <> 'o101'", "reconcile_tolerance: {rows: 1, amount_cents: 20%}\n")
	out = s.must("plan", "--job", tolerant, "--out", filepath.Join(t.TempDir(), "p.json"), "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01..2026-01-02")
	if !strings.Contains(out, "warning: within the reconcile tolerance: reconcile partition order_date=2026-01-01 column amount_cents: the source says a sum of 27,500, the run staged 22,500 (tolerance 20%)") {
		t.Errorf("a difference within the tolerance: %s", out)
	}
	strict := jobOf("strict", string(good)+"\n  AND order_id <> 'o101'", "reconcile_tolerance: {rows: 0, amount_cents: 10%}\n")
	if code, _, errs := s.cli("plan", "--job", strict, "--out", filepath.Join(t.TempDir(), "p.json"), "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01..2026-01-02"); code != exitRefused ||
		!strings.Contains(errs, "the source says a sum of 27,500, the run staged 22,500") || !strings.Contains(errs, "the source says 4 rows, the run staged 3") {
		t.Errorf("a difference beyond the tolerance: exit %d: %s", code, errs)
	}
	bad := jobOf("bad", string(good), "reconcile_tolerance: {channel: 1}\n")
	if code, _, errs := s.cli("plan", "--job", bad, "--out", filepath.Join(t.TempDir(), "p.json"), "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01..2026-01-02"); code != exitUsage ||
		!strings.Contains(errs, "reconcile_tolerance of channel: the figures reconciled are rows and the additive columns of retail.orders_fact (amount_cents)") {
		t.Errorf("a tolerance of no figure: exit %d: %s", code, errs)
	}
	out = s.must("plan", "--job", jobOf("good", string(good)), "--out", filepath.Join(t.TempDir(), "p.json"), "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01..2026-01-02")
	if !strings.Contains(out, "reconciled with the sources:") || !strings.Contains(out, "order_date=2026-01-01  4            4") {
		t.Errorf("the plan of the good job does not show the figures side by side:\n%s", out)
	}
}

// TestLag: lakeswap lag on the retail fixture reports the arrival lag of
// the rows the job keeps (e6, e7, e8 are rejected): 12 rows, the median 4
// minutes, the latest (e10) 23h05m, none beyond the 2-day lookback.
func TestLag(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"orders_fact.yaml", "orders_fact.sql"} {
		copyInto(t, filepath.Join("..", "..", "examples", "retail", f), filepath.Join(dir, f))
	}
	for _, b := range []string{"batch1.ndjson", "batch2.ndjson"} {
		copyInto(t, filepath.Join("..", "..", "internal", "retail", "fixture", b), filepath.Join(dir, "raw", b))
	}
	s := newSite(t, "sqlite+local")
	// A job without lag: is a usage error, as any part a job file lacks.
	raw, err := os.ReadFile(filepath.Join(dir, "orders_fact.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	noLag := write(t, dir, "no_lag.yaml", strings.Replace(strings.Replace(string(raw), "lag: {", "# lag: {", 1), "lookback: 2d\n", "", 1))
	if code, _, errs := s.cli("lag", "--job", noLag); code != exitUsage || !strings.Contains(errs, "lag needs lag:") {
		t.Errorf("lag on a job without lag: exit %d, want %d: %s", code, exitUsage, errs)
	}
	out := s.must("lag", "--job", filepath.Join(dir, "orders_fact.yaml"))
	for _, want := range []string{"over 12 rows", "p50 4m0s", "max 23h5m0s", "beyond the lookback of 48h0m0s: 0 rows"} {
		if !strings.Contains(out, want) {
			t.Errorf("lag says %q, want %q in it", out, want)
		}
	}
	var lag struct {
		Percentiles map[string]float64 `json:"percentiles_seconds"`
		Lookback    float64            `json:"lookback_seconds"`
	}
	if err := json.Unmarshal([]byte(s.must("-o", "json", "lag", "--job", filepath.Join(dir, "orders_fact.yaml"))), &lag); err != nil ||
		lag.Percentiles["p50"] != 240 || lag.Percentiles["max"] != 83100 || lag.Lookback != 172800 {
		t.Errorf("lag -o json gives durations in seconds: %+v, %v", lag, err)
	}

	// A plan reports the rows that arrived later than the job's lookback,
	// by the day of their event: with 12 hours, e5 delivered again (21h),
	// e11 (18h), e9 (23h) and e10 (23h05m), all of 2026-01-02.
	s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))
	args := func(job string) []string {
		return []string{"plan", "--out", filepath.Join(t.TempDir(), "p.json"), "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01..2026-01-02", "--job", job}
	}
	if out := s.must(args(filepath.Join(dir, "orders_fact.yaml"))...); !strings.Contains(out, "no source row of the run's days arrived later than the lookback of 48h0m0s") {
		t.Errorf("the plan with a 2-day lookback:\n%s", out)
	}
	job, err := os.ReadFile(filepath.Join(dir, "orders_fact.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.yaml")
	if err := os.WriteFile(short, []byte(strings.Replace(string(job), "lookback: 2d", "lookback: 12h", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := s.must(args(short)...); !strings.Contains(out, "later than the lookback of 12h0m0s, by the day of their event: 2026-01-02 (4)") {
		t.Errorf("the plan with a 12-hour lookback:\n%s", out)
	}
}

// TestJobOnS3Sources: a job whose source is an s3:// prefix reads the
// objects listed there, through lakeswap's S3 client.
func TestJobOnS3Sources(t *testing.T) {
	s := newSite(t, "sqlite+minio")
	s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))
	raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "retail", "fixture", "batch1.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	s.write("s3://"+s.bkt+"/raw/batch1.ndjson", raw)
	dir := t.TempDir()
	copyInto(t, filepath.Join("..", "..", "examples", "retail", "orders_fact.sql"), filepath.Join(dir, "orders_fact.sql"))
	job, err := os.ReadFile(filepath.Join("..", "..", "examples", "retail", "orders_fact.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	jobFile := filepath.Join(dir, "orders_fact.yaml")
	if err := os.WriteFile(jobFile, []byte(strings.Replace(string(job), "path: raw/*.ndjson", "path: s3://"+s.bkt+"/raw/", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var res swap.Result
	out := s.must("publish", "-o", "json", "--job", jobFile, "--rejects", filepath.Join(t.TempDir(), "r.ndjson"), "--partitions", "order_date=2026-01-01..2026-01-02")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if fp := res.Plan.Fingerprint; fp.Rows != 5 || !fp.Sums["amount_cents"].Equal(exact.Of(36500)) || jobOf(t, res.Plan).RejectedRows != 3 {
		t.Errorf("a job on S3 sources: %d facts, %s cents, %d rejected; want 5, 36500, 3", fp.Rows, fp.Sums["amount_cents"], jobOf(t, res.Plan).RejectedRows)
	}
}

// TestJobOutOfMemory: a job whose SQL needs more memory than the engine's
// share of --memory-limit fails (exit 1) naming the share and the limit to
// raise, without the engine's own advice (SET statements no user can
// run), and changes nothing.
func TestJobOutOfMemory(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "daily_orders.table.yaml"))
	dir := t.TempDir()
	write(t, dir, "one.ndjson", `{"x":1}`+"\n")
	// One string of every row's: it cannot spill, and far outgrows the
	// engine's 128 MiB.
	sql := "SELECT DATE '2026-01-01' AS order_date, 'web' AS channel, 1::BIGINT AS order_count, length(string_agg(s, ','))::BIGINT AS amount_cents\n" +
		"  FROM (SELECT repeat('x', 40) || i AS s FROM range(10000000) t(i), one)"
	job := write(t, dir, "big.yaml", "table: retail.daily_orders\nsources:\n  one: {path: one.ndjson}\nsql: |\n  "+sql+"\n")
	meta := s.metadata("retail.daily_orders")
	code, _, errs := s.cli("publish", "--memory-limit", "512MiB", "--job", job, "--partitions", "order_date=2026-01-01")
	if code != exitError || !strings.Contains(errs, "Out of Memory") || !strings.Contains(errs, "raise --memory-limit") ||
		!strings.Contains(errs, "the 128 MiB the SQL engine is given, a quarter of --memory-limit (512 MiB)") || strings.Contains(errs, "SET ") || s.metadata("retail.daily_orders") != meta {
		t.Errorf("a job out of memory: exit %d: %s", code, errs)
	}
}

// TestJobLargerThanItsMemory: the shipped orders_fact job over 1M raw
// events needs more than the 128 MiB its engine gets under --memory-limit
// 512MiB, and lands: its joins and aggregates spill to a folder inside the
// run's spill folder, which is empty again once the run ends, and the
// facts are all there. The same job written with window functions over
// whole rows runs out of that memory, naming the limit to raise, and
// changes nothing.
func TestJobLargerThanItsMemory(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.must("table", "create", "--schema", filepath.Join("..", "..", "examples", "retail", "orders_fact.table.yaml"))
	dir, spill := t.TempDir(), t.TempDir()
	if err := rawevents.Write(filepath.Join(dir, "raw", "events.parquet"), 1_000_000); err != nil {
		t.Fatal(err)
	}
	copyInto(t, filepath.Join("..", "..", "examples", "retail", "orders_fact.sql"), filepath.Join(dir, "orders_fact.sql"))
	jobFile := "table: retail.orders_fact\nsources:\n  raw_events: {path: raw/events.parquet}\nsql_file: %s\n" +
		"rejects:\n  - {reason: channel is not valid, when: \"channel NOT IN ('web', 'store', 'app')\"}\n"
	windows := write(t, dir, "windows.sql", `SELECT order_id, CAST(timezone('UTC', CAST(order_ts AS TIMESTAMPTZ)) AS DATE) AS order_date, channel,
    CAST(amount_cents AS BIGINT) AS amount_cents, CAST(source_version AS BIGINT) AS source_version,
    CAST(updated_at AS TIMESTAMPTZ) AS updated_at, event_id
FROM (
    SELECT *, row_number() OVER (PARTITION BY order_id ORDER BY source_version DESC, updated_at DESC, event_id DESC) AS rank
    FROM (SELECT *, row_number() OVER (PARTITION BY event_id ORDER BY ingested_at) AS arrival FROM raw_events) WHERE arrival = 1
) WHERE rank = 1 AND CAST(timezone('UTC', CAST(order_ts AS TIMESTAMPTZ)) AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
`)
	publish := func(sql string) (int, string, string) {
		job := write(t, dir, "job.yaml", fmt.Sprintf(jobFile, filepath.Base(sql)))
		return s.cli("publish", "-o", "json", "--memory-limit", "512MiB", "--spill-dir", spill, "--job", job, "--partitions", "order_date=2026-01-01..2026-01-30")
	}
	meta, files := s.metadata("retail.orders_fact"), s.files()
	code, _, errs := publish(windows)
	if code != exitError || !strings.Contains(errs, "Out of Memory") || !strings.Contains(errs, "a quarter of --memory-limit (512 MiB)") ||
		s.metadata("retail.orders_fact") != meta || !slices.Equal(s.files(), files) {
		t.Fatalf("the job written with window functions: exit %d: %s", code, errs)
	}
	code, out, errs := publish(filepath.Join(dir, "orders_fact.sql"))
	if code != exitOK {
		t.Fatalf("the shipped job over 1M events under 512 MiB: exit %d: %s", code, errs)
	}
	var res swap.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	// 900,000 orders, of which those placed in the 30 days (all but the
	// few whose newest version's day is past them); one event in fifty a
	// redelivery.
	if fp := res.Plan.Fingerprint; fp.Rows != 882_000 || len(res.Plan.Partitions) != 30 || s.metadata("retail.orders_fact") == meta || len(s.files()) < len(files)+30 {
		t.Errorf("the shipped job: %d facts in %d partitions, %d files (%d before); want 882000 in 30", fp.Rows, len(res.Plan.Partitions), len(s.files()), len(files))
	}
	if left, _ := os.ReadDir(spill); len(left) != 0 {
		t.Errorf("the spill folder holds %d entries after the run, want none", len(left))
	}
}

// jobOf is the record a plan keeps of the job that computed it.
func jobOf(t *testing.T, plan *swap.Plan) *job.Info {
	t.Helper()
	j, err := job.InfoOf(plan)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
