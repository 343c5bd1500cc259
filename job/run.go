package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/parquetio"
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

// Fetch makes a listed object (s3://) readable by the engine: a local copy
// of exactly what was listed.
type Fetch func(ctx context.Context, in runrecord.Input) (string, error)

// listedFile is a listed file as the engine reads it: a local path, and
// the name the job's listing gives it, which every message uses.
type listedFile struct{ path, name string }

// sourceFiles is one source's files, of one format.
type sourceFiles struct {
	format string
	files  []listedFile
	csv    source.CSVOptions // how its CSV files are written
}

// Prepare makes the job's sources readable by its SQL on eng: each source
// is a view of exactly the listed files, without the rows its reject
// rules refuse. The engine is confined to those files and its spill
// folder before it evaluates anything the job file holds (reject rules,
// the SQL, the reconciliation query), so none of them reads another file
// or writes one. Each source reaches the SQL as written: CSV in the
// publish path's dialect, every field as text; NDJSON with each column's
// type decided over every row, a column of mixed types refused. It writes
// each refused row to rejects as one JSON line (its source, its reasons,
// the row as read) and counts them.
func (j *Job) Prepare(ctx context.Context, eng *source.SQLEngine, l *Listing, rejects io.Writer, fetch Fetch, dir string) (*Rejected, error) {
	sources := map[string]*sourceFiles{}
	var read []string // every file the views read
	for _, name := range j.SourceNames() {
		sf, err := j.localFiles(ctx, name, l, fetch, dir)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", name, err)
		}
		sources[name] = sf
		for _, f := range sf.files {
			read = append(read, f.path)
			if j.listed == nil {
				j.listed = map[string]string{}
			}
			j.listed[f.path] = f.name
		}
	}
	// Checked by lakeswap's own code, before the engine reads anything.
	headers := map[string][][]string{}
	for _, name := range j.SourceNames() {
		if sources[name].format != "csv" {
			continue
		}
		for _, f := range sources[name].files {
			h, err := source.CSVHeader(f.path, f.name, sources[name].csv)
			if err != nil {
				return nil, fmt.Errorf("source %s: %w", name, err)
			}
			headers[name] = append(headers[name], h)
		}
	}
	// From here on the engine reaches the listed files and its spill
	// folder, and no other file.
	if err := eng.Confine(ctx, read); err != nil {
		return nil, err
	}
	if err := eng.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS lakeswap_raw"); err != nil {
		return nil, err
	}
	out := &Rejected{ByReason: map[string]int64{}}
	for _, name := range j.SourceNames() {
		sf := sources[name]
		if err := j.view(ctx, eng, name, sf, headers[name], rejects, out); err != nil {
			return nil, fmt.Errorf("source %s: %w", name, sf.named(err))
		}
	}
	return out, nil
}

