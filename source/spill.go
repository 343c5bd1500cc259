package source

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// spill keeps the rows of each partition in a file of its own on local
// disk, so that an input far larger than memory, in any row order, can be
// handed to the stager one partition at a time. Each row carries where it
// came from (input file and line) in two trailing columns.
//
// Rows wait in memory until a partition has a batch's worth or all waiting
// rows pass the buffer budget; then they are appended to the partition's
// file as one Arrow IPC stream. A file is a sequence of such streams, and
// no file stays open between appends, so the partitions a run may declare
// are not bounded by open file handles.
type spill struct {
	dir    string
	data   *arrow.Schema // the table's columns
	schema *arrow.Schema // data + file + line
	budget int64         // bytes of waiting rows before all are written

	parts   map[string]*spillPart
	waiting int64 // bytes of rows waiting, over all partitions
}

type spillPart struct {
	path    string
	waiting []arrow.RecordBatch
	rows    int64 // rows waiting
	bytes   int64 // their estimated size
	total   int64 // rows written or waiting
}

// Location columns of the spilled rows.
const (
	spillFileColumn = "__lakeswap_file"
	spillLineColumn = "__lakeswap_line"
)

func newSpill(dir string, data *arrow.Schema, budget int64) *spill {
	fields := append(append([]arrow.Field(nil), data.Fields()...),
		arrow.Field{Name: spillFileColumn, Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: spillLineColumn, Type: arrow.PrimitiveTypes.Int64})
	return &spill{dir: dir, data: data, schema: arrow.NewSchema(fields, nil), budget: budget, parts: map[string]*spillPart{}}
}

// add keeps rows of one partition, read from input file number file at
// the given lines. It takes its own reference to rec.
func (s *spill) add(value string, rec arrow.RecordBatch, file int32, lines []int64, rowBytes int64) error {
	p := s.parts[value]
	if p == nil {
		p = &spillPart{path: filepath.Join(s.dir, fmt.Sprintf("p%06d.arrows", len(s.parts)))}
		s.parts[value] = p
	}
	n := rec.NumRows()
	fb := array.NewInt32Builder(memory.DefaultAllocator)
	defer fb.Release()
	fb.Reserve(int(n))
	for range n {
		fb.UnsafeAppend(file)
	}
	fa := fb.NewArray()
	defer fa.Release()
	lb := array.NewInt64Builder(memory.DefaultAllocator)
	defer lb.Release()
	lb.AppendValues(lines, nil)
	la := lb.NewArray()
	defer la.Release()
	cols := append(append([]arrow.Array(nil), rec.Columns()...), fa, la)
	p.waiting = append(p.waiting, array.NewRecordBatch(s.schema, cols, n))
	p.rows += n
	p.total += n
	size := n * (rowBytes + 12)
	p.bytes += size
	s.waiting += size
	if p.rows >= openBatchRows {
		if err := s.flush(p); err != nil {
			return err
		}
	}
	if s.waiting > s.budget {
		for _, q := range s.parts {
			if err := s.flush(q); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush appends a partition's waiting rows to its file as one stream.
func (s *spill) flush(p *spillPart) error {
	if len(p.waiting) == 0 {
		return nil
	}
	rec, err := concatBatches(s.schema, p.waiting)
	for _, r := range p.waiting {
		r.Release()
	}
	s.waiting -= p.bytes
	p.waiting, p.rows, p.bytes = nil, 0, 0
	if err != nil {
		return err
	}
	defer rec.Release()
	f, err := os.OpenFile(p.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spill rows to local disk: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := ipc.NewWriter(bw, ipc.WithSchema(s.schema))
	err = w.Write(rec)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("spill rows to local disk (%s): %w", s.dir, err)
	}
	return nil
}

// finish writes every waiting row.
func (s *spill) finish() error {
	for _, p := range s.parts {
		if err := s.flush(p); err != nil {
			return err
		}
	}
	return nil
}

// rows is how many rows a partition holds.
func (s *spill) rows(value string) int64 {
	if p := s.parts[value]; p != nil {
		return p.total
	}
	return 0
}

// open reads a partition's rows back in the order they were added, as
// batches of the table's columns.
func (s *spill) open(value string) (array.RecordReader, error) {
	p := s.parts[value]
	if p == nil || p.total == 0 {
		return array.NewRecordReader(s.data, nil)
	}
	return openSpillFile(p.path, s.data)
}

// locations reads where each of a partition's rows came from.
func (s *spill) locations(value string) (files []int32, lines []int64, err error) {
	p := s.parts[value]
	if p == nil || p.total == 0 {
		return nil, nil, nil
	}
	r, err := openSpillFile(p.path, nil)
	if err != nil {
		return nil, nil, err
	}
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		n := rec.NumCols()
		files = append(files, rec.Column(int(n-2)).(*array.Int32).Int32Values()...)
		lines = append(lines, rec.Column(int(n-1)).(*array.Int64).Int64Values()...)
	}
	return files, lines, r.Err()
}

// spillReader reads the streams of a spill file one after another; with a
// data schema it hands out the table's columns only.
type spillReader struct {
	refs int64
	f    *os.File
	br   *bufio.Reader
	ipc  *ipc.Reader
	data *arrow.Schema
	cur  arrow.RecordBatch
	err  error
	once sync.Once
}

func openSpillFile(path string, data *arrow.Schema) (*spillReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read spilled rows: %w", err)
	}
	r := &spillReader{refs: 1, f: f, br: bufio.NewReaderSize(f, 1<<20), data: data}
	if r.ipc, err = ipc.NewReader(r.br); err != nil {
		f.Close()
		return nil, fmt.Errorf("read spilled rows: %w", err)
	}
	if data == nil {
		r.data = r.ipc.Schema()
	}
	return r, nil
}

func (r *spillReader) Schema() *arrow.Schema { return r.data }

func (r *spillReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for r.err == nil {
		if r.ipc.Next() {
			rec := r.ipc.RecordBatch()
			if int(rec.NumCols()) == r.data.NumFields() {
				rec.Retain()
				r.cur = rec
			} else {
				r.cur = array.NewRecordBatch(r.data, rec.Columns()[:r.data.NumFields()], rec.NumRows())
			}
			return true
		}
		if err := r.ipc.Err(); err != nil {
			r.err = fmt.Errorf("read spilled rows: %w", err)
			return false
		}
		r.ipc.Release()
		r.ipc = nil
		if _, err := r.br.Peek(1); errors.Is(err, io.EOF) {
			return false
		}
		next, err := ipc.NewReader(r.br)
		if err != nil {
			r.err = fmt.Errorf("read spilled rows: %w", err)
			return false
		}
		r.ipc = next
	}
	return false
}

func (r *spillReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *spillReader) Record() arrow.RecordBatch      { return r.cur }
func (r *spillReader) Err() error                     { return r.err }
func (r *spillReader) Retain()                        { r.refs++ }

func (r *spillReader) Release() {
	r.refs--
	if r.refs > 0 {
		return
	}
	r.once.Do(func() {
		if r.cur != nil {
			r.cur.Release()
		}
		if r.ipc != nil {
			r.ipc.Release()
		}
		r.f.Close()
	})
}

// concatBatches joins batches of one schema into one.
func concatBatches(schema *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	parts := make([]arrow.Array, len(recs))
	for i := range cols {
		for k, r := range recs {
			parts[k] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			releaseAll(cols[:i])
			return nil, err
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(schema, cols, rows)
	releaseAll(cols)
	return rec, nil
}
