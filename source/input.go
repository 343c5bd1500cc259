package source

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/parquetio"
)

// Batch is rows of an input file in the table's schema. Line[i] is where row
// i stands in File: the line of a CSV or NDJSON file, the row of a Parquet
// file, counting from 1.
type Batch struct {
	Rec  arrow.RecordBatch
	File string
	Line []int64
	// records, when set, says that Line holds CSV records (the first after
	// the header is 1) and where each starts.
	records *recordLines
}

// InputError names the file, line and column of a value that does not fit
// the table's schema.
type InputError struct {
	File   string
	Line   int64
	Column string
	Err    error
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, ": column %s", e.Column)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *InputError) Unwrap() error { return e.Err }

// inputBatchRows is how many rows of a text file go into one batch.
const inputBatchRows = 64 << 10

// cancelCheckRows is how often a reader looks for a cancelled context.
const cancelCheckRows = 4096

// ReadInput reads a partition-output file (.csv with a header line, .ndjson
// or .jsonl, or .parquet) batch by batch in schema, handing each to fn,
// which must retain a batch it keeps. Every value is cast to its column's
// type exactly: one that does not fit, or would be changed to fit (rounded,
// truncated, re-encoded), is an *InputError naming the file, line and
// column, and so is a column the table lacks or names twice.
func ReadInput(ctx context.Context, path string, schema *arrow.Schema, fn func(Batch) error) error {
	return ReadInputWith(ctx, path, schema, CSVOptions{}, fn)
}

// CSVOptions read a CSV file that is not in the plain form: another
// separator or quote, a marker of null, no header line, other names.
type CSVOptions struct {
	// Delimiter separates fields (0: a comma).
	Delimiter rune
	// Quote quotes a value that holds the delimiter, a quote or a line
	// break, and is doubled inside one (0: a double quote). It is one
	// ASCII character.
	Quote byte
	// Null, when set, is the field that stands for null, in any column
	// (an empty field stays what it is: null, or the empty text in a
	// string column).
	Null string
	// NoHeader says the first line is a row; Columns then names the
	// file's columns in order.
	NoHeader bool
	Columns  []string
	// Rename maps a name of the file's header (or of Columns) to the
	// table's column it holds: a name it maps is taken as that column.
	Rename map[string]string
}

// Plain reports whether the options are the defaults.
func (o CSVOptions) Plain() bool {
	return (o.Delimiter == 0 || o.Delimiter == ',') && (o.Quote == 0 || o.Quote == '"') && o.Null == "" && !o.NoHeader && len(o.Columns) == 0 && len(o.Rename) == 0
}

// rename gives the header with the names Rename maps replaced; a name it
// maps that the header lacks is an error, as a mistyped map would
// otherwise be ignored.
func (o CSVOptions) rename(header []string) ([]string, error) {
	if len(o.Rename) == 0 {
		return header, nil
	}
	out := slices.Clone(header)
	for from, to := range o.Rename {
		i := slices.Index(header, from)
		if i < 0 {
			return nil, &InputError{Line: 1, Column: from, Err: fmt.Errorf("the column map takes %s to %s, but the file has no column %s (its columns: %s)", from, to, from, strings.Join(header, ", "))}
		}
		out[i] = to
	}
	for from, to := range o.Rename {
		if slices.Contains(header, to) && o.Rename[to] == "" {
			return nil, &InputError{Line: 1, Column: to, Err: fmt.Errorf("the column map takes %s to %s, and the file has a column %s too: map that one elsewhere, or leave %s out of the map", from, to, to, from)}
		}
	}
	return out, nil
}

// ReadInputWith is ReadInput with a CSV file read by o.
func ReadInputWith(ctx context.Context, path string, schema *arrow.Schema, o CSVOptions, fn func(Batch) error) error {
	format, err := InputFormat(path)
	if err != nil {
		return err
	}
	switch format {
	case "csv":
		return readText(ctx, path, schema, o.opener(), fn)
	case "ndjson":
		return readNDJSON(ctx, path, schema, fn)
	}
	return readParquetInput(ctx, path, schema, fn)
}

