package stats

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/lakeswap/lakeswap/internal/manifest"
	"github.com/lakeswap/lakeswap/verify"
)

// Report is what a check of a snapshot's statistics found.
type Report struct {
	Manifests, Files int
	// Manifests whose entries or summaries are wrong, in the list's order.
	Wrong []ManifestReport
}

// Findings lists every finding, files' first.
func (r *Report) Findings() []verify.Finding {
	var out []verify.Finding
	for _, m := range r.Wrong {
		for _, p := range m.Problems {
			out = append(out, p.Finding)
		}
	}
	for _, m := range r.Wrong {
		out = append(out, m.Summaries...)
	}
	return out
}

// ManifestReport is one manifest with something wrong: its files'
// problems with the figures that correct them, and its summaries'.
type ManifestReport struct {
	Manifest iceberg.ManifestFile
	Problems []Problem
	// Fixes are the corrected figures of each file with a problem, by path.
	Fixes map[string]Metrics
	// Summaries are the findings on the manifest's partition summaries;
	// Exact what they should be.
	Summaries []verify.Finding
	Exact     []iceberg.FieldSummary
}

// CheckSnapshot checks every data file of a snapshot (whoever wrote it):
// its manifest entry's bounds and counts and its Parquet footer against its
// rows, and each manifest's partition summaries (delete manifests' too)
// against its entries. Files are read a few at a time. Delete files and
// files other than Parquet are not read.
func CheckSnapshot(ctx context.Context, fsys icebergio.IO, meta table.Metadata, snap *table.Snapshot) (*Report, error) {
	return check(ctx, fsys, meta, snap, nil)
}

// CheckFiles checks the data files of a snapshot with the given paths
// only, and the summaries of the manifests that hold them: a run's own.
func CheckFiles(ctx context.Context, fsys icebergio.IO, meta table.Metadata, snap *table.Snapshot, paths []string) (*Report, error) {
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	return check(ctx, fsys, meta, snap, want)
}

func check(ctx context.Context, fsys icebergio.IO, meta table.Metadata, snap *table.Snapshot, only map[string]bool) (*Report, error) {
	rep := &Report{}
	if snap == nil {
		return rep, nil
	}
	schema := meta.CurrentSchema()
	if snap.SchemaID != nil {
		for _, s := range meta.Schemas() {
			if s.ID == *snap.SchemaID {
				schema = s
			}
		}
	}
	// A delete manifest's summaries are checked too: a reader that skips
	// one by them applies none of its deletes.
	for read, err := range manifest.Walk(ctx, fsys, snap, false, nil) {
		if err != nil {
			return nil, err
		}
		m, entries := read.File, read.Entries
		var live []iceberg.DataFile
		for _, e := range entries {
			df := e.DataFile()
			if e.Status() == iceberg.EntryStatusDELETED || df.ContentType() != iceberg.EntryContentData || df.FileFormat() != iceberg.ParquetFile {
				continue
			}
			if only == nil || only[df.FilePath()] {
				live = append(live, df)
			}
		}
		if only != nil && len(live) == 0 {
			continue // another run's manifest
		}
		rep.Manifests++
		rep.Files += len(live)
		mr := ManifestReport{Manifest: m, Fixes: map[string]Metrics{}}
		if err := checkEntries(ctx, fsys, schema, meta.NameMapping(), live, &mr); err != nil {
			return nil, err
		}
		if spec := meta.PartitionSpecByID(int(m.PartitionSpecID())); spec != nil {
			exact := Summaries(*spec, schema, entries)
			mr.Summaries = CheckSummaries(m, exact)
			if mr.Exact, err = FieldSummaries(exact); err != nil {
				return nil, err
			}
		}
		if len(mr.Problems) > 0 || len(mr.Summaries) > 0 {
			rep.Wrong = append(rep.Wrong, mr)
		}
	}
	return rep, nil
}

// checkEntries reads each file and checks its entry and footer.
func checkEntries(ctx context.Context, fsys icebergio.IO, schema *iceberg.Schema, mapping iceberg.NameMapping, files []iceberg.DataFile, mr *ManifestReport) error {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(min(runtime.NumCPU(), 4))
	for _, df := range files {
		g.Go(func() error {
			f, err := ReadMapped(gctx, fsys, df.FilePath(), schema, mapping)
			if err != nil {
				if gctx.Err() != nil {
					return err
				}
				// One file that cannot be read stops no other's check.
				mu.Lock()
				defer mu.Unlock()
				mr.Problems = append(mr.Problems, Problem{File: df.FilePath(), Unread: true, Finding: verify.Finding{Kind: verify.KindStatistics,
					Where: df.FilePath(), Message: "cannot be read to check its statistics: " + err.Error()}})
				return nil
			}
			probs := append(CheckFile(df, f), CheckFooter(f)...)
			if len(probs) == 0 {
				return nil
			}
			fix := Metrics{}
			for _, p := range probs {
				if c, ok := f.Columns[p.FieldID]; ok && !p.Footer && !p.Unread {
					fix[p.FieldID] = Corrected(c)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			mr.Problems = append(mr.Problems, probs...)
			if len(fix) > 0 {
				mr.Fixes[df.FilePath()] = fix
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	slices.SortStableFunc(mr.Problems, func(a, b Problem) int { return strings.Compare(a.Where, b.Where) })
	return nil
}
