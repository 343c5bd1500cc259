package swap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/stats"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// Mismatch is one way a committed snapshot differs from its plan.
type Mismatch struct {
	Partition string `json:"partition"`
	What      string `json:"what"`
}

// readBackOnce reloads the table and checks the run's snapshot: each
// declared partition holds exactly the staged files, every other partition
// exactly what it held at the base, and the committed files' fingerprint is
// the staged one.
func (p *Publisher) readBackOnce(ctx context.Context, plan *run, snapshotID int64) ([]Mismatch, error) {
	p.progress().Step("verify")
	ident, err := catalog.ParseIdent(plan.Table)
	if err != nil {
		return nil, err
	}
	at, err := snapshot.Load(ctx, p.Catalog, ident, snapshotID)
	if err != nil {
		return nil, err
	}
	contract, fsys, live := at.Contract, at.FS, at.Live
	declared := map[string]bool{}
	// One mismatch or none a partition, found side by side (each reads
	// its own files), reported in the plan's order.
	found := make([]*Mismatch, len(plan.Partitions))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(min(runtime.NumCPU(), 4)) // each holds a file of up to 32 MiB
	for i, pp := range plan.Partitions {
		declared[pp.Value] = true
		want := slices.Sorted(slices.Values(filePaths(pp.NewFiles)))
		if pp.same() {
			want = pp.oldPaths() // left as they were, deletes and all
		}
		got := snapshot.Paths(live[pp.Value])
		if !slices.Equal(got, want) {
			found[i] = &Mismatch{pp.Key, fmt.Sprintf("holds files %v, staged %v", got, want)}
			continue
		}
		g.Go(func() error {
			var fp verify.Fingerprint
			var err error
			if pp.same() {
				fp, err = snapshot.Fingerprint(gctx, fsys, contract, pp.Value, snapshot.DataPaths(live[pp.Value]))
			} else {
				fp, err = fingerprintWritten(gctx, fsys, contract, &pp)
			}
			if err != nil {
				return err
			}
			if fp.Hash != pp.Fingerprint.Hash || fp.Rows != pp.Fingerprint.Rows {
				found[i] = &Mismatch{pp.Key, fmt.Sprintf("committed fingerprint %s (%s) differs from staged %s (%s)",
					verify.Short(fp.Hash), words.Count(fp.Rows, "row"), verify.Short(pp.Fingerprint.Hash), words.Count(pp.Fingerprint.Rows, "row"))}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []Mismatch
	for _, m := range found {
		if m != nil {
			out = append(out, *m)
		}
	}
	wrong, err := readBackStatistics(ctx, at, plan, snapshotID)
	if err != nil {
		return nil, err
	}
	out = append(out, wrong...)
	// Every other partition holds what it held in the snapshot the commit
	// replaced (the plan's base, or the head it was rebased on), which the
	// same metadata still lists.
	before := map[string][]iceberg.DataFile{}
	if parent := at.Meta.SnapshotByID(snapshotID).ParentSnapshotID; parent != nil {
		base := at.Meta.SnapshotByID(*parent)
		if base == nil {
			return nil, fmt.Errorf("the snapshot %d replaced is no longer in the table's metadata", *parent)
		}
		if before, err = snapshot.Files(ctx, fsys, base, contract); err != nil {
			return nil, err
		}
		// The earlier spec's files are those of the replaced snapshot but
		// the ones the run rewrote.
		earlier, err := snapshot.Earlier(ctx, fsys, base, contract)
		if err != nil {
			return nil, err
		}
		shares := plan.shares()
		want := slices.DeleteFunc(snapshot.Paths(earlier), func(p string) bool { return slices.Contains(shares, p) })
		if got := snapshot.Paths(at.Earlier); !slices.Equal(got, want) {
			out = append(out, Mismatch{contract.Partition.Key(earlierSpec), fmt.Sprintf("holds files %v, want %v", got, want)})
		}
	}
	for v, files := range live {
		if !declared[v] && !slices.Equal(snapshot.Paths(files), snapshot.Paths(before[v])) {
			out = append(out, Mismatch{contract.Partition.Key(v), "partition outside the run changed"})
		}
	}
	for v := range before {
		if _, ok := live[v]; !ok && !declared[v] {
			out = append(out, Mismatch{contract.Partition.Key(v), "partition outside the run lost its files"})
		}
	}
	return out, nil
}

// readBackStatistics checks what other engines prune on for the files the
// run wrote: each file's bounds and counts, in its manifest entry and its
// footer, and the summaries of the manifests that hold them.
func readBackStatistics(ctx context.Context, at *snapshot.At, plan *run, snapshotID int64) ([]Mismatch, error) {
	key := map[string]string{}
	var paths []string
	for _, pp := range plan.Partitions {
		if pp.same() {
			continue
		}
		for _, f := range pp.NewFiles {
			key[f.Path] = pp.Key
			paths = append(paths, f.Path)
		}
	}
	if len(paths) == 0 {
		return nil, nil
	}
	rep, err := stats.CheckFiles(ctx, at.FS, at.Meta, at.Meta.SnapshotByID(snapshotID), paths)
	if err != nil {
		return nil, fmt.Errorf("check the statistics of the committed files: %w", err)
	}
	var out []Mismatch
	for _, m := range rep.Wrong {
		for _, p := range m.Problems {
			out = append(out, Mismatch{key[p.File], p.Finding.String()})
		}
		for _, f := range m.Summaries {
			out = append(out, Mismatch{"manifest " + m.Manifest.FilePath(), f.String()})
		}
	}
	return out, nil
}

// fingerprintWritten reads back the files the run wrote for a partition
// in one pass each: their bytes against the size and SHA-256 recorded when
// they were written, their rows into a fingerprint. Bytes read whole that
// are not those written are a *changedBytes, whether or not they decode.
func fingerprintWritten(ctx context.Context, fsys icebergio.IO, c *contract.Contract, pp *PartitionPlan) (verify.Fingerprint, error) {
	acc := verify.NewFingerprinter(c, pp.Value)
	for _, f := range pp.NewFiles {
		n, sum, err := snapshot.AddHashed(ctx, fsys, acc, f.Path)
		if sum != "" && f.SHA256 != "" && (n != f.Bytes || sum != f.SHA256) {
			return verify.Fingerprint{}, &changedBytes{Mismatch{pp.Key, fmt.Sprintf("committed file %s has %d bytes with SHA-256 %s, written as %d bytes with SHA-256 %s",
				f.Path, n, verify.Short(sum), f.Bytes, verify.Short(f.SHA256))}}
		}
		if err != nil {
			return verify.Fingerprint{}, err
		}
	}
	return acc.Result(), nil
}

// changedBytes is a committed file read whole whose bytes are not those
// written. It is read again, as a read that failed is, since a read cut
// short without an error looks the same; still so at the last check, it
// is a mismatch.
type changedBytes struct{ m Mismatch }

func (c *changedBytes) Error() string { return c.m.Partition + ": " + c.m.What }

// readBackCommit reads a landed commit back and compares it with the plan,
// again after a read error (a reset, a truncated body) with backoff: only
// a check that cannot complete is an error. A file the commit references
// that is gone (removed behind the run's back, by a discard of the same
// plan, say) makes the snapshot unreadable, which is as wrong as other
// content.
func (p *Publisher) readBackCommit(ctx context.Context, plan *run, snapshotID int64) ([]Mismatch, error) {
	wait := readBackBackoff
	for attempt := 1; ; attempt++ {
		mismatches, err := p.readBackOnce(ctx, plan, snapshotID)
		if errors.Is(err, fs.ErrNotExist) {
			return []Mismatch{{What: "a committed file is missing: " + err.Error()}}, nil
		}
		var changed *changedBytes
		if errors.As(err, &changed) && attempt >= readBackAttempts {
			return []Mismatch{changed.m}, nil
		}
		if err == nil || attempt >= readBackAttempts || ctx.Err() != nil {
			return mismatches, err
		}
		p.log().Warn("reading the commit back failed; trying again", "run", plan.RunID, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return nil, errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// removeUnchanged removes the staged files of the partitions a commit left
// as they were (their content unchanged): no snapshot references them.
func (p *Publisher) removeUnchanged(ctx context.Context, tbl *table.Table, plan *run) {
	sub := plan.fork()
	sub.Partitions = nil
	for _, pp := range plan.Partitions {
		if pp.same() && !pp.Adopted {
			sub.Partitions = append(sub.Partitions, pp)
		}
	}
	if len(sub.Partitions) == 0 {
		return
	}
	if !plan.bound {
		p.removeStaged(ctx, tbl, sub)
		return
	}
	if _, err := p.discardListed(ctx, tbl, sub); err != nil {
		p.log().Warn("staged files of unchanged partitions left in place", "run", plan.RunID, "err", err)
	}
}

// Reading a landed commit back is retried this many times, with backoff
// from readBackBackoff, before its outcome is reported as unverified.
var (
	readBackAttempts = 4
	readBackBackoff  = time.Second
)