// rowSource yields a text file's rows, each as the raw values of the
// schema's fields.
type rowSource interface {
	// next reads the next row into vals, one value a field (nil for null),
	// and returns its line; io.EOF at the end. An error may name its
	// column in an *InputError.
	next(vals []any) (int64, error)
}

// namedRows yields rows as column name -> raw value.
type namedRows interface {
	next() (int64, map[string]any, error)
}

// byField reads a namedRows' rows by field, refusing a column the schema
// lacks.
type byField struct {
	src   namedRows
	index map[string]int // the schema's names, by field
}

func (b byField) next(vals []any) (int64, error) {
	line, row, err := b.src.next()
	if err != nil {
		return line, err
	}
	clear(vals)
	return line, fieldValues(row, b.index, vals)
}

// fieldValues puts a row's values into vals, cleared, by field (index
// maps a name to its field), refusing a column index lacks.
func fieldValues(row map[string]any, index map[string]int, vals []any) error {
	for name, v := range row {
		i, ok := index[name]
		if !ok {
			return &InputError{Column: name, Err: errors.New("column is not in the table schema")}
		}
		vals[i] = v
	}
	return nil
}

// fieldIndex maps each of the schema's names to its field.
func fieldIndex(schema *arrow.Schema) map[string]int {
	index := make(map[string]int, schema.NumFields())
	for i, f := range schema.Fields() {
		index[f.Name] = i
	}
	return index
}

// opener starts reading rows of a text format in a schema.
type opener func(io.Reader, *arrow.Schema) (rowSource, error)

