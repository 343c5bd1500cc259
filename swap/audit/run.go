package audit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/stats"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// VerifyResult compares a committed run with what it recorded.
type VerifyResult struct {
	RunID       string               `json:"run_id"`
	SnapshotID  int64                `json:"snapshot_id,string"`
	Recorded    string               `json:"recorded_fingerprint"`
	Computed    string               `json:"computed_fingerprint"`
	Rows        int64                `json:"rows"`
	Sums        map[string]exact.Sum `json:"sums"`
	Differences map[string]string    `json:"differences,omitempty"` // partition -> recomputed hash, where it differs
	// Statistics are the wrong bounds and counts (manifest entries,
	// footers, partition summaries) of the files in the run's partitions.
	Statistics []verify.Finding `json:"statistics,omitempty"`
	OK         bool             `json:"ok"`
	// Batches are the results of each batch of a run committed in batches,
	// oldest first; the fields above are the newest batch's.
	Batches []VerifyResult `json:"batches,omitempty"`
}

// VerifyRun recomputes the fingerprint of the partitions a run wrote, in the
// snapshot it committed, and compares it with the one the run recorded. A
// run committed in batches is verified batch by batch, each in its own
// snapshot (Batches); it is OK when every batch is.
func (a Auditor) VerifyRun(ctx context.Context, ident table.Identifier, runID string, snapshotID int64) (*VerifyResult, error) {
	t, err := snapshot.OpenTable(ctx, a.Catalog, ident)
	if err != nil {
		return nil, err
	}
	tbl := t.Table
	load := t.Runs
	if runID != "" {
		if all := runrecord.FindAll(tbl.Metadata(), runID); len(all) > 1 {
			var res *VerifyResult
			var errs []error
			var batches []VerifyResult
			for _, s := range all {
				r, err := a.verifySnapshot(ctx, ident, load, &s)
				if r == nil {
					return nil, err
				}
				errs, batches, res = append(errs, err), append(batches, *r), r
			}
			out := *res
			out.Batches, out.OK = batches, errors.Join(errs...) == nil
			return &out, errors.Join(errs...)
		}
	}
	run, err := snapshot.FindRun(tbl.Metadata(), runID, snapshotID)
	if err != nil {
		return nil, err
	}
	return a.verifySnapshot(ctx, ident, load, run)
}

// verifySnapshot verifies the run one snapshot records.
func (a Auditor) verifySnapshot(ctx context.Context, ident table.Identifier, load *runrecord.Loader, run *table.Snapshot) (*VerifyResult, error) {
	rec, _, err := load.Snapshot(run)
	if err != nil {
		return nil, err
	}
	if rec.Fingerprint == "" {
		return nil, fmt.Errorf("snapshot %d was not committed by lakeswap: it records no fingerprint", run.SnapshotID)
	}
	parts, err := snapshot.Fingerprints(ctx, a.Catalog, ident, run.SnapshotID, rec.Partitions)
	if unreadable := (*snapshot.UnreadableError)(nil); errors.As(err, &unreadable) {
		// What verify --table finds too, and says with the same code.
		res := &VerifyResult{RunID: rec.RunID, SnapshotID: run.SnapshotID, Recorded: rec.Fingerprint,
			Differences: map[string]string{unreadable.Partition: "unreadable"}}
		return res, &outcome.OpError{Op: "verify", Table: strings.Join(ident, "."), RunID: rec.RunID,
			Err: fmt.Errorf("%w: snapshot %d: %w", outcome.ErrVerifyFailed, run.SnapshotID, err)}
	}
	if err != nil {
		return nil, err
	}
	fp := verify.Combine(parts)
	res := &VerifyResult{RunID: rec.RunID, SnapshotID: run.SnapshotID, Recorded: rec.Fingerprint,
		Computed: fp.Hash, Rows: fp.Rows, Sums: fp.Sums}
	for k, pf := range parts {
		if rec.PartitionHashes[k] != pf.Hash {
			if res.Differences == nil {
				res.Differences = map[string]string{}
			}
			res.Differences[k] = pf.Hash
		}
	}
	res.OK = res.Recorded == res.Computed
	if !res.OK {
		return res, &outcome.OpError{Op: "verify", Table: strings.Join(ident, "."), RunID: res.RunID,
			Err: fmt.Errorf("%w: snapshot %d fingerprint %s, recorded %s", outcome.ErrVerifyFailed, run.SnapshotID, verify.Short(res.Computed), verify.Short(res.Recorded))}
	}
	if res.Statistics, err = a.runStatistics(ctx, ident, run, rec.Partitions); err != nil {
		return nil, err
	}
	if len(res.Statistics) > 0 {
		res.OK = false
		return res, &outcome.OpError{Op: "verify", Table: strings.Join(ident, "."), RunID: res.RunID,
			Err:  fmt.Errorf("%w: snapshot %d: %s", outcome.ErrVerifyFailed, run.SnapshotID, words.Count(len(res.Statistics), "wrong statistic")),
			Hint: "the rows are as recorded, but engines that skip files by these figures miss rows; `lakeswap repair-stats --table " + strings.Join(ident, ".") + "` mends the manifests"}
	}
	return res, nil
}

// runStatistics checks what other engines prune on for the files in a
// run's partitions: as main holds them where it still does (a repair of
// the table's statistics since the run is what readers see), else as the
// run's snapshot does.
func (a Auditor) runStatistics(ctx context.Context, ident table.Identifier, run *table.Snapshot, values []string) ([]verify.Finding, error) {
	at, err := snapshot.Load(ctx, a.Catalog, ident, run.SnapshotID)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, v := range values {
		paths = append(paths, snapshot.DataPaths(at.Live[v])...)
	}
	var findings []verify.Finding
	check := func(snap *table.Snapshot, paths []string) error {
		if len(paths) == 0 {
			return nil
		}
		rep, err := stats.CheckFiles(ctx, at.FS, at.Meta, snap, paths)
		if err != nil {
			return fmt.Errorf("check the statistics of snapshot %d: %w", snap.SnapshotID, err)
		}
		findings = append(findings, rep.Findings()...)
		return nil
	}
	head := at.Meta.CurrentSnapshot()
	if head == nil || head.SnapshotID == run.SnapshotID {
		return findings, check(run, paths)
	}
	now, err := snapshot.Load(ctx, a.Catalog, ident, head.SnapshotID)
	if err != nil {
		return nil, err
	}
	held := map[string]bool{}
	for _, files := range now.Live {
		for _, p := range snapshot.DataPaths(files) {
			held[p] = true
		}
	}
	var inMain, gone []string
	for _, p := range paths {
		if held[p] {
			inMain = append(inMain, p)
		} else {
			gone = append(gone, p)
		}
	}
	if err := check(head, inMain); err != nil {
		return nil, err
	}
	return findings, check(run, gone)
}
