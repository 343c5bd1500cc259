//go:build !noduckdb

package source

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	bindings "github.com/duckdb/duckdb-go-bindings"
)

// Engine names the CSV reader this build has.
const Engine = "duckdb"

// engine reads CSV with embedded DuckDB: it splits and unquotes fields in
// parallel and decompresses, but every field comes to Go as the text it
// is, since DuckDB's own casts round decimals, truncate timestamps, drop
// zones and read "1.5" as the integer 2. lakeswap's casts judge each value.
//
// It talks to DuckDB through its C API bindings rather than the database/sql
// driver, whose results are whole before the first row is handed over: a
// streaming result keeps the engine's memory bounded whatever the input.
type engine struct {
	db   bindings.Database
	conn bindings.Connection
	// settings is what the engine was opened with or last set to: an
	// idle engine taken for a read is set only where the read differs.
	settings map[string]string
}

func newEngine(tmp string, memory int64, settings ...[2]string) (*engine, error) {
	var cfg bindings.Config
	if bindings.CreateConfig(&cfg) == bindings.StateError {
		return nil, errors.New("start the CSV reader: cannot make its configuration")
	}
	defer bindings.DestroyConfig(&cfg)
	e := &engine{settings: map[string]string{}}
	for _, kv := range append(append(engineShare(tmp, memory), [][2]string{
		{"preserve_insertion_order", "true"}, // record numbers follow the file
		// Memory a query freed goes back to the system when it ends, not
		// only past 512 MiB at once: lakeswap's own work comes next.
		// Measured on a SQL job under a 256 MiB share: 861 MB held after
		// its query, 405 MB with this.
		{"allocator_bulk_deallocation_flush_threshold", "16MiB"},
		// Nothing a query names installs or loads an extension, nor
		// writes one under the home folder: what the engine needs is
		// built in.
		{"autoinstall_known_extensions", "false"},
		{"autoload_known_extensions", "false"},
	}...), settings...) {
		if bindings.SetConfig(cfg, kv[0], kv[1]) == bindings.StateError {
			return nil, fmt.Errorf("start the CSV reader: cannot set %s to %s", kv[0], kv[1])
		}
		e.settings[kv[0]] = kv[1]
	}
	var msg string
	if bindings.OpenExt("", &e.db, cfg, &msg) == bindings.StateError {
		bindings.Close(&e.db)
		return nil, fmt.Errorf("start the CSV reader: %s", msg)
	}
	if bindings.Connect(e.db, &e.conn) == bindings.StateError {
		bindings.Close(&e.db)
		return nil, errors.New("start the CSV reader: cannot connect")
	}
	return e, nil
}

// engineShare is what a read may use of the machine: memory, threads and
// the folder it spills to.
func engineShare(tmp string, memory int64) [][2]string {
	return [][2]string{
		{"memory_limit", fmt.Sprintf("%dMiB", max(memory>>20, 64))},
		{"threads", fmt.Sprint(runtime.GOMAXPROCS(0))},
		{"temp_directory", tmp},
		{"extension_directory", filepath.Join(tmp, "extensions")},
	}
}

// idle holds engines that finished a small read, for the next read of
// the process: opening DuckDB takes about 15 ms of CPU (its catalog of
// functions), once a process rather than once a read. Only the reader's
// engines are kept (readerEngine, release), and only after a read that
// ended well and read less than idleReadMax: a large read's engine is
// closed, so that what it held goes back before the rows are staged. A
// job's engine (OpenSQLEngine) is always new, and closed: it is confined
// for good.
var idle struct {
	sync.Mutex
	engines []*engine
}

// readerEngine is an engine for a read of files: an idle one, given this
// read's share, or a new one.
func readerEngine(tmp string, memory int64) (*engine, error) {
	if e := idleEngine(tmp, memory); e != nil {
		return e, nil
	}
	return newEngine(tmp, memory, readerFlush(memory))
}

