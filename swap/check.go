package swap

import (
	"context"
	"fmt"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"slices"

	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/catalog"
)

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
	at, err := snapshot.Load(ctx, p.Catalog, ident, snapshotID)
	if err != nil {
		return nil, err
	}
	contract, fsys, live := at.Contract, at.FS, at.Live
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
		got := snapshot.Paths(live[pp.Value])
		if !slices.Equal(got, want) {
			out = append(out, Mismatch{pp.Key, fmt.Sprintf("holds files %v, staged %v", got, want)})
			continue
		}
		fp, err := snapshot.Fingerprint(ctx, fsys, contract, pp.Value, got)
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
	if parent := at.Meta.SnapshotByID(snapshotID).ParentSnapshotID; parent != nil {
		base := at.Meta.SnapshotByID(*parent)
		if base == nil {
			return nil, fmt.Errorf("the snapshot %d replaced is no longer in the table's metadata", *parent)
		}
		if before, err = snapshot.Files(ctx, fsys, base, contract); err != nil {
			return nil, err
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

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
