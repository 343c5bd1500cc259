package swap

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

// A backfill of years can be committed in batches of partitions, in
// partition order, one snapshot each, all recorded under the run's id with
// their place ("3/12"). A batch that fails stops the run; the batches
// before it stay committed, each verified as it landed. Running the same
// run again resumes: the table's history, never local state, says which
// batches landed (their partitions, with the fingerprints they recorded),
// and those are skipped when the new stage holds the same content.

// batches splits a plan into its batches, each a plan of its own.
func (plan *Plan) batches() []*Plan {
	n := (len(plan.Partitions) + plan.Batch - 1) / plan.Batch
	out := make([]*Plan, 0, n)
	for i := 0; i < len(plan.Partitions); i += plan.Batch {
		b := *plan
		b.Partitions = plan.Partitions[i:min(i+plan.Batch, len(plan.Partitions))]
		b.BatchOf = fmt.Sprintf("%d/%d", len(out)+1, n)
		b.oldFiles = map[string][]iceberg.DataFile{}
		newFP, oldFP := map[string]verify.Fingerprint{}, map[string]verify.Fingerprint{}
		for _, pp := range b.Partitions {
			newFP[pp.Key], oldFP[pp.Key] = pp.Fingerprint, pp.OldFingerprint
			b.oldFiles[pp.Value] = plan.oldFiles[pp.Value]
		}
		b.Fingerprint, _ = verify.Combine(newFP) // the whole run's sums fit, so a batch's do
		b.BaseFingerprint, _ = verify.Combine(oldFP)
		b.prior, b.Batch = nil, 0
		out = append(out, &b)
	}
	return out
}

// landedAs says whether a batch already landed under the run's id, as
// snapshot id, going by the partitions and fingerprints the run's
// snapshots record; a batch the history records with other content, or in
// part, is refused.
func landedAs(meta table.Metadata, b *Plan) (int64, string) {
	type at struct {
		hash string
		id   int64
	}
	recorded := map[string]at{}
	for _, s := range runrecord.FindAll(meta, b.RunID) {
		rec, _ := runrecord.Read(s.Summary.Properties)
		for k, h := range rec.PartitionHashes {
			recorded[k] = at{h, s.SnapshotID}
		}
	}
	var id int64
	found, differ := 0, []string{}
	for _, pp := range b.Partitions {
		r, ok := recorded[pp.Key]
		if !ok {
			continue
		}
		found++
		id = r.id
		if r.hash != pp.Fingerprint.Hash {
			differ = append(differ, verify.DisplayKey(pp.Key))
		}
	}
	switch {
	case found == 0:
		return 0, ""
	case len(differ) > 0:
		return 0, fmt.Sprintf("run id %s already committed partition(s) %s with other content than this input stages; publish it under a new run id", b.RunID, strings.Join(differ, ","))
	case found < len(b.Partitions):
		return 0, fmt.Sprintf("run id %s committed some partitions of batch %s but not all (batches were cut differently?); publish it under a new run id", b.RunID, b.BatchOf)
	}
	return id, ""
}

// applyBatches commits a plan batch by batch, skipping the batches the
// table's history shows landed, and stops at the first that fails.
func (p *Publisher) applyBatches(ctx context.Context, tbl *table.Table, plan *Plan, noAutoRollback bool) (*Result, error) {
	res := &Result{Plan: plan, Status: "already-published"}
	batches := plan.batches()
	// The batches after one that failed are not committed: their files go.
	rest := func(from int) string {
		var said []string
		for _, b := range batches[from:] {
			said = append(said, p.discard(ctx, tbl, b))
		}
		return strings.Join(said, "; ")
	}
	for i, b := range batches {
		now, err := p.Catalog.LoadTable(ctx, tbl.Identifier())
		if err != nil {
			return res, fmt.Errorf("load table %s: %w", plan.Table, err)
		}
		tbl = now
		id, why := landedAs(tbl.Metadata(), b)
		if why != "" {
			res.Status = "refused"
			f := verify.Finding{Kind: verify.KindRunID, Message: why}
			return res, &RefusedError{Op: plan.op(), Table: plan.Table, Findings: []verify.Finding{f}, Cleanup: rest(i)}
		}
		if id != 0 {
			p.discard(ctx, tbl, b)
			res.Batches = append(res.Batches, BatchResult{Batch: b.BatchOf, Partitions: keysOf(b), SnapshotID: id, Status: "already-published"})
			res.SnapshotID = id
			continue
		}
		if i > 0 || plan.BaseSnapshotID == nil || tbl.CurrentSnapshot() == nil || tbl.CurrentSnapshot().SnapshotID != *plan.BaseSnapshotID {
			// Main moved, by the batches before this one at least.
			if why, err := rebase(ctx, tbl, b); err != nil || why != "" {
				if err == nil {
					err = fmt.Errorf("%w: main moved since the plan's base snapshot %s: %s", ErrConflict, fmtID(plan.BaseSnapshotID), why)
				}
				res.Status = "not-committed"
				return res, &OpError{Op: "commit", Table: plan.Table, RunID: plan.RunID, Err: fmt.Errorf("batch %s: %w", b.BatchOf, err),
					Hint: fmt.Sprintf("%d batch(es) before it landed; %s", i, rest(i))}
			}
		}
		r, err := p.apply(ctx, tbl, b, noAutoRollback)
		if r != nil {
			res.Batches = append(res.Batches, BatchResult{Batch: b.BatchOf, Partitions: keysOf(b), SnapshotID: r.SnapshotID, Status: r.Status})
			res.Mismatches = append(res.Mismatches, r.Mismatches...)
		}
		if err != nil {
			res.Status = "not-committed"
			if r != nil {
				res.Status = r.Status
			}
			return res, fmt.Errorf("batch %s (%s) of run %s: %w\nhint: %d batch(es) before it landed and stay; run the same run id again to resume after them; %s",
				b.BatchOf, strings.Join(keysOf(b), ","), plan.RunID, err, i, rest(i+1))
		}
		if r.SnapshotID != 0 {
			res.SnapshotID = r.SnapshotID
		}
		if r.Status == "published" {
			res.Status = "published"
		}
	}
	return res, nil
}

// BatchResult is what became of one batch of a run committed in batches.
type BatchResult struct {
	Batch      string   `json:"batch"` // its place, "2/6"
	Partitions []string `json:"partitions"`
	SnapshotID int64    `json:"snapshot_id,omitempty"`
	Status     string   `json:"status"`
}

func keysOf(plan *Plan) []string {
	out := make([]string, len(plan.Partitions))
	for i, pp := range plan.Partitions {
		out[i] = pp.Key
	}
	return out
}