// readerFlush lets a read's engine keep what it freed up to an eighth of
// its share (16 to 128 MiB) before giving it back to the system. Handing
// back every 16 MiB (what a job's engine does) made streaming 30M CSV
// rows out of the engine take 7.0 s and 16 s of system time; 3.6 to 4.0 s
// and 7 to 10 s with 64 to 512 MiB. A large read's engine is closed when
// the read ends, so what it keeps is not held past it.
func readerFlush(memory int64) [2]string {
	return [2]string{"allocator_bulk_deallocation_flush_threshold", fmt.Sprintf("%dMiB", min(max(memory/8, 16<<20), 128<<20)>>20)}
}

// idleEngine takes an idle engine and gives it this read's share, or
// returns nil. An engine that spilled cannot move its spill folder and is
// closed.
func idleEngine(tmp string, memory int64) *engine {
	for {
		idle.Lock()
		n := len(idle.engines)
		if n == 0 {
			idle.Unlock()
			return nil
		}
		e := idle.engines[n-1]
		idle.engines = idle.engines[:n-1]
		idle.Unlock()
		if e.set(append(engineShare(tmp, memory), readerFlush(memory))) == nil {
			return e
		}
		e.close()
	}
}

// set sets what differs from the engine's settings: a SET is a statement
// prepared and run (1.8 s of the CPU of the guard cells on the embedded
// catalog went to the five of every read), and an idle engine's share is
// most often the next read's.
func (e *engine) set(settings [][2]string) error {
	for _, kv := range settings {
		if v, ok := e.settings[kv[0]]; ok && v == kv[1] {
			continue
		}
		rr, err := e.query(context.Background(), "SET "+kv[0]+" = "+sqlString(kv[1]))
		if err != nil {
			return err
		}
		rr.Release()
		e.settings[kv[0]] = kv[1]
	}
	return nil
}

// release keeps the engine for the next read, up to one a core, or closes it.
func (e *engine) release() {
	if e == nil {
		return
	}
	idle.Lock()
	defer idle.Unlock()
	if len(idle.engines) < runtime.GOMAXPROCS(0) {
		idle.engines = append(idle.engines, e)
		return
	}
	go e.close()
}

func (e *engine) close() {
	if e == nil {
		return
	}
	bindings.Disconnect(&e.conn)
	bindings.Close(&e.db)
}

// query runs a query and streams its result as Arrow batches; a cancelled
// context interrupts it. params binds the query's named parameters ($from)
// as text: a value is never spliced into the SQL.
func (e *engine) query(ctx context.Context, q string, params ...map[string]string) (*chunkReader, error) {
	r := &chunkReader{}
	if bindings.Prepare(e.conn, q, &r.stmt) == bindings.StateError {
		err := engineError{errors.New(bindings.PrepareError(r.stmt))}
		bindings.DestroyPrepare(&r.stmt)
		return nil, err
	}
	for _, ps := range params {
		for name, value := range ps {
			var idx bindings.IdxT
			if bindings.BindParameterIndex(r.stmt, &idx, name) == bindings.StateError {
				continue // the query does not read it
			}
			v := bindings.CreateVarchar(value)
			state := bindings.BindValue(r.stmt, idx, v)
			bindings.DestroyValue(&v)
			if state == bindings.StateError {
				bindings.DestroyPrepare(&r.stmt)
				return nil, fmt.Errorf("bind $%s: %s", name, bindings.PrepareError(r.stmt))
			}
		}
	}
	var pending bindings.PendingResult
	if bindings.PendingPreparedStreaming(r.stmt, &pending) == bindings.StateError {
		err := engineError{errors.New(bindings.PendingError(pending))}
		bindings.DestroyPending(&pending)
		bindings.DestroyPrepare(&r.stmt)
		return nil, err
	}
	r.ctx = ctx
	r.stop = context.AfterFunc(ctx, func() { bindings.Interrupt(e.conn) })
	state := bindings.ExecutePending(pending, &r.res)
	bindings.DestroyPending(&pending)
	if state == bindings.StateError {
		err := r.interrupted(engineError{errors.New(bindings.ResultError(&r.res))})
		r.stop()
		bindings.DestroyResult(&r.res)
		bindings.DestroyPrepare(&r.stmt)
		return nil, err
	}
	r.opts = bindings.ResultGetArrowOptions(&r.res)
	n := bindings.ColumnCount(&r.res)
	names := make([]string, n)
	types := make([]bindings.LogicalType, n)
	for i := range n {
		names[i] = bindings.ColumnName(&r.res, i)
		types[i] = bindings.ColumnLogicalType(&r.res, i)
	}
	schema, err := arrowSchema(r.opts, types, names)
	for i := range types {
		bindings.DestroyLogicalType(&types[i])
	}
	if err != nil {
		r.Release()
		return nil, err
	}
	r.schema = schema
	return r, nil
}

