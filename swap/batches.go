package swap

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

// A backfill of years can be committed in batches of partitions, in
// partition order, one snapshot each, all recorded under the run's id with
// their place ("3/12"). Partitions that exchange records within the run
// commit in the same batch (Plan.Together): a record moved from a later
// partition to an earlier one would otherwise be in both while main holds
// the first batch alone. A batch that fails stops the run; the batches
// before it stay committed, each verified as it landed. Running the same
// run again resumes: the table's history, never local state, says which
// batches landed (their partitions, with the fingerprints they recorded),
// and those are skipped when the new stage holds the same content.

// batchGroups splits a plan's partitions into its batches, as indexes into
// plan.Partitions: in partition order, plan.Batch at a time, a group of
// Together joining the batch of its first partition whole (which may make
// that batch larger).
func (plan *Plan) batchGroups() [][]int {
	index := map[string]int{}
	for i, pp := range plan.Partitions {
		index[pp.Value] = i
	}
	groupOf := map[int][]int{}
	for _, g := range plan.Together {
		var members []int
		for _, v := range g {
			if i, ok := index[v]; ok {
				members = append(members, i)
			}
		}
		slices.Sort(members)
		for _, i := range members {
			groupOf[i] = members
		}
	}
	var out [][]int
	var cur []int
	taken := map[int]bool{}
	for i := range plan.Partitions {
		if taken[i] {
			continue
		}
		members := groupOf[i]
		if members == nil {
			members = []int{i}
		}
		for _, m := range members {
			taken[m] = true
			cur = append(cur, m)
		}
		if len(cur) >= plan.Batch {
			slices.Sort(cur)
			out, cur = append(out, cur), nil
		}
	}
	if len(cur) > 0 {
		slices.Sort(cur)
		out = append(out, cur)
	}
	return out
}

// withLanded adds to a plan's groups the partitions of each batch of its
// run the table records: a resume finds at its base what the landed
// batches committed, so the moves they carried no longer show, and the
// run must still be cut as it was.
func (plan *Plan) withLanded(meta table.Metadata, load *runrecord.Loader) error {
	for _, s := range runrecord.FindAll(meta, plan.RunID) {
		rec, ok, err := load.Snapshot(&s)
		if err != nil {
			return err
		}
		if ok && rec.Batch != "" && len(rec.Partitions) > 1 {
			plan.Together = append(plan.Together, rec.Partitions)
		}
	}
	plan.Together = joinGroups(plan.Together)
	return nil
}

// sharing groups the partitions that hold rows of one rewritten file: the
// batch that takes the file out must hold all of them, or a snapshot
// between batches would lose the rows of those in later batches.
func (plan *Plan) sharing() [][]string {
	byFile := map[string][]string{}
	for _, pp := range plan.Partitions {
		for _, path := range pp.OldShares {
			byFile[path] = append(byFile[path], pp.Value)
		}
	}
	var out [][]string
	for _, g := range byFile {
		if len(g) > 1 {
			out = append(out, g)
		}
	}
	return out
}

