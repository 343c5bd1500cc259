package job

import (
	"context"
	"fmt"
	"path/filepath"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
)

// Listing is what a job's sources held when a run started: each source's
// files with their sizes and checksums. A run reads these files and no
// others, so a file landing mid-run changes nothing, and the listing's
// hash, recorded in the plan and the run, says exactly what was read.
type Listing struct {
	Sources map[string][]runrecord.Input `json:"sources"`
	Hash    string                       `json:"hash"`
}

// TableFiles lists the data files of a table's snapshot (0: the one main
// holds, or in a release the table as the release leaves it), and names
// what it read: TABLE@SNAPSHOT.
type TableFiles func(ctx context.Context, table string, snapshot int64) (string, []runrecord.Input, error)

// List lists the job's sources: every file a source's path names (a file,
// a glob, a folder), with its size and SHA-256, read in full; S3 sources
// by their object store (ListObjects), with ETags; a table's by the data
// files of its pinned snapshot, which the listing names.
func (j *Job) List(ctx context.Context, store source.ObjectStore, tables TableFiles) (*Listing, error) {
	l := &Listing{Sources: map[string][]runrecord.Input{}}
	var all []runrecord.Input
	for _, name := range j.SourceNames() {
		path := j.resolve(j.Sources[name].Path)
		var inputs []runrecord.Input
		if t := j.Sources[name].Table; t != "" {
			if tables == nil {
				return nil, fmt.Errorf("source %s: reading table %s needs a catalog", name, t)
			}
			read, files, err := tables(ctx, t, j.Sources[name].Snapshot)
			if err != nil {
				return nil, fmt.Errorf("source %s: %w", name, err)
			}
			// The snapshot is part of what was read: the same files of
			// another snapshot are another listing.
			inputs = append([]runrecord.Input{{URL: "iceberg:" + read}}, files...)
		} else if source.IsObjectURL(path) {
			if store == nil {
				return nil, fmt.Errorf("source %s: %s is on S3, and no S3 store is configured", name, path)
			}
			objs, err := source.ListObjects(ctx, store, path)
			if err != nil {
				return nil, fmt.Errorf("source %s: %w", name, err)
			}
			for _, o := range objs {
				inputs = append(inputs, runrecord.Input{URL: o.URL, Size: o.Size, ETag: o.ETag})
			}
		} else {
			files, err := source.ListInputs([]string{path})
			if err != nil {
				return nil, fmt.Errorf("source %s: %w", name, err)
			}
			for i, f := range files {
				if files[i], err = filepath.Abs(f); err != nil {
					return nil, err
				}
			}
			for _, f := range files {
				size, sum, err := parquetio.HashFile(ctx, icebergio.LocalFS{}, f)
				if err != nil {
					return nil, fmt.Errorf("source %s: %w", name, err)
				}
				inputs = append(inputs, runrecord.Input{URL: f, Size: size, ETag: "sha256:" + sum})
			}
		}
		l.Sources[name] = inputs
		all = append(all, inputs...)
	}
	l.Hash = runrecord.InputsHash(all)
	return l, nil
}