// chunkReader hands a streaming result over one chunk (2,048 rows) at a time.
type chunkReader struct {
	ctx    context.Context
	stmt   bindings.PreparedStatement
	res    bindings.Result
	opts   bindings.ArrowOptions
	schema *arrow.Schema
	stop   func() bool
	cur    arrow.RecordBatch
	chunk  bindings.DataChunk
	err    error
	done   bool
	// raw hands over chunks as the engine holds them (Chunk), with no
	// Arrow batch made of them.
	raw bool
}

func (r *chunkReader) Next() bool {
	r.drop()
	if r.done {
		return false
	}
	return r.fetch()
}

// drop releases the current batch and the chunk it was made from.
func (r *chunkReader) drop() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.chunk.Ptr != nil {
		bindings.DestroyDataChunk(&r.chunk)
		r.chunk = bindings.DataChunk{}
	}
}

func (r *chunkReader) fetch() bool {
	chunk := bindings.FetchChunk(r.res)
	if chunk.Ptr == nil {
		r.done = true
		if msg := bindings.ResultError(&r.res); msg != "" {
			r.err = r.interrupted(engineError{errors.New(msg)})
		}
		return false
	}
	if r.raw {
		r.chunk = chunk
		return true
	}
	rec, err := arrowBatch(r.opts, r.schema, chunk)
	if err != nil {
		bindings.DestroyDataChunk(&chunk)
		r.done, r.err = true, err
		return false
	}
	// The batch's strings may point into the chunk: it lives as long as
	// the batch is current.
	r.cur, r.chunk = rec, chunk
	return true
}

// interrupted is the context's error when a cancelled context interrupted
// the query: the engine's own words ("INTERRUPT Error") would hide that
// the operator stopped it.
func (r *chunkReader) interrupted(err error) error {
	if r.ctx != nil && r.ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", r.ctx.Err(), err)
	}
	return err
}

func (r *chunkReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *chunkReader) Err() error                     { return r.err }

// Release frees the result.
func (r *chunkReader) Release() {
	r.drop()
	if r.stop != nil {
		r.stop()
		r.stop = nil
	}
	bindings.DestroyArrowOptions(&r.opts)
	bindings.DestroyResult(&r.res)
	bindings.DestroyPrepare(&r.stmt)
}

func errorData(ed bindings.ErrorData) error {
	defer bindings.DestroyErrorData(&ed)
	if !bindings.ErrorDataHasError(ed) {
		return nil
	}
	return engineError{errors.New(bindings.ErrorDataMessage(ed))}
}

