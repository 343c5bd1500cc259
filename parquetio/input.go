package parquetio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	icebergio "github.com/apache/iceberg-go/io"
)

// Batch is rows of an input file in the table's schema. Line[i] is where row
// i stands in File: the line of a CSV or NDJSON file, the row of a Parquet
// file, counting from 1.
type Batch struct {
	Rec  arrow.RecordBatch
	File string
	Line []int64
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

// ReadInput reads a partition-output file (.csv with a header line, .ndjson
// or .jsonl, or .parquet) as batches in schema. Every value is cast to its
// column's type; the first that does not fit is an *InputError.
func ReadInput(ctx context.Context, path string, schema *arrow.Schema) ([]Batch, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return readText(path, schema, newCSVRows)
	case ".ndjson", ".jsonl", ".json":
		return readText(path, schema, newJSONRows)
	case ".parquet":
		return readParquetInput(ctx, path, schema)
	}
	return nil, &InputError{File: path, Err: errors.New("unknown input format; use .csv, .ndjson, .jsonl or .parquet")}
}

// rowSource yields a text file's rows as column name -> raw value.
type rowSource interface {
	// next returns the line of the row and its values; io.EOF at the end.
	next() (int64, map[string]any, error)
}

func readText(path string, schema *arrow.Schema, open func(io.Reader) (rowSource, error)) ([]Batch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &InputError{File: path, Err: err}
	}
	defer f.Close()
	src, err := open(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, &InputError{File: path, Line: 1, Err: err}
	}

	var out []Batch
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	var lines []int64
	flush := func() {
		if len(lines) == 0 {
			return
		}
		out = append(out, Batch{Rec: rb.NewRecordBatch(), File: path, Line: lines})
		lines = nil
	}
	for {
		line, row, err := src.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			release(out)
			return nil, &InputError{File: path, Line: line, Err: err}
		}
		for name := range row {
			if len(schema.FieldIndices(name)) == 0 {
				release(out)
				return nil, &InputError{File: path, Line: line, Column: name, Err: errors.New("column is not in the table schema")}
			}
		}
		for i, f := range schema.Fields() {
			if err := appendValue(rb.Field(i), f, row[f.Name]); err != nil {
				release(out)
				return nil, &InputError{File: path, Line: line, Column: f.Name, Err: err}
			}
		}
		lines = append(lines, line)
		if len(lines) == inputBatchRows {
			flush()
		}
	}
	flush()
	return out, nil
}

func release(bs []Batch) {
	for _, b := range bs {
		b.Rec.Release()
	}
}

// appendValue casts one raw value (a CSV string, or a decoded JSON value) to
// the column's type.
func appendValue(b array.Builder, f arrow.Field, raw any) error {
	if raw == nil || raw == "" && f.Type.ID() != arrow.STRING {
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
	wrong := func() error { return fmt.Errorf("value %v does not fit type %s", raw, f.Type) }
	switch b := b.(type) {
	case *array.StringBuilder:
		if !isText {
			return wrong()
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
		v, err := strconv.ParseFloat(text, 32)
		if err != nil || !(isText || isNum) {
			return wrong()
		}
		b.Append(float32(v))
	case *array.Float64Builder:
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || !(isText || isNum) {
			return wrong()
		}
		b.Append(v)
	case *array.Date32Builder:
		t, err := time.Parse(time.DateOnly, text)
		if err != nil || !isText {
			return fmt.Errorf("value %v is not a date (YYYY-MM-DD)", raw)
		}
		b.Append(arrow.Date32FromTime(t))
	case *array.TimestampBuilder:
		t, err := time.Parse(time.RFC3339Nano, text)
		if err != nil || !isText {
			return fmt.Errorf("value %v is not an RFC 3339 timestamp", raw)
		}
		unit := f.Type.(*arrow.TimestampType).Unit
		v, err := arrow.TimestampFromTime(t.UTC(), unit)
		if err != nil {
			return err
		}
		b.Append(v)
	case *array.Decimal128Builder:
		dt := f.Type.(*arrow.Decimal128Type)
		v, err := decimal128.FromString(text, dt.Precision, dt.Scale)
		if err != nil || !(isText || isNum) {
			return fmt.Errorf("value %v does not fit %s", raw, f.Type)
		}
		b.Append(v)
	default:
		return fmt.Errorf("type %s is not supported in text input", f.Type)
	}
	return nil
}

type csvRows struct {
	r      *csv.Reader
	header []string
}

func newCSVRows(r io.Reader) (rowSource, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	return &csvRows{r: cr, header: append([]string(nil), header...)}, nil
}

func (c *csvRows) next() (int64, map[string]any, error) {
	rec, err := c.r.Read()
	line, _ := c.r.FieldPos(0)
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return int64(pe.Line), nil, pe.Err
		}
		return int64(line), nil, err
	}
	row := make(map[string]any, len(rec))
	for i, v := range rec {
		row[c.header[i]] = v
	}
	return int64(line), row, nil
}

type jsonRows struct {
	s    *bufio.Scanner
	line int64
}

func newJSONRows(r io.Reader) (rowSource, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), 64<<20)
	return &jsonRows{s: s}, nil
}

func (j *jsonRows) next() (int64, map[string]any, error) {
	for j.s.Scan() {
		j.line++
		text := bytes.TrimSpace(j.s.Bytes())
		if len(text) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		var row map[string]any
		if err := dec.Decode(&row); err != nil {
			return j.line, nil, fmt.Errorf("malformed JSON: %w", err)
		}
		if dec.More() {
			return j.line, nil, errors.New("malformed JSON: more than one value on the line")
		}
		return j.line, row, nil
	}
	if err := j.s.Err(); err != nil {
		return j.line, nil, err
	}
	return j.line, nil, io.EOF
}

func readParquetInput(ctx context.Context, path string, schema *arrow.Schema) ([]Batch, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &InputError{File: path, Err: err}
	}
	rr, err := Open(ctx, icebergio.LocalFS{}, abs)
	if err != nil {
		return nil, &InputError{File: path, Err: err}
	}
	defer rr.Release()
	for _, want := range schema.Fields() {
		idx := rr.Schema().FieldIndices(want.Name)
		if len(idx) == 0 {
			return nil, &InputError{File: path, Column: want.Name, Err: errors.New("column missing")}
		}
		if got := rr.Schema().Field(idx[0]).Type; !arrow.TypeEqual(got, want.Type) {
			return nil, &InputError{File: path, Column: want.Name, Err: fmt.Errorf("file has type %s, the table wants %s", got, want.Type)}
		}
	}
	var out []Batch
	var row int64
	for rr.Next() {
		rec := rr.RecordBatch()
		cols := make([]arrow.Array, len(schema.Fields()))
		for i, f := range schema.Fields() {
			cols[i] = rec.Column(rr.Schema().FieldIndices(f.Name)[0])
		}
		lines := make([]int64, rec.NumRows())
		for i := range lines {
			row++
			lines[i] = row
		}
		out = append(out, Batch{Rec: array.NewRecordBatch(schema, cols, rec.NumRows()), File: path, Line: lines})
	}
	if err := rr.Err(); err != nil {
		release(out)
		return nil, &InputError{File: path, Err: err}
	}
	return out, nil
}
