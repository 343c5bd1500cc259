package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/verify"
)

// Files serves the rows of input files, split by partition value. Rows of
// undeclared partitions are kept as findings. Whatever the inputs' size and
// row order, memory stays bounded: ReadFiles reads every input once and
// spills each partition's rows to a local file of its own (Options.SpillDir),
// and Open reads one partition back.
//
// Each input batch is regrouped by partition with one take and then cut
// into one slice per partition, so that time depends on the rows and the
// partitions, not on how often the input switches between them.
type Files struct {
	schema  *arrow.Schema
	spill   *spill
	dir     string // the spill folder, removed by Release
	inputs  []input
	objects []Object
	// stray counts the rows of undeclared partitions, by the partition
	// they fall in, in order of first appearance; past MaxFindings
	// partitions, the rest are counted together.
	stray      []*strayRows
	strayOf    map[string]*strayRows
	strayOther int
	// declared lists the declared partitions for stray-row findings, and
	// column names the partition column.
	declared, column string
	// utc says, where the partitions are a time transform of a timestamp
	// with time zone, that their values are UTC times.
	utc string

	mu        sync.Mutex
	locations map[string]*located // partition -> where its rows came from
}

// input is one file read, and where its records start when its rows are
// numbered by record (a CSV file read by the engine) rather than by line.
type input struct {
	path    string
	records *recordLines
	perLine float64 // bytes of the file a line takes, for progress; 0: unknown
}

// inputSizes are the inputs' sizes as stored: a local file's on disk, an
// object's as listed; 0 where unknown.
func inputSizes(files []string, objects map[string]Object) []int64 {
	out := make([]int64, len(files))
	for i, f := range files {
		if o, ok := objects[f]; ok {
			out[i] = o.Size
		} else if st, err := os.Stat(f); err == nil {
			out[i] = st.Size()
		}
	}
	return out
}

type strayRows struct {
	key   string // the rows' partition key, "null" for none
	count int
	file  int32 // where the first of them is
	line  int64
}

type located struct {
	files []int32
	lines []int64
	err   error
}

// Options bound how ReadFiles uses memory and local disk.
type Options struct {
	// SpillDir is where partitions' rows wait on local disk between reading
	// and staging; empty means the system's temporary folder. It needs room
	// for about the inputs' size, uncompressed.
	SpillDir string
	// CSV reads CSV inputs of another form than the plain one.
	CSV CSVOptions
	// MemoryLimit is the memory the whole process may use, in bytes, of
	// which the reader takes its shares; 0 means 512 MiB.
	MemoryLimit int64
	// Store reads the inputs that are objects (s3://), as Objects lists
	// them by URL: each is copied to the spill folder as it arrives, only
	// if it is still as listed, read, and removed.
	Store   ObjectStore
	Objects map[string]Object
	// Read, when set, hears how many rows each batch read held and how
	// many bytes of the inputs (as stored) the read has gone through,
	// estimated within a file from its lines; Size, before the first
	// batch, the inputs' bytes in all. Both are for a progress display,
	// called from one goroutine at a time.
	Read func(rows, bytes int64)
	Size func(bytes int64)
}

var (
	_ Source         = (*Files)(nil)
	_ Locator        = (*Files)(nil)
	_ StrayReporter  = (*Files)(nil)
	_ ObjectReporter = (*Files)(nil)
)

// idleReadMax is the most input bytes a read may have gone through for
// its engine to be kept idle for the next read.
const idleReadMax = 64 << 20

// ReadFiles reads every input file once, checks each value against the
// table's schema, and splits the rows by the declared partitions. The
// caller releases the Files, which removes what it spilled.
func ReadFiles(ctx context.Context, c *contract.Contract, declared contract.Selection, files []string, opts Options) (*Files, error) {
	src, limit, err := newFiles(c, declared, opts, "the inputs'")
	if err != nil {
		return nil, err
	}
	eng, err := readerEngine(src.dir, limit/4)
	if err != nil {
		src.Release()
		return nil, err
	}
	sizes := inputSizes(files, opts.Objects)
	reusable := false // read through, and small: the engine is kept idle
	defer func() {
		if reusable {
			eng.release()
		} else {
			eng.close()
		}
	}()
	if opts.Size != nil {
		var total int64
		for _, n := range sizes {
			total += n
		}
		opts.Size(total)
	}
	var done int64 // bytes of the inputs read before this one
	for i, f := range files {
		in := input{path: f}
		read := func(b Batch) error {
			in.records, b.File = b.records, f
			if opts.Read != nil && len(b.Line) > 0 {
				last := b.Line[len(b.Line)-1]
				if b.records != nil {
					last = b.records.line(last)
				}
				opts.Read(b.Rec.NumRows(), done+min(int64(float64(last)*in.perLine), sizes[i]))
			}
			return src.split(ctx, c, declared, int32(i), b)
		}
		if err := src.read(ctx, eng, f, i, c.Arrow, opts, &in, read); err != nil {
			src.Release()
			return nil, err
		}
		done += sizes[i]
		if opts.Read != nil {
			opts.Read(0, done)
		}
		src.inputs = append(src.inputs, in)
	}
	reusable = ctx.Err() == nil && done < idleReadMax
	if err := src.spill.finish(); err != nil {
		src.Release()
		return nil, err
	}
	return src, nil
}