// readCSV reads a CSV file through the engine. Its header is read and
// checked first by lakeswap's reader; anything the engine or a cast refuses
// is read again by that reader, so that the refusal names the line and
// column as it always has.
func (e *engine) readCSV(ctx context.Context, path string, schema *arrow.Schema, fn func(Batch) error) error {
	abs, err := filepath.Abs(path) // the engine reads ~/ as the home folder
	if err != nil || strings.ContainsAny(abs, "*?[{\\'") {
		return ReadInput(ctx, path, schema, fn) // the engine would take the name as a pattern
	}
	// Only a file in the plain form is split by the engine: outside it
	// (spaces around quotes, a stray CR, extra empty fields...) the engine
	// bends where lakeswap's reader refuses, and the file goes to that reader.
	shape, err := checkCSV(path)
	if err != nil {
		return err
	}
	if !shape.plain {
		return ReadInput(ctx, path, schema, fn)
	}
	header, err := readCSVHeader(path, schema)
	if err != nil {
		return err
	}
	err = e.scan(ctx, path, abs, schema, header, shape, fn)
	if err == nil || ctx.Err() != nil {
		return err
	}
	var ie *InputError
	if errors.As(err, &ie) || isEngineError(err) {
		// The verdict and its place are the own reader's; a file it takes
		// whole, where the engine refused, is refused with the engine's words.
		if own := ReadInput(ctx, path, schema, func(Batch) error { return nil }); own != nil {
			return own
		}
		if ie != nil {
			ie.Line = shape.lines.line(ie.Line)
			return ie
		}
		return &InputError{File: path, Err: fmt.Errorf("the CSV reader refused the file: %s", firstLines(err.Error(), 3))}
	}
	return err
}

type engineError struct{ err error }

func (e engineError) Error() string { return e.err.Error() }
func (e engineError) Unwrap() error { return e.err }

// OutOfMemory reports whether err is the engine's running out of the
// memory it was given.
func OutOfMemory(err error) bool {
	return isEngineError(err) && strings.Contains(err.Error(), "Out of Memory Error")
}

func isEngineError(err error) bool {
	var ee engineError
	return errors.As(err, &ee)
}

func (e *engine) scan(ctx context.Context, path, abs string, schema *arrow.Schema, header []string, shape *csvShape, fn func(Batch) error) error {
	q := "SELECT * FROM " + CSVScan([]string{abs}, header, compression(path), CSVOptions{})
	rr, err := e.query(ctx, q)
	if err != nil {
		return err
	}
	defer rr.Release()
	// Where each table column stands in the file.
	at := make([]int, schema.NumFields())
	for i, f := range schema.Fields() {
		for j, h := range header {
			if h == f.Name {
				at[i] = j
			}
		}
	}
	// Casting runs beside the caller's work on the batches before, which
	// leaves the engine's file to be read while rows are split and spilled.
	return alongside(ctx, func(ctx context.Context, fn func(Batch) error) error {
		return castFields(ctx, rr, path, schema, at, shape, fn)
	}, fn)
}

// castFields casts the text fields of rr into the table's schema and hands
// them to fn as batches of inputBatchRows.
func castFields(ctx context.Context, rr *chunkReader, path string, schema *arrow.Schema, at []int, shape *csvShape, fn func(Batch) error) error {
	records := &shape.lines
	// The fields are read from the engine's chunks as it holds them: an
	// Arrow batch of them would be one more copy of every field.
	for i, f := range schema.Fields() {
		if t := rr.schema.Field(at[i]).Type; t.ID() != arrow.STRING {
			return engineError{fmt.Errorf("column %s came as %s, not text", f.Name, t)}
		}
	}
	rr.raw = true
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	// A batch is whole chunks of the engine's up to inputBatchRows and one
	// more: its builders are sized for that at the start, and its text
	// for a little more than the batch before held, so that no buffer is
	// grown (and copied) a chunk at a time. A file of fewer records is
	// one batch of its size.
	batchCap := int(min(inputBatchRows+2048, shape.records))
	text := make([]int, schema.NumFields())
	reserve := func() []int64 {
		for i := range schema.Fields() {
			b := rb.Field(i)
			b.Reserve(batchCap)
			if sb, ok := b.(*array.StringBuilder); ok {
				sb.ReserveData(text[i] + text[i]/8)
			}
		}
		return make([]int64, 0, batchCap)
	}
	lines := reserve()
	record := int64(0)
	flush := func() error {
		if len(lines) == 0 {
			return nil
		}
		for i := range schema.Fields() {
			if sb, ok := rb.Field(i).(*array.StringBuilder); ok {
				text[i] = sb.DataLen()
			}
		}
		b := Batch{Rec: rb.NewRecordBatch(), File: path, Line: lines, records: records}
		lines = reserve()
		defer b.Rec.Release()
		return fn(b)
	}
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(bindings.DataChunkGetSize(rr.chunk))
		for i, f := range schema.Fields() {
			col := chunkTexts(rr.chunk, at[i], n)
			if r, err := appendTexts(rb.Field(i), f, col); err != nil {
				return &InputError{File: path, Line: record + int64(r) + 1, Column: f.Name, Err: err}
			}
		}
		for range n {
			record++
			lines = append(lines, record)
		}
		if len(lines) >= inputBatchRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil {
		return engineError{err}
	}
	return flush()
}

