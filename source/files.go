package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/verify"
)

// Files serves the rows of input files, split by partition value. Rows of
// undeclared partitions are kept as findings. It holds the inputs in
// memory; a job that produces more than fits should stream through a
// Source of its own.
//
// Each input batch is regrouped by partition with one take and then cut
// into one slice per partition, so that memory and time depend on the rows
// and the partitions, not on how often the input switches between them.
type Files struct {
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
	_ Source        = (*Files)(nil)
	_ Locator       = (*Files)(nil)
	_ StrayReporter = (*Files)(nil)
)

// ReadFiles reads every input file and splits its rows by the declared
// partitions. The caller releases the Files.
func ReadFiles(ctx context.Context, c *contract.Contract, declared []string, files []string) (*Files, error) {
	src := &Files{schema: c.Arrow, parts: map[string][]slice{}}
	owned := map[string]bool{}
	keys := make([]string, len(declared))
	for i, d := range declared {
		owned[d] = true
		keys[i] = verify.DisplayKey(c.Partition.Key(d))
	}
	src.declared = describeKeys(keys)
	for _, f := range files {
		err := ReadInput(ctx, f, c.Arrow, func(b Batch) error {
			return src.split(ctx, c, owned, b)
		})
		if err != nil {
			src.Release()
			return nil, err
		}
	}
	return src, nil
}

func (s *Files) split(ctx context.Context, c *contract.Contract, owned map[string]bool, b Batch) error {
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

func (s *Files) addStray(c *contract.Contract, v string, ok bool, file string, line int64) {
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
func (s *Files) Open(_ context.Context, partition string) (array.RecordReader, error) {
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
func (s *Files) Locate(partition string, row int64) string {
	for _, sl := range s.parts[partition] {
		if row <= int64(len(sl.line)) {
			return fmt.Sprintf("%s:%d", sl.file, sl.line[row-1])
		}
		row -= int64(len(sl.line))
	}
	return ""
}

// Stray returns findings for rows of undeclared partitions.
func (s *Files) Stray() []verify.Finding {
	if s.nstray > len(s.stray) {
		return append(s.stray, verify.Finding{Kind: verify.KindOutside,
			Message: fmt.Sprintf("%d more rows outside the declared partitions", s.nstray-len(s.stray))})
	}
	return s.stray
}

// Release frees the rows held.
func (s *Files) Release() {
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

// CheckFiles checks, before anything is read, that every input file exists
// and has a format lakeswap reads.
func CheckFiles(files []string) error {
	for _, f := range files {
		info, err := os.Stat(f)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("input %s does not exist", f)
		}
		if err != nil {
			return err
		}
		if info.IsDir() {
			return fmt.Errorf("input %s is a folder; name the files in it", f)
		}
		if _, err := InputFormat(f); err != nil {
			return err
		}
	}
	return nil
}

// Describe names input files for a run's record: base names only,
// so no local path or credential-bearing URL lands in the table's history.
func Describe(files []string) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	s := strings.Join(names, ",")
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return "files:" + s
}
