package s3store

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
)

// IO writes through the Store and reads through the table's own file IO, so
// that staged files get lakeswap's checked, conditional uploads while
// everything iceberg-go reads stays on one path.
type IO struct {
	icebergio.IO
	ctx   context.Context
	store *Store
}

var _ icebergio.WriteFileIO = (*IO)(nil)

// NewIO wraps a table's file IO; ctx bounds every upload it starts.
func NewIO(ctx context.Context, read icebergio.IO, store *Store) *IO {
	return &IO{IO: read, ctx: ctx, store: store}
}

// Create starts the upload of an s3:// location.
func (i *IO) Create(name string) (icebergio.FileWriter, error) {
	bucket, key, err := splitLocation(name)
	if err != nil {
		return nil, err
	}
	return i.store.Create(i.ctx, bucket, key)
}

// CreatesExclusively says that an upload lands only where no object is
// (If-None-Match), refused with parquetio.ErrExists otherwise: a writer
// need not look at the key first.
func (i *IO) CreatesExclusively() bool { return true }

// WriteFile uploads p to an s3:// location that must not exist yet.
func (i *IO) WriteFile(name string, p []byte) error {
	w, err := i.Create(name)
	if err != nil {
		return err
	}
	if _, err := w.Write(p); err != nil {
		return err
	}
	return w.Close()
}

// Remove deletes an s3:// location.
func (i *IO) Remove(name string) error {
	bucket, key, err := splitLocation(name)
	if err != nil {
		return err
	}
	return i.store.Delete(i.ctx, bucket, key)
}

func splitLocation(loc string) (bucket, key string, err error) {
	u, err := url.Parse(loc)
	if err != nil || (u.Scheme != "s3" && u.Scheme != "s3a" && u.Scheme != "s3n") || u.Host == "" {
		return "", "", fmt.Errorf("%q is not an s3://bucket/key location", loc)
	}
	return u.Host, strings.TrimPrefix(u.Path, "/"), nil
}

// StagingIO is the hook a swap.Publisher takes: staged files of a table go
// through this store, reads through the table's IO.
func (s *Store) StagingIO() func(context.Context, icebergio.IO) (icebergio.WriteFileIO, error) {
	return func(ctx context.Context, read icebergio.IO) (icebergio.WriteFileIO, error) {
		return NewIO(ctx, read, s), nil
	}
}