// appendTexts casts a column of CSV fields as lakeswap's CSV reader does,
// where an empty field, quoted or not, is the empty text (a null outside
// string columns). It returns the row of a value it refuses.
func appendTexts(b array.Builder, f arrow.Field, col texts) (int, error) {
	n := col.Len()
	switch sb := b.(type) {
	case *array.StringBuilder:
		for r := range n {
			sb.Append(col.Value(r)) // a null is an unquoted empty field
		}
		return 0, nil
	case *array.Int64Builder:
		for r := range n {
			v := col.Value(r)
			if x, ok := parseInt64(v); ok {
				sb.Append(x)
				continue
			}
			if err := appendValue(b, f, v); err != nil {
				return r, err
			}
		}
		return 0, nil
	}
	if db, ok := b.(*array.Date32Builder); ok {
		for r := range n {
			v := col.Value(r)
			if d, ok := parseDate(v); ok {
				db.Append(d)
				continue
			}
			if err := appendValue(b, f, v); err != nil {
				return r, err
			}
		}
		return 0, nil
	}
	for r := range n {
		if err := appendValue(b, f, col.Value(r)); err != nil {
			return r, err
		}
	}
	return 0, nil
}

// readCSVHeader reads a CSV file's header with lakeswap's reader, which
// checks it against the schema.
func readCSVHeader(path string, schema *arrow.Schema) ([]string, error) {
	f, err := openText(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	skipBOM(r)
	src, err := newCSVRows(r, schema)
	if err != nil {
		return nil, inputError(path, 1, err)
	}
	return src.(byField).src.(*csvRows).header, nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.TrimSpace(strings.Join(lines, " "))
}

// SQLEngine is embedded DuckDB for SQL jobs: views over listed files, and
// queries whose results stream as Arrow.
type SQLEngine struct {
	e   *engine
	tmp string
}

// sqlThreadMemory is the engine's memory a thread of a job's SQL needs.
// Measured on the retail orders_fact job (aggregates and joins): 1M events
// ran out of a 128 MiB share on two threads and landed on one; 10M landed
// in 256 MiB on two.
const sqlThreadMemory = 128 << 20

// OpenSQLEngine starts an engine that spills to tmp and uses at most memory
// bytes.
func OpenSQLEngine(tmp string, memory int64) (*SQLEngine, error) {
	e, err := newEngine(tmp, memory)
	if err != nil {
		return nil, err
	}
	eng := &SQLEngine{e, tmp}
	// A job's results must not depend on the machine's zone: instants are
	// read and turned into days in UTC. The zone needs the (built-in) ICU
	// extension loaded. Nothing of a job's depends on the order of its
	// rows (they are split by partition, fingerprinted in any order), and
	// an engine free to reorder them keeps less in memory and spills more.
	//
	// Each thread the engine runs a query on needs its own memory to spill
	// from: a thread for every sqlThreadMemory of the engine's share.
	threads := max(1, min(int64(runtime.GOMAXPROCS(0)), memory/sqlThreadMemory))
	for _, q := range []string{"LOAD icu", "SET TimeZone = 'UTC'", "SET Calendar = 'gregorian'", "SET preserve_insertion_order = false", fmt.Sprintf("SET threads = %d", threads)} {
		if err := eng.Exec(context.Background(), q); err != nil {
			e.close()
			return nil, fmt.Errorf("start the SQL engine: %s: %w", q, err)
		}
	}
	return eng, nil
}

// Confine lets the engine's queries reach the given files and its own
// spill folder, and no other file, to read or to write, for good: once a
// job's sources are views of its listed files, its SQL reads those and
// nothing else, and writes nothing.
func (e *SQLEngine) Confine(ctx context.Context, paths []string) error {
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = sqlString(p)
	}
	for _, q := range []string{
		"SET allowed_paths = [" + strings.Join(quoted, ", ") + "]",
		"SET allowed_directories = [" + sqlString(e.tmp) + "]",
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		"SET enable_external_access = false",
		"SET lock_configuration = true",
	} {
		if err := e.Exec(ctx, q); err != nil {
			return fmt.Errorf("confine the engine to the listed files: %w", err)
		}
	}
	return nil
}

