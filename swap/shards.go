package swap

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/verify"
)

// shards checks that plans can be committed together as one snapshot: the
// partial plans of one backfill, staged apart (by several machines, or an
// orchestrator's parallel tasks) against the same base. They must name one
// table, one run id (the snapshot records one run), one base snapshot and
// one contract, and no partition twice: two stagings of one partition
// would each replace the same old files, and only one could be right.
func shards(plans []*run) error {
	first := plans[0]
	owner := map[string]string{} // partition value -> run and attempt that staged it
	for i, plan := range plans {
		if len(plans) > 1 && len(plan.Rewritten) > 0 {
			// Each shard would carry the rows of the files it rewrites
			// into partitions another shard may declare.
			return fmt.Errorf("run %s attempt %s rewrites files of an earlier partition spec (--rewrite-overlapping): such a plan is applied alone, not as a shard; plan the run as one", plan.RunID, plan.Attempt)
		}
		if i > 0 {
			switch {
			case plan.Table != first.Table:
				return fmt.Errorf("partial plans of one apply are of one table: %s and %s", first.Table, plan.Table)
			case plan.RunID != first.RunID:
				return fmt.Errorf("partial plans of one apply share a run id, as the snapshot records one run: %s and %s; plan every shard with the same --run-id", first.RunID, plan.RunID)
			case fmtID(plan.BaseSnapshotID) != fmtID(first.BaseSnapshotID):
				return fmt.Errorf("partial plans of one apply were planned against one base snapshot: %s and %s; plan the shards again against the table as it is now", fmtID(first.BaseSnapshotID), fmtID(plan.BaseSnapshotID))
			case plan.Batch != first.Batch:
				return fmt.Errorf("partial plans of one apply are committed one way: run %s attempt %s commits in batches of %d, attempt %s of %d (0: one snapshot)", plan.RunID, first.Attempt, first.Batch, plan.Attempt, plan.Batch)
			case (plan.job == nil) != (first.job == nil):
				return fmt.Errorf("partial plans of one apply are computed one way: of run %s, attempt %s was %s, attempt %s %s; plan every shard with the same --job, or none", plan.RunID, first.Attempt, computedBy(first), plan.Attempt, computedBy(plan))
			case plan.PartitionColumn != first.PartitionColumn || !reflect.DeepEqual(plan.Contract, first.Contract):
				return fmt.Errorf("partial plans of one apply were planned under one contract of %s; run %s attempt %s was not", first.Table, plan.RunID, plan.Attempt)
			}
		}
		for _, other := range plans[:i] {
			if err := sameDecisions(other, plan); err != nil {
				return err
			}
			if other == plan || other.RunID == plan.RunID && other.Attempt == plan.Attempt {
				return fmt.Errorf("the plan of run %s attempt %s is given twice", plan.RunID, plan.Attempt)
			}
		}
		for _, pp := range plan.Partitions {
			if by, ok := owner[pp.Value]; ok {
				return fmt.Errorf("partition %s is in two partial plans (attempts %s and %s of run %s): partial plans of one apply must not overlap; discard one and plan the shards on disjoint partitions",
					verify.DisplayKey(pp.Key), by, plan.Attempt, plan.RunID)
			}
			owner[pp.Value] = plan.Attempt
		}
	}
	return nil
}

// sameDecisions refuses shards of one run that decided differently on
// late rows (--leave in one, --restate in another, or other reasons) or
// on frozen partitions (other reasons): the run records one decision of
// each, with one reason, and merging would record the first shard's for
// every day. A shard that decided nothing joins any.
func sameDecisions(a, b *run) error {
	if a.job != nil && b.job != nil {
		if _, err := a.job.JoinShard(b.job, nil); err != nil {
			return fmt.Errorf("the shards of run %s (attempts %s and %s) %w; plan the shards with the same decision and reason, or apply them as runs of their own (each its own --run-id)", a.RunID, a.Attempt, b.Attempt, err)
		}
	}
	if ra, rb := a.Restated, b.Restated; ra != nil && rb != nil && (ra.Reason != rb.Reason || ra.DecidedBy != rb.DecidedBy) {
		return fmt.Errorf("the shards of run %s restate frozen partitions for different reasons: attempt %s by %s (%q), attempt %s by %s (%q); a run records one: plan the shards with the same --reason, or apply them as runs of their own (each its own --run-id)",
			a.RunID, a.Attempt, words.Printable(ra.DecidedBy), words.Printable(ra.Reason), b.Attempt, words.Printable(rb.DecidedBy), words.Printable(rb.Reason))
	}
	return nil
}

// merge joins bound partial plans into the one plan their snapshot commits
// and records: every partition, in partition order, and the fingerprints
// of the whole.
func merge(plans []*run) *run {
	if len(plans) == 1 {
		return plans[0]
	}
	m := plans[0].fork()
	m.Partitions, m.Inputs, m.Findings, m.Warnings = nil, nil, nil, nil
	m.oldFiles = map[string][]iceberg.DataFile{}
	var attempts, sources []string
	for _, plan := range plans {
		attempts = append(attempts, plan.Attempt)
		if plan.Source != "" && !slices.Contains(sources, plan.Source) {
			sources = append(sources, plan.Source)
		}
		for _, pp := range plan.Partitions {
			pp.attempt = plan.Attempt
			m.Partitions = append(m.Partitions, pp)
		}
		m.Inputs = append(m.Inputs, plan.Inputs...)
		// Each shard's notes on late rows are of its own range: the
		// run's are made again from the joined job below.
		var own []string
		if plan.job != nil {
			own = plan.job.Notes()
		}
		for _, w := range plan.Warnings {
			if !slices.Contains(own, w) {
				m.Warnings = append(m.Warnings, w)
			}
		}
		if r := plan.Restated; r != nil && plan != plans[0] {
			if m.Restated == nil {
				m.Restated = &Restatement{Reason: r.Reason, DecidedBy: r.DecidedBy}
			} else {
				m.Restated = &Restatement{Reason: m.Restated.Reason, DecidedBy: m.Restated.DecidedBy, Partitions: slices.Clone(m.Restated.Partitions)}
			}
			m.Restated.Partitions = append(m.Restated.Partitions, r.Partitions...)
		}
		m.NameMapping = m.NameMapping || plan.NameMapping
		m.held = m.held && plan.held
		for v, files := range plan.oldFiles {
			m.oldFiles[v] = files
		}
	}
	m.Attempt, m.Source = strings.Join(attempts, ","), strings.Join(sources, "; ")
	m.Checks = mergeChecks(plans)
	slices.SortFunc(m.Partitions, func(a, b PartitionPlan) int { return strings.Compare(a.Value, b.Value) })
	m.Fingerprint, m.BaseFingerprint = fingerprints(m.Partitions)
	if m.job != nil {
		for _, plan := range plans[1:] {
			if plan.job == nil {
				continue
			}
			j, err := m.job.JoinShard(plan.job, m.Partitions)
			if err == nil {
				err = m.setJob(j)
			}
			if err != nil { // shards judged their decisions one already
				m.Findings = append(m.Findings, verify.Finding{Kind: verify.KindPartialPlans, Message: err.Error()})
			}
		}
		m.Warnings = append(m.Warnings, m.job.Notes()...)
	}
	return m
}

// computedBy says how a plan's rows were computed: by a job, or not.
func computedBy(plan *run) string {
	if plan.job != nil {
		return "computed by a job"
	}
	return "staged from its input"
}