// heldRowsMax is the most bytes of rows kept in memory until staged,
// whatever the limit: past it, rows wait on local disk. Measured on 30M
// rows (0.86 GB of CSV) under the default limit, half of a 23 GiB
// machine: holding a quarter of it took 24.3 s (CSV) and 16.8 s (Parquet)
// at 2.9 and 2.7 GiB peak; holding 256 MiB, 19.0 s and 12.9 s at 0.8 and
// 1.0 GiB (64 MiB: 20.4 s and 13.9 s; 1 GiB: 26.0 s and 15.2 s). A large
// heap costs more in page faults and collection than the disk does.
const heldRowsMax = 256 << 20

// newFiles makes the Files rows of the declared partitions are split into,
// with its spill folder, and says which partitions the run owns and the
// memory limit it works within. what names the rows in messages.
func newFiles(c *contract.Contract, declared contract.Selection, opts Options, what string) (*Files, int64, error) {
	limit := opts.MemoryLimit
	if limit <= 0 {
		limit = 512 << 20
	}
	dir, err := os.MkdirTemp(opts.SpillDir, "lakeswap-spill-")
	if err != nil {
		return nil, 0, fmt.Errorf("make a spill folder for %s rows: %w", what, err)
	}
	// Of the process's limit, the CSV engine takes a quarter (outside Go's
	// heap) and rows held in memory a quarter, up to heldRowsMax; the rest
	// is for the batches in flight and the stager.
	src := &Files{schema: c.Arrow, dir: dir, spill: newSpill(dir, c.Arrow, min(max(limit/4, 8<<20), heldRowsMax)), locations: map[string]*located{}}
	src.declared, src.column = declared.String(), c.Partition.Fields[0].Name
	src.utc = utcNote(c.Partition)
	if declared.Values != nil {
		keys := make([]string, len(declared.Values))
		for i, d := range declared.Values {
			keys[i] = verify.DisplayKey(c.Partition.Key(d))
		}
		src.declared = describeKeys(keys)
	}
	return src, limit, nil
}

// read reads one input, an object by a local copy of it.
func (s *Files) read(ctx context.Context, eng *engine, f string, n int, schema *arrow.Schema, opts Options, in *input, fn func(Batch) error) error {
	format, err := InputFormat(f)
	if err != nil {
		return err
	}
	local := f
	if IsObjectURL(f) {
		o, ok := opts.Objects[f]
		if !ok || opts.Store == nil {
			return fmt.Errorf("input %s was not listed: list it with ListObjects", f)
		}
		if local, err = download(ctx, opts.Store, o, s.dir, n); err != nil {
			return err
		}
		defer os.Remove(local)
		s.objects = append(s.objects, o)
	}
	if opts.Read != nil {
		in.perLine = bytesPerLine(local, inputSizes([]string{f}, opts.Objects)[0])
	}
	if format == "csv" && eng != nil && opts.CSV.Plain() {
		err = eng.readCSV(ctx, local, schema, fn)
	} else {
		// A CSV file of another form is read by lakeswap's own reader.
		err = alongside(ctx, func(ctx context.Context, fn func(Batch) error) error {
			return ReadInputWith(ctx, local, schema, opts.CSV, fn)
		}, fn)
	}
	var ie *InputError
	if errors.As(err, &ie) && ie.File == local {
		ie.File = f // name the object, not its copy
	}
	return err
}

