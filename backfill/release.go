package backfill

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

// Release is a backfill of several tables as one release: the top job's
// partitions given, every other job's following from the tables of the
// release it reads, each staged after those it reads.
type Release struct {
	// Jobs are the release's jobs, in the order Order gives; the first
	// one's Partitions are given, the others' follow.
	Jobs       []*job.Job
	Partitions []string
	Late       *job.LateChoice
	// Wire gives the inputs a job reads through (its S3 store, its
	// progress), and what ends that wiring once the job has staged (ok
	// says it got to its end). Nil: Inputs as they are.
	Wire   func(ctx context.Context, j *job.Job) (source.Options, func(ok bool), error)
	Inputs source.Options
}

// Stage stages every table of the release into rel, req carrying what
// each table's run shares (its run id, guards' allowances, budget), and
// stops at the first table refused or failing, having discarded what the
// release staged.
func (r Release) Stage(ctx context.Context, pub *swap.Publisher, rel *swap.Release, req swap.Request) (err error) {
	if len(r.Jobs) == 0 {
		return outcome.Invalid(errors.New("a release needs jobs, and none was given"))
	}
	defer func() {
		if err != nil {
			rel.Discard(context.WithoutCancel(ctx))
		}
	}()
	started := time.Now().UTC().Format("20060102T150405.000Z")
	partitions := make([][]string, len(r.Jobs))
	partitions[0] = r.Partitions
	for i, j := range r.Jobs {
		tr := req
		if tr.Table, err = catalog.ParseIdent(j.Table); err != nil {
			return outcome.Invalid(fmt.Errorf("job %s: %w", j.File, err))
		}
		if i > 0 {
			values, err := followed(rel, j, r.Jobs[:i])
			if err != nil {
				return err
			}
			// The partitions of the table's first field; a table of
			// more fields rebuilds every value of the others, as a
			// selector naming one field does.
			t, err := pub.Open(ctx, tr.Table)
			if err != nil {
				return err
			}
			partitions[i] = []string{t.Contract.Partition.Fields[0].Name + "=" + selectorValues(values)}
		}
		in, unwire := r.Inputs, func(bool) {}
		if r.Wire != nil {
			if in, unwire, err = r.Wire(ctx, j); err != nil {
				return err
			}
		}
		rejects := "rejects-" + swap.EscapeSegment(j.Table) + "-" + swap.RunSegment(rel.RunID) + "-" + started + ".ndjson"
		_, err = j.Run(ctx, pub, tr, job.RunOptions{Partitions: partitions[i], RejectsFile: rejects, Inputs: in, Release: rel, Late: r.Late}, Into(rel))
		unwire(err == nil)
		if err != nil {
			var refused *outcome.RefusedError
			var op *outcome.OpError
			if errors.As(err, &refused) || errors.As(err, &op) && op.Hint != "" {
				return err // says what became of the release
			}
			return &outcome.OpError{Op: "stage", Table: j.Table, RunID: rel.RunID, Err: fmt.Errorf("job %s: %w", filepath.Base(j.File), err),
				Hint: "nothing was committed to any table of the release; " + rel.Discard(context.WithoutCancel(ctx))}
		}
	}
	return rel.Judge(ctx)
}

// Order puts a release's jobs in the order they stage: the top of the
// release, the one job that reads no other table of it, first (the
// partitions given are its), then each job after every job of the release
// it reads, its partitions following from theirs.
func Order(jobs []*job.Job) ([]*job.Job, error) {
	var tops []*job.Job
	for _, j := range jobs {
		if readsOnly(j, jobs) {
			tops = append(tops, j)
		}
	}
	if len(tops) != 1 {
		if len(tops) == 0 {
			return nil, outcome.Invalid(fmt.Errorf("the release's jobs read each other in a cycle (%s)", tablesOf(jobs)))
		}
		return nil, outcome.Invalid(fmt.Errorf("jobs %s read no table of the release: a release is one table and the jobs that read it, further down too, the top job's partitions (--partitions) deciding theirs", tablesOf(tops)))
	}
	out := []*job.Job{tops[0]}
	rest := slices.DeleteFunc(slices.Clone(jobs), func(j *job.Job) bool { return j == tops[0] })
	for len(rest) > 0 {
		next := slices.IndexFunc(rest, func(j *job.Job) bool { return readsOnly(j, rest) })
		if next < 0 {
			return nil, outcome.Invalid(fmt.Errorf("the release's jobs read each other in a cycle (%s)", tablesOf(rest)))
		}
		j := rest[next]
		// Its partitions follow from the tables of the release it reads,
		// which a mapping of all cannot say.
		for _, src := range j.SourceNames() {
			if t := j.Sources[src].Table; t != "" && !slices.ContainsFunc(out, func(o *job.Job) bool { return o.Table == t }) {
				continue
			} else if t != "" && j.Sources[src].Partitions.Of() == job.MapAll {
				return nil, outcome.Invalid(fmt.Errorf("job %s reads %s with partitions: all (the default): which of its partitions a release of %s rebuilds does not follow from that; declare partitions: same or month in its source %s, or publish it on its own with its own --partitions", filepath.Base(j.File), t, tops[0].Table, src))
			}
		}
		out = append(out, j)
		rest = slices.Delete(rest, next, next+1)
	}
	return out, nil
}