// joinGroups merges groups of partition values that share one, so that
// each value is in one group; each group sorted, groups in order of their
// first value.
func joinGroups(groups [][]string) [][]string {
	parent := map[string]string{}
	var root func(string) string
	root = func(v string) string {
		if p, ok := parent[v]; ok && p != v {
			r := root(p)
			parent[v] = r
			return r
		}
		parent[v] = v
		return v
	}
	for _, g := range groups {
		for _, v := range g[1:] {
			if a, b := root(g[0]), root(v); a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	byRoot := map[string][]string{}
	for v := range parent {
		r := root(v)
		byRoot[r] = append(byRoot[r], v)
	}
	var out [][]string
	for _, g := range byRoot {
		if len(g) > 1 {
			slices.Sort(g)
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// batches splits a run into its batches, each a run of its own, with a
// plan of its own.
func batches(plan *run) []*run {
	groups := plan.batchGroups()
	out := make([]*run, 0, len(groups))
	for _, g := range groups {
		b := plan.fork()
		b.Partitions = make([]PartitionPlan, len(g))
		for j, i := range g {
			b.Partitions[j] = plan.Partitions[i]
		}
		b.BatchOf = fmt.Sprintf("%d/%d", len(out)+1, len(groups))
		if r := plan.Restated; r != nil { // each batch records its own share
			b.Restated = nil
			for _, pp := range b.Partitions {
				if slices.Contains(r.Partitions, pp.Key) {
					if b.Restated == nil {
						b.Restated = &Restatement{Reason: r.Reason, DecidedBy: r.DecidedBy}
					}
					b.Restated.Partitions = append(b.Restated.Partitions, pp.Key)
				}
			}
		}
		b.oldFiles = map[string][]iceberg.DataFile{}
		for _, pp := range b.Partitions {
			b.oldFiles[pp.Value] = plan.oldFiles[pp.Value]
		}
		b.Fingerprint, b.BaseFingerprint = fingerprints(b.Partitions)
		b.prior, b.Batch, b.Together = nil, 0, nil
		shares := b.shares()
		b.Rewritten = slices.DeleteFunc(slices.Clone(plan.Rewritten), func(f parquetio.File) bool { return !slices.Contains(shares, f.Path) })
		out = append(out, b)
	}
	return out
}

// Batches lists a plan's batches as the partition keys each commits, in
// the order they commit; nil for a plan committed whole.
func (plan *Plan) Batches() [][]string {
	if plan.Batch <= 0 || len(plan.Partitions) <= plan.Batch {
		return nil
	}
	var out [][]string
	for _, g := range plan.batchGroups() {
		keys := make([]string, len(g))
		for j, i := range g {
			keys[j] = plan.Partitions[i].Key
		}
		out = append(out, keys)
	}
	return out
}

// landedBatches reads from the table's history which batches of a run
// already landed and main still holds, by their place ("2/6"), as
// snapshot ids. The run id is the run's idempotency key: a recorded
// snapshot of the run that is not one of these batches with this content
// (other partitions, another cut, another fingerprint, a run committed
// whole), or one main no longer holds (rolled back), refuses the run.
func landedBatches(ctx context.Context, tbl *table.Table, plan *run, batches []*run) (map[string]int64, string, error) {
	meta := tbl.Metadata()
	recorded := runrecord.FindAll(meta, plan.RunID)
	if len(recorded) == 0 {
		return nil, "", nil
	}
	byPlace := map[string]*run{}
	for _, b := range batches {
		byPlace[b.BatchOf] = b
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, "", err
	}
	head, err := snapshot.Files(ctx, fsys, meta.CurrentSnapshot(), plan.contract)
	if err != nil {
		return nil, "", err
	}
	again := "publish it under a new run id"
	landed := map[string]int64{}
	load := runrecord.NewLoader(fsys)
	for _, s := range recorded {
		rec, _, err := load.Snapshot(&s)
		if err != nil {
			return nil, "", err
		}
		b := byPlace[rec.Batch]
		switch {
		case rec.Batch == "":
			return nil, fmt.Sprintf("run id %s was committed as one snapshot (%d), not in batches; %s", plan.RunID, s.SnapshotID, again), nil
		case b == nil:
			return nil, fmt.Sprintf("run id %s committed batch %s (snapshot %d), which this run, in %d batches, does not have; %s", plan.RunID, rec.Batch, s.SnapshotID, len(batches), again), nil
		case !slices.Equal(rec.Partitions, b.values()):
			return nil, fmt.Sprintf("run id %s committed batch %s (snapshot %d) for partitions %s, this run's batch %s holds %s; %s",
				plan.RunID, rec.Batch, s.SnapshotID, strings.Join(rec.Keys(), ","), b.BatchOf, strings.Join(b.keys(), ","), again), nil
		}
		for _, pp := range b.Partitions {
			if rec.PartitionHashes[pp.Key] != pp.Fingerprint.Hash {
				return nil, fmt.Sprintf("run id %s committed partition %s (snapshot %d) with other content than this input stages; %s", plan.RunID, verify.DisplayKey(pp.Key), s.SnapshotID, again), nil
			}
		}
		// Main holds the batch if its partitions hold now the files it
		// committed (paths are unique to an attempt).
		then, err := snapshot.Files(ctx, fsys, &s, plan.contract)
		if err != nil {
			return nil, "", err
		}
		for _, pp := range b.Partitions {
			if !slices.Equal(snapshot.Paths(head[pp.Value]), snapshot.Paths(then[pp.Value])) {
				return nil, fmt.Sprintf("batch %s of run %s was committed as snapshot %d, which main no longer holds in partition %s (rolled back, or replaced since); %s for what remains",
					rec.Batch, plan.RunID, s.SnapshotID, verify.DisplayKey(pp.Key), again), nil
			}
		}
		landed[rec.Batch] = s.SnapshotID
	}
	return landed, "", nil
}

func (plan *Plan) values() []string {
	out := make([]string, len(plan.Partitions))
	for i, pp := range plan.Partitions {
		out[i] = pp.Value
	}
	return out
}

// applyBatches commits a plan batch by batch, skipping the batches the
// table's history shows landed, and stops at the first that fails.
func (p *Publisher) applyBatches(ctx context.Context, tbl *table.Table, plan *run, noAutoRollback bool) (*Result, error) {
	res := &Result{Plan: plan.Plan, Status: StatusAlreadyPublished}
	raw, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	if err := plan.withLanded(tbl.Metadata(), runrecord.NewLoader(raw)); err != nil {
		return nil, err
	}
	batches := batches(plan)
	// A job's watermark, and the late rows it leaves out, go with the run's
	// last batch that commits: one that changes nothing commits nothing.
	for i := len(batches) - 1; i >= 0; i-- {
		if !batches[i].changesNothing() {
			batches[i].lastBatch = true
			break
		}
	}
	// The batches after one that failed are not committed: their files go.
	rest := func(from int) string {
		var said []string
		for _, b := range batches[from:] {
			said = append(said, p.discard(ctx, tbl, b))
		}
		return strings.Join(said, "; ")
	}
	if plan.contract == nil {
		var err error
		if plan.contract, err = contract.Of(tbl.Metadata()); err != nil {
			return res, fmt.Errorf("table %s: %w", plan.Table, err)
		}
	}
	landed, why, err := landedBatches(ctx, tbl, plan, batches)
	if err != nil {
		return res, err
	}
	if why != "" {
		res.Status = StatusRefused
		f := verify.Finding{Kind: verify.KindRunID, Message: why}
		return res, &outcome.RefusedError{Op: plan.op(), Table: plan.Table, Findings: []verify.Finding{f}, Cleanup: rest(0)}
	}
	for i, b := range batches {
		if i > 0 {
			now, err := p.Catalog.LoadTable(ctx, tbl.Identifier())
			if err != nil {
				return res, fmt.Errorf("load table %s: %w", plan.Table, err)
			}
			tbl = now
		}
		if id := landed[b.BatchOf]; id != 0 {
			p.discard(ctx, tbl, b)
			res.Batches = append(res.Batches, BatchResult{Batch: b.BatchOf, Partitions: b.keys(), SnapshotID: id, Status: StatusAlreadyPublished})
			res.SnapshotID = id
			continue
		}
		if err := rebaseBatch(ctx, tbl, plan, b, i); err != nil {
			res.Status = StatusNotCommitted
			return res, &outcome.OpError{Op: "commit", Table: plan.Table, RunID: plan.RunID, Err: fmt.Errorf("batch %s: %w", b.BatchOf, err),
				Hint: fmt.Sprintf("%s before it landed and stay; this batch's and the later batches' files: %s", words.Count(i, "batch", "batches"), rest(i)), Partial: onMain(res)}
		}
		r, err := p.apply(ctx, tbl, b, noAutoRollback)
		if r != nil {
			res.Batches = append(res.Batches, BatchResult{Batch: b.BatchOf, Partitions: b.keys(), SnapshotID: r.SnapshotID, Status: r.Status})
			res.Mismatches = append(res.Mismatches, r.Mismatches...)
		}
		if err != nil {
			res.Status = StatusNotCommitted
			if r != nil {
				res.Status = r.Status
			}
			return res, batchFailed(plan, b, i, r, err, rest(i+1), onMain(res))
		}
		if r.SnapshotID != 0 {
			res.SnapshotID = r.SnapshotID
		}
		if r.Status == StatusPublished {
			res.Status = StatusPublished
		}
	}
	return res, nil
}

// BatchResult is what became of one batch of a run committed in batches.
type BatchResult struct {
	Batch      string   `json:"batch"` // its place, "2/6"
	Partitions []string `json:"partitions"`
	SnapshotID int64    `json:"snapshot_id,omitempty,string"`
	Status     Status   `json:"status"`
}

func (plan *Plan) keys() []string {
	out := make([]string, len(plan.Partitions))
	for i, pp := range plan.Partitions {
		out[i] = pp.Key
	}
	return out
}

// onMain reports whether a batch of the run landed, now or in an earlier
// attempt: a later batch's failure leaves the table changed.
func onMain(res *Result) bool {
	return slices.ContainsFunc(res.Batches, func(b BatchResult) bool { return b.SnapshotID != 0 })
}

// batchFailed says what became of a run whose batch b (the i-th, counted
// from 0) failed with err, r its result if it has one: the batches before
// it stay (partial: some landed), and the later ones' files went (later).
func batchFailed(plan, b *run, i int, r *Result, err error, later string, partial bool) error {
	hint := fmt.Sprintf("%s before it landed and stay; run the same run id again to resume after them", words.Count(i, "batch", "batches"))
	if r != nil && (r.Status == StatusRolledBack || r.Status == StatusVerifyFailed) {
		// The run id records this batch now, and a resume cannot go over
		// a batch main does not hold.
		hint = fmt.Sprintf("%s before it landed and stay; this batch was committed and %s, so run id %s cannot resume over it: publish the remaining partitions under a new run id",
			words.Count(i, "batch", "batches"), map[Status]string{StatusRolledBack: "rolled back", StatusVerifyFailed: "kept as asked"}[r.Status], plan.RunID)
	}
	if later != "" {
		hint += "; the later batches' files: " + later
	}
	if partial {
		outcome.MarkPartial(err) // the table is not as it was
	}
	return fmt.Errorf("batch %s (%s) of run %s: %w\nhint: %s", b.BatchOf, strings.Join(b.keys(), ","), plan.RunID, err, hint)
}

// rebaseBatch checks that batch b (the i-th) of plan still holds on main
// as tbl holds it: main has moved since the plan's base, by the batches
// before it at least, and no commit since may have touched its partitions.
func rebaseBatch(ctx context.Context, tbl *table.Table, plan, b *run, i int) error {
	head := tbl.CurrentSnapshot()
	if i == 0 && plan.BaseSnapshotID != nil && head != nil && head.SnapshotID == *plan.BaseSnapshotID {
		return nil
	}
	why, err := rebase(ctx, tbl, b)
	if err == nil && why != "" {
		err = fmt.Errorf("%w: main moved since the plan's base snapshot %s: %s", outcome.ErrConflict, fmtID(plan.BaseSnapshotID), why)
	}
	return err
}
