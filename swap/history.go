package swap

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
)

// Entry is one snapshot of a table's main history, with the run that made it
// where lakeswap did.
type Entry struct {
	SnapshotID  int64            `json:"snapshot_id"`
	ParentID    *int64           `json:"parent_id,omitempty"`
	Time        time.Time        `json:"time"`
	Operation   string           `json:"operation"`
	Current     bool             `json:"current"`
	RunID       string           `json:"run_id,omitempty"`
	Partitions  []string         `json:"partitions,omitempty"`
	Rows        int64            `json:"rows,omitempty"`
	Sums        map[string]int64 `json:"sums,omitempty"`
	Fingerprint string           `json:"fingerprint,omitempty"`
	Source      string           `json:"source,omitempty"`
}

// History lists main's snapshots, newest first, and apart from them, in
// the order the table keeps them, the snapshots main no longer reaches (a
// rolled-back run).
func (p *Publisher) History(ctx context.Context, ident table.Identifier) (main []Entry, off []Entry, err error) {
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, nil, err
	}
	meta := tbl.Metadata()
	onMain := map[int64]bool{}
	if head := meta.CurrentSnapshot(); head != nil {
		for i, s := range table.AncestorsOf(head.SnapshotID, func(id int64) *table.Snapshot { return meta.SnapshotByID(id) }) {
			e := entryOf(s)
			e.Current = i == 0
			main = append(main, e)
			onMain[s.SnapshotID] = true
		}
	}
	for _, s := range meta.Snapshots() {
		if !onMain[s.SnapshotID] {
			off = append(off, entryOf(s))
		}
	}
	return main, off, nil
}

func entryOf(s table.Snapshot) Entry {
	e := Entry{SnapshotID: s.SnapshotID, ParentID: s.ParentSnapshotID, Time: time.UnixMilli(s.TimestampMs).UTC()}
	if s.Summary == nil {
		return e
	}
	e.Operation = string(s.Summary.Operation)
	props := s.Summary.Properties
	e.RunID = props[PropRunID]
	if e.RunID == "" {
		return e
	}
	e.Partitions = splitList(props[PropPartitions])
	if values, ok := recordedValues(props); ok {
		e.Partitions = e.Partitions[:0]
		for _, v := range values {
			e.Partitions = append(e.Partitions, props[PropPartitionColumn]+"="+v)
		}
	}
	e.Rows, _ = strconv.ParseInt(props[PropRows], 10, 64)
	e.Fingerprint = props[PropFingerprint]
	e.Source = props[PropSource]
	for k, v := range props {
		if col, ok := strings.CutPrefix(k, PropSumPrefix); ok {
			if e.Sums == nil {
				e.Sums = map[string]int64{}
			}
			e.Sums[col], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return e
}

// recordedValues reads the partition values a run recorded. Runs recorded
// before lakeswap.partition-values have only the comma-joined keys.
func recordedValues(props map[string]string) ([]string, bool) {
	if raw, ok := props[PropPartitionValues]; ok {
		var values []string
		if err := json.Unmarshal([]byte(raw), &values); err == nil {
			return values, true
		}
	}
	var values []string
	for _, key := range splitList(props[PropPartitions]) {
		_, v, _ := strings.Cut(key, "=")
		values = append(values, v)
	}
	return values, false
}
