package parquetio

import (
	"context"
	"fmt"

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

// OpenColumns reads only the named top-level columns of a Parquet file (all
// of them for nil), so that a check of a few columns decodes no others. A
// name the file lacks is an error.
func OpenColumns(ctx context.Context, fsys icebergio.IO, path string, names []string) (array.RecordReader, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return openReader(ctx, f, path, names, f.Close)
}

// openReader reads the named columns of the Parquet file r holds; closeFn
// closes what r reads from when the reader is released or fails.
func openReader(ctx context.Context, r parquet.ReaderAtSeeker, path string, names []string, closeFn func() error) (array.RecordReader, error) {
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
	if names != nil {
		sc, err := fr.Schema()
		if err != nil {
			_ = pf.Close()
			return nil, fmt.Errorf("read %s as arrow: %w", path, err)
		}
		for _, name := range names {
			idx := sc.FieldIndices(name)
			if len(idx) != 1 || !fr.Manifest.Fields[idx[0]].IsLeaf() {
				_ = pf.Close()
				return nil, fmt.Errorf("%s: column %s is missing, named twice or not a plain column", path, name)
			}
			cols = append(cols, fr.Manifest.Fields[idx[0]].ColIndex)
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
