package parquetio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/apache/arrow-go/v18/arrow/array"
	icebergio "github.com/apache/iceberg-go/io"
)

// Checksum reads r in full and returns its size and hex SHA-256, the
// checksum a written File records; it stops when ctx ends, so that a long
// read of a large file can be cancelled.
func Checksum(ctx context.Context, r io.Reader) (int64, string, error) {
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, r})
	if err != nil {
		return n, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// ctxReader stops a long read when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// wholeReadBytes is the largest file OpenHashed reads into memory whole,
// one request for its bytes; a larger one is hashed as it streams by and
// then read where its columns lie, so that memory stays bounded.
const wholeReadBytes = 32 << 20

// OpenHashed reads a Parquet file's rows as Open does, and returns with
// them its size and hex SHA-256: of the very bytes the rows are read from
// when the file is small, else of a sequential read just before.
func OpenHashed(ctx context.Context, fsys icebergio.IO, path string) (array.RecordReader, int64, string, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, 0, "", fmt.Errorf("open %s: %w", path, err)
	}
	info, err := f.Stat()
	if err != nil || info.Size() > wholeReadBytes {
		_ = f.Close()
		n, sum, err := HashFile(ctx, fsys, path)
		if err != nil {
			return nil, 0, "", err
		}
		rr, err := Open(ctx, fsys, path)
		return rr, n, sum, err // the hash even when the rows cannot be read
	}
	raw := make([]byte, info.Size())
	_, err = io.ReadFull(ctxReader{ctx, f}, raw)
	_ = f.Close()
	if err != nil {
		return nil, 0, "", fmt.Errorf("read %s: %w", path, err)
	}
	sum := sha256.Sum256(raw)
	rr, err := openReader(ctx, bytes.NewReader(raw), path, nil, func() error { return nil })
	return rr, int64(len(raw)), hex.EncodeToString(sum[:]), err
}

// HashFile reads a file in full and returns its size and hex SHA-256;
// an error names the file.
func HashFile(ctx context.Context, fsys icebergio.IO, path string) (int64, string, error) {
	f, err := fsys.Open(path)
	if err != nil {
		if errors.As(err, new(*fs.PathError)) {
			return 0, "", err // names the file already
		}
		return 0, "", fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	n, sum, err := Checksum(ctx, f)
	if err != nil {
		return 0, "", fmt.Errorf("read %s: %w", path, err)
	}
	return n, sum, nil
}