// Top is the job of jobs that reads none of the others: the top of the
// release they make, whatever their order (the first where none or
// several are; nil for no jobs).
func Top(jobs []*job.Job) *job.Job {
	for _, j := range jobs {
		if readsOnly(j, jobs) {
			return j
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	return jobs[0]
}

// readsOnly says whether j reads none of the jobs still to place.
func readsOnly(j *job.Job, rest []*job.Job) bool {
	return !slices.ContainsFunc(rest, func(other *job.Job) bool { return other != j && len(j.Reads(other.Table)) > 0 })
}

func tablesOf(jobs []*job.Job) string {
	var names []string
	for _, j := range jobs {
		names = append(names, j.Table)
	}
	return strings.Join(names, ", ")
}

// followed is the partitions j rebuilds: those its mappings take from the
// partitions the release stages of each table it reads.
func followed(rel *swap.Release, j *job.Job, before []*job.Job) ([]string, error) {
	var values []string
	for _, b := range before {
		for _, src := range j.Reads(b.Table) {
			plan := rel.Plan(b.Table)
			var from []string
			for _, pp := range plan.Partitions {
				if !pp.Carried {
					from = append(from, pp.Value)
				}
			}
			if strings.Contains(plan.PartitionColumn, ",") {
				return nil, outcome.Invalid(fmt.Errorf("job %s reads %s, partitioned by %s: a release follows a table of one partition field", filepath.Base(j.File), b.Table, plan.PartitionColumn))
			}
			m := j.Sources[src].Partitions
			got, err := m.Follow(from)
			if err != nil {
				return nil, outcome.Invalid(fmt.Errorf("job %s, source %s (%s, partitions: %s): %v", filepath.Base(j.File), src, b.Table, m.Of(), err))
			}
			values = append(values, got...)
		}
	}
	slices.Sort(values)
	values = slices.Compact(values)
	if len(values) == 0 {
		return nil, outcome.Invalid(fmt.Errorf("job %s: the tables it reads rebuild no partition in this release", filepath.Base(j.File)))
	}
	return values, nil
}

// selectorValues writes values as the list of a partition selector,
// quoting those that hold a comma or a quote.
func selectorValues(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		if v == "" || strings.ContainsAny(v, `,"`) {
			v = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
		}
		quoted[i] = v
	}
	return strings.Join(quoted, ",")
}

// Store opens the object store a job's S3 sources are read through, when
// one is needed.
type Store func(ctx context.Context) (source.ObjectStore, error)

// ApplyRelease commits the plans of a release, every table in one commit,
// once each still holds and each job's sources are as planned (a table of
// the release read as the release leaves it).
func ApplyRelease(ctx context.Context, pub *swap.Publisher, opts swap.ApplyOptions, store Store, plans []*swap.Plan) (*swap.ReleaseResult, error) {
	if opts.Jobs == nil {
		opts.Jobs = job.Read
	}
	rel, err := pub.BindRelease(ctx, opts, plans)
	if err != nil {
		return nil, err
	}
	for _, plan := range plans {
		if err := job.RecheckIn(ctx, pub, plan, store, rel); err != nil {
			rel.Abandon(ctx)
			return nil, err
		}
	}
	return rel.Publish(ctx, opts.NoAutoRollback)
}

// Apply commits approved plans of one run, once each job's sources are as
// planned (package job's Recheck), as one snapshot; a job's record of late
// rows is read back with package job's Read.
func Apply(ctx context.Context, pub *swap.Publisher, opts swap.ApplyOptions, store Store, plans ...*swap.Plan) (*swap.Result, error) {
	if opts.Jobs == nil {
		opts.Jobs = job.Read
	}
	for _, plan := range plans {
		if err := job.Recheck(ctx, pub, plan, store); err != nil {
			return nil, err
		}
	}
	return pub.Apply(ctx, opts, plans...)
}
