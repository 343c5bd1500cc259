package job

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
)

// Rejected is what a job's reject rules refused: the rows, counted by
// reason (a row several rules refuse counts once, under all their
// reasons joined).
type Rejected struct {
	Rows     int64            `json:"rows"`
	ByReason map[string]int64 `json:"by_reason,omitempty"`
}

// Reasons lists the reasons, most rows first.
func (r *Rejected) Reasons() []string {
	out := make([]string, 0, len(r.ByReason))
	for k := range r.ByReason {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if r.ByReason[out[i]] != r.ByReason[out[j]] {
			return r.ByReason[out[i]] > r.ByReason[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// Prepare makes the job's sources readable by its SQL on eng: each source
// is a view of exactly the listed files, without the rows its reject
// rules refuse; then the engine is confined to those files, so the SQL
// reads nothing else and writes nothing. It writes each refused row to
// rejects as one JSON line (its source, its reasons, the row as read) and
// counts them.
// Fetch makes a listed object (s3://) readable by the engine: a local copy
// of exactly what was listed.
type Fetch func(ctx context.Context, in runrecord.Input) (string, error)

func (j *Job) Prepare(ctx context.Context, eng *source.SQLEngine, l *Listing, rejects io.Writer, fetch Fetch, dir string) (*Rejected, error) {
	out := &Rejected{ByReason: map[string]int64{}}
	if err := eng.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS lakeswap_raw"); err != nil {
		return nil, err
	}
	var read []string // every file the views read
	n := 0
	for _, name := range j.SourceNames() {
		var list []string
		format := j.Sources[name].Format
		if j.Sources[name].Table != "" {
			format = "parquet"
		}
		for _, f := range l.Sources[name] {
			path := f.URL
			switch {
			case strings.HasPrefix(path, "iceberg:"):
				continue // the snapshot the files are of
			case strings.HasPrefix(path, "file://"):
				// A table's data file, which is never rewritten.
				path = strings.TrimPrefix(path, "file://")
			case source.IsObjectURL(path):
				if fetch == nil {
					return nil, fmt.Errorf("source %s: %s is on S3, and no S3 store is configured", name, path)
				}
				local, err := fetch(ctx, f)
				if err != nil {
					return nil, fmt.Errorf("source %s: %w", name, err)
				}
				path = local
			default:
				// Read from a copy taken now and checked against the
				// listing: the file itself may be rewritten while the
				// SQL reads it, more than once.
				n++
				local, err := copyListed(ctx, f, dir, n)
				if err != nil {
					return nil, fmt.Errorf("source %s: %w", name, err)
				}
				path = local
			}
			if strings.ContainsAny(path, "*?[]{}\\") {
				return nil, fmt.Errorf("source %s: %s has a glob character in its name, which the engine would read as a pattern: rename it", name, f.URL)
			}
			ff := format
			if j.Sources[name].Table == "" && j.Sources[name].Format == "" {
				var err error
				if ff, err = source.InputFormat(f.URL); err != nil {
					return nil, fmt.Errorf("source %s: %w", name, err)
				}
			}
			if format == "" {
				format = ff
			} else if ff != format {
				return nil, fmt.Errorf("source %s: %s is %s, its other files %s: a source is of one format (name each format a source of its own)", name, f.URL, ff, format)
			}
			list = append(list, source.SQLString(path))
			read = append(read, path)
		}
		if len(list) == 0 {
			return nil, fmt.Errorf("source %s: it names no file", name)
		}
		fileList := "[" + strings.Join(list, ", ") + "]"
		var scan string
		switch format {
		case "ndjson":
			scan = "read_json(" + fileList + ", format = 'newline_delimited', union_by_name = true)"
		case "csv":
			// Text, every field: the SQL casts, and a guessed type would
			// round (a long decimal read as a double).
			scan = "read_csv(" + fileList + ", header = true, union_by_name = true, all_varchar = true)"
		case "parquet":
			scan = "read_parquet(" + fileList + ", union_by_name = true)"
		default:
			return nil, fmt.Errorf("source %s: format %q", name, format)
		}
		// The source as read lives apart from the names the SQL reads.
		raw := "lakeswap_raw." + ident(name)
		if err := eng.Exec(ctx, "CREATE OR REPLACE VIEW "+raw+" AS SELECT * FROM "+scan); err != nil {
			return nil, fmt.Errorf("source %s: %w", name, err)
		}
		rules := j.rulesOf(name)
		keep := "true"
		if len(rules) > 0 {
			var conds, reasons []string
			for _, r := range rules {
				cond := "coalesce((" + r.When + "), false)"
				conds = append(conds, cond)
				reasons = append(reasons, "CASE WHEN "+cond+" THEN "+source.SQLString(r.Reason)+" END")
			}
			refused := strings.Join(conds, " OR ")
			keep = "NOT (" + refused + ")"
			// The row by an alias no source column takes.
			q := "SELECT concat_ws('; ', " + strings.Join(reasons, ", ") + ") AS reason, to_json(\"lakeswap rejected row\")::VARCHAR AS row FROM " + raw + " AS \"lakeswap rejected row\" WHERE " + refused
			if err := collect(ctx, eng, q, name, rejects, out); err != nil {
				return nil, fmt.Errorf("source %s: its reject rules: %w", name, err)
			}
		}
		if err := eng.Exec(ctx, "CREATE OR REPLACE TEMP VIEW "+ident(name)+" AS SELECT * FROM "+raw+" WHERE "+keep); err != nil {
			return nil, fmt.Errorf("source %s: its reject rules: %w", name, err)
		}
	}
	// From here on the job's SQL reads the listed files through the views,
	// and no other file.
	if err := eng.Confine(ctx, read); err != nil {
		return nil, err
	}
	return out, nil
}

// copyListed copies a listed local file into dir, hashing it on the way,
// and refuses a file whose bytes are no longer the listed ones.
func copyListed(ctx context.Context, f runrecord.Input, dir string, n int) (string, error) {
	want, ok := strings.CutPrefix(f.ETag, "sha256:")
	if !ok || dir == "" {
		return "", fmt.Errorf("%s was not listed with a checksum", f.URL)
	}
	in, err := os.Open(f.URL)
	if err != nil {
		return "", err
	}
	defer in.Close()
	// The copy keeps the name's extensions, which say its format and
	// compression, behind a name of safe bytes.
	base := filepath.Base(f.URL)
	ext := ""
	if i := strings.Index(base, "."); i >= 0 {
		ext = base[i:]
	}
	local := filepath.Join(dir, fmt.Sprintf("source-%d%s", n, strings.Map(func(r rune) rune {
		if strings.ContainsRune("*?[]{}\\'\"", r) {
			return '_'
		}
		return r
	}, ext)))
	out, err := os.OpenFile(local, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	size, err := io.Copy(io.MultiWriter(out, h), ctxReader{ctx, in})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", f.URL, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want || size != f.Size {
		return "", fmt.Errorf("%s changed since the run listed it (%d bytes, SHA-256 %.12s; listed %d bytes, %.12s): run again", f.URL, size, got, f.Size, want)
	}
	return local, nil
}

// collect writes and counts the rows a reject query returns.
func collect(ctx context.Context, eng *source.SQLEngine, q, name string, w io.Writer, out *Rejected) error {
	rr, err := eng.Query(ctx, q, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	enc := json.NewEncoder(w)
	for rr.Next() {
		rec := rr.RecordBatch()
		reasons, rows := rec.Column(0).(*array.String), rec.Column(1).(*array.String)
		for i := range int(rec.NumRows()) {
			reason := strings.Clone(reasons.Value(i)) // a map key outlives the batch
			out.Rows++
			out.ByReason[reason]++
			if w != nil {
				line := struct {
					Source string          `json:"source"`
					Reason string          `json:"reason"`
					Row    json.RawMessage `json:"row"`
				}{name, reason, json.RawMessage(rows.Value(i))}
				if err := enc.Encode(line); err != nil {
					return err
				}
			}
		}
	}
	return rr.Err()
}

// rulesOf lists the reject rules of a source: those naming it, and, for a
// job of one source, those naming none.
func (j *Job) rulesOf(name string) []Reject {
	var out []Reject
	for _, r := range j.Rejects {
		if r.Source == name || r.Source == "" && len(j.Sources) == 1 {
			out = append(out, r)
		}
	}
	return out
}

// Query runs the job's SQL for the partitions from..to, both included,
// bound as the parameters $from and $to (text; the SQL casts them):
// never spliced into the SQL, so a value is only ever a value.
func (j *Job) Query(ctx context.Context, eng *source.SQLEngine, from, to string) (array.RecordReader, error) {
	rr, err := eng.Query(ctx, j.SQL, map[string]string{"from": from, "to": to})
	if err != nil {
		return nil, fmt.Errorf("job's SQL: %w", err)
	}
	return rr, nil
}

// ident quotes an SQL identifier.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Figures are what a job's reconciliation query says a partition holds.
type Figures struct {
	Rows int64
	Sums map[string]int64
}

// Reconciled runs the job's reconciliation query for from..to: one row a
// partition, with the table's partition column, a column rows and a column
// for each additive column (BIGINT; the SQL casts), by name. It returns
// nil for a job without one.
func (j *Job) Reconciled(ctx context.Context, eng *source.SQLEngine, c *contract.Contract, from, to string) (map[string]Figures, error) {
	if strings.TrimSpace(j.Reconcile) == "" {
		return nil, nil
	}
	rr, err := eng.Query(ctx, j.Reconcile, map[string]string{"from": from, "to": to})
	if err != nil {
		return nil, fmt.Errorf("job's reconciliation query: %w", err)
	}
	defer rr.Release()
	schema := rr.Schema()
	col := func(name string) (int, error) {
		idx := schema.FieldIndices(name)
		if len(idx) != 1 {
			return 0, fmt.Errorf("job's reconciliation query: want one column %s, it gives %d", name, len(idx))
		}
		return idx[0], nil
	}
	part, err := col(c.Partition.Name)
	if err != nil {
		return nil, err
	}
	figures := map[string]int{"rows": -1}
	for _, i := range c.Additive {
		figures[c.Fields[i].Name] = -1
	}
	for name := range figures {
		if figures[name], err = col(name); err != nil {
			return nil, err
		}
		if t := schema.Field(figures[name]).Type; t.ID() != arrow.INT64 {
			return nil, fmt.Errorf("job's reconciliation query: column %s is %s; cast it to BIGINT", name, t)
		}
	}
	out := map[string]Figures{}
	for rr.Next() {
		rec := rr.RecordBatch()
		valueOf, err := c.Partition.ValueFunc(rec.Column(part))
		if err != nil {
			return nil, fmt.Errorf("job's reconciliation query: column %s: %w", c.Partition.Name, err)
		}
		for r := range int(rec.NumRows()) {
			v, ok := valueOf(r)
			if !ok {
				return nil, fmt.Errorf("job's reconciliation query: a row has no %s", c.Partition.Name)
			}
			f := Figures{Sums: map[string]int64{}}
			for name, i := range figures {
				if rec.Column(i).IsNull(r) {
					return nil, fmt.Errorf("job's reconciliation query: partition %s has no %s (null)", v, name)
				}
				n := rec.Column(i).(*array.Int64).Value(r)
				if name == "rows" {
					f.Rows = n
				} else {
					f.Sums[name] = n
				}
			}
			v = strings.Clone(v)
			if _, dup := out[v]; dup {
				return nil, fmt.Errorf("job's reconciliation query: partition %s twice", v)
			}
			out[v] = f
		}
	}
	return out, rr.Err()
}

// LagReport is how late a source's rows arrived: the distribution of
// ingested - event over its rows, and how many arrived later than the
// job's lookback.
type LagReport struct {
	Source      string            `json:"source"`
	Rows        int64             `json:"rows"`
	Percentiles map[string]string `json:"percentiles"` // p50, p90, p99, max, as durations
	Lookback    string            `json:"lookback"`
	Beyond      int64             `json:"beyond_lookback"`
	Share       float64           `json:"share_beyond_lookback"`
	Unreadable  int64             `json:"unreadable"` // rows whose times do not read as timestamps
}

// MeasureLag measures the arrival lag of the job's lag source, over the
// rows its reject rules keep, so that a lookback is sized from
// measurement.
func (j *Job) MeasureLag(ctx context.Context, eng *source.SQLEngine) (*LagReport, error) {
	name := j.Lag.Source
	if name == "" && len(j.Sources) == 1 {
		name = j.SourceNames()[0]
	}
	if _, ok := j.Sources[name]; !ok || j.Lag.Event == "" || j.Lag.Ingested == "" {
		return nil, fmt.Errorf("job %s: lag needs lag: {source, event_time, ingested_at}, SQL on the source's columns", j.File)
	}
	lag := "epoch_us(try_cast((" + j.Lag.Ingested + ") AS TIMESTAMPTZ)) - epoch_us(try_cast((" + j.Lag.Event + ") AS TIMESTAMPTZ))"
	lookback := time.Duration(j.Lookback).Microseconds()
	q := fmt.Sprintf(`SELECT count(*)::BIGINT,
		count(lag)::BIGINT,
		coalesce(quantile_disc(lag, 0.5), 0)::BIGINT,
		coalesce(quantile_disc(lag, 0.9), 0)::BIGINT,
		coalesce(quantile_disc(lag, 0.99), 0)::BIGINT,
		coalesce(max(lag), 0)::BIGINT,
		count(*) FILTER (WHERE lag > %d)::BIGINT
		FROM (SELECT %s AS lag FROM %s)`, lookback, lag, ident(name))
	rr, err := eng.Query(ctx, q, nil)
	if err != nil {
		return nil, fmt.Errorf("measure the lag of %s: %w", name, err)
	}
	defer rr.Release()
	if !rr.Next() {
		return nil, fmt.Errorf("measure the lag of %s: %v", name, rr.Err())
	}
	rec := rr.RecordBatch()
	v := func(i int) int64 { return rec.Column(i).(*array.Int64).Value(0) }
	us := func(n int64) string { return (time.Duration(n) * time.Microsecond).String() }
	r := &LagReport{Source: name, Rows: v(1), Unreadable: v(0) - v(1), Lookback: time.Duration(j.Lookback).String(), Beyond: v(6),
		Percentiles: map[string]string{"p50": us(v(2)), "p90": us(v(3)), "p99": us(v(4)), "max": us(v(5))}}
	if r.Rows > 0 {
		r.Share = float64(r.Beyond) / float64(r.Rows)
	}
	return r, nil
}

// Late counts, by the day of their event, the rows of the job's lag source
// that arrived later than its lookback after their event, for the days
// from..to: rows a run that trusted the lookback would have missed. It
// returns nil when the job declares no lag or lookback.
func (j *Job) Late(ctx context.Context, eng *source.SQLEngine, from, to string) (map[string]int64, error) {
	name := j.Lag.Source
	if name == "" && len(j.Sources) == 1 {
		name = j.SourceNames()[0]
	}
	if _, ok := j.Sources[name]; !ok || j.Lag.Event == "" || j.Lag.Ingested == "" || j.Lookback <= 0 {
		return nil, nil
	}
	event := "try_cast((" + j.Lag.Event + ") AS TIMESTAMPTZ)"
	q := fmt.Sprintf(`SELECT CAST(CAST(%[1]s AS DATE) AS VARCHAR) AS day, count(*)::BIGINT AS n FROM %[2]s
		WHERE epoch_us(try_cast((%[3]s) AS TIMESTAMPTZ)) - epoch_us(%[1]s) > %[4]d
		  AND CAST(%[1]s AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
		GROUP BY 1`, event, ident(name), j.Lag.Ingested, time.Duration(j.Lookback).Microseconds())
	rr, err := eng.Query(ctx, q, map[string]string{"from": from, "to": to})
	if err != nil {
		return nil, fmt.Errorf("count the rows that arrived beyond the lookback: %w", err)
	}
	defer rr.Release()
	out := map[string]int64{}
	for rr.Next() {
		rec := rr.RecordBatch()
		days, counts := rec.Column(0).(*array.String), rec.Column(1).(*array.Int64)
		for i := range int(rec.NumRows()) {
			out[strings.Clone(days.Value(i))] = counts.Value(i)
		}
	}
	return out, rr.Err()
}