func readText(ctx context.Context, path string, schema *arrow.Schema, open opener, fn func(Batch) error) error {
	f, err := openText(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return readTextFrom(ctx, path, f, schema, open, fn)
}

// readTextFrom reads text input from r, naming it path in errors.
func readTextFrom(ctx context.Context, path string, in io.Reader, schema *arrow.Schema, open opener, fn func(Batch) error) error {
	r := bufio.NewReaderSize(in, 1<<20)
	skipBOM(r)
	src, err := open(r, schema)
	if err != nil {
		return inputError(path, 1, err)
	}
	return readRows(ctx, path, src, schema, fn)
}

// skipBOM passes a byte-order mark, how some tools start UTF-8 text: it
// is not data.
func skipBOM(r *bufio.Reader) {
	if bom, _ := r.Peek(3); string(bom) == "\ufeff" {
		_, _ = r.Discard(3)
	}
}

// readRows casts the rows of src into batches of schema, handing each to
// fn; path names the file in errors.
func readRows(ctx context.Context, path string, src rowSource, schema *arrow.Schema, fn func(Batch) error) error {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	fields := schema.Fields()
	// A batch after a full one is likely full too: its builders and lines
	// are sized for it at its first row, so that none grows (and is
	// copied) on the way. The first batch grows as it goes: sized up
	// front, every column of a wide table cost a whole batch's memory
	// (300 columns: 80 MB cleared) for a file of a few rows.
	full := false
	var lines []int64
	start := func() []int64 {
		if !full {
			return make([]int64, 0, 1024)
		}
		for i := range fields {
			rb.Field(i).Reserve(inputBatchRows)
		}
		return make([]int64, 0, inputBatchRows)
	}
	flush := func() error {
		if len(lines) == 0 {
			return nil
		}
		b := Batch{Rec: rb.NewRecordBatch(), File: path, Line: lines}
		full, lines = len(lines) == inputBatchRows, nil
		defer b.Rec.Release()
		return fn(b)
	}
	vals := make([]any, len(fields))
	for n := 0; ; n++ {
		if n%cancelCheckRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, err := src.next(vals)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return inputError(path, line, err)
		}
		if lines == nil {
			lines = start()
		}
		for i, f := range fields {
			if err := appendValue(rb.Field(i), f, vals[i]); err != nil {
				return &InputError{File: path, Line: line, Column: f.Name, Err: err}
			}
		}
		lines = append(lines, line)
		if len(lines) == inputBatchRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// inputError places err at a line of path; an error that already names its
// column keeps it.
func inputError(path string, line int64, err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		ie.File = path
		if ie.Line == 0 {
			ie.Line = line
		}
		return ie
	}
	return &InputError{File: path, Line: line, Err: err}
}

// jsonEmpty is an NDJSON "": an empty text, never a null as an empty CSV
// field of a non-string column is.
type jsonEmpty struct{}

// appendValue casts one raw value (a CSV string, or a decoded JSON value) to
// the column's type, refusing what the type cannot hold exactly.
func appendValue(b array.Builder, f arrow.Field, raw any) error {
	empty := false
	if _, ok := raw.(jsonEmpty); ok {
		if f.Type.ID() != arrow.STRING && f.Type.ID() != arrow.BINARY {
			return fmt.Errorf("value \"\" is not a %s; write null for a missing value", f.Type)
		}
		raw, empty = "", true
	}
	if raw == nil || raw == "" && f.Type.ID() != arrow.STRING && !empty {
		if !f.Nullable {
			return errors.New("value is missing, and the column is required")
		}
		b.AppendNull()
		return nil
	}
	text, isText := raw.(string)
	num, isNum := raw.(json.Number)
	if isNum {
		text = string(num)
	}
	wrong := func() error { return fmt.Errorf("value %s does not fit type %s", quote(raw), f.Type) }
	if done, err := appendNested(b, f, raw); done {
		return err
	}
	if done, err := appendBytes(b, raw, text, isText); done {
		return err
	}
	switch b := b.(type) {
	case *array.Time64Builder:
		if !isText {
			return wrong()
		}
		v, err := parseTime(text)
		if err != nil {
			return err
		}
		b.Append(v)
	case *array.StringBuilder:
		if !isText {
			return wrong()
		}
		if !utf8.ValidString(text) {
			return fmt.Errorf("value %s is not valid UTF-8; a string column holds text only", quote(raw))
		}
		b.Append(text)
	case *array.BooleanBuilder:
		v, ok := raw.(bool)
		if isText {
			var err error
			if v, err = strconv.ParseBool(text); err != nil {
				return wrong()
			}
		} else if !ok {
			return wrong()
		}
		b.Append(v)
	case *array.Int32Builder:
		v, err := strconv.ParseInt(text, 10, 32)
		if err != nil || !(isText || isNum) {
			return wrong()
		}
		b.Append(int32(v))
	case *array.Int64Builder:
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil || !(isText || isNum) {
			return wrong()
		}
		b.Append(v)
	case *array.Float32Builder:
		if !(isText || isNum) {
			return wrong()
		}
		v, err := parseFloat(text, 32)
		if errors.Is(err, strconv.ErrSyntax) {
			return wrong()
		}
		if err != nil {
			return fmt.Errorf("value %s: %w", quote(raw), err)
		}
		b.Append(float32(v))
	case *array.Float64Builder:
		if !(isText || isNum) {
			return wrong()
		}
		v, err := parseFloat(text, 64)
		if errors.Is(err, strconv.ErrSyntax) {
			return wrong()
		}
		if err != nil {
			return fmt.Errorf("value %s: %w", quote(raw), err)
		}
		b.Append(v)
	case *array.Date32Builder:
		if d, ok := parseDate(text); ok && isText {
			b.Append(d)
			break
		}
		t, err := time.Parse(time.DateOnly, text)
		if err != nil || !isText {
			return fmt.Errorf("value %s is not a date (YYYY-MM-DD)", quote(raw))
		}
		b.Append(arrow.Date32FromTime(t))
	case *array.TimestampBuilder:
		if !isText {
			return fmt.Errorf("value %s is not a timestamp", quote(raw))
		}
		v, err := parseTimestamp(text, f.Type.(*arrow.TimestampType))
		if err != nil {
			return err
		}
		b.Append(v)
	case *array.Decimal128Builder:
		if !(isText || isNum) {
			return wrong()
		}
		dt := f.Type.(*arrow.Decimal128Type)
		v, err := parseDecimal(text, dt.Precision, dt.Scale)
		if err != nil {
			return err
		}
		b.Append(v)
	default:
		return fmt.Errorf("type %s is not supported in text input", f.Type)
	}
	return nil
}

// quote shows a raw value in a message, cut short if long.
func quote(raw any) string {
	s := fmt.Sprint(raw)
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strconv.Quote(s)
}

// zoneless is a timestamp without an offset; the date and time may be
// separated by 'T' or a space.
const zoneless = "2006-01-02T15:04:05.999999999"

// parseTimestamp reads an ISO 8601 timestamp for a column of type t. A
// timestamptz column takes instants, so a value needs an offset (Z or
// +01:00); a zone-less timestamp column takes a date and time as written,
// so a value with an offset is refused rather than shifted. A value finer
// than the column's unit is refused rather than truncated.
func parseTimestamp(text string, t *arrow.TimestampType) (arrow.Timestamp, error) {
	iso := text
	if len(iso) > 10 && iso[10] == ' ' {
		iso = iso[:10] + "T" + iso[11:]
	}
	withZone, errZone := time.Parse(time.RFC3339Nano, iso)
	local, errLocal := time.Parse(zoneless, iso)
	var v time.Time
	switch {
	case t.TimeZone != "" && errZone == nil:
		v = withZone.UTC()
	case t.TimeZone != "" && errLocal == nil:
		return 0, fmt.Errorf("value %q has no offset; the column is a timestamp with time zone: add Z or an offset such as +01:00", text)
	case t.TimeZone == "" && errLocal == nil:
		v = local
	case t.TimeZone == "" && errZone == nil:
		return 0, fmt.Errorf("value %q has an offset, but the column is a timestamp without time zone: write the date and time to store, without Z or an offset (shifting it to UTC would change it)", text)
	default:
		return 0, fmt.Errorf("value %q is not an ISO 8601 timestamp (2026-01-31T23:30:00%s)", text, map[bool]string{true: "Z", false: ""}[t.TimeZone != ""])
	}
	if finer(iso, t.Unit) {
		return 0, fmt.Errorf("value %q is finer than the column's unit (%s); it would be truncated", text, t.Unit)
	}
	ts, err := arrow.TimestampFromTime(v, t.Unit)
	if err != nil || ts.ToTime(t.Unit) != v {
		return 0, fmt.Errorf("value %q is out of the column's range", text)
	}
	return ts, nil
}

// finer reports whether an ISO 8601 timestamp has non-zero fractional
// digits beyond what unit holds. It reads the text, since time.Parse drops
// digits past the ninth without a word.
func finer(iso string, unit arrow.TimeUnit) bool {
	const secondsEnd = len("2006-01-02T15:04:05")
	if len(iso) <= secondsEnd || iso[secondsEnd] != '.' && iso[secondsEnd] != ',' { // time.Parse takes both marks
		return false
	}
	end := secondsEnd + 1
	for end < len(iso) && '0' <= iso[end] && iso[end] <= '9' {
		end++
	}
	keep := map[arrow.TimeUnit]int{arrow.Second: 0, arrow.Millisecond: 3, arrow.Microsecond: 6, arrow.Nanosecond: 9}[unit]
	frac := iso[secondsEnd+1 : end]
	return len(frac) > keep && strings.Trim(frac[keep:], "0") != ""
}

var decimalPattern = regexp.MustCompile(`^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,6}))?$`)

// parseDecimal reads a decimal exactly: a value with more fractional digits
// than the scale (other than trailing zeros), or more digits than the
// precision, is refused, never rounded.
func parseDecimal(text string, precision, scale int32) (decimal128.Num, error) {
	m := decimalPattern.FindStringSubmatch(text)
	if m == nil || m[2] == "" && m[3] == "" {
		return decimal128.Num{}, fmt.Errorf("value %q is not a decimal number", text)
	}
	digits := m[2] + m[3]
	exp := 0
	if m[4] != "" {
		exp, _ = strconv.Atoi(m[4])
	}
	shift := exp - len(m[3]) + int(scale) // power of ten the digits are scaled by
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return decimal128.Num{}, nil
	}
	if shift < 0 {
		cut := len(digits) + shift
		if cut < 0 || strings.Trim(digits[max(cut, 0):], "0") != "" {
			return decimal128.Num{}, fmt.Errorf("value %q has more fractional digits than the column's scale %d; it would be rounded", text, scale)
		}
		digits = digits[:cut]
	} else if len(digits)+shift <= int(precision) {
		digits += strings.Repeat("0", shift)
	} else {
		digits = "" // too many digits; reported below
	}
	if digits == "" || len(digits) > int(precision) {
		return decimal128.Num{}, fmt.Errorf("value %q needs more than the column's %d digits (precision %d, scale %d)", text, precision, precision, scale)
	}
	n, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return decimal128.Num{}, fmt.Errorf("value %q is not a decimal number", text)
	}
	if m[1] == "-" {
		n.Neg(n)
	}
	return decimal128.FromBigInt(n), nil
}

