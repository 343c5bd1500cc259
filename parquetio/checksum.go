package parquetio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
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
