//go:build !noduckdb

package job_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/source"
)

// retailJob puts the shipped orders_fact job beside raw batches in a
// folder of its own.
func retailJob(t *testing.T, batches ...string) *job.Job {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"orders_fact.yaml", "orders_fact.sql"} {
		copyFile(t, filepath.Join("..", "examples", "retail", f), filepath.Join(dir, f))
	}
	if err := os.Mkdir(filepath.Join(dir, "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		copyFile(t, filepath.Join("..", "internal", "retail", "fixture", b), filepath.Join(dir, "raw", b))
	}
	j, err := job.Load(filepath.Join(dir, "orders_fact.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type fact struct {
	OrderID       string `json:"order_id"`
	OrderDate     string `json:"order_date"`
	Channel       string `json:"channel"`
	AmountCents   int64  `json:"amount_cents"`
	SourceVersion int64  `json:"source_version"`
	EventID       string `json:"event_id"`
}

// expectedFacts reads the fixture's expected facts at a stage.
func expectedFacts(t *testing.T, stage string) []fact {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "internal", "retail", "fixture", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var at struct {
		Facts []fact `json:"orders_fact"`
	}
	if err := json.Unmarshal(doc[stage], &at); err != nil {
		t.Fatal(err)
	}
	return at.Facts
}

// run prepares the job and runs it for from..to, returning its facts
// ordered by order_id, and what it rejected.
func run(t *testing.T, j *job.Job, from, to string) ([]fact, *job.Rejected, string) {
	t.Helper()
	ctx := context.Background()
	var rejects bytes.Buffer
	eng, rej, err := prepared(t, j, &rejects)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := j.Query(ctx, eng, from, to)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var out []fact
	for rr.Next() {
		rec := rr.RecordBatch()
		col := func(name string) int { return rec.Schema().FieldIndices(name)[0] }
		// Cloned: a value aliases the batch's memory, which the next
		// batch frees.
		str := func(name string, i int) string { return strings.Clone(rec.Column(col(name)).(*array.String).Value(i)) }
		for i := range int(rec.NumRows()) {
			out = append(out, fact{
				OrderID:       str("order_id", i),
				OrderDate:     rec.Column(col("order_date")).(*array.Date32).Value(i).FormattedString(),
				Channel:       str("channel", i),
				AmountCents:   rec.Column(col("amount_cents")).(*array.Int64).Value(i),
				SourceVersion: rec.Column(col("source_version")).(*array.Int64).Value(i),
				EventID:       str("event_id", i),
			})
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b fact) int { return strings.Compare(a.OrderID, b.OrderID) })
	return out, rej, rejects.String()
}

// TestRetailOrdersFact: the shipped orders_fact job, run from the raw
// fixture, gives exactly the expected facts after batch 1 and after both
// batches, and rejects e6, e7 and e8 with their reasons.
func TestRetailOrdersFact(t *testing.T) {
	for stage, batches := range map[string][]string{
		"after_batch1":            {"batch1.ndjson"},
		"after_batch1_and_batch2": {"batch1.ndjson", "batch2.ndjson"},
	} {
		t.Run(stage, func(t *testing.T) {
			got, rej, lines := run(t, retailJob(t, batches...), "2026-01-01", "2026-01-02")
			if want := expectedFacts(t, stage); !slices.Equal(got, want) {
				t.Errorf("facts:\n got %v\nwant %v", got, want)
			}
			if rej.Rows != 3 {
				t.Errorf("rejected %d rows (%v), want e6, e7, e8", rej.Rows, rej.ByReason)
			}
			for _, want := range []string{`"reason":"order_id is null"`, `"reason":"amount_cents < 0"`, `order_ts is not a timestamp; channel is not valid`, `"event_id":"e8"`} {
				if !strings.Contains(lines, want) {
					t.Errorf("rejects file lacks %s:\n%s", want, lines)
				}
			}
		})
	}
}

// TestRangeIsAParameter: the range is bound as parameters, never spliced
// into the SQL: a value that would break the SQL if it were reaches the
// SQL as the text it is, and nothing of it runs.
func TestRangeIsAParameter(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join("..", "internal", "retail", "fixture", "batch1.ndjson"), filepath.Join(dir, "events.ndjson"))
	jobFile := filepath.Join(dir, "echo.yaml")
	if err := os.WriteFile(jobFile, []byte("table: retail.x\nsources:\n  events: {path: events.ndjson}\nsql: SELECT $from AS f, $to AS t, (SELECT count(*) FROM events) AS n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := job.Load(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := j.List(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := source.OpenSQLEngine(t.TempDir(), 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := j.Prepare(ctx, eng, l, nil, nil, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, hostile := range []string{"2026-01-01'; DROP VIEW events; --", `2026-01-01" OR 1=1 --`, "$to"} {
		rr, err := j.Query(ctx, eng, hostile, "x")
		if err != nil {
			t.Fatal(err)
		}
		if !rr.Next() {
			t.Fatal(rr.Err())
		}
		rec := rr.RecordBatch()
		if got := rec.Column(0).(*array.String).Value(0); got != hostile || rec.Column(1).(*array.String).Value(0) != "x" {
			t.Errorf("the SQL read $from as %q, want %q", got, hostile)
		}
		rr.Release()
		if err := eng.Exec(ctx, "SELECT count(*) FROM events"); err != nil {
			t.Errorf("after range %q, the source is gone: %v", hostile, err)
		}
	}
}

// TestListingIsWhatIsRead: a source file that lands after the run listed
// its sources is not read by that run.
func TestListingIsWhatIsRead(t *testing.T) {
	j := retailJob(t, "batch1.ndjson")
	ctx := context.Background()
	l, err := j.List(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join("..", "internal", "retail", "fixture", "batch2.ndjson"), filepath.Join(j.Dir, "raw", "batch2.ndjson"))
	eng, err := source.OpenSQLEngine(t.TempDir(), 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := j.Prepare(ctx, eng, l, nil, nil, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	rr, err := eng.Query(ctx, "SELECT count(*) AS n FROM lakeswap_raw.raw_events", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	if n := rr.RecordBatch().Column(0).(*array.Int64).Value(0); n != 11 {
		t.Errorf("the run read %d source rows, want batch 1's 11: the file that landed after the listing was read", n)
	}
	again, err := j.List(ctx, nil, nil)
	if err != nil || again.Hash == l.Hash {
		t.Errorf("listing again: %v; want another hash once a file landed", err)
	}
}

// TestSQLReadsOnlyTheListing: once the sources are prepared, the job's SQL
// reads the listed files through their views and no other file, and
// writes none.
func TestSQLReadsOnlyTheListing(t *testing.T) {
	j := retailJob(t, "batch1.ndjson")
	other := filepath.Join("..", "internal", "retail", "fixture", "batch2.ndjson")
	ctx := context.Background()
	l, err := j.List(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := source.OpenSQLEngine(t.TempDir(), 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := j.Prepare(ctx, eng, l, nil, nil, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := eng.Exec(ctx, "SELECT count(*) FROM raw_events"); err != nil {
		t.Errorf("the source's view: %v", err)
	}
	written := filepath.Join(t.TempDir(), "out.csv")
	for _, q := range []string{
		"SELECT count(*) FROM read_json(" + source.SQLString(other) + ")",
		"COPY (SELECT 1) TO " + source.SQLString(written),
		"SET enable_external_access = true",
		"SET allowed_paths = [" + source.SQLString(other) + "]",
	} {
		if err := eng.Exec(ctx, q); err == nil {
			t.Errorf("%s: ran; want it refused", q)
		}
	}
	if _, err := os.Stat(written); err == nil {
		t.Error("the SQL wrote a file")
	}
}

// TestJobIgnoresTheMachinesZone: an order placed at 20:00 UTC on
// 2026-01-01 is of that day whatever the machine's zone.
func TestJobIgnoresTheMachinesZone(t *testing.T) {
	t.Setenv("TZ", "America/Los_Angeles")
	j := retailJob(t)
	line := `{"event_id":"e1","order_id":"o1","channel":"web","order_ts":"2026-01-01T20:00:00Z","updated_at":"2026-01-01T20:00:00Z","source_version":1,"amount_cents":100,"ingested_at":"2026-01-01T20:05:00Z"}` + "\n"
	if err := os.WriteFile(filepath.Join(j.Dir, "raw", "late-evening.ndjson"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, _ := run(t, j, "2026-01-01", "2026-01-02")
	if len(got) != 1 || got[0].OrderDate != "2026-01-01" {
		t.Errorf("facts under America/Los_Angeles: %v, want o1 on 2026-01-01", got)
	}
}

// jobOver writes a job reading the files given (name -> content) as one
// source, events, with the SQL given.
func jobOver(t *testing.T, files map[string]string, sql string) *job.Job {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "in", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(f, []byte("table: t.x\nsources:\n  events: {path: in/}\nsql: "+sql+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := job.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// sumOf prepares a job and sums v over its source as its SQL reads it.
func sumOf(t *testing.T, j *job.Job, change func()) (int64, error) {
	t.Helper()
	ctx := context.Background()
	l, err := j.List(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change()
	}
	eng, err := source.OpenSQLEngine(t.TempDir(), 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := j.Prepare(ctx, eng, l, nil, nil, t.TempDir()); err != nil {
		return 0, err
	}
	rr, err := eng.Query(ctx, "SELECT CAST(sum(v) AS BIGINT) FROM events", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	return rr.RecordBatch().Column(0).(*array.Int64).Value(0), nil
}

// TestSourcesReadAsListed: a file whose name holds a glob character is
// read as itself, not as a pattern; a file rewritten after the listing is
// refused, not read in its new form; a source of two formats is refused;
// two sources whose names differ only in case are refused.
func TestSourcesReadAsListed(t *testing.T) {
	glob := jobOver(t, map[string]string{"a1.ndjson": `{"v":1}` + "\n", "a[1].ndjson": `{"v":1000}` + "\n"}, "SELECT 1")
	if got, err := sumOf(t, glob, nil); err != nil || got != 1001 {
		t.Errorf("files a1 and a[1]: sum %d, %v; want each read once, 1001", got, err)
	}
	changed := jobOver(t, map[string]string{"a.ndjson": `{"v":1}` + "\n"}, "SELECT 1")
	_, err := sumOf(t, changed, func() {
		if err := os.WriteFile(filepath.Join(changed.Dir, "in", "a.ndjson"), []byte(`{"v":2}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if err == nil || !strings.Contains(err.Error(), "changed since the run listed it") {
		t.Errorf("a file rewritten after the listing: %v, want refused", err)
	}
	mixed := jobOver(t, map[string]string{"a.csv": "v\n1\n", "b.ndjson": `{"v":2}` + "\n"}, "SELECT 1")
	if _, err := sumOf(t, mixed, nil); err == nil || !strings.Contains(err.Error(), "a source is of one format") {
		t.Errorf("a source of CSV and NDJSON: %v, want refused", err)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(f, []byte("table: t.x\nsources:\n  Ev: {path: a.csv}\n  ev: {path: b.csv}\nsql: SELECT 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := job.Load(f); err == nil || !strings.Contains(err.Error(), "names ignore case") {
		t.Errorf("sources Ev and ev: %v, want refused", err)
	}
}

// TestCancelStopsTheSQL: a cancelled context stops a job's query while it
// runs, with the context's error, instead of letting it run to its end.
func TestCancelStopsTheSQL(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join("..", "internal", "retail", "fixture", "batch1.ndjson"), filepath.Join(dir, "events.ndjson"))
	f := filepath.Join(dir, "long.yaml")
	if err := os.WriteFile(f, []byte("table: t.x\nsources:\n  events: {path: events.ndjson}\nsql: SELECT sum(i * i) AS s FROM range(100000000000) AS r(i)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := job.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := j.List(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := source.OpenSQLEngine(t.TempDir(), 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := j.Prepare(ctx, eng, l, nil, nil, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		rr, err := j.Query(ctx, eng, "a", "b")
		if err == nil {
			for rr.Next() {
			}
			err = rr.Err()
			rr.Release()
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled query ended without an error")
		}
	case <-time.After(time.Minute): // the query alone would run for hours
		t.Fatal("the query went on after its context was cancelled")
	}
}

// TestSQLIsOneQuery: the job's SQL is judged as written before its result
// is kept: an error points into it (never into the statement that keeps
// the result), a statement other than a query is refused, and so is a
// result that names a column twice, even in two cases, which the engine
// would rename (x_1) into another column of the table.
func TestSQLIsOneQuery(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join("..", "internal", "retail", "fixture", "batch1.ndjson"), filepath.Join(dir, "events.ndjson"))
	for sql, want := range map[string]string{
		"SELECT order_id, nosuch FROM events":                   `Referenced column "nosuch" not found`,
		"PRAGMA version":                                        `it is not a query (it starts "PRAGMA")`,
		"ATTACH ':memory:' AS other":                            `it is not a query (it starts "ATTACH")`,
		"SELECT order_id, channel AS order_id FROM events":      "its result has column order_id twice",
		"SELECT order_id AS x, channel AS X FROM events":        "its result has column X twice",
		"SELECT order_id FROM events WHERE order_id = $from;\n": "",
	} {
		jobFile := filepath.Join(dir, "q.yaml")
		if err := os.WriteFile(jobFile, []byte("table: retail.x\nsources:\n  events: {path: events.ndjson}\nsql: "+strconv.Quote(sql)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		j, err := job.Load(jobFile)
		if err != nil {
			t.Fatal(err)
		}
		eng, _, err := prepared(t, j, nil)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := j.Query(context.Background(), eng, "o100", "o100")
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", sql, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "lakeswap result")):
			t.Errorf("%q: err = %v, want one saying %q", sql, err, want)
		}
		if rr != nil {
			rr.Release()
		}
	}
}

// TestRedeliveredAtOnce: the shipped orders_fact job keeps one copy of an
// event whatever arrives with it: copies alike in every column are one, an
// earlier copy wins over a later one, and copies that differ but arrived
// at the same instant give one of them, the same one on every run (they
// used to give both, two orders from one event).
func TestRedeliveredAtOnce(t *testing.T) {
	j := retailJob(t)
	ev := func(id, order string, cents int, ingested string) string {
		return fmt.Sprintf(`{"event_id":%q,"order_id":%q,"channel":"web","order_ts":"2026-01-01T10:00:00Z","updated_at":"2026-01-01T10:00:00Z","source_version":1,"amount_cents":%d,"ingested_at":%q}`+"\n",
			id, order, cents, ingested)
	}
	raw := ev("e1", "o1", 100, "2026-01-01T10:05:00Z") + ev("e1", "o2", 200, "2026-01-01T10:05:00Z") +
		ev("e2", "o3", 300, "2026-01-01T10:05:00Z") + ev("e2", "o3", 300, "2026-01-01T10:05:00Z") +
		ev("e3", "o4", 400, "2026-01-01T10:05:00Z") + ev("e3", "o4", 401, "2026-01-01T10:05:00Z") +
		ev("e4", "o5", 500, "2026-01-01T10:05:00Z") + ev("e4", "o5", 501, "2026-01-01T10:01:00Z")
	if err := os.WriteFile(filepath.Join(filepath.Dir(j.File), "raw", "events.ndjson"), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	first, _, _ := run(t, j, "2026-01-01", "2026-01-01")
	var orders []string
	for _, f := range first {
		orders = append(orders, fmt.Sprintf("%s=%d", f.OrderID, f.AmountCents))
	}
	got := strings.Join(orders, " ")
	if len(first) != 4 || !strings.Contains(got, "o3=300") || !strings.Contains(got, "o5=501") ||
		strings.Contains(got, "o1=") == strings.Contains(got, "o2=") {
		t.Errorf("facts %s; want one of o1 and o2, o3=300, one o4 and o5=501 (its earlier copy)", got)
	}
	for range 2 {
		again, _, _ := run(t, j, "2026-01-01", "2026-01-01")
		if !slices.Equal(again, first) {
			t.Errorf("a rerun gives %v, the first run %v", again, first)
		}
	}
}
