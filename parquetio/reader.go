package parquetio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergio "github.com/apache/iceberg-go/io"
)

// readBatchRows is how many rows a reader returns at a time.
const readBatchRows = 64 << 10

// Open reads a Parquet file as Arrow record batches. The caller releases the
// reader, which closes the file.
func Open(ctx context.Context, fsys icebergio.IO, path string) (array.RecordReader, error) {
	return OpenColumns(ctx, fsys, path, nil)
}

// Column names a top-level column of the table: by its field id in a
// file that carries ids (as every Iceberg writer's do, and a column renamed
// since keeps its id), by its name in one that carries none.
type Column struct {
	ID   int
	Name string
}

// ErrNoColumn is OpenColumns' error for a column the file does not have.
var ErrNoColumn = errors.New("the file has no such column")

// OpenColumns reads only the given columns of a Parquet file (all of them
// for nil), so that a check of a few columns decodes no others. A column
// the file lacks is an error; FieldIndex finds each in the batches read.
func OpenColumns(ctx context.Context, fsys icebergio.IO, path string, cols []Column) (array.RecordReader, error) {
	f, closeFn, err := OpenFile(fsys, path)
	if err != nil {
		return nil, err
	}
	return openReader(ctx, f, path, cols, closeFn)
}

// smallFile is the size up to which a Parquet file is read whole. On an
// object store the request that opens a file brings the whole object,
// where reading its footer and each column chunk apart costs a request
// each: a staged file of one row cost 11 GETs between staging and the
// checks after the commit.
const smallFile = 4 << 20

// OpenFile opens a Parquet file to read, and the function that closes it;
// a file of at most smallFile bytes is read whole, with the request that
// opened it.
func OpenFile(fsys icebergio.IO, path string) (parquet.ReaderAtSeeker, func() error, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil || st.Size() <= 0 || st.Size() > smallFile {
		return f, f.Close, nil
	}
	raw := make([]byte, st.Size())
	_, err = io.ReadFull(f, raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	return bytes.NewReader(raw), func() error { return nil }, nil
}

// FieldIndex is the index of column c in sc, a file's schema as read, or
// -1: matched by field id where the file carries ids, else by name.
func FieldIndex(sc *arrow.Schema, c Column) int {
	byName, withIDs := -1, false
	for i, f := range sc.Fields() {
		v, _ := f.Metadata.GetValue("PARQUET:field_id")
		id, err := strconv.Atoi(v)
		if err != nil || id < 0 { // no id: a writer that keeps none writes -1
			if f.Name == c.Name {
				byName = i
			}
			continue
		}
		withIDs = true
		if id == c.ID {
			return i
		}
	}
	if withIDs {
		return -1
	}
	return byName
}

// openReader reads the named columns of the Parquet file r holds; closeFn
// closes what r reads from when the reader is released or fails.
func openReader(ctx context.Context, r parquet.ReaderAtSeeker, path string, want []Column, closeFn func() error) (array.RecordReader, error) {
	pf, err := file.NewParquetReader(r)
	if err != nil {
		_ = closeFn()
		return nil, fmt.Errorf("read parquet footer of %s: %w", path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatchRows, Parallel: true}, memory.DefaultAllocator)
	if err != nil {
		_ = pf.Close()
		return nil, fmt.Errorf("read %s as arrow: %w", path, err)
	}
	var cols []int
	if want != nil {
		sc, err := fr.Schema()
		if err != nil {
			_ = pf.Close()
			return nil, fmt.Errorf("read %s as arrow: %w", path, err)
		}
		for _, c := range want {
			i := FieldIndex(sc, c)
			if i < 0 {
				_ = pf.Close()
				return nil, fmt.Errorf("%s: column %s (field %d): %w", path, c.Name, c.ID, ErrNoColumn)
			}
			if !fr.Manifest.Fields[i].IsLeaf() {
				_ = pf.Close()
				return nil, fmt.Errorf("%s: column %s (field %d) is not a plain column", path, c.Name, c.ID)
			}
			cols = append(cols, fr.Manifest.Fields[i].ColIndex)
		}
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		_ = pf.Close()
		return nil, fmt.Errorf("read %s as arrow: %w", path, err)
	}
	return &closingReader{RecordReader: rr, close: pf.Close}, nil
}

// closingReader closes the file when the reader is released.
type closingReader struct {
	array.RecordReader
	close func() error
}

func (c *closingReader) Release() {
	c.RecordReader.Release()
	if c.close != nil {
		_ = c.close()
		c.close = nil
	}
}

// NumRows is how many rows a Parquet file's footer says it holds.
func NumRows(fsys icebergio.IO, path string) (int64, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		_ = f.Close()
		return 0, fmt.Errorf("read parquet footer of %s: %w", path, err)
	}
	defer pf.Close()
	return pf.NumRows(), nil
}
