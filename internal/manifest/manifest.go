package manifest

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Read is one manifest of a snapshot and its entries.
type Read struct {
	File    iceberg.ManifestFile
	Entries []iceberg.ManifestEntry
}

// Walk yields the manifests of snap that keep accepts (nil: all), each
// with its entries, in the manifest list's order; liveOnly leaves out the
// entries of files the manifest marks deleted. It stops at the first
// error, which names the manifest list or the manifest, and when ctx is
// done. A nil snap yields nothing.
func Walk(ctx context.Context, fsys icebergio.IO, snap *table.Snapshot, liveOnly bool, keep func(iceberg.ManifestFile) bool) iter.Seq2[Read, error] {
	return func(yield func(Read, error) bool) {
		if snap == nil {
			return
		}
		files, err := snap.Manifests(fsys)
		if err != nil {
			yield(Read{}, fmt.Errorf("read manifest list of snapshot %d: %w", snap.SnapshotID, err))
			return
		}
		for _, m := range files {
			if keep != nil && !keep(m) {
				continue
			}
			if err := ctx.Err(); err != nil {
				yield(Read{}, err)
				return
			}
			entries, err := m.FetchEntries(fsys, liveOnly)
			if err != nil {
				yield(Read{}, fmt.Errorf("read manifest %s: %w", m.FilePath(), err))
				return
			}
			if !yield(Read{File: m, Entries: entries}, nil) {
				return
			}
		}
	}
}
