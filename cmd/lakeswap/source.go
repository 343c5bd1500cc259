package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// fileSource serves the rows of the input files a user hands to publish, split
// by partition value. Rows of undeclared partitions are kept as findings.
// It holds the inputs in memory; a job that produces more than fits should
// use the Go API's streaming Source.
//
// Each input batch is regrouped by partition with one take and then cut
// into one slice per partition, so that memory and time depend on the rows
// and the partitions, not on how often the input switches between them.
type fileSource struct {
	schema *arrow.Schema
	parts  map[string][]slice
	stray  []verify.Finding
	nstray int
	// declared lists the declared partitions for stray-row findings.
	declared string
}

// slice is the rows of one partition from one input batch, in input order.
type slice struct {
	rec  arrow.RecordBatch
	file string
	line []int64
}

var (
	_ swap.Source        = (*fileSource)(nil)
	_ swap.Locator       = (*fileSource)(nil)
	_ swap.StrayReporter = (*fileSource)(nil)
)

// readFiles reads every input file and splits its rows by partition.
func readFiles(ctx context.Context, c *verify.Contract, declared []string, files []string) (*fileSource, error) {
	src := &fileSource{schema: c.Arrow, parts: map[string][]slice{}}
	owned := map[string]bool{}
	keys := make([]string, len(declared))
	for i, d := range declared {
		owned[d] = true
		keys[i] = verify.DisplayKey(c.Partition.Key(d))
	}
	src.declared = describeKeys(keys)
	for _, f := range files {
		err := parquetio.ReadInput(ctx, f, c.Arrow, func(b parquetio.Batch) error {
			return src.split(ctx, c, owned, b)
		})
		if err != nil {
			src.release()
			return nil, err
		}
	}
	return src, nil
}

func (s *fileSource) split(ctx context.Context, c *verify.Contract, owned map[string]bool, b parquetio.Batch) error {
	valueOf, err := c.Partition.ValueFunc(b.Rec.Column(c.Partition.Column))
	if err != nil {
		return fmt.Errorf("%s: %w", b.File, err)
	}
	n := int(b.Rec.NumRows())
	// Number the batch's partitions in order of first appearance; -1 is a
	// row no declared partition owns.
	group := make([]int32, n)
	var values []string
	ids := map[string]int32{}
	counts := []int{}
	for r := range n {
		v, ok := valueOf(r)
		if !ok || !owned[v] {
			group[r] = -1
			s.addStray(c, v, ok, b.File, b.Line[r])
			continue
		}
		id, seen := ids[v]
		if !seen {
			id = int32(len(values))
			ids[v] = id
			values = append(values, v)
			counts = append(counts, 0)
		}
		group[r] = id
		counts[id]++
	}
	if len(values) == 1 && counts[0] == n { // the common case: a sorted input
		b.Rec.Retain()
		s.parts[values[0]] = append(s.parts[values[0]], slice{rec: b.Rec, file: b.File, line: b.Line})
		return nil
	}
	// A stable counting sort of the rows by partition, then one take.
	start := make([]int, len(values)+1)
	for i, c := range counts {
		start[i+1] = start[i] + c
	}
	next := append([]int(nil), start[:len(values)]...)
	order := make([]int64, start[len(values)])
	lines := make([]int64, len(order))
	for r, id := range group {
		if id < 0 {
			continue
		}
		order[next[id]], lines[next[id]] = int64(r), b.Line[r]
		next[id]++
	}
	sorted, err := take(ctx, b.Rec, order)
	if err != nil {
		return fmt.Errorf("%s: regroup rows by partition: %w", b.File, err)
	}
	defer sorted.Release()
	for id, v := range values {
		lo, hi := start[id], start[id+1]
		s.parts[v] = append(s.parts[v], slice{rec: sorted.NewSlice(int64(lo), int64(hi)), file: b.File, line: lines[lo:hi]})
	}
	return nil
}

// take returns the rows of rec at the given indices, in that order.
func take(ctx context.Context, rec arrow.RecordBatch, rows []int64) (arrow.RecordBatch, error) {
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	defer ib.Release()
	ib.AppendValues(rows, nil)
	idx := ib.NewArray()
	defer idx.Release()
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, col := range rec.Columns() {
		var err error
		if cols[i], err = compute.TakeArray(ctx, col, idx); err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(len(rows))), nil
}

func (s *fileSource) addStray(c *verify.Contract, v string, ok bool, file string, line int64) {
	s.nstray++
	if len(s.stray) >= verify.MaxFindings {
		return
	}
	key := "null"
	if ok {
		key = c.Partition.Key(v)
	}
	s.stray = append(s.stray, verify.Finding{Kind: verify.KindOutside, Partition: key,
		Where: fmt.Sprintf("%s:%d", file, line), Column: c.Partition.Name,
		Message: "row is outside the partitions this run declares (" + s.declared + ")"})
}

// openBatchRows is the fewest rows Open hands over at once where the input
// allows: slices of a partition that switched often are joined up to it.
const openBatchRows = 64 << 10

// Open returns a partition's rows in input order.
func (s *fileSource) Open(_ context.Context, partition string) (array.RecordReader, error) {
	var recs []arrow.RecordBatch
	release := func() {
		for _, r := range recs {
			r.Release()
		}
	}
	pieces := s.parts[partition]
	for i := 0; i < len(pieces); {
		j, rows := i, int64(0)
		for j < len(pieces) && (j == i || rows+pieces[j].rec.NumRows() <= openBatchRows) {
			rows += pieces[j].rec.NumRows()
			j++
		}
		rec, err := concat(s.schema, pieces[i:j])
		if err != nil {
			release()
			return nil, err
		}
		recs = append(recs, rec)
		i = j
	}
	rr, err := array.NewRecordReader(s.schema, recs)
	release() // the reader holds its own references
	return rr, err
}

// concat joins slices into one batch.
func concat(schema *arrow.Schema, pieces []slice) (arrow.RecordBatch, error) {
	if len(pieces) == 1 {
		pieces[0].rec.Retain()
		return pieces[0].rec, nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	var rows int64
	for _, p := range pieces {
		rows += p.rec.NumRows()
	}
	parts := make([]arrow.Array, len(pieces))
	for i := range cols {
		for k, p := range pieces {
			parts[k] = p.rec.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			for _, done := range cols[:i] {
				done.Release()
			}
			return nil, err
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// Locate names the file and line of a partition's row (counting from 1).
func (s *fileSource) Locate(partition string, row int64) string {
	for _, sl := range s.parts[partition] {
		if row <= int64(len(sl.line)) {
			return fmt.Sprintf("%s:%d", sl.file, sl.line[row-1])
		}
		row -= int64(len(sl.line))
	}
	return ""
}

// Stray returns findings for rows of undeclared partitions.
func (s *fileSource) Stray() []verify.Finding {
	if s.nstray > len(s.stray) {
		return append(s.stray, verify.Finding{Kind: verify.KindOutside,
			Message: fmt.Sprintf("%d more rows outside the declared partitions", s.nstray-len(s.stray))})
	}
	return s.stray
}

func (s *fileSource) release() {
	for _, sl := range s.parts {
		for _, x := range sl {
			x.rec.Release()
		}
	}
	s.parts = nil
}

// describeKeys lists sorted partition keys, a long list by its ends.
func describeKeys(keys []string) string {
	slices.Sort(keys)
	if len(keys) > 6 {
		keys = append(keys[:3], "...", keys[len(keys)-1])
	}
	return strings.Join(keys, ", ")
}
