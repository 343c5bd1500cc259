package swap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
)

// A Job is what the SQL job that computed a run's rows brings to it
// beyond the rows: its version and sources, its rejected rows and, for a
// job that tracks its rows' arrival, the late rows and what the run
// decides of them. Package job implements it. swap keeps its document in
// the plan as JSON it does not read (Plan.Job) and meets it at four
// steps: the guard late arrivals (JudgeLate), the record a snapshot keeps
// (Record), shards joined (JoinShard) and a commit on a main that moved
// (Stale).
type Job interface {
	// Tracks says whether the run tracks its rows' arrival: the guard
	// late arrivals judges only such a run.
	Tracks() bool
	// JudgeLate judges the staged partitions for the guard late
	// arrivals: the job as its verdict leaves it (its decision as far as
	// the partitions go), and the verdict.
	JudgeLate(parts []PartitionPlan) (Job, Verdict)
	// Notes are the run's warnings on late rows it leaves undecided.
	Notes() []string
	// JoinShard joins the job of another shard of the same run, parts being
	// every partition the shards stage together; it refuses shards that
	// decided apart, as the run records one decision.
	JoinShard(other Job, parts []PartitionPlan) (Job, error)
	// Record writes into r what the snapshot committing parts records of
	// the job; whole says it lands the run's last batch that commits (or
	// its only snapshot), which records how far the run read.
	Record(r *runrecord.Record, parts []PartitionPlan, whole bool)
	// Stale says why the run cannot be committed on meta's main, where
	// runs landed since base whose record of arrivals it would overwrite,
	// or "".
	Stale(meta table.Metadata, base *int64, runID string) string
}

// JobReader reads a job's document back from a plan written before
// (package job's Read), for Apply and BindRelease.
type JobReader func(doc json.RawMessage) (Job, error)

// setJob gives the run its job and the plan its document.
func (plan *run) setJob(j Job) error {
	plan.job, plan.Job = j, nil
	if j == nil {
		return nil
	}
	doc, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("run %s: the job's record: %w", plan.RunID, err)
	}
	if string(doc) == "null" { // a typed nil: no job
		plan.job = nil
		return nil
	}
	plan.Job = doc
	return nil
}

// isNil says whether j is no job: nil, or a nil pointer of a type that
// implements Job, which marshals as null.
func isNil(j Job) bool {
	if j == nil {
		return true
	}
	doc, err := json.Marshal(j)
	return err == nil && string(doc) == "null"
}

// runOf is an approved plan to apply, as a run of its own, its job read
// back with read. The run holds a copy of the document: what the apply
// adds to it (the checks judged again at commit, what was removed) is the
// result's (Result.Plan), and the plan approved stays as approved.
func runOf(approved *Plan, read JobReader) (*run, error) {
	doc := approved.clone()
	plan := &run{Plan: doc}
	if string(doc.Job) == "null" {
		doc.Job = nil // no job, as a plan lakeswap writes says by leaving it out
	}
	if len(doc.Job) == 0 {
		return plan, nil
	}
	if read == nil {
		return nil, outcome.Invalid(fmt.Errorf("the plan of run %s attempt %s was computed by a SQL job, whose record of late rows and watermark it carries: apply it with ApplyOptions.Jobs set (package job's Read), as lakeswap apply does", doc.RunID, doc.Attempt))
	}
	j, err := read(doc.Job)
	if err == nil && isNil(j) {
		err = errors.New("the job reader read no job from it")
	}
	if err != nil {
		return nil, outcome.Invalid(fmt.Errorf("the plan of run %s attempt %s: its job: %w", doc.RunID, doc.Attempt, err))
	}
	plan.job = j
	return plan, nil
}

// judgeLate asks the run's job for the guard late arrivals' verdict,
// and hands the plan the job as the verdict leaves it.
func judgeLate(_ context.Context, j *judging) (Verdict, error) {
	if j.plan.job == nil {
		return Verdict{}, nil
	}
	next, v := j.plan.job.JudgeLate(j.plan.Partitions)
	return v, j.plan.setJob(next)
}

// staleArrivals says why a job's run cannot be committed on meta's main.
func staleArrivals(meta table.Metadata, plan *run) string {
	if plan.job == nil {
		return ""
	}
	return plan.job.Stale(meta, plan.BaseSnapshotID, plan.RunID)
}
