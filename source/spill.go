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

// spill holds the rows of each partition until it is staged: in memory
// while all of them fit the budget, and past it in a file of each
// partition's own on local disk, so that an input far larger than memory,
// in any row order, can be handed to the stager one partition at a time.
// Each row carries where it came from (input file and line) in two
// trailing columns.
//
// A partition's rows arrive as slices of input batches; a batch's worth is
// joined into one batch, so that memory holds few small pieces. When the
// rows held pass the budget, every partition's rows are appended to its
// file as one Arrow IPC stream (writing to disk costs CPU: about 5 ms a MB
// on the machine lakeswap is measured on). A file is a sequence of such
// streams, and no file stays open between appends, so the partitions a run
// may declare are not bounded by open file handles. A partition reads back
// its file, then the rows still in memory.
type spill struct {
	dir    string
	data   *arrow.Schema // the table's columns
	schema *arrow.Schema // data + file + line
	budget int64         // bytes of rows held in memory before all are written

	parts map[string]*spillPart
	held  int64 // bytes of rows in memory, over all partitions

	mu sync.Mutex // guards freeing partitions read to the end, in parallel
}

type spillPart struct {
	path    string
	onDisk  bool
	kept    []arrow.RecordBatch // joined batches in memory, after those on disk
	waiting []arrow.RecordBatch // slices not yet joined
	rows    int64               // rows waiting
	bytes   int64               // bytes in memory, kept and waiting
	total   int64               // rows, on disk or in memory
	freed   bool                // read to the end, its rows in memory freed
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
// the given lines. It takes its own reference to rec, and keeps lines.
func (s *spill) add(value string, rec arrow.RecordBatch, file int32, lines []int64, rowBytes int64) error {
	p := s.parts[value]
	if p == nil {
		p = &spillPart{path: filepath.Join(s.dir, fmt.Sprintf("p%06d.arrows", len(s.parts)))}
		s.parts[value] = p
	}
	n := rec.NumRows()
	files := make([]int32, n)
	for i := range files {
		files[i] = file
	}
	fa := array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, int(n),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(files))}, nil, 0, 0))
	defer fa.Release()
	la := array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, int(n),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(lines))}, nil, 0, 0))
	defer la.Release()
	cols := append(append([]arrow.Array(nil), rec.Columns()...), fa, la)
	p.waiting = append(p.waiting, array.NewRecordBatch(s.schema, cols, n))
	p.rows += n
	p.total += n
	size := n * (rowBytes + 12)
	p.bytes += size
	s.held += size
	if p.rows >= openBatchRows {
		if err := s.join(p); err != nil {
			return err
		}
	}
	if s.held > s.budget {
		for _, q := range s.parts {
			if err := s.flush(q); err != nil {
				return err
			}
		}
	}
	return nil
}

// join makes a partition's waiting slices one batch.
func (s *spill) join(p *spillPart) error {
	if len(p.waiting) == 0 {
		return nil
	}
	rec, err := concatBatches(s.schema, p.waiting)
	releaseBatches(p.waiting)
	p.waiting, p.rows = nil, 0
	if err != nil {
		return err
	}
	p.kept = append(p.kept, rec)
	return nil
}

// flush appends a partition's rows in memory to its file as one stream.
func (s *spill) flush(p *spillPart) error {
	if err := s.join(p); err != nil {
		return err
	}
	if len(p.kept) == 0 {
		return nil
	}
	defer func() {
		releaseBatches(p.kept)
		s.held -= p.bytes
		p.kept, p.bytes = nil, 0
	}()
	f, err := os.OpenFile(p.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spill rows to local disk: %w", err)
	}
	p.onDisk = true
	bw := bufio.NewWriterSize(f, 1<<20)
	w := ipc.NewWriter(bw, ipc.WithSchema(s.schema))
	for _, rec := range p.kept {
		if err = w.Write(rec); err != nil {
			break
		}
	}
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

// finish joins every partition's last slices.
func (s *spill) finish() error {
	for _, p := range s.parts {
		if err := s.join(p); err != nil {
			return err
		}
	}
	return nil
}

// release frees the rows held in memory.
func (s *spill) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.parts {
		releaseBatches(p.waiting)
		releaseBatches(p.kept)
		p.waiting, p.kept = nil, nil
	}
	s.held = 0
}

