package snapshot

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"os"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/verify"
)

// DeletesIO is a table's IO that reads a data file's rows as every reader
// of the table does at one snapshot: with the position and equality
// deletes that apply to it there left out. Which deletes apply to which
// file (by partition and sequence number) is iceberg-go's scan planning,
// and applying them its reader; lakeswap only routes the files that have
// any through it. A merge-on-read table (Flink CDC, Spark's MERGE) holds
// such files; its base is fingerprinted, banded and diffed this way.
type DeletesIO struct {
	icebergio.IO
	scan *table.Scan
	ids  []int // the scan's output columns' field ids
	// tasks are the scan's tasks of the data files that have deletes, by
	// path, in the order of their ranges: the scan splits a file larger
	// than read.split.target-size into ranges of row groups.
	tasks map[string][]table.FileScanTask
}

// HasDeletes reports whether any of the listed files is a delete file.
func HasDeletes(files ...map[string][]iceberg.DataFile) bool {
	for _, m := range files {
		for _, fs := range m {
			for _, f := range fs {
				if f.ContentType() != iceberg.EntryContentData {
					return true
				}
			}
		}
	}
	return false
}

// WithDeletes is fsys reading tbl's data files as of snapshot snap with
// their deletes applied; fsys itself when none of files (the snapshot's
// live files, or those the caller will read) is a delete file, so that a
// table without deletes costs no scan planning.
func WithDeletes(ctx context.Context, tbl *table.Table, fsys icebergio.IO, snap *table.Snapshot, files ...map[string][]iceberg.DataFile) (icebergio.IO, error) {
	if snap == nil || !HasDeletes(files...) {
		return fsys, nil
	}
	scan := tbl.Scan(table.WithSnapshotID(snap.SnapshotID))
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan which deletes apply to the data files of snapshot %d: %w", snap.SnapshotID, err)
	}
	proj, err := scan.Projection()
	if err != nil {
		return nil, err
	}
	d := &DeletesIO{IO: fsys, scan: scan, tasks: map[string][]table.FileScanTask{}}
	for _, f := range proj.Fields() {
		d.ids = append(d.ids, f.ID)
	}
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			d.tasks[t.File.FilePath()] = append(d.tasks[t.File.FilePath()], t)
		}
	}
	for _, ts := range d.tasks {
		slices.SortFunc(ts, func(a, b table.FileScanTask) int { return cmp.Compare(a.Start, b.Start) })
	}
	return d, nil
}

// Deleted reports whether deletes apply to the data file at path, read
// through fsys.
func Deleted(fsys icebergio.IO, path string) bool {
	d, ok := fsys.(*DeletesIO)
	return ok && len(d.tasks[path]) > 0
}

// CopyRows writes the rows of the data file at path, read through fsys
// (with its deletes applied) and each batch passed through as (a
// projection to the table's schema), to a local Parquet file dst, for a
// reader that knows nothing of deletes or field ids; it returns how many
// rows it wrote.
func CopyRows(ctx context.Context, fsys icebergio.IO, path, dst string, as func(arrow.RecordBatch) (arrow.RecordBatch, error)) (int64, error) {
	rr, err := Open(ctx, fsys, path)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	f, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var fw *pqarrow.FileWriter
	defer func() {
		if fw != nil {
			fw.Close()
		}
	}()
	var rows int64
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		rec, err := as(rr.RecordBatch())
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		if fw == nil {
			if fw, err = pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
				rec.Release()
				return 0, err
			}
		}
		err = fw.WriteBuffered(rec)
		rows += rec.NumRows()
		rec.Release()
		if err != nil {
			return 0, fmt.Errorf("write %s: %w", dst, err)
		}
	}
	if err := rr.Err(); err != nil {
		return 0, err
	}
	if fw == nil { // no rows: an empty file of the columns as passes them
		cols := make([]arrow.Array, rr.Schema().NumFields())
		for i, f := range rr.Schema().Fields() {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
			defer cols[i].Release()
		}
		none := array.NewRecordBatch(rr.Schema(), cols, 0)
		empty, err := as(none)
		none.Release()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		defer empty.Release()
		if fw, err = pqarrow.NewFileWriter(empty.Schema(), f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
			return 0, err
		}
	}
	err = fw.Close()
	fw = nil
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", dst, err)
	}
	return rows, nil
}

