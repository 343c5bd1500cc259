package swap

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/swap/internal/layout"
)

// Unchanged is what a named run that committed nothing leaves, so that
// status --run answers for it as for a run that landed: the snapshot that
// held its content already. It is kept in the table's storage,
// <location>/lakeswap/unchanged/<run>.json, and never in the table's
// metadata: an identical rerun changes nothing of the table.
type Unchanged struct {
	RunID       string    `json:"run_id"`
	SnapshotID  int64     `json:"snapshot_id,string"` // main's, which held the run's content
	Fingerprint string    `json:"fingerprint"`
	Partitions  []string  `json:"partitions"`
	Rows        int64     `json:"rows"`
	Time        time.Time `json:"time"`
}

// unchangedLocation is where a run's Unchanged record is.
func unchangedLocation(meta table.Metadata, runID string) string {
	return strings.TrimSuffix(meta.Location(), "/") + "/lakeswap/unchanged/" + layout.RunSegment(runID) + ".json"
}

// noteUnchanged records that a named run found its partitions holding its
// content. A record that cannot be written is logged: the run's answer
// stands without it.
func (p *Publisher) noteUnchanged(ctx context.Context, tbl *table.Table, plan *run) {
	rec := Unchanged{RunID: plan.RunID, Fingerprint: plan.Fingerprint.Hash, Rows: plan.Fingerprint.Rows, Time: time.Now().UTC()}
	if s := tbl.Metadata().CurrentSnapshot(); s != nil {
		rec.SnapshotID = s.SnapshotID
	}
	for _, pp := range plan.Partitions {
		rec.Partitions = append(rec.Partitions, pp.Key)
	}
	b, err := json.Marshal(rec)
	if err == nil {
		wfs, werr := p.holds(tbl)(ctx)
		if err = werr; err == nil {
			loc := unchangedLocation(tbl.Metadata(), plan.RunID)
			_ = wfs.Remove(loc) // a store may refuse to overwrite
			err = wfs.WriteFile(loc, b)
		}
	}
	if err != nil {
		p.log().Warn("record the unchanged run for status", "run", plan.RunID, "err", err)
	}
}

// UnchangedRun reads what a named run that committed nothing recorded of
// itself on table ident; nil when it recorded nothing.
func (p *Publisher) UnchangedRun(ctx context.Context, ident table.Identifier, runID string) (*Unchanged, error) {
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	f, err := fsys.Open(unchangedLocation(tbl.Metadata(), runID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, err
	}
	var rec Unchanged
	if err := json.Unmarshal(b, &rec); err != nil || rec.RunID != runID {
		return nil, nil // not a record of this run's: as if none
	}
	return &rec, nil
}
