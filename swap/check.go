package swap

import (
	"context"
	"fmt"
	"slices"

	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/verify"
)

// fingerprintFiles reads a partition's files and fingerprints their rows
// together; the order of files does not matter.
func fingerprintFiles(ctx context.Context, fsys icebergio.IO, c *contract.Contract, value string, files []string) (verify.Fingerprint, error) {
	acc := verify.NewAccumulator(c, value, nil)
	for _, path := range files {
		if err := addFile(ctx, fsys, acc, path); err != nil {
			return verify.Fingerprint{}, err
		}
	}
	return acc.Result(), nil
}

func addFile(ctx context.Context, fsys icebergio.IO, acc *verify.Accumulator, path string) error {
	rr, err := parquetio.Open(ctx, fsys, path)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec, ok := acc.Conform(rr.RecordBatch())
		if !ok {
			return fmt.Errorf("%s does not have the table's schema", path)
		}
		err := acc.Add(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return rr.Err()
}

// snapshotFiles is a snapshot's live data files by partition value, with
// what is needed to read them.
type snapshotFiles struct {
	meta     table.Metadata
	contract *contract.Contract
	fsys     icebergio.IO
	live     map[string][]iceberg.DataFile
}

// loadSnapshot reloads the table from the catalog and lists a snapshot's
// files.
func (p *Publisher) loadSnapshot(ctx context.Context, ident table.Identifier, snapshotID int64) (*snapshotFiles, error) {
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("reload %s: %w", strings.Join(ident, "."), err)
	}
	meta := tbl.Metadata()
	snap := meta.SnapshotByID(snapshotID)
	if snap == nil {
		return nil, fmt.Errorf("snapshot %d is not in the metadata of %s", snapshotID, strings.Join(ident, "."))
	}
	contract, err := contract.Of(meta)
	if err != nil {
		return nil, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	live, err := baseFiles(ctx, fsys, snap, contract)
	if err != nil {
		return nil, err
	}
	return &snapshotFiles{meta: meta, contract: contract, fsys: fsys, live: live}, nil
}

// Mismatch is one way a committed snapshot differs from its plan.
type Mismatch struct {
	Partition string `json:"partition"`
	What      string `json:"what"`
}

// checkCommitted reloads the table and checks the run's snapshot: each
// declared partition holds exactly the staged files, every other partition
// exactly what it held at the base, and the committed files' fingerprint is
// the staged one.
func (p *Publisher) checkCommitted(ctx context.Context, plan *Plan, snapshotID int64) ([]Mismatch, error) {
	p.progress().Step("verify")
	ident, err := catalog.ParseIdent(plan.Table)
	if err != nil {
		return nil, err
	}
	at, err := p.loadSnapshot(ctx, ident, snapshotID)
	if err != nil {
		return nil, err
	}
	contract, fsys, live := at.contract, at.fsys, at.live
	var out []Mismatch
	declared := map[string]bool{}
	for _, pp := range plan.Partitions {
		declared[pp.Value] = true
		files := pp.NewFiles
		if pp.same() {
			files = pp.OldFiles // left as they were
		}
		want := make([]string, len(files))
		for i, f := range files {
			want[i] = f.Path
		}
		slices.Sort(want)
		got := paths(live[pp.Value])
		if !slices.Equal(got, want) {
			out = append(out, Mismatch{pp.Key, fmt.Sprintf("holds files %v, staged %v", got, want)})
			continue
		}
		fp, err := fingerprintFiles(ctx, fsys, contract, pp.Value, got)
		if err != nil {
			return nil, err
		}
		if fp.Hash != pp.Fingerprint.Hash || fp.Rows != pp.Fingerprint.Rows {
			out = append(out, Mismatch{pp.Key, fmt.Sprintf("committed fingerprint %s (%d rows) differs from staged %s (%d rows)",
				short(fp.Hash), fp.Rows, short(pp.Fingerprint.Hash), pp.Fingerprint.Rows)})
		}
	}
	// Every other partition holds what it held in the snapshot the commit
	// replaced (the plan's base, or the head it was rebased on), which the
	// same metadata still lists.
	before := map[string][]iceberg.DataFile{}
	if parent := at.meta.SnapshotByID(snapshotID).ParentSnapshotID; parent != nil {
		base := at.meta.SnapshotByID(*parent)
		if base == nil {
			return nil, fmt.Errorf("the snapshot %d replaced is no longer in the table's metadata", *parent)
		}
		if before, err = baseFiles(ctx, fsys, base, contract); err != nil {
			return nil, err
		}
	}
	for v, files := range live {
		if !declared[v] && !slices.Equal(paths(files), paths(before[v])) {
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

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