type csvRows struct {
	r        *csv.Reader
	header   []string
	cr       *crWatch
	null     string
	quote    byte // the file's quote, where it is not "
	noHeader bool
}

// newCSVRows reads the header, which must name every column of the schema
// once: a column left out would otherwise be read as nulls.
func newCSVRows(r io.Reader, schema *arrow.Schema) (rowSource, error) {
	return CSVOptions{}.open(r, schema)
}

func (o CSVOptions) opener() opener { return o.open }

func (o CSVOptions) open(r io.Reader, schema *arrow.Schema) (rowSource, error) {
	watch := &crWatch{r: r}
	var in io.Reader = watch
	if o.Quote != 0 && o.Quote != '"' {
		// Go's reader quotes with " alone: the two characters change
		// places on the way in, and back in every field read.
		in = &quoteSwap{r: watch, q: o.Quote}
	}
	cr := csv.NewReader(in)
	cr.ReuseRecord = true
	if o.Delimiter != 0 {
		cr.Comma = o.Delimiter
	}
	if o.NoHeader {
		// Every row has the fields --columns names: Go's reader would
		// take the first row's count instead.
		cr.FieldsPerRecord = len(o.Columns)
	}
	var header []string
	var err error
	if o.NoHeader {
		header = o.Columns
	} else {
		header, err = cr.Read()
	}
	if errors.Is(err, io.EOF) {
		return nil, errors.New("the file is empty; a CSV input starts with a header line")
	}
	if err != nil {
		return nil, fmt.Errorf("read header: %w", swapQuotesIn(csvError(err), o.Quote))
	}
	if !o.NoHeader {
		header = swapQuotes(header, o.Quote)
	}
	if header, err = o.rename(header); err != nil {
		return nil, err
	}
	header, err = matchHeader(header, schema)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, name := range header {
		seen[name] = true
	}
	for _, f := range schema.Fields() {
		if !seen[f.Name] {
			return nil, &InputError{Line: 1, Column: f.Name, Err: errors.New("column missing from the header (write it; an empty field is a null, or an empty text in a string column)")}
		}
	}
	rows := &csvRows{r: cr, header: append([]string(nil), header...), cr: watch, null: o.Null, quote: o.Quote, noHeader: o.NoHeader}
	return byField{src: rows, index: fieldIndex(schema)}, nil
}