// Partitions are the partitions that hold rows, in order.
func (s *Files) Partitions() []string {
	out := make([]string, 0, len(s.spill.parts))
	for v, p := range s.spill.parts {
		if p.total > 0 {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// Rows is how many rows a partition holds.
func (s *Files) Rows(partition string) int64 { return s.spill.rows(partition) }

// Objects lists the input objects read, as listed.
func (s *Files) Objects() []Object { return s.objects }

func (s *Files) split(ctx context.Context, c *contract.Contract, declared contract.Selection, file int32, b Batch) error {
	valueOf, err := c.Partition.ValueFunc(b.Rec.Columns())
	if err != nil {
		return fmt.Errorf("%s: %w", b.File, err)
	}
	n := int(b.Rec.NumRows())
	if n == 0 {
		return nil
	}
	rowBytes := max(recordBytes(b.Rec)/int64(n), 1)
	// Number the batch's partitions in order of first appearance; -1 is a
	// value no declared partition owns (its ownership judged once a batch).
	group := make([]int32, n)
	var values []string
	ids := map[string]int32{}
	counts := []int{}
	for r := range n {
		v, ok := valueOf(r)
		id, seen := ids[v]
		if ok && !seen {
			id = -1
			if declared.Owns(v) {
				id = int32(len(values))
				values = append(values, v)
				counts = append(counts, 0)
			}
			ids[v] = id
		}
		if !ok || id < 0 {
			group[r] = -1
			s.addStray(c, v, ok, file, b.Line[r])
			continue
		}
		group[r] = id
		counts[id]++
	}
	if len(values) == 1 && counts[0] == n { // the common case: a sorted input
		// The lines are copied: the spill keeps them as a column, and a
		// batch's lines are the reader's.
		return s.spill.add(values[0], b.Rec, file, slices.Clone(b.Line), rowBytes)
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
		part := sorted.NewSlice(int64(lo), int64(hi))
		err := s.spill.add(v, part, file, lines[lo:hi], rowBytes)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// recordBytes is the size of a batch's buffers.
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		for _, b := range c.Data().Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
	}
	return n
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

func (s *Files) addStray(c *contract.Contract, v string, ok bool, file int32, line int64) {
	key := "null"
	if ok {
		key = c.Partition.Key(v)
	}
	if g := s.strayOf[key]; g != nil {
		g.count++
		return
	}
	if len(s.stray) >= verify.MaxFindings {
		s.strayOther++
		return
	}
	g := &strayRows{key: key, count: 1, file: file, line: line}
	if s.strayOf == nil {
		s.strayOf = map[string]*strayRows{}
	}
	s.strayOf[key] = g
	s.stray = append(s.stray, g)
}

// openBatchRows is how many rows of a partition wait in memory before they
// are spilled, and so the fewest Open hands over at once where the input
// allows.
const openBatchRows = 64 << 10

// Open returns a partition's rows in input order.
func (s *Files) Open(_ context.Context, partition string) (array.RecordReader, error) {
	return s.spill.open(partition)
}

// Locate names the file and line of a partition's row (counting from 1).
// It reads where the partition's rows came from on its first call, which
// only findings make.
func (s *Files) Locate(partition string, row int64) string {
	s.mu.Lock()
	loc := s.locations[partition]
	if loc == nil {
		loc = &located{}
		loc.files, loc.lines, loc.err = s.spill.locations(partition)
		s.locations[partition] = loc
	}
	s.mu.Unlock()
	if loc.err != nil || row < 1 || row > int64(len(loc.lines)) {
		return ""
	}
	return s.where(loc.files[row-1], loc.lines[row-1])
}

// where names a file and the line of a row read from it.
func (s *Files) where(file int32, line int64) string {
	in := s.inputs[file]
	if in.records != nil {
		line = in.records.line(line)
	}
	return fmt.Sprintf("%s:%d", in.path, line)
}

// Stray returns findings for rows of undeclared partitions: one for each
// partition they fall in, with their count and where the first one is.
func (s *Files) Stray() []verify.Finding {
	var out []verify.Finding
	for _, g := range s.stray {
		msg := "row is outside the partitions this run declares (" + s.declared + ")"
		if g.count > 1 {
			msg = fmt.Sprintf("%s rows are outside the partitions this run declares (%s); the line named is the first", words.Number(g.count), s.declared)
		}
		out = append(out, verify.Finding{Kind: verify.KindOutside, Partition: g.key,
			Where: s.where(g.file, g.line), Column: s.column, Message: msg + s.utc})
	}
	if s.strayOther > 0 {
		out = append(out, verify.Finding{Kind: verify.KindOutside,
			Message: fmt.Sprintf("%s more outside the declared partitions, in partitions beyond the %d named above", words.Count(s.strayOther, "row"), len(s.stray))})
	}
	return out
}

// utcNote says, for partitions by year, month, day or hour of a
// timestamp with time zone, that the partition of a time is its UTC
// one: 2026-03-04T23:30:00-05:00 is in day 2026-03-05.
func utcNote(p contract.Partitioning) string {
	for _, f := range p.Fields {
		_, tz := f.Type.(iceberg.TimestampTzType)
		_, tzNs := f.Type.(iceberg.TimestampTzNsType)
		switch {
		case !tz && !tzNs:
		case f.Transform == "year", f.Transform == "month", f.Transform == "day", f.Transform == "hour":
			return fmt.Sprintf("; %s(%s) is taken in UTC: a time with an offset is in the UTC %s it falls in",
				f.Transform, f.Name, f.Transform)
		}
	}
	return ""
}

// Release frees the rows held and removes those spilled.
func (s *Files) Release() {
	s.spill.release()
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
		s.dir = ""
	}
}

// describeKeys lists sorted partition keys, a long list by its ends.
func describeKeys(keys []string) string {
	slices.Sort(keys)
	if len(keys) > 6 {
		keys = append(keys[:3], "...", keys[len(keys)-1])
	}
	return strings.Join(keys, ", ")
}

// Describe names input files for a run's record: base names only, so no
// local path lands in the table's history; objects by their s3:// URL,
// which holds no credential.
func Describe(files []string) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
		if IsObjectURL(f) {
			names[i] = f
		}
	}
	s := strings.Join(names, ",")
	if len(s) > 500 {
		cut := 500
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never halve a character
		}
		s = s[:cut] + "..."
	}
	return "files:" + s
}