// localFiles makes a source's listed files local, as read from now on, and
// finds their one format.
func (j *Job) localFiles(ctx context.Context, name string, l *Listing, fetch Fetch, dir string) (*sourceFiles, error) {
	sf := &sourceFiles{format: j.Sources[name].Format}
	var err error
	if sf.csv, err = j.Sources[name].CSV.JobOptions(); err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	if j.Sources[name].Table != "" {
		sf.format = "parquet"
	}
	for _, f := range l.Sources[name] {
		path := f.URL
		switch {
		case strings.HasPrefix(path, "iceberg:") && strings.Contains(path, "#"):
			// A table's data file the engine cannot read as it is
			// (deletes apply to it, or columns were renamed since it was
			// written): read by lakeswap into a copy of its own.
			if fetch == nil {
				return nil, fmt.Errorf("%s is read through a copy (deletes to apply, or columns renamed), and no catalog is at hand to read it", path)
			}
			local, err := fetch(ctx, f)
			if err != nil {
				return nil, err
			}
			path = local
		case strings.HasPrefix(path, "iceberg:"):
			continue // the snapshot the files are of
		case strings.HasPrefix(path, "file://"):
			// A table's data file, which is never rewritten.
			path = strings.TrimPrefix(path, "file://")
		case source.IsObjectURL(path):
			if fetch == nil {
				return nil, fmt.Errorf("%s is on S3, and no S3 store is configured", path)
			}
			local, err := fetch(ctx, f)
			if err != nil {
				return nil, err
			}
			path = local
		default:
			// Read from a copy taken now and checked against the listing:
			// the file itself may be rewritten while the SQL reads it,
			// more than once.
			local, err := copyListed(ctx, f, dir)
			if err != nil {
				return nil, err
			}
			path = local
		}
		if strings.ContainsAny(path, "*?[]{}\\") {
			return nil, fmt.Errorf("%s has a glob character in its name, which the engine would read as a pattern: rename it", f.URL)
		}
		ff := sf.format
		if j.Sources[name].Table == "" && j.Sources[name].Format == "" {
			var err error
			if ff, err = source.InputFormat(f.URL); err != nil {
				return nil, err
			}
		}
		if sf.format == "" {
			sf.format = ff
		} else if ff != sf.format {
			return nil, fmt.Errorf("%s is %s, its other files %s: a source is of one format (name each format a source of its own)", f.URL, ff, sf.format)
		}
		sf.files = append(sf.files, listedFile{path, f.URL})
	}
	if len(sf.files) == 0 {
		return nil, errors.New("it names no file")
	}
	if sf.format != "csv" && j.Sources[name].CSV.Set() {
		return nil, fmt.Errorf("csv says how CSV files are written, and its files are %s", sf.format)
	}
	return sf, nil
}

// view makes one source's view: its files as read, then without the rows
// its reject rules refuse.
func (j *Job) view(ctx context.Context, eng *source.SQLEngine, name string, sf *sourceFiles, headers [][]string, rejects io.Writer, out *Rejected) error {
	scan, err := sf.scan(ctx, eng, headers)
	if err != nil {
		return err
	}
	// The source as read lives apart from the names the SQL reads.
	raw := "lakeswap_raw." + ident(name)
	if err := eng.Exec(ctx, "CREATE OR REPLACE VIEW "+raw+" AS "+scan); err != nil {
		return err
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
			return fmt.Errorf("its reject rules: %w", err)
		}
	}
	// The rows kept, under a name of their own, so that a late policy
	// can make the source's view of them again.
	if err := eng.Exec(ctx, "CREATE OR REPLACE VIEW "+kept(name)+" AS SELECT * FROM "+raw+" WHERE "+keep); err != nil {
		return fmt.Errorf("its reject rules: %w", err)
	}
	if err := eng.Exec(ctx, "CREATE OR REPLACE TEMP VIEW "+ident(name)+" AS SELECT * FROM "+kept(name)); err != nil {
		return err
	}
	return nil
}

// kept names the view of a source's rows its reject rules keep: a name no
// source takes (a source's is a plain identifier).
func kept(name string) string { return "lakeswap_raw." + ident(name+" kept") }

// scan is the query that reads a source's files as written.
func (sf *sourceFiles) scan(ctx context.Context, eng *source.SQLEngine, headers [][]string) (string, error) {
	paths := make([]string, len(sf.files))
	for i, f := range sf.files {
		paths[i] = f.path
	}
	switch sf.format {
	case "csv":
		// Files that share a header and compression are one scan; the
		// scans are joined by column name.
		type group struct {
			header []string
			comp   string
			files  []string
		}
		var groups []*group
		byKey := map[string]*group{}
		for i, f := range sf.files {
			comp := source.Compression(f.path)
			key := comp + "\x00" + strings.Join(headers[i], "\x00")
			g := byKey[key]
			if g == nil {
				g = &group{header: headers[i], comp: comp}
				byKey[key] = g
				groups = append(groups, g)
			}
			g.files = append(g.files, f.path)
		}
		parts := make([]string, len(groups))
		for i, g := range groups {
			parts[i] = "SELECT * FROM " + source.CSVScan(g.files, g.header, g.comp, sf.csv)
		}
		return strings.Join(parts, " UNION ALL BY NAME "), nil
	case "ndjson":
		columns, types, err := sf.typedAsWritten(ctx, eng, paths)
		if err != nil {
			return "", err
		}
		// The types found over every row, stated: the view's every read
		// does not decide them again.
		return "SELECT * FROM " + source.NDJSONTyped(paths, columns, types), nil
	case "parquet":
		if err := sf.parquetTypesAgree(ctx, eng); err != nil {
			return "", err
		}
		return "SELECT * FROM read_parquet(" + source.FileList(paths) + ", union_by_name = true)", nil
	}
	return "", fmt.Errorf("format %q", sf.format)
}