// quoteSwap exchanges a file's quote character and the double quote as
// they are read.
type quoteSwap struct {
	r io.Reader
	q byte
}

func (s *quoteSwap) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	for i, b := range p[:n] {
		switch b {
		case s.q:
			p[i] = '"'
		case '"':
			p[i] = s.q
		}
	}
	return n, err
}

// swapQuotesIn puts back in a parse error's message what quoteSwap
// exchanged, so that it names the file's own quote.
func swapQuotesIn(err error, q byte) error {
	if err == nil || q == 0 || q == '"' {
		return err
	}
	return errors.New(swapQuotes([]string{err.Error()}, q)[0])
}

// swapQuotes puts back what quoteSwap exchanged in fields read.
func swapQuotes(fields []string, q byte) []string {
	if q == 0 || q == '"' {
		return fields
	}
	for i, f := range fields {
		if strings.IndexByte(f, q) >= 0 || strings.IndexByte(f, '"') >= 0 {
			b := []byte(f)
			for k, c := range b {
				switch c {
				case q:
					b[k] = '"'
				case '"':
					b[k] = q
				}
			}
			fields[i] = string(b)
		}
	}
	return fields
}

// crWatch notes where in the stream each CRLF stands: Go's CSV reader
// turns CRLF into LF even inside a quoted value, so a record that holds one
// before its own line end would be changed.
type crWatch struct {
	r      io.Reader
	offset int64   // bytes passed so far
	lastCR bool    // the last byte passed was a CR
	crlf   []int64 // offsets of the CRs of CRLFs not yet judged
}

