package source

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
)

// CSVHeader checks a CSV file that a SQL job reads and returns its
// header. A job reads CSV in the dialect a publish does (comma, double
// quote doubled to escape, a header line, every record of the header's
// fields; or the delimiter, quote and columns o says) and in the plain
// form that the engine splits as lakeswap's own reader would: a file
// outside it is refused, naming its line, where a publish would fall back
// to the own reader. name is the file as the job lists it, for the
// message. The header is the names o.Rename gives.
func CSVHeader(path, name string, o CSVOptions) ([]string, error) {
	d := o.dialect()
	shape, err := checkCSVIn(path, d)
	if err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			ie.File = name
		}
		return nil, err
	}
	if !shape.plain {
		return nil, &InputError{File: name, Line: shape.whyLine, Err: fmt.Errorf("%s: a job reads CSV with %s between fields, values in %s and a quote inside one doubled, every record with the first line's fields", shape.why, charName(d.delim), charName(d.quote))}
	}
	if line, err := invalidUTF8(path); err != nil || line > 0 {
		if err != nil {
			return nil, err
		}
		return nil, &InputError{File: name, Line: line, Err: errors.New("the line is not valid UTF-8; a CSV source holds text only")}
	}
	f, err := openText(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	var in io.Reader = br
	if d.quote != '"' {
		in = &quoteSwap{r: br, q: d.quote}
	}
	cr := csv.NewReader(in)
	cr.Comma = rune(d.delim)
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		if o.NoHeader {
			return o.rename(o.Columns)
		}
		return nil, &InputError{File: name, Err: errors.New("the file is empty; a CSV source starts with a header line")}
	}
	if err != nil {
		return nil, &InputError{File: name, Line: 1, Err: fmt.Errorf("read header: %w", csvError(err))}
	}
	header = swapQuotes(header, d.quote)
	if o.NoHeader {
		if len(header) != len(o.Columns) {
			return nil, &InputError{File: name, Line: 1, Err: fmt.Errorf("the line has %d fields and the source's columns name %d (%s)", len(header), len(o.Columns), strings.Join(o.Columns, ", "))}
		}
		header = slices.Clone(o.Columns)
	}
	if header, err = o.rename(header); err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			ie.File = name
		}
		return nil, err
	}
	seen := map[string]bool{}
	for _, h := range header {
		if seen[strings.ToLower(h)] {
			return nil, &InputError{File: name, Line: 1, Column: h, Err: errors.New("the header names this column twice")}
		}
		seen[strings.ToLower(h)] = true
	}
	return header, nil
}

// invalidUTF8 finds the first line of a text file that is not valid
// UTF-8, or 0. The engine's CSV reader fails on such bytes without saying
// where. Lines are at most maxPlainRecord bytes, which checkCSV ensures.
func invalidUTF8(path string) (int64, error) {
	f, err := openText(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 2*maxPlainRecord)
	for line := int64(1); sc.Scan(); line++ {
		if !utf8.Valid(sc.Bytes()) {
			return line, nil
		}
	}
	return 0, sc.Err()
}

// CSVScan is the engine's scan of CSV files that share a header, in the
// dialect of a publish, pinned rather than sniffed: every field as the
// text it is (VARCHAR), a quoted empty value the empty text and an
// unquoted one null, a malformed record an error.
func CSVScan(files []string, header []string, compression string, o CSVOptions) string {
	cols := make([]string, len(header))
	for i, h := range header {
		cols[i] = sqlString(h) + ": 'VARCHAR'"
	}
	if compression == "" {
		compression = "none"
	}
	d := o.dialect()
	nulls := "''"
	if o.Null != "" {
		nulls = "['', " + sqlString(o.Null) + "]"
	}
	return fmt.Sprintf(`read_csv(%s, header = %t, auto_detect = false, columns = {%s},
		delim = %s, quote = %s, escape = %s, nullstr = %s, strict_mode = true, allow_quoted_nulls = false,
		null_padding = false, ignore_errors = false, compression = '%s')`,
		FileList(files), !o.NoHeader, strings.Join(cols, ", "), sqlString(string(d.delim)), sqlString(string(d.quote)), sqlString(string(d.quote)), nulls, compression)
}

// charName names a separator or quote for a message.
func charName(c byte) string {
	switch c {
	case ',':
		return "a comma"
	case '"':
		return "double quotes"
	case '\t':
		return "a tab"
	}
	return fmt.Sprintf("%q", string(c))
}

// Compression names the compression of a text input as its name says:
// gzip, zstd, or "".
func Compression(path string) string { return compression(path) }

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// SQLString quotes s as an SQL string literal.
func SQLString(s string) string { return sqlString(s) }