// typedAsWritten refuses NDJSON files where a column's values are of more
// than one type, or a number is one the engine would change, naming the
// file and line of the first. It reads the files once more, every value
// as JSON text.
func (sf *sourceFiles) typedAsWritten(ctx context.Context, eng *source.SQLEngine, paths []string) (columns, types []string, err error) {
	if err := sf.keysApart(ctx, eng, paths); err != nil {
		return nil, nil, err
	}
	rr, err := eng.Query(ctx, "DESCRIBE SELECT * FROM "+source.NDJSONScan(paths), nil)
	if err != nil {
		if strings.Contains(err.Error(), "Duplicate name") {
			if cerr := sf.firstKeyClash(); cerr != nil {
				return nil, nil, cerr
			}
			// Not found line by line: the engine's words, as a refusal.
			return nil, nil, &source.InputError{File: sf.files[0].name, Err: fmt.Errorf("keys that differ only in case in an object: %w", sf.named(err))}
		}
		return nil, nil, sf.duplicateKey(err)
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		names, kinds := rec.Column(0).(*array.String), rec.Column(1).(*array.String)
		for i := range names.Len() {
			columns = append(columns, strings.Clone(names.Value(i)))
			types = append(types, asWritten(kinds.Value(i)))
		}
	}
	err = rr.Err()
	rr.Release()
	if err != nil || len(columns) == 0 {
		return nil, nil, err
	}
	// A list of numbers read as doubles: each number must be one a double
	// holds as written.
	for i, typ := range types {
		if base := strings.TrimRight(typ, "[]"); base != typ && changesValues.MatchString(base) {
			for _, f := range sf.files {
				if err := source.FirstInexactInList(f.path, f.name, columns[i]); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return columns, types, sf.checkNDJSON(ctx, eng, paths, columns)
}

// parquetTypesAgree refuses Parquet files of one source that type a
// column differently, naming both files, unless every value of the one
// type is exact in the other (INT32 beside INT64, FLOAT beside DOUBLE):
// the engine reads them as one type, and an INT64 of 2^53+1 read as a
// DOUBLE is rounded.
func (sf *sourceFiles) parquetTypesAgree(ctx context.Context, eng *source.SQLEngine) error {
	if len(sf.files) < 2 {
		return nil
	}
	type typed struct{ typ, file string }
	first := map[string]typed{}
	for _, f := range sf.files {
		rr, err := eng.Query(ctx, "DESCRIBE SELECT * FROM read_parquet("+source.SQLString(f.path)+")", nil)
		if err != nil {
			return &source.InputError{File: f.name, Err: sf.named(err)}
		}
		for rr.Next() {
			rec := rr.RecordBatch()
			names, kinds := rec.Column(0).(*array.String), rec.Column(1).(*array.String)
			for i := range names.Len() {
				name, typ := strings.ToLower(strings.Clone(names.Value(i))), strings.Clone(kinds.Value(i))
				was, ok := first[name]
				if !ok {
					first[name] = typed{typ, f.name}
					continue
				}
				if was.typ != typ && !exactTogether(was.typ, typ) {
					col := strings.Clone(names.Value(i))
					rr.Release()
					return &source.InputError{File: f.name, Column: col, Err: fmt.Errorf("the column is %s here and %s in %s: the engine would read both as one type and change values; write the files with one type", typ, was.typ, was.file)}
				}
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// exactTogether says whether every value of two engine types is exact in
// the type the engine reads them as together: integers of different
// widths, and floats of different widths. An integer beside a float is
// not (2^53+1 read as a DOUBLE is rounded).
func exactTogether(a, b string) bool {
	ints := []string{"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT"}
	uints := []string{"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"}
	floats := []string{"FLOAT", "DOUBLE"}
	for _, family := range [][]string{ints, uints, floats} {
		if slices.Contains(family, a) && slices.Contains(family, b) {
			return true
		}
	}
	return false
}

// keysApart refuses NDJSON files whose top-level keys cannot each be a
// column: an empty key, or keys that differ only in case, which the
// engine would read as one column and lose the other's values.
func (sf *sourceFiles) keysApart(ctx context.Context, eng *source.SQLEngine, paths []string) error {
	rr, err := eng.Query(ctx, source.NDJSONKeys(paths), nil)
	if err != nil {
		return nil // the typed read that follows says what is wrong
	}
	var keys []string
	for rr.Next() {
		col := rr.RecordBatch().Column(0).(*array.String)
		for i := range col.Len() {
			if !col.IsNull(i) {
				keys = append(keys, strings.Clone(col.Value(i)))
			}
		}
	}
	err = rr.Err()
	rr.Release()
	if err != nil || !source.KeysClash(keys) {
		return err
	}
	if err := sf.firstKeyClash(); err != nil {
		return err
	}
	slices.Sort(keys)
	if len(keys) > 20 {
		keys = append(keys[:20], "and "+words.Number(len(keys)-20)+" more")
	}
	return &source.InputError{File: sf.files[0].name, Err: fmt.Errorf("its keys (%s) include an empty key or keys that differ only in case: each key names a column of its own", strings.Join(keys, ", "))}
}

// firstKeyClash finds the line of the first key clash, across the files.
func (sf *sourceFiles) firstKeyClash() error {
	paths, names := make([]string, len(sf.files)), make([]string, len(sf.files))
	for i, f := range sf.files {
		paths[i], names[i] = f.path, f.name
	}
	return source.FirstKeyClash(paths, names)
}

// asWritten is the type a column of NDJSON is read as: the engine's,
// except where its reading would change a value. Strings it took for
// dates or times stay text as written: its reading of a time drops an
// offset (11:00+05:00 read as 11:00), and a job's SQL casts the text when
// it means a time. Nested values keep the engine's type where that holds
// them exactly (a list of strings or integers, a struct of them), a list
// of times becomes a list of their text, and an object or map holding a
// time or a number with a fraction stays the JSON text it is (its
// reading would drop offsets and round 9007199254740993 beside 0.5): the
// SQL extracts from it (o->>'$.ts').
func asWritten(engineType string) string {
	switch engineType {
	case "DATE", "TIME", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIME WITH TIME ZONE", "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S":
		return "VARCHAR"
	}
	if !nested(engineType) {
		return strings.Clone(engineType)
	}
	base := strings.TrimRight(engineType, "[]")
	if !nested(base) {
		// A list (of lists) of one scalar type.
		return asWritten(base) + engineType[len(base):]
	}
	if changesValues.MatchString(engineType) {
		return "JSON"
	}
	return strings.Clone(engineType)
}

// nested says whether an engine type is a list, struct or map.
func nested(t string) bool {
	return strings.HasPrefix(t, "STRUCT(") || strings.HasPrefix(t, "MAP(") || strings.HasSuffix(t, "]")
}

// changesValues finds, in a nested engine type, a type whose reading of
// JSON may change a value: a time (its offset dropped) or a number the
// engine reads as a double (rounded).
var changesValues = regexp.MustCompile(`\b(DATE|TIME|TIMESTAMP|TIMESTAMP_NS|TIMESTAMP_MS|TIMESTAMP_S|DOUBLE|FLOAT|HUGEINT|UBIGINT|DECIMAL)\b`)

// duplicateKeyError reads the key the engine names in an object that
// names it twice.
var duplicateKeyError = regexp.MustCompile(`has duplicate key "((?:[^"\\]|\\.)*)"`)

// duplicateKey turns the engine's refusal of an object that names a key
// twice into lakeswap's, naming the listed file and line.
func (sf *sourceFiles) duplicateKey(err error) error {
	m := duplicateKeyError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	for _, f := range sf.files {
		if ferr := source.FirstOtherType(f.path, f.name, m[1]); ferr != nil {
			return ferr
		}
	}
	return err
}

// checkNDJSON runs source.NDJSONCheck and refuses what it finds.
func (sf *sourceFiles) checkNDJSON(ctx context.Context, eng *source.SQLEngine, paths, columns []string) error {
	rr, err := eng.Query(ctx, source.NDJSONCheck(paths, columns), nil)
	if err != nil {
		return sf.duplicateKey(err)
	}
	defer rr.Release()
	if !rr.Next() {
		return rr.Err()
	}
	rec := rr.RecordBatch()
	for i, key := range columns {
		types, inexact := rec.Column(2*i).(*array.String), rec.Column(2*i+1).(*array.String)
		if !types.IsNull(0) {
			kinds := strings.Split(types.Value(0), ",")
			for _, a := range kinds {
				for _, b := range kinds {
					if source.ShareType(a, b) {
						continue
					}
					// The engine says which column; lakeswap's own reader
					// finds where, across the files in order.
					for _, f := range sf.files {
						if err := source.FirstOtherType(f.path, f.name, key); err != nil {
							return err
						}
					}
					return fmt.Errorf("column %s holds values of several types (%s) across its files: a source column holds values of one type", key, types.Value(0))
				}
			}
		}
		if !inexact.IsNull(0) {
			text := strings.Clone(inexact.Value(0))
			for _, f := range sf.files {
				if err := source.FirstLineOf(f.path, f.name, key, text); err != nil {
					return err
				}
			}
			return fmt.Errorf("column %s holds the number %s, which the engine cannot hold as written: write it as a JSON string", key, text)
		}
	}
	return rr.Err()
}

// Named writes an error of the engine's, met while the job's SQL or its
// reconciliation ran, with each file as the listing names it, never as the
// local copy the engine read; an error that names a source file is about
// that file's content, and is an input error, refused.
func (j *Job) Named(err error) error {
	if err == nil || len(j.listed) == 0 || errors.Is(err, context.Canceled) {
		return err
	}
	msg := err.Error()
	file := ""
	for local, name := range j.listed {
		if local != name && strings.Contains(msg, local) {
			msg, file = strings.ReplaceAll(msg, local, name), name
		}
	}
	if file == "" {
		return err
	}
	return &source.InputError{File: file, Err: errors.New(msg)}
}

// named writes an error of the engine's with each file as the listing
// names it, not as the local copy the engine read.
func (sf *sourceFiles) named(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for _, f := range sf.files {
		if f.path != f.name && strings.Contains(msg, f.path) {
			msg, changed = strings.ReplaceAll(msg, f.path, f.name), true
		}
	}
	if !changed {
		return err
	}
	return errors.New(msg)
}

// copyListed copies a listed local file into dir, hashing it on the way,
// and refuses a file whose bytes are no longer the listed ones.
func copyListed(ctx context.Context, f runrecord.Input, dir string) (string, error) {
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
	out, err := os.CreateTemp(dir, "source-*"+strings.Map(func(r rune) rune {
		if strings.ContainsRune("*?[]{}\\'\"", r) {
			return '_'
		}
		return r
	}, ext))
	if err != nil {
		return "", err
	}
	local := out.Name()
	size, got, err := parquetio.Checksum(ctx, io.TeeReader(in, out))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", f.URL, err)
	}
	if got != want || size != f.Size {
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
	enc.SetEscapeHTML(false) // a reason such as amount_cents < 0 reads as written
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
//
// The result is kept whole by the engine first, as a temporary table
// (which spills to the run's spill folder like the rest of the engine's
// memory), and only then read: the engine's peak, its joins, aggregates
// and sorts, is over before lakeswap holds any of the rows, so the two
// never need their memory at once. Measured on the orders_fact job over
// 10M events under --memory-limit 1GiB: streaming the result as the SQL
// computed it peaked at 1.7 GB, the engine alone at 0.85 GB for its
// 256 MiB share.
func (j *Job) Query(ctx context.Context, eng *source.SQLEngine, from, to string) (array.RecordReader, error) {
	// Checked as written, so that an error points into the job's SQL,
	// not into the statement that keeps its result.
	names, err := eng.Columns(j.SQL)
	if err != nil {
		return nil, fmt.Errorf("job's SQL: %w", err)
	}
	// A table's columns are one each whatever their case: the engine
	// would rename a second one (x_1), which could fill another column.
	seen := map[string]bool{}
	for _, n := range names {
		if seen[strings.ToLower(n)] {
			return nil, fmt.Errorf("job's SQL: its result has column %s twice (names that differ only in case are one name)", n)
		}
		seen[strings.ToLower(n)] = true
	}
	params := map[string]string{"from": from, "to": to}
	if err := eng.ExecParams(ctx, "CREATE OR REPLACE TEMP TABLE "+resultTable+" AS "+j.SQL, params); err != nil {
		if strings.Contains(err.Error(), "Parser Error") {
			// It parsed alone, and is not a query a table can keep
			// (PRAGMA, SHOW).
			err = source.NotAQuery(j.SQL)
		}
		return nil, fmt.Errorf("job's SQL: %w", err)
	}
	rr, err := eng.Query(ctx, "SELECT * FROM "+resultTable, nil)
	if err != nil {
		return nil, fmt.Errorf("job's SQL: %w", err)
	}
	return rr, nil
}

// resultTable holds a job's result: a name no source can take (a source
// is a plain identifier).
const resultTable = `temp."lakeswap result"`

// ident quotes an SQL identifier.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Figures are what a job's reconciliation query says a partition holds.
type Figures struct {
	Rows int64
	Sums map[string]exact.Sum
}

// Reconciled runs the job's reconciliation query for from..to: one row a
// partition, with the table's partition columns (each field's source
// column), a column rows and a column for each additive column (BIGINT;
// the SQL casts), by name. It returns
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
	parts := map[int]int{} // the contract's column -> the query's
	for _, f := range c.Partition.Fields {
		if parts[f.Column], err = col(f.Name); err != nil {
			return nil, err
		}
	}
	figures := map[string]int{"rows": -1}
	for _, i := range c.Additive {
		figures[c.Fields[i].Name] = -1
	}
	for name := range figures {
		if figures[name], err = col(name); err != nil {
			return nil, err
		}
		if err := reconcilable(schema.Field(figures[name]).Type, c, name); err != nil {
			return nil, fmt.Errorf("job's reconciliation query: %w", err)
		}
	}
	out := map[string]Figures{}
	for rr.Next() {
		rec := rr.RecordBatch()
		cols := make([]arrow.Array, len(c.Fields))
		for at, i := range parts {
			cols[at] = rec.Column(i)
		}
		valueOf, err := c.Partition.ValueFunc(cols)
		if err != nil {
			return nil, fmt.Errorf("job's reconciliation query: columns %s: %w", c.Partition.Name, err)
		}
		for r := range int(rec.NumRows()) {
			v, ok := valueOf(r)
			if !ok {
				return nil, fmt.Errorf("job's reconciliation query: a row has no %s", c.Partition.Name)
			}
			f := Figures{Sums: map[string]exact.Sum{}}
			for name, i := range figures {
				if rec.Column(i).IsNull(r) {
					return nil, fmt.Errorf("job's reconciliation query: partition %s has no %s (null)", c.Partition.Key(v), name)
				}
				n := unscaled(rec.Column(i), r)
				if name != "rows" {
					f.Sums[name] = n
					continue
				}
				var ok bool
				if f.Rows, ok = n.Int64(); !ok {
					return nil, fmt.Errorf("job's reconciliation query: partition %s: rows %s is not a row count", c.Partition.Key(v), n)
				}
			}
			v = strings.Clone(v)
			if _, dup := out[v]; dup {
				return nil, fmt.Errorf("job's reconciliation query: partition %s twice", c.Partition.Key(v))
			}
			out[v] = f
		}
	}
	return out, rr.Err()
}

// reconcilable says whether a reconciliation column's type gives the figure
// exactly: BIGINT, or for a decimal column a DECIMAL of its scale, whose
// unscaled value is the figure.
func reconcilable(t arrow.DataType, c *contract.Contract, name string) error {
	if t.ID() == arrow.INT64 {
		return nil
	}
	if d, ok := t.(*arrow.Decimal128Type); ok {
		i := slices.IndexFunc(c.Fields, func(f iceberg.NestedField) bool { return f.Name == name })
		if want, ok := c.Fields[max(i, 0)].Type.(iceberg.DecimalType); i >= 0 && ok && int(d.Scale) == want.Scale() {
			return nil
		}
	}
	return fmt.Errorf("column %s is %s; cast it to BIGINT (a decimal column to DECIMAL of its own scale)", name, t)
}

// unscaled is a reconciliation figure: a BIGINT, or a decimal's unscaled
// value, of any size.
func unscaled(col arrow.Array, r int) exact.Sum {
	if d, ok := col.(*array.Decimal128); ok {
		return exact.FromBig(d.Value(r).BigInt())
	}
	return exact.Of(col.(*array.Int64).Value(r))
}

// LagReport is how late a source's rows arrived: the distribution of
// ingested - event over its rows, and how many arrived later than the
// job's lookback.
type LagReport struct {
	Source string `json:"source"`
	Rows   int64  `json:"rows"`
	// Percentiles are p50, p90, p99 and max of the lag, in seconds.
	Percentiles map[string]float64 `json:"percentiles_seconds"`
	Lookback    float64            `json:"lookback_seconds"`
	Beyond      int64              `json:"beyond_lookback"`
	Share       float64            `json:"share_beyond_lookback"`
	Unreadable  int64              `json:"unreadable"` // rows whose times do not read as timestamps
}

// MeasureLag measures the arrival lag of the job's lag source, over the
// rows its reject rules keep, so that a lookback is sized from
// measurement.
func (j *Job) MeasureLag(ctx context.Context, eng *source.SQLEngine) (*LagReport, error) {
	name := j.lagSource()
	if _, ok := j.Sources[name]; !ok || j.Lag.Event == "" || j.Lag.Ingested == "" {
		// What the job file does not say is a usage error (exit 2), as
		// every other part of a job file missing is.
		return nil, outcome.Invalid(fmt.Errorf("job %s: lag needs lag: {source, event_time, ingested_at}, SQL on the source's columns", j.File))
	}
	if err := j.lagReadable(ctx, eng); err != nil {
		return nil, err
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
	us := func(n int64) float64 { return float64(n) / 1e6 }
	r := &LagReport{Source: name, Rows: v(1), Unreadable: v(0) - v(1), Lookback: time.Duration(j.Lookback).Seconds(), Beyond: v(6),
		Percentiles: map[string]float64{"p50": us(v(2)), "p90": us(v(3)), "p99": us(v(4)), "max": us(v(5))}}
	if r.Rows > 0 {
		r.Share = float64(r.Beyond) / float64(r.Rows)
	}
	return r, nil
}

// Late counts, by the day of their event, the rows of the job's lag source
// that arrived later than its lookback after their event, for the days
// from..to: rows a run that trusted the lookback would have missed, and
// rows with no arrival time, which cannot be told on time. It returns nil
// when the job declares no lag or lookback.
func (j *Job) Late(ctx context.Context, eng *source.SQLEngine, from, to string) (map[string]int64, error) {
	name := j.lagSource()
	if _, ok := j.Sources[name]; !ok || j.Lag.Event == "" || j.Lag.Ingested == "" || j.Lookback <= 0 {
		return nil, nil
	}
	event := "try_cast((" + j.Lag.Event + ") AS TIMESTAMPTZ)"
	q := fmt.Sprintf(`SELECT CAST(CAST(%[1]s AS DATE) AS VARCHAR) AS day, count(*)::BIGINT AS n FROM %[2]s
		WHERE coalesce(epoch_us(try_cast((%[3]s) AS TIMESTAMPTZ)) - epoch_us(%[1]s) > %[4]d, %[1]s IS NOT NULL)
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