func (w *crWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' && w.lastCR {
			w.crlf = append(w.crlf, w.offset+int64(i)-1)
		}
		w.lastCR = b == '\r'
	}
	w.offset += int64(n)
	return n, err
}

// inside reports whether a CRLF stands within the record at [start, end),
// before the line end that closes it; it forgets CRLFs before end.
func (w *crWatch) inside(start, end int64) bool {
	found := false
	k := 0
	for ; k < len(w.crlf) && w.crlf[k] < end; k++ {
		if w.crlf[k] >= start && w.crlf[k] < end-2 {
			found = true
		}
	}
	w.crlf = w.crlf[k:]
	return found
}

func (c *csvRows) next() (int64, map[string]any, error) {
	start := c.r.InputOffset()
	rec, err := c.r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			if errors.Is(pe.Err, csv.ErrFieldCount) && c.r.FieldsPerRecord > 0 && c.noHeader {
				return int64(max(pe.StartLine, 1)), nil, fmt.Errorf("row has %d fields; --columns names %d", len(rec), c.r.FieldsPerRecord)
			}
			return int64(max(pe.StartLine, 1)), nil, swapQuotesIn(csvError(err), c.quote)
		}
		return 0, nil, err
	}
	line, _ := c.r.FieldPos(0)
	crlf := c.cr.inside(start, c.r.InputOffset())
	rec = swapQuotes(rec, c.quote)
	row := make(map[string]any, len(rec))
	for i, v := range rec {
		if crlf && strings.IndexByte(v, '\n') >= 0 {
			return int64(line), nil, &InputError{Column: c.header[i], Err: errors.New("value holds a CRLF line break, which the CSV reader would turn into LF: write the value's line breaks as LF, or the file as NDJSON")}
		}
		if c.null != "" && v == c.null {
			row[c.header[i]] = nil
			continue
		}
		row[c.header[i]] = v
	}
	return int64(line), row, nil
}

// csvError says where on its line a CSV parse error is.
func csvError(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		return fmt.Errorf("row has a different number of fields than the header")
	}
	if pe.Line != pe.StartLine {
		return fmt.Errorf("%w (the record starts here; the error is on line %d)", pe.Err, pe.Line)
	}
	return fmt.Errorf("character %d: %w", pe.Column, pe.Err)
}

type jsonRows struct {
	s     *bufio.Scanner
	line  int64
	plain map[string]int // the schema's plainly written names, by field
	index map[string]int // the schema's names, by field
}

// maxLine bounds one NDJSON line.
const maxLine = 64 << 20

// newJSONRows reads NDJSON objects; a key an object leaves out is null, as
// JSON writers commonly omit nulls.
func newJSONRows(r io.Reader, schema *arrow.Schema) (rowSource, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), maxLine)
	var names []string
	for _, f := range schema.Fields() {
		names = append(names, f.Name)
	}
	return &jsonRows{s: s, plain: plainIndex(names), index: fieldIndex(schema)}, nil
}

// next reads the next object into vals, one value a field (nil where the
// key is left out or null), and returns its line; io.EOF at the end.
func (j *jsonRows) next(vals []any) (int64, error) {
	for j.s.Scan() {
		j.line++
		text := bytes.TrimSpace(j.s.Bytes())
		if len(text) == 0 {
			continue
		}
		clear(vals)
		if fastFields(text, vals, j.plain) {
			for i, v := range vals {
				if v == (jsonNull{}) {
					vals[i] = nil
				}
			}
			return j.line, nil
		}
		clear(vals)
		row, err := decodeObject(text)
		if err != nil {
			return j.line, err
		}
		return j.line, fieldValues(row, j.index, vals)
	}
	if err := j.s.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return j.line + 1, fmt.Errorf("line is longer than %d MiB", maxLine>>20)
		}
		return j.line + 1, err
	}
	return j.line, io.EOF
}

