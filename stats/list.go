package stats

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// FixNewList corrects the partition summaries a new snapshot's manifest
// list records for the manifests that snapshot wrote: iceberg-go records a
// partition value the empty string (or the empty binary) as a missing bound, which every engine reads
// as "all null" and so skips the manifest for any value. Such a manifest's
// summaries are computed again from its entries; every other byte of the
// list is kept. meta is the table as it was before the snapshot, so that
// a manifest no snapshot of it added is the new one's.
func FixNewList(data []byte, fsys icebergio.IO, meta table.Metadata) ([]byte, error) {
	manifests, err := iceberg.ReadManifestList(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	fixes := map[string]ListFix{}
	for _, m := range manifests {
		if meta.SnapshotByID(m.SnapshotID()) != nil || !lostBound(m) {
			continue
		}
		spec := meta.PartitionSpecByID(int(m.PartitionSpecID()))
		if spec == nil {
			continue
		}
		entries, err := m.FetchEntries(fsys, false)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		fixed, err := FieldSummaries(Summaries(*spec, meta.CurrentSchema(), entries))
		if err != nil {
			return nil, err
		}
		if !slices.EqualFunc(fixed, m.Partitions(), sameSummary) {
			fixes[m.FilePath()] = ListFix{Partitions: fixed}
		}
	}
	if len(fixes) == 0 {
		return data, nil
	}
	return PatchList(data, fixes, nil)
}

// lostBound says whether a manifest of files records a field summary with
// a bound missing, which a partition value the empty string or the empty binary leaves as iceberg-go
// writes them (or every value null, which the entries tell apart).
func lostBound(m iceberg.ManifestFile) bool {
	if m.AddedDataFiles()+m.ExistingDataFiles()+m.DeletedDataFiles() == 0 {
		return false
	}
	for _, s := range m.Partitions() {
		if s.LowerBound == nil || s.UpperBound == nil {
			return true
		}
	}
	return false
}

// FieldSummaries are summaries as a manifest list records them.
func FieldSummaries(sums []Summary) ([]iceberg.FieldSummary, error) {
	out := make([]iceberg.FieldSummary, len(sums))
	for i, s := range sums {
		fs, err := s.FieldSummary()
		if err != nil {
			return nil, err
		}
		out[i] = fs
	}
	return out, nil
}

func sameSummary(a, b iceberg.FieldSummary) bool {
	eqb := func(x, y *[]byte) bool {
		return (x == nil) == (y == nil) && (x == nil || bytes.Equal(*x, *y))
	}
	nan := func(p *bool) bool { return p != nil && *p }
	return a.ContainsNull == b.ContainsNull && nan(a.ContainsNaN) == nan(b.ContainsNaN) && eqb(a.LowerBound, b.LowerBound) && eqb(a.UpperBound, b.UpperBound)
}