func releaseBatches(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// rows is how many rows a partition holds.
func (s *spill) rows(value string) int64 {
	if p := s.parts[value]; p != nil {
		return p.total
	}
	return 0
}

// open reads a partition's rows back in the order they were added, as
// batches of the table's columns. Once a reader has handed over every row
// and is released, the partition's rows held in memory are freed, so that
// staging one partition after another gives memory back as it goes; the
// partition cannot be opened again.
func (s *spill) open(value string) (array.RecordReader, error) {
	p := s.parts[value]
	if p == nil || p.total == 0 {
		return array.NewRecordReader(s.data, nil)
	}
	s.mu.Lock()
	freed := p.freed
	s.mu.Unlock()
	if freed {
		return nil, fmt.Errorf("partition %q was read already; its rows are gone", value)
	}
	r, err := openSpillFile(p, s.data)
	if err != nil {
		return nil, err
	}
	r.onEnd = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		releaseBatches(p.kept)
		p.kept, p.freed = nil, true
	}
	return r, nil
}

// locations reads where each of a partition's rows came from.
func (s *spill) locations(value string) (files []int32, lines []int64, err error) {
	p := s.parts[value]
	if p == nil || p.total == 0 {
		return nil, nil, nil
	}
	s.mu.Lock()
	r, err := openSpillFile(p, s.schema)
	s.mu.Unlock()
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

// spillReader reads a partition's rows: the streams of its file one after
// another, then the batches in memory. It hands out the columns of its
// schema, the first of the spilled ones.
type spillReader struct {
	refs int64
	f    *os.File
	br   *bufio.Reader
	ipc  *ipc.Reader
	tail []arrow.RecordBatch
	// onEnd runs at release if every row was handed over.
	onEnd func()
	ended bool
	data  *arrow.Schema
	cur   arrow.RecordBatch
	err   error
	once  sync.Once
}

func openSpillFile(p *spillPart, data *arrow.Schema) (*spillReader, error) {
	r := &spillReader{refs: 1, data: data, tail: p.kept}
	if !p.onDisk {
		return r, nil
	}
	f, err := os.Open(p.path)
	if err != nil {
		return nil, fmt.Errorf("read spilled rows: %w", err)
	}
	r.f, r.br = f, bufio.NewReaderSize(f, 1<<20)
	if r.ipc, err = ipc.NewReader(r.br); err != nil {
		f.Close()
		return nil, fmt.Errorf("read spilled rows: %w", err)
	}
	return r, nil
}

func (r *spillReader) Schema() *arrow.Schema { return r.data }

// columns takes the reader's columns of a spilled batch.
func (r *spillReader) columns(rec arrow.RecordBatch) arrow.RecordBatch {
	if int(rec.NumCols()) == r.data.NumFields() {
		rec.Retain()
		return rec
	}
	return array.NewRecordBatch(r.data, rec.Columns()[:r.data.NumFields()], rec.NumRows())
}

func (r *spillReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for r.err == nil {
		if r.ipc == nil {
			if len(r.tail) == 0 {
				r.ended = true
				return false
			}
			r.cur = r.columns(r.tail[0])
			r.tail = r.tail[1:]
			return true
		}
		if r.ipc.Next() {
			r.cur = r.columns(r.ipc.RecordBatch())
			return true
		}
		if err := r.ipc.Err(); err != nil {
			r.err = fmt.Errorf("read spilled rows: %w", err)
			return false
		}
		r.ipc.Release()
		r.ipc = nil
		if _, err := r.br.Peek(1); errors.Is(err, io.EOF) {
			continue // on to the rows in memory
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
		if r.f != nil {
			r.f.Close()
		}
		if r.ended && r.err == nil && r.onEnd != nil {
			r.onEnd()
		}
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