// NDJSONScan is the engine's scan of NDJSON files for a SQL job, with
// each column's type decided over every row, never from a sample: a value
// past a sample would otherwise be cast to the sample's type (1.7 read as
// 2 in a column of integers). MixedNDJSON finds the columns whose values
// do not share one type, which the job refuses.
func NDJSONScan(files []string) string {
	return "read_json(" + FileList(files) + ", format = 'newline_delimited', union_by_name = true, sample_size = -1)"
}

// NDJSONTyped is the scan of NDJSON files with their columns' types as
// NDJSONScan found them: reading it decides nothing again.
func NDJSONTyped(files, columns, types []string) string {
	if len(columns) == 0 {
		return NDJSONScan(files)
	}
	cols := make([]string, len(columns))
	for i, c := range columns {
		cols[i] = sqlString(c) + ": " + sqlString(types[i])
	}
	return "read_json(" + FileList(files) + ", format = 'newline_delimited', union_by_name = true, columns = {" + strings.Join(cols, ", ") + "})"
}

// NDJSONCheck is a query over NDJSON files that says, for each of the
// given columns (every key the files hold), the types of its non-null
// values (integers of at most 2^53 in magnitude "integer", larger ones
// "integer beyond 2^53", then "double", "varchar", "boolean", "object",
// "array"), and one number the engine would not hold as written (an
// integer beyond 64 bits, read as a double, or one beyond a double's
// range), or null: two columns a key, in the order given. It reads each
// value as JSON text, in one pass.
func NDJSONCheck(files []string, columns []string) string {
	cols := make([]string, len(columns))
	var checks []string
	for i, c := range columns {
		cols[i] = sqlString(c) + ": 'JSON'"
		q := `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
		t := "json_type(" + q + ")"
		checks = append(checks,
			`string_agg(DISTINCT CASE WHEN `+t+` IN ('BIGINT', 'UBIGINT', 'HUGEINT') THEN CASE WHEN coalesce(abs(TRY_CAST(`+q+` AS HUGEINT)) <= 9007199254740992, false) THEN 'integer' ELSE 'integer beyond 2^53' END WHEN `+t+` = 'NULL' THEN NULL ELSE lower(`+t+`) END, ',')`,
			`min(CASE WHEN `+t+` = 'DOUBLE' AND (regexp_matches(CAST(`+q+` AS VARCHAR), '^-?[0-9]+$') OR NOT coalesce(isfinite(TRY_CAST(CAST(`+q+` AS VARCHAR) AS DOUBLE)), false)) THEN CAST(`+q+` AS VARCHAR) END)`)
	}
	return "SELECT " + strings.Join(checks, ", ") + " FROM read_json(" + FileList(files) +
		", format = 'newline_delimited', union_by_name = true, columns = {" + strings.Join(cols, ", ") + "})"
}

// ShareType says whether values of two JSON types can be one column's
// without a value changing (as NDJSONCheck names the types): integers
// exact as doubles can join numbers with a fraction.
func ShareType(a, b string) bool { return shareType(a, b) }

// FirstLineOf finds, in an NDJSON file, the first line whose value of key
// is written as text, and refuses it as a number the engine would change,
// naming the file as name; nil if no line holds it.
func FirstLineOf(path, name, key, text string) error {
	return eachJSONLine(path, func(line int64, b []byte) (bool, error) {
		raw, ok, err := valueOf(b, key)
		if err == nil && ok && string(raw) == text {
			return true, &InputError{File: name, Line: line, Column: key, Err: fmt.Errorf("number %s cannot be held as written (beyond 64-bit integers, or a double's range): write it as a JSON string, and cast it in the SQL", text)}
		}
		return false, nil
	})
}

// eachJSONLine calls fn with every non-blank line of an NDJSON file,
// trimmed, and its number, until fn returns an error or stop.
func eachJSONLine(path string, fn func(line int64, b []byte) (stop bool, err error)) error {
	f, err := openText(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for line := int64(1); sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if stop, err := fn(line, b); stop || err != nil {
			return err
		}
	}
	return sc.Err()
}

// FileList is files as an SQL list of string literals.
func FileList(files []string) string {
	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = sqlString(f)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// FirstOtherType finds, in an NDJSON file, the first line whose value of
// key does not share a type with an earlier line's (as MixedNDJSON
// judges), and says so naming the file as name; nil if none does.
func FirstOtherType(path, name, key string) error {
	seen := map[string]int64{} // type -> first line
	return eachJSONLine(path, func(line int64, b []byte) (bool, error) {
		raw, ok, err := valueOf(b, key)
		if err != nil {
			return true, &InputError{File: name, Line: line, Column: key, Err: err}
		}
		t := "null"
		if ok {
			t = jsonType(raw)
		}
		if t == "null" {
			return false, nil
		}
		for other, at := range seen {
			if !shareType(t, other) {
				return true, &InputError{File: name, Line: line, Column: key, Err: fmt.Errorf("value %s is %s, and line %d's is %s: a source column holds values of one type (write them alike, or as text)", quote(string(raw)), article(t), at, article(other))}
			}
		}
		if _, ok := seen[t]; !ok {
			seen[t] = line
		}
		return false, nil
	})
}

// valueOf finds key's value in one JSON object, refusing an object that
// names it twice (the engine reads both).
func valueOf(b []byte, key string) (json.RawMessage, bool, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false, errors.New("a line of NDJSON is one JSON object")
	}
	var out json.RawMessage
	found := false
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, false, err
		}
		if t == key {
			if found {
				return nil, false, errors.New("the object names this column twice")
			}
			out, found = v, true
		}
	}
	return out, found, nil
}

// shareType says whether two JSON value types can be one column's without
// a value changing: integers exact as doubles can join numbers with a
// fraction.
func shareType(a, b string) bool {
	if a == b {
		return true
	}
	num := func(t string) bool { return t == "integer" || t == "integer beyond 2^53" || t == "double" }
	if !num(a) || !num(b) {
		return false
	}
	return !(a == "double" && b == "integer beyond 2^53" || a == "integer beyond 2^53" && b == "double")
}

func article(t string) string {
	switch t {
	case "integer", "integer beyond 2^53", "object", "array":
		return "an " + t
	case "double":
		return "a number with a fraction or exponent"
	case "varchar":
		return "a string"
	}
	return "a " + t
}

// jsonType is a JSON value's type as the engine sees it.
func jsonType(raw json.RawMessage) string {
	switch raw[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "varchar"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	if bytes.ContainsAny(raw, ".eE") {
		return "double"
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && n <= 1<<53 && n >= -(1<<53) {
		return "integer"
	}
	return "integer beyond 2^53"
}

// NDJSONKeys is a query of the distinct top-level keys of NDJSON files,
// read as the objects they are, before any key is taken for a column.
func NDJSONKeys(files []string) string {
	return "SELECT DISTINCT unnest(CASE WHEN json_type(json) = 'OBJECT' THEN json_keys(json) END) FROM read_ndjson_objects(" + FileList(files) + ")"
}

// KeysClash says whether a set of top-level keys cannot each be a column
// of their own: the empty key, or two keys that differ only in case (the
// engine's column names are case-blind, and it reads one key's values
// under the other's name, losing them).
func KeysClash(keys []string) bool {
	seen := map[string]bool{}
	for _, k := range keys {
		if k == "" || seen[strings.ToLower(k)] {
			return true
		}
		seen[strings.ToLower(k)] = true
	}
	return false
}

// FirstKeyClash finds, across NDJSON files in order, the first line that
// holds a top-level key that is empty or differs only in case from one
// seen before (on that line or an earlier one), or an object at any depth
// whose keys differ only in case, and refuses it naming the file (as
// names gives it), the line and both keys; nil if none does.
func FirstKeyClash(paths, names []string) error {
	type where struct {
		key  string
		file string
		line int64
	}
	top := map[string]where{}
	places := map[string]map[string]string{} // nested keys by place, across lines
	for i, path := range paths {
		err := eachJSONLine(path, func(line int64, b []byte) (bool, error) {
			refuse := func(col string, err error) (bool, error) {
				return true, &InputError{File: names[i], Line: line, Column: col, Err: err}
			}
			var obj map[string]json.RawMessage
			keys, err := objectKeys(b)
			if err != nil || json.Unmarshal(b, &obj) != nil {
				return false, nil // not an object: the engine's read says so
			}
			for _, k := range keys {
				if k == "" {
					return refuse(`""`, errors.New("an empty key cannot name a column: give the value a key"))
				}
				if w, ok := top[strings.ToLower(k)]; ok && w.key != k {
					at := fmt.Sprintf("line %d", w.line)
					if w.file != names[i] {
						at = fmt.Sprintf("%s:%d", w.file, w.line)
					}
					return refuse(k, fmt.Errorf("key %q and key %q (%s) differ only in case, and a column's name is case-blind: the engine would read one as the other and lose its values; rename one", k, w.key, at))
				}
				if _, ok := top[strings.ToLower(k)]; !ok {
					top[strings.ToLower(k)] = where{k, names[i], line}
				}
			}
			for _, k := range keys {
				if p, a, b := nestedClash(obj[k], k, places); p != "" {
					return refuse(k, fmt.Errorf("the object at %s has key %q, and %q at that place (on this line or an earlier one), which differs only in case: the engine reads the objects of one place as one and cannot tell them apart; rename one", p, b, a))
				}
			}
			return false, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// objectKeys lists one JSON object's keys in order, repeats included.
func objectKeys(b []byte) ([]string, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var keys []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// nestedClash finds, in a JSON value at path, an object (at any depth)
// two of whose keys are equal case-blind, or a key that differs only in
// case from one an object at the same place held on an earlier line
// (seen: by place, array indices left out, each key as first written):
// the engine reads the objects of one place as one struct, and its field
// names are case-blind. It returns the place and the two keys; "" if
// there is none.
func nestedClash(raw json.RawMessage, path string, seen map[string]map[string]string) (at, a, b string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", "", ""
	}
	switch raw[0] {
	case '{':
		keys, err := objectKeys(raw)
		if err != nil {
			return "", "", ""
		}
		place := placeOf(path)
		if seen[place] == nil {
			seen[place] = map[string]string{}
		}
		here := map[string]string{}
		for _, k := range keys {
			low := strings.ToLower(k)
			if other, ok := here[low]; ok {
				return path, other, k
			}
			if other, ok := seen[place][low]; ok && other != k {
				return path, other, k
			}
			here[low] = k
			if _, ok := seen[place][low]; !ok {
				seen[place][low] = k
			}
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return "", "", ""
		}
		for _, k := range keys {
			if at, a, b := nestedClash(obj[k], path+"."+k, seen); at != "" {
				return at, a, b
			}
		}
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return "", "", ""
		}
		for i, it := range items {
			if at, a, b := nestedClash(it, fmt.Sprintf("%s[%d]", path, i), seen); at != "" {
				return at, a, b
			}
		}
	}
	return "", "", ""
}

// placeOf is a path with its array indices left out: every element of a
// list is one place.
func placeOf(path string) string { return arrayIndex.ReplaceAllString(path, "[]") }

var arrayIndex = regexp.MustCompile(`\[\d+\]`)

// FirstInexactInList finds, in an NDJSON file, the first line whose list
// under key (at any depth of lists) holds a number a double does not hold
// as written: an integer beyond 2^53, or one beyond a double's range. The
// engine reads such a list as doubles and would round it; it is refused
// naming the file (as name), the line and the number's place.
func FirstInexactInList(path, name, key string) error {
	return eachJSONLine(path, func(line int64, b []byte) (bool, error) {
		raw, ok, err := valueOf(b, key)
		if err != nil || !ok {
			return false, nil
		}
		if at, n := inexactNumber(raw, key); at != "" {
			return true, &InputError{File: name, Line: line, Column: key, Err: fmt.Errorf("number %s at %s cannot be held as written in a list of numbers with a fraction (the engine reads them as doubles): write it as a JSON string, and cast it in the SQL", n, at)}
		}
		return false, nil
	})
}

// inexactNumber finds, in a JSON list at path (lists within it too), a
// number a double does not hold as written.
func inexactNumber(raw json.RawMessage, path string) (at, number string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return "", ""
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return "", ""
	}
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		if at, n := inexactNumber(it, p); at != "" {
			return at, n
		}
		switch t := jsonType(it); t {
		case "integer beyond 2^53":
			return p, string(it)
		case "double":
			if v, err := strconv.ParseFloat(string(it), 64); err != nil || math.IsInf(v, 0) {
				return p, string(it)
			}
		}
	}
	return "", ""
}

// EngineType is the engine's type of an Iceberg primitive type, or "" for
// one left as read.
func EngineType(t iceberg.Type) string {
	switch t := t.(type) {
	case iceberg.BooleanType:
		return "BOOLEAN"
	case iceberg.Int32Type:
		return "INTEGER"
	case iceberg.Int64Type:
		return "BIGINT"
	case iceberg.Float32Type:
		return "FLOAT"
	case iceberg.Float64Type:
		return "DOUBLE"
	case iceberg.DecimalType:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision(), t.Scale())
	case iceberg.DateType:
		return "DATE"
	case iceberg.TimeType:
		return "TIME"
	case iceberg.TimestampType:
		return "TIMESTAMP"
	case iceberg.TimestampTzType:
		return "TIMESTAMPTZ"
	case iceberg.StringType:
		return "VARCHAR"
	case iceberg.UUIDType:
		return "UUID"
	}
	return ""
}
