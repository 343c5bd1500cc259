//go:build !noduckdb

package job_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/source"
)

// prepared lists and prepares a job, writing rejected rows to rejects
// (which may be nil), and returns its engine, closed when the test ends.
func prepared(t *testing.T, j *job.Job, rejects io.Writer) (*source.SQLEngine, *job.Rejected, error) {
	t.Helper()
	ctx := context.Background()
	l, err := j.List(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := source.OpenSQLEngine(t.TempDir(), 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	rej, err := j.Prepare(ctx, eng, l, rejects, nil, t.TempDir())
	return eng, rej, err
}

// texts runs a query of one text column and returns its values, "<null>"
// for a null.
func texts(t *testing.T, eng *source.SQLEngine, q string) []string {
	t.Helper()
	rr, err := eng.Query(context.Background(), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var out []string
	for rr.Next() {
		col := rr.RecordBatch().Column(0).(*array.String)
		for i := range col.Len() {
			if col.IsNull(i) {
				out = append(out, "<null>")
				continue
			}
			out = append(out, strings.Clone(col.Value(i)))
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCSVSourceArrivesAsWritten: a job's CSV source reaches its SQL in the
// publish path's dialect, pinned: single quotes are text, a quoted empty
// value is the empty text (an unquoted one null), a ';' is text, and a
// backslash escape is refused naming the listed file and line, never the
// engine's copy.
func TestCSVSourceArrivesAsWritten(t *testing.T) {
	body := "id,v\n1,'single quoted'\n2,\"\"\n3,\n4,\"a,b\"\n5,\"say \"\"hi\"\"\"\n6,a;b\n7,it's\n"
	j := jobOver(t, map[string]string{"a.csv": body}, "SELECT 1")
	eng, _, err := prepared(t, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(t, eng, "SELECT coalesce(v, '<null>') FROM events ORDER BY CAST(id AS INT)")
	want := []string{"'single quoted'", "", "<null>", "a,b", `say "hi"`, "a;b", "it's"}
	if !slices.Equal(got, want) {
		t.Errorf("the SQL reads %q, want %q", got, want)
	}
	if typ := texts(t, eng, "SELECT DISTINCT typeof(id) FROM events"); !slices.Equal(typ, []string{"VARCHAR"}) {
		t.Errorf("CSV fields reach the SQL as %v, want text", typ)
	}
	semi := jobOver(t, map[string]string{"a.csv": "a;b\n1;2\n"}, "SELECT 1")
	eng, _, err = prepared(t, semi, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(t, eng, `SELECT "a;b" FROM events`); !slices.Equal(got, []string{"1;2"}) {
		t.Errorf("a ';' file is one column of text in a comma dialect, got %q", got)
	}
	for name, body := range map[string]string{
		"backslash.csv": "id,v\n1,ok\n2,\"a\\\"b\"\n",
		"ragged.csv":    "id,v\n1,ok\n2,x,y\n",
	} {
		bad := jobOver(t, map[string]string{name: body}, "SELECT 1")
		_, _, err := prepared(t, bad, nil)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(bad.Dir, "in", name)+":3:") || strings.Contains(err.Error(), "source-") {
			t.Errorf("%s: %v, want refused naming the listed file and line 3", name, err)
		}
	}
}

// TestNDJSONSourceArrivesAsWritten: a job's NDJSON columns are typed over
// every row, never from a sample: 1.7 on line 25,001 of a column of
// integers reaches the SQL as 1.7; strings arrive as written, "" as the
// empty text; a column mixing types (a string and a number, a number
// with a fraction and an integer a double cannot hold) is refused naming
// the listed file, line and column.
func TestNDJSONSourceArrivesAsWritten(t *testing.T) {
	var b strings.Builder
	for i := range 25000 {
		fmt.Fprintf(&b, "{\"n\":1,\"s\":\"r%d\"}\n", i)
	}
	b.WriteString("{\"n\":1.7,\"s\":\"\"}\n{\"n\":2,\"s\":\"'q'\"}\n")
	j := jobOver(t, map[string]string{"a.ndjson": b.String()}, "SELECT 1")
	eng, _, err := prepared(t, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(t, eng, "SELECT CAST(max(n) AS VARCHAR) FROM events"); !slices.Equal(got, []string{"2.0"}) {
		t.Errorf("max(n) = %q", got)
	}
	if got := texts(t, eng, "SELECT CAST(n AS VARCHAR) || '|' || s FROM events WHERE n <> 1 ORDER BY n"); !slices.Equal(got, []string{"1.7|", "2.0|'q'"}) {
		t.Errorf("the rows past the sample reach the SQL as %q, want 1.7 with the empty text, and 2 with 'q'", got)
	}
	for name, c := range map[string]struct{ body, want string }{
		"strnum.ndjson": {"{\"v\":\"1\"}\n{\"v\":null}\n\n{\"v\":1}\n", "strnum.ndjson:4: column v: value \"1\" is an integer, and line 1's is a string"},
		"big.ndjson":    {"{\"v\":9007199254740993}\n{\"v\":0.5}\n", "big.ndjson:2: column v: value \"0.5\" is a number with a fraction or exponent, and line 1's is an integer beyond 2^53"},
		"huge.ndjson":   {"{\"v\":1}\n{\"v\":99999999999999999999}\n", "huge.ndjson:2: column v: number 99999999999999999999 cannot be held as written"},
		"inf.ndjson":    {"{\"v\":1.5}\n{\"v\":1e400}\n", "inf.ndjson:2: column v: number 1e400 cannot be held as written"},
		"twice.ndjson":  {"{\"v\":1}\n{\"v\":1,\"v\":\"x\"}\n", "twice.ndjson:2: column v: the object names this column twice"},
	} {
		bad := jobOver(t, map[string]string{name: c.body}, "SELECT 1")
		_, _, err := prepared(t, bad, nil)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(bad.Dir, "in", c.want)) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// TestNDJSONTimesArriveAsWritten: a string the engine would take for a
// time reaches the SQL as the text written, offset and all, so that
// casting it keeps the instant: 11:00+05:00 is 06:00 UTC, on every route
// a job reads NDJSON by (publish, plan, batches, shards and releases
// prepare their sources alike).
func TestNDJSONTimesArriveAsWritten(t *testing.T) {
	body := "{\"ts\":\"2026-01-03T11:00:00+05:00\",\"d\":\"2026-01-03\"}\n{\"ts\":\"2026-01-01T23:30:00-05:00\",\"d\":\"2026-01-04\"}\n"
	j := jobOver(t, map[string]string{"a.ndjson": body}, "SELECT 1")
	eng, _, err := prepared(t, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(t, eng, "SELECT typeof(ts) || ' ' || ts || ' ' || strftime(timezone('UTC', CAST(ts AS TIMESTAMPTZ)), '%Y-%m-%dT%H:%M') || ' ' || d FROM events ORDER BY d")
	want := []string{"VARCHAR 2026-01-03T11:00:00+05:00 2026-01-03T06:00 2026-01-03", "VARCHAR 2026-01-01T23:30:00-05:00 2026-01-02T04:30 2026-01-04"}
	if !slices.Equal(got, want) {
		t.Errorf("times reach the SQL as %q, want %q", got, want)
	}
}

// TestRejectRulesRunConfined: a reject rule is evaluated by an engine
// already confined to the listed files: one that reads another file, or
// names an extension the engine would fetch, is refused as the SQL would
// be, and nothing is written under the home folder.
func TestRejectRulesRunConfined(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{
		"length(read_text(" + source.SQLString(secret) + ")[1].content) > 0",
		"(SELECT count(*) FROM read_csv(" + source.SQLString(secret) + ")) > 0",
		"(SELECT count(*) FROM read_csv('https://127.0.0.1:1/x.csv')) > 0",
		"(SELECT count(*) FROM read_parquet('s3://bucket/x.parquet')) > 0",
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "in", "a.csv"), []byte("v\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "job.yaml")
		spec := fmt.Sprintf("table: t.x\nsources:\n  events: {path: in/}\nsql: SELECT 1\nrejects:\n  - {reason: r, when: %q}\n", when)
		if err := os.WriteFile(f, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		j, err := job.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = prepared(t, j, nil)
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("rule %s: %v, want refused without the file's content", when, err)
		}
	}
	entries, err := os.ReadDir(home)
	if err != nil || len(entries) > 0 {
		t.Errorf("the home folder holds %v after the jobs (%v), want nothing", entries, err)
	}
}

// TestInvalidUTF8NamesTheListedFile: a CSV source whose bytes are not
// UTF-8 is refused before the engine reads it, as an input error naming
// the listed file and line, never the engine's copy of it.
func TestInvalidUTF8NamesTheListedFile(t *testing.T) {
	j := jobOver(t, map[string]string{"a.csv": "id,v\n1,ok\n2,\xff\n"}, "SELECT 1")
	_, _, err := prepared(t, j, nil)
	var ie *source.InputError
	if !errors.As(err, &ie) || ie.File != filepath.Join(j.Dir, "in", "a.csv") || ie.Line != 3 || strings.Contains(err.Error(), "source-") {
		t.Errorf("invalid UTF-8 in a CSV source: %v, want an input error naming %s line 3", err, filepath.Join(j.Dir, "in", "a.csv"))
	}
}

// TestNestedNDJSONArrivesAsWritten: nested NDJSON values reach the SQL
// exactly as written, at any depth. An object holding a time or a number
// with a fraction arrives as its JSON text (a time keeps its offset,
// 9007199254740993 beside 0.5 and 99999999999999999999 keep their digits,
// where the engine's typing dropped the offset and rounded them); a list
// of strings stays a list (tags[1] is the first), a list of times a list
// of their text; a list of numbers with a fraction holding an integer a
// double cannot hold is refused naming the file, line and place.
func TestNestedNDJSONArrivesAsWritten(t *testing.T) {
	body := `{"id":1,"o":{"ts":"2026-01-03T11:00:00+05:00","n":9007199254740993,"f":0.5,"h":99999999999999999999,"in":{"t":"2026-01-01T23:30:00-05:00"}},"tags":["x","y"],"times":["2026-01-03T11:00:00+05:00"]}` + "\n" +
		`{"id":2,"o":{"ts":"2026-01-04T00:00:00Z","n":1,"f":1,"h":1,"in":{"t":"x"}},"tags":[],"times":[]}` + "\n"
	j := jobOver(t, map[string]string{"a.ndjson": body}, "SELECT 1")
	eng, _, err := prepared(t, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(t, eng, `SELECT (o->>'$.ts') || ' ' || (o->>'$.n') || ' ' || (o->>'$.h') || ' ' || (o->>'$.in.t') || ' ' || tags[1] || ' ' || times[1] FROM events WHERE id = 1`)
	want := []string{"2026-01-03T11:00:00+05:00 9007199254740993 99999999999999999999 2026-01-01T23:30:00-05:00 x 2026-01-03T11:00:00+05:00"}
	if !slices.Equal(got, want) {
		t.Errorf("nested values reach the SQL as %q, want %q", got, want)
	}
	if typ := texts(t, eng, "SELECT DISTINCT typeof(o) || ',' || typeof(tags) || ',' || typeof(times) FROM events"); !slices.Equal(typ, []string{"JSON,VARCHAR[],VARCHAR[]"}) {
		t.Errorf("nested columns reach the SQL as %v, want JSON, VARCHAR[], VARCHAR[]", typ)
	}
	bad := jobOver(t, map[string]string{"b.ndjson": "{\"id\":1,\"l\":[[0.5]]}\n{\"id\":2,\"l\":[[1.5],[9007199254740993]]}\n"}, "SELECT 1")
	_, _, err = prepared(t, bad, nil)
	var ie *source.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "b.ndjson:2: column l: number 9007199254740993 at l[1][0]") {
		t.Errorf("a list of doubles holding 2^53+1: %v; want refused naming b.ndjson:2 and l[1][0]", err)
	}
}

// TestNDJSONKeysThatClashAreRefused: keys that differ only in case (on
// one line or across lines and files, at the top or inside an object) and
// an empty key are refused naming the file, line and both keys, where the
// engine read one key's values under the other's name and lost them (a
// sum of 350 read as 100).
func TestNDJSONKeysThatClashAreRefused(t *testing.T) {
	for name, c := range map[string]struct {
		files map[string]string
		want  []string
	}{
		"one line":          {map[string]string{"a.ndjson": "{\"id\":1,\"amt\":100,\"Amt\":250}\n"}, []string{"a.ndjson:1: column Amt", `"Amt" and key "amt"`}},
		"two lines":         {map[string]string{"a.ndjson": "{\"id\":1,\"amt\":100}\n{\"id\":2,\"Amt\":250}\n"}, []string{"a.ndjson:2: column Amt", `"amt" (line 1)`}},
		"two files":         {map[string]string{"a.ndjson": "{\"id\":1,\"amt\":100}\n", "b.ndjson": "{\"id\":2,\"AMT\":250}\n"}, []string{"b.ndjson:1: column AMT", "a.ndjson:1)"}},
		"empty key":         {map[string]string{"a.ndjson": "{\"id\":1}\n{\"id\":2,\"\":5}\n"}, []string{"a.ndjson:2:", "empty key"}},
		"nested":            {map[string]string{"a.ndjson": "{\"id\":1,\"o\":{\"x\":1}}\n{\"id\":2,\"o\":{\"k\":{\"a\":1,\"A\":2}}}\n"}, []string{"a.ndjson:2: column o", "o.k", `key "A", and "a"`}},
		"in an array":       {map[string]string{"a.ndjson": "{\"id\":1,\"l\":[{\"b\":1,\"B\":2}]}\n"}, []string{"a.ndjson:1: column l", "l[0]"}},
		"nested, two lines": {map[string]string{"a.ndjson": "{\"id\":1,\"o\":{\"a\":1}}\n{\"id\":2,\"o\":{\"A\":2}}\n"}, []string{"a.ndjson:2: column o", `key "A", and "a"`}},
		"two elements":      {map[string]string{"a.ndjson": "{\"id\":1,\"o\":{\"x\":[{\"a\":1},{\"A\":2}]}}\n"}, []string{"a.ndjson:1: column o", "o.x[1]"}},
	} {
		j := jobOver(t, c.files, "SELECT 1")
		_, _, err := prepared(t, j, nil)
		var ie *source.InputError
		if err == nil || !errors.As(err, &ie) {
			t.Errorf("%s: %v, want an input error", name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", name, err, w)
			}
		}
	}
}

// TestParquetSourcesOfOtherTypesAreRefused: a column typed INT64 in one
// Parquet file of a source and DOUBLE in another is refused naming both
// files, where the engine read both as DOUBLE and rounded 2^53+1; INT32
// beside INT64 reads exactly and is let through.
func TestParquetSourcesOfOtherTypesAreRefused(t *testing.T) {
	ints := parquetOf(t, arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.(*array.Int64Builder).Append(1<<53 + 1) })
	doubles := parquetOf(t, arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(0.5) })
	narrow := parquetOf(t, arrow.PrimitiveTypes.Int32, func(b array.Builder) { b.(*array.Int32Builder).Append(7) })

	j := jobOver(t, map[string]string{"a.parquet": ints, "b.parquet": doubles}, "SELECT 1")
	_, _, err := prepared(t, j, nil)
	if err == nil || !strings.Contains(err.Error(), "b.parquet: column v: the column is DOUBLE here and BIGINT in "+filepath.Join(j.Dir, "in", "a.parquet")) {
		t.Errorf("INT64 beside DOUBLE: %v, want refused naming both files", err)
	}
	j = jobOver(t, map[string]string{"a.parquet": ints, "b.parquet": narrow}, "SELECT 1")
	eng, _, err := prepared(t, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(t, eng, "SELECT CAST(v AS VARCHAR) FROM events ORDER BY v"); !slices.Equal(got, []string{"7", "9007199254740993"}) {
		t.Errorf("INT32 beside INT64 reads %q, want both exact", got)
	}
}

// parquetOf is a Parquet file of one column v of type dt, one row added by
// add.
func parquetOf(t *testing.T, dt arrow.DataType, add func(array.Builder)) string {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: dt}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	add(b.Field(0))
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestCSVSourceInItsForm: a job's source says how its CSV files are
// written (csv: delimiter, quote, null_marker, header: false with columns,
// rename), and its SQL reads them as a publish with those options would;
// a form a job cannot read is refused when the job loads.
func TestCSVSourceInItsForm(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "1|'a|b ''x'''\n2|say \"hi\"\n3|NULL\n4|''\n"
	if err := os.WriteFile(filepath.Join(dir, "in", "a.csv"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(form string) (*job.Job, error) {
		f := filepath.Join(dir, "job.yaml")
		src := "table: t.x\nsources:\n  events:\n    path: in/\n    csv: " + form + "\nsql: SELECT 1\n"
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return job.Load(f)
	}
	// null_marker: NULL (unquoted, which YAML reads as its null) is the
	// text NULL, as a person means it.
	j, err := load(`{delimiter: "|", quote: "'", null_marker: NULL, header: false, columns: [id, val], rename: {val: v}}`)
	if err != nil {
		t.Fatal(err)
	}
	eng, _, err := prepared(t, j, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(t, eng, "SELECT coalesce(v, '<null>') FROM events ORDER BY CAST(id AS INT)")
	if want := []string{`a|b 'x'`, `say "hi"`, "<null>", ""}; !slices.Equal(got, want) {
		t.Errorf("the SQL reads %q, want %q", got, want)
	}
	for form, want := range map[string]string{
		`{delimiter: "||"}`:            "delimiter",
		`{quote: "|", delimiter: "|"}`: "quote",
		`{header: false}`:              "columns",
		`{rename: {a: v, b: v}}`:       "both a and b to v",
		`{delimiter: "§"}`:             "one ASCII character",
		`{null: NULL}`:                 "null_marker",
		`{delimeter: ";"}`:             `no setting "delimeter"`,
	} {
		if _, err := load(form); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("csv: %s: %v, want refused saying %q", form, err, want)
		}
	}
	// Columns that do not match the file's fields: refused naming the file.
	j, err = load(`{delimiter: "|", quote: "'", header: false, columns: [id, val, extra]}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := prepared(t, j, nil); err == nil || !strings.Contains(err.Error(), "a.csv:1") || !strings.Contains(err.Error(), "2 fields") {
		t.Errorf("three columns for two fields: %v, want refused naming a.csv:1", err)
	}
}