// decodeObject reads one NDJSON line as a JSON object, refusing what
// encoding/json would otherwise change without a word: a key given twice
// (the last would win), invalid UTF-8 and lone surrogate escapes (both
// would become U+FFFD).
func decodeObject(text []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New("malformed JSON: a line must hold one object")
	}
	if tok != json.Delim('{') {
		// Valid JSON of another kind: null is refused as an array is,
		// never read as a row of nulls.
		return nil, fmt.Errorf("the line holds %s, not an object: each line must hold one object, a row", jsonKind(tok))
	}
	row := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("malformed JSON: %v", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("malformed JSON: %v", err)
		}
		if _, dup := row[key]; dup {
			return nil, &InputError{Column: key, Err: errors.New("the object names this column twice")}
		}
		if !utf8.Valid(raw) {
			return nil, &InputError{Column: key, Err: errors.New("value is not valid UTF-8")}
		}
		v, err := decodeNested(raw)
		if err != nil {
			return nil, &InputError{Column: key, Err: err}
		}
		if loneSurrogate(raw) { // in a nested value's strings too
			return nil, &InputError{Column: key, Err: errors.New("value holds a \\u escape that is not a character (a lone surrogate)")}
		}
		row[key] = v // "" is jsonEmpty: JSON has null for a missing value; "" is text
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("malformed JSON: more than one value on the line")
	}
	if !utf8.Valid(text) {
		return nil, errors.New("a column name is not valid UTF-8")
	}
	return row, nil
}

// jsonKind names the kind of JSON value a first token begins.
func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "a stray " + v.String()
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "a value"
}

// loneSurrogate reports whether a JSON string holds a \u escape of half a
// surrogate pair without its other half, which encoding/json would turn
// into U+FFFD.
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // \\, \" and the like: the escaped byte is not an escape
			continue
		}
		r, ok := hex4(raw[i+2:])
		switch {
		case !ok:
		case 0xD800 <= r && r < 0xDC00:
			if len(raw) < i+12 || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return true
			}
			if low, ok := hex4(raw[i+8:]); !ok || low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 11
			continue
		case 0xDC00 <= r && r <= 0xDFFF:
			return true
		}
		i += 5
	}
	return false
}

// hex4 reads four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(v), err == nil
}

func readParquetInput(ctx context.Context, path string, schema *arrow.Schema, fn func(Batch) error) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return &InputError{File: path, Err: err}
	}
	// A file that cannot be opened is not bad input, as with text files.
	f, err := os.Open(abs)
	if err != nil {
		return fmt.Errorf("open input: %w", err)
	}
	_ = f.Close()
	rr, err := parquetio.Open(ctx, icebergio.LocalFS{}, abs)
	if err != nil {
		return &InputError{File: path, Err: err}
	}
	defer rr.Release()
	idx := make([]int, len(schema.Fields()))
	for i, want := range schema.Fields() {
		found := rr.Schema().FieldIndices(want.Name)
		if len(found) == 0 {
			return &InputError{File: path, Column: want.Name, Err: errors.New("column missing")}
		}
		if len(found) > 1 {
			return &InputError{File: path, Column: want.Name, Err: errors.New("the file has this column twice")}
		}
		if got := rr.Schema().Field(found[0]).Type; !arrow.TypeEqual(got, want.Type) && !sameValues(got, want.Type) {
			return &InputError{File: path, Column: want.Name, Err: fmt.Errorf("file has type %s, the table wants %s", got, want.Type)}
		}
		idx[i] = found[0]
	}
	for _, f := range rr.Schema().Fields() {
		if len(schema.FieldIndices(f.Name)) == 0 {
			return &InputError{File: path, Column: f.Name, Err: errors.New("column is not in the table schema")}
		}
	}
	var row int64
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := rr.RecordBatch()
		cols := make([]arrow.Array, len(schema.Fields()))
		for i, f := range schema.Fields() {
			col, err := asType(ctx, rec.Column(idx[i]), f.Type)
			if err != nil {
				releaseAll(cols[:i])
				return &InputError{File: path, Line: row + 1, Column: f.Name, Err: err}
			}
			cols[i] = col
			if bad, why := unfit(col); bad >= 0 {
				releaseAll(cols[:i+1])
				return &InputError{File: path, Line: row + int64(bad) + 1, Column: f.Name, Err: errors.New(why)}
			}
		}
		lines := make([]int64, rec.NumRows())
		for i := range lines {
			row++
			lines[i] = row
		}
		b := Batch{Rec: array.NewRecordBatch(schema, cols, rec.NumRows()), File: path, Line: lines}
		releaseAll(cols)
		err := fn(b)
		b.Rec.Release()
		if err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return &InputError{File: path, Err: err}
	}
	return nil
}

