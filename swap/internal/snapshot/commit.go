package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	stdio "io"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/stats"
)

// RebaseAttempts bounds how often a commit is tried again on a main that
// keeps moving under it.
const RebaseAttempts = 10

// Catalog is what a commit needs of a catalog: loading a table and
// committing to it, iceberg-go's table.CatalogIO.
type Catalog = table.CatalogIO

// Extended is a catalog that adds requirements and updates to every commit
// made through it, in the same compare-and-swap.
type Extended struct {
	Catalog
	Reqs    []table.Requirement
	Updates []table.Update
}

func (c *Extended) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	return c.Catalog.CommitTable(ctx, ident, append(slices.Clip(reqs), c.Reqs...), append(slices.Clip(updates), c.Updates...))
}

// RecordingIO notes every file iceberg-go writes through it. Given the
// table's metadata, it also corrects the partition summaries of the
// manifest list a commit writes (stats.FixNewList), so that every commit
// of lakeswap's records summaries other engines can prune on.
type RecordingIO struct {
	icebergio.IO
	Meta    table.Metadata
	mu      sync.Mutex
	written []string
}

// FS is the recorder where the table's IO can write, else the IO itself.
func (r *RecordingIO) FS() icebergio.IO {
	if _, ok := r.IO.(icebergio.WriteFileIO); ok {
		return r
	}
	return r.IO
}

func (r *RecordingIO) note(name string) {
	r.mu.Lock()
	r.written = append(r.written, name)
	r.mu.Unlock()
}

// Create notes name before it is written, so that a half-written file is
// removed too.
func (r *RecordingIO) Create(name string) (icebergio.FileWriter, error) {
	r.note(name)
	if base := path.Base(name); r.Meta != nil && strings.HasPrefix(base, "snap-") && strings.HasSuffix(base, ".avro") {
		return &listWriter{io: r, name: name}, nil
	}
	return r.IO.(icebergio.WriteFileIO).Create(name)
}

// listWriter holds a manifest list until it is closed, then writes it
// with its summaries corrected.
type listWriter struct {
	io   *RecordingIO
	name string
	buf  bytes.Buffer
}

func (w *listWriter) Write(p []byte) (int, error)            { return w.buf.Write(p) }
func (w *listWriter) ReadFrom(r stdio.Reader) (int64, error) { return w.buf.ReadFrom(r) }

func (w *listWriter) Close() error {
	data, err := stats.FixNewList(w.buf.Bytes(), w.io.IO, w.io.Meta)
	if err != nil {
		return fmt.Errorf("correct the partition summaries of %s: %w", w.name, err)
	}
	return w.io.IO.(icebergio.WriteFileIO).WriteFile(w.name, data)
}

func (r *RecordingIO) WriteFile(name string, p []byte) error {
	r.note(name)
	return r.IO.(icebergio.WriteFileIO).WriteFile(name, p)
}

// RemoveWritten deletes the metadata files of a commit the catalog
// refused, on a context of its own (a cancelled commit cleans up too), and
// says what it did.
func RemoveWritten(ctx context.Context, log *slog.Logger, tbl *table.Table, rec *RecordingIO) string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
	defer cancel()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		fsys = rec.IO
	}
	var left []string
	for _, f := range rec.written {
		if err := fsys.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Warn("remove metadata file of the refused commit", "path", f, "err", err)
			left = append(left, f)
		}
	}
	if len(left) > 0 {
		return fmt.Sprintf("could not remove %s of the refused commit: %s", words.Count(len(left), "manifest file"), strings.Join(left, ", "))
	}
	// A metadata file the catalog itself wrote before refusing is the
	// catalog's: no table version names it, and lakeswap cannot tell it
	// from another writer's.
	return fmt.Sprintf("removed the %s the refused commit wrote", words.Count(len(rec.written), "manifest file"))
}

// CleanupTimeout bounds how long removing an attempt's files may take.
const CleanupTimeout = time.Minute