// Close stops the engine, and gives back its memory; closing it again does
// nothing.
func (e *SQLEngine) Close() {
	e.e.close()
	e.e = nil
}

// Exec runs a statement and drops its result.
func (e *SQLEngine) Exec(ctx context.Context, q string) error {
	return e.ExecParams(ctx, q, nil)
}

// ExecParams runs a statement with its named parameters bound as text, and
// drops its result.
func (e *SQLEngine) ExecParams(ctx context.Context, q string, params map[string]string) error {
	r, err := e.e.query(ctx, q, params)
	if err != nil {
		return err
	}
	defer r.Release()
	for r.Next() {
	}
	return r.Err()
}

// NotAQuery refuses SQL that is a statement other than one query.
func NotAQuery(q string) error {
	first, _, _ := strings.Cut(strings.TrimSpace(q), " ")
	return fmt.Errorf("it is not a query (it starts %q): give one query, SELECT, WITH, VALUES or FROM", first)
}

// Columns prepares a query without running it and names its result's
// columns, or says what is wrong with it as written: the engine's error,
// or that it is a statement other than a query.
func (e *SQLEngine) Columns(q string) ([]string, error) {
	var stmt bindings.PreparedStatement
	defer bindings.DestroyPrepare(&stmt)
	if bindings.Prepare(e.e.conn, q, &stmt) == bindings.StateError {
		return nil, engineError{errors.New(bindings.PrepareError(stmt))}
	}
	if bindings.PreparedStatementType(stmt) != bindings.StatementTypeSelect {
		return nil, NotAQuery(q)
	}
	names := make([]string, bindings.PreparedStatementColumnCount(stmt))
	for i := range names {
		names[i] = bindings.PreparedStatementColumnName(stmt, bindings.IdxT(i))
	}
	return names, nil
}

// Query runs a query with its named parameters bound as text, and streams
// its result.
func (e *SQLEngine) Query(ctx context.Context, q string, params map[string]string) (array.RecordReader, error) {
	r, err := e.e.query(ctx, q, params)
	if err != nil {
		return nil, err
	}
	return &recordReader{r}, nil
}

// recordReader is a chunkReader as Arrow's RecordReader, released once.
type recordReader struct{ *chunkReader }

func (r *recordReader) Retain()                   {}
func (r *recordReader) Schema() *arrow.Schema     { return r.schema }
func (r *recordReader) Record() arrow.RecordBatch { return r.cur }