// sameValues reports whether a Parquet column of type got holds values of
// type want as they are: large strings (as Polars writes them) are strings,
// an instant is an instant in any time zone, and 16 fixed bytes (as
// engines that do not mark a uuid write it) are a uuid.
func sameValues(got, want arrow.DataType) bool {
	switch {
	case want.ID() == arrow.EXTENSION && got.ID() == arrow.FIXED_SIZE_BINARY:
		return arrow.TypeEqual(got, want.(arrow.ExtensionType).StorageType())
	case got.ID() == arrow.LARGE_STRING && want.ID() == arrow.STRING:
		return true
	case got.ID() == arrow.TIMESTAMP && want.ID() == arrow.TIMESTAMP:
		g, w := got.(*arrow.TimestampType), want.(*arrow.TimestampType)
		return g.Unit == w.Unit && g.TimeZone != "" && w.TimeZone != ""
	}
	return false
}

// asType returns col as type want, for a column sameValues accepts: the
// caller releases it.
func asType(ctx context.Context, col arrow.Array, want arrow.DataType) (arrow.Array, error) {
	switch {
	case arrow.TypeEqual(col.DataType(), want):
		col.Retain()
		return col, nil
	case want.ID() == arrow.EXTENSION:
		return array.NewExtensionArrayWithStorage(want.(arrow.ExtensionType), col), nil
	case col.DataType().ID() == arrow.TIMESTAMP:
		// The same instants, counted from the same epoch: only the zone
		// to show them in differs.
		d := col.Data()
		data := array.NewData(want, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
		defer data.Release()
		return array.MakeFromData(data), nil
	}
	return compute.CastArray(ctx, col, compute.SafeCastOptions(want))
}

func releaseAll(cols []arrow.Array) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}

// unfit returns the first row of a column whose value its type cannot
// hold as written, and why, or -1: text that is not UTF-8, a decimal with
// more digits than its precision (Parquet stores the type's width and
// would cut it).
func unfit(col arrow.Array) (int, string) {
	switch c := col.(type) {
	case *array.Struct:
		for i := range c.NumField() {
			if bad, why := unfit(c.Field(i)); bad >= 0 {
				return bad, fmt.Sprintf("field %s: %s", c.DataType().(*arrow.StructType).Field(i).Name, why)
			}
		}
	case array.ListLike: // a list or a map: a bad element is its row's
		bad, why := unfit(c.ListValues())
		if bad < 0 {
			return -1, ""
		}
		for r := range c.Len() {
			if start, end := c.ValueOffsets(r); int64(bad) >= start && int64(bad) < end {
				return r, why
			}
		}
	case *array.String:
		for i := 0; i < c.Len(); i++ {
			if c.IsValid(i) && !utf8.ValidString(c.Value(i)) {
				return i, "value is not valid UTF-8; a string column holds text only"
			}
		}
	case *array.Decimal128:
		prec := c.DataType().(*arrow.Decimal128Type).Precision
		// Compared as big integers: arrow-go's FitsInPrecision takes an
		// absolute value, which -2^127 does not have.
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(prec)), nil)
		for i := 0; i < c.Len(); i++ {
			if c.IsValid(i) && c.Value(i).BigInt().CmpAbs(limit) >= 0 {
				return i, fmt.Sprintf("value has more digits than the column's precision %d", prec)
			}
		}
	}
	return -1, ""
}

// parseDate reads a valid YYYY-MM-DD without allocating; anything else
// goes the general way, which says what is wrong.
func parseDate(s string) (arrow.Date32, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	num := func(t string) (int, bool) {
		n := 0
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return 0, false
			}
			n = n*10 + int(t[i]-'0')
		}
		return n, true
	}
	y, ok1 := num(s[:4])
	m, ok2 := num(s[5:7])
	d, ok3 := num(s[8:])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return 0, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d { // the 31st of a 30-day month, say
		return 0, false
	}
	return arrow.Date32FromTime(t), true
}

// parseInt64 reads a plain decimal integer without allocating; anything
// else (a sign, an empty field, an overflow) goes the general way.
func parseInt64(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var x int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		x = x*10 + int64(c-'0')
	}
	return x, true
}