// AnyRow reports whether data files read through fsys (with their
// deletes applied, where fsys applies them) hold a row, reading up to the
// first.
func AnyRow(ctx context.Context, fsys icebergio.IO, paths []string) (bool, error) {
	for _, p := range paths {
		rr, err := Open(ctx, fsys, p)
		if err != nil {
			return false, err
		}
		found := false
		for !found && rr.Next() {
			found = rr.RecordBatch().NumRows() > 0
		}
		err = rr.Err()
		rr.Release()
		if err != nil || found {
			return found, err
		}
	}
	return false, nil
}

// EachBatch reads a data file's rows through fsys (its deletes applied)
// in the contract's schema, as acc conforms them, batch by batch until fn
// says it is done; it reports whether fn did.
func EachBatch(ctx context.Context, fsys icebergio.IO, acc *verify.Accumulator, path string, fn func(arrow.RecordBatch) (bool, error)) (bool, error) {
	rr, err := Open(ctx, fsys, path)
	if err != nil {
		return false, err
	}
	defer rr.Release()
	for rr.Next() {
		rec, err := acc.Project(rr.RecordBatch())
		if err != nil {
			return false, fmt.Errorf("%s does not read as the table's schema: %w", path, err)
		}
		done, err := fn(rec)
		rec.Release()
		if err != nil || done {
			return done, err
		}
	}
	return false, rr.Err()
}

// Open reads a data file's rows through fsys: with its deletes applied
// when fsys is a DeletesIO that has any for it, else as the file holds
// them.
func Open(ctx context.Context, fsys icebergio.IO, path string) (array.RecordReader, error) {
	if d, ok := fsys.(*DeletesIO); ok {
		if tasks, ok := d.tasks[path]; ok {
			return d.open(ctx, path, tasks)
		}
		return parquetio.Open(ctx, d.IO, path)
	}
	return parquetio.Open(ctx, fsys, path)
}

// open reads a file's tasks through iceberg-go's scan, its columns
// labelled with their field ids so that they are projected by id like a
// file's.
func (d *DeletesIO) open(ctx context.Context, path string, tasks []table.FileScanTask) (array.RecordReader, error) {
	sc, batches, err := d.scan.ReadTasks(ctx, tasks)
	if err != nil {
		return nil, fmt.Errorf("read %s with its deletes applied: %w", path, err)
	}
	if len(sc.Fields()) != len(d.ids) {
		return nil, fmt.Errorf("read %s with its deletes applied: %d columns for %d fields", path, len(sc.Fields()), len(d.ids))
	}
	fields := make([]arrow.Field, len(sc.Fields()))
	for i, f := range sc.Fields() {
		f.Metadata = arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(d.ids[i])})
		fields[i] = f
	}
	labelled := arrow.NewSchema(fields, nil)
	next, stop := iter.Pull2(batches)
	return &seqReader{schema: labelled, next: next, stop: stop, path: path}, nil
}

// seqReader is an array.RecordReader over the batches of a scan.
type seqReader struct {
	schema *arrow.Schema
	next   func() (arrow.RecordBatch, error, bool)
	stop   func()
	cur    arrow.RecordBatch
	err    error
	path   string
	refs   int64
}

func (r *seqReader) Retain() { r.refs++ }

func (r *seqReader) Release() {
	if r.refs--; r.refs >= 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.stop()
}

func (r *seqReader) Schema() *arrow.Schema { return r.schema }

func (r *seqReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil {
		return false
	}
	rec, err, ok := r.next()
	if !ok {
		return false
	}
	if err != nil {
		r.err = fmt.Errorf("read %s with its deletes applied: %w", r.path, err)
		return false
	}
	r.cur = array.NewRecordBatch(r.schema, rec.Columns(), rec.NumRows())
	rec.Release()
	return true
}

func (r *seqReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch, under the name older callers use.
func (r *seqReader) Record() arrow.RecordBatch { return r.cur }

func (r *seqReader) Err() error { return r.err }
