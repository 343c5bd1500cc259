package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

// release says whether the flags ask for a release of several tables.
func (o *publishOptions) release() bool { return len(o.jobs) > 1 || o.downstream }

// releaseView is a release as -o json prints it: each table's result.
type releaseView struct {
	RunID  string      `json:"run_id"`
	Status swap.Status `json:"status"`
	// Tables are the release's tables in the order they were staged: each
	// after the tables of the release it reads.
	Tables []planView `json:"tables"`
}

// runRelease stages the tables of several jobs as one release, the top
// job's partitions given, every other job's following from the tables of
// the release it reads, then commits them as one (or, for plan, writes a
// plan file for each table).
func runRelease(ctx context.Context, g *globals, o publishOptions, plan bool) error {
	if len(o.files) > 0 || o.adopt || o.buildTwice || o.table != "" {
		return usagef("a release computes every table with its job: --table, inputs, --adopt and --build-twice do not apply")
	}
	if o.rejects != "" {
		return usagef("a release writes each job's rejected rows to a file of its own (rejects-<table>-<run id>-<time>.ndjson): --rejects names one file, and does not apply")
	}
	if o.batch > 0 || o.perPartition {
		return usagef("a release commits every table in one commit: --batch and --commit-per-partition do not apply")
	}
	if len(o.jobs) == 0 {
		return usagef("--downstream releases the jobs below a job: name it with --job")
	}
	jobs, err := releaseJobs(g, o)
	if err != nil {
		return err
	}
	o.table = jobs[0].Table
	req, in, err := stagingRequest(&o)
	if err != nil {
		return err
	}
	g.writes, g.uploadBudget = true, backfill.UploadBudget(in.MemoryLimit)
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	if err := cat.CanCommitTables(); err != nil {
		return requestError{err}
	}
	if o.memoryLimit != "" {
		if err := checkMemoryLimit(o.memoryLimit, in.MemoryLimit, g.props); err != nil {
			return err
		}
	}
	defer backfill.HoldRuntime(in.MemoryLimit)()
	if o.runID == "" {
		o.runID = swap.NewRunID()
	}
	if plan {
		// A plan file is never overwritten: checked before anything is
		// staged.
		for _, j := range jobs {
			if name := releasePlanFile(o.planDir, o.runID, j.Table); fileExists(name) {
				return usagef("%s exists; a plan file is never overwritten: name another run id or --out folder, or remove it (discard its plan first if it was never applied)", name)
			}
		}
	}
	rel := pub.NewRelease(o.runID)
	rel.Planning = plan
	ok := false
	defer func() {
		if !ok {
			rel.Discard(context.WithoutCancel(ctx))
		}
	}()
	stage := backfill.Release{Jobs: jobs, Partitions: o.partitions, Late: lateChoice(o, req), Inputs: in,
		Wire: func(ctx context.Context, j *job.Job) (source.Options, func(bool), error) {
			return g.wire(ctx, pub, j, o, in)
		}}
	if err := stage.Stage(ctx, pub, rel, req); err != nil {
		return err
	}
	if plan {
		return writeReleasePlans(g, rel, o.planDir, &ok)
	}
	ok = true // Publish keeps or removes every table's staged files itself
	res, err := rel.Publish(ctx, o.noAutoRollback)
	view := releaseView{RunID: res.RunID, Status: res.Status}
	for _, t := range res.Tables {
		view.Tables = append(view.Tables, planView{RunID: res.RunID, Result: t})
	}
	return g.report(view, err, func(w io.Writer) { printRelease(w, res) })
}

// releaseJobs loads the release's jobs, the --downstream ones found by
// lineage below the first, in the order they read each other, whatever
// the order of --job; the top job's partitions are --partitions.
func releaseJobs(g *globals, o publishOptions) ([]*job.Job, error) {
	var jobs []*job.Job
	for _, f := range o.jobs {
		j, err := job.Load(f)
		if err != nil {
			return nil, requestError{err}
		}
		if slices.ContainsFunc(jobs, func(other *job.Job) bool { return other.Table == j.Table }) {
			return nil, usagef("two jobs of the release build %s: one job a table", j.Table)
		}
		jobs = append(jobs, j)
	}
	if o.downstream {
		// Below the top of the jobs given, whatever their order.
		top := backfill.Top(jobs)
		l, err := loadLineage(g, o.lineage, top.File)
		if err != nil {
			return nil, err
		}
		below, err := l.Downstream(top.Table)
		if err != nil {
			return nil, requestError{err}
		}
		for _, j := range below {
			if !slices.ContainsFunc(jobs, func(other *job.Job) bool { return other.Table == j.Table }) {
				jobs = append(jobs, j)
			}
		}
		if len(jobs) == 1 {
			return nil, requestError{fmt.Errorf("no job reads %s (looked in %s): the release would be the one table; publish it with --job alone", jobs[0].Table, strings.Join(lineagePaths(g, o.lineage, jobs[0].File), ", "))}
		}
	}
	ordered, err := backfill.Order(jobs)
	if err != nil {
		return nil, err
	}
	if len(o.partitions) == 0 {
		return nil, usagef("--partitions is required: the partitions of %s the release rebuilds, for example --partitions order_date=2026-01-01..2026-01-02", ordered[0].Table)
	}
	return ordered, nil
}

// loadLineage reads the jobs lineage knows: --jobs, else lakeswap.yaml's
// jobs:, else the folder of first (a job file).
func loadLineage(g *globals, flag []string, first string) (*job.Lineage, error) {
	l, err := job.LoadLineage(lineagePaths(g, flag, first))
	if err != nil {
		return nil, requestError{err}
	}
	return l, nil
}

func lineagePaths(g *globals, flag []string, first string) []string {
	if len(flag) > 0 {
		return flag
	}
	if cfg, err := catalog.Resolve(catalog.Settings{Home: g.home, Catalog: g.catalogName, ConfigFile: g.configFile, Getenv: g.getenv}); err == nil && len(cfg.Jobs) > 0 {
		return cfg.Jobs
	}
	if first != "" {
		return []string{filepath.Dir(first)}
	}
	return []string{"."}
}

// printRelease says what became of each table of a release.
func printRelease(w io.Writer, res *swap.ReleaseResult) {
	names := make([]string, len(res.Tables))
	for i, t := range res.Tables {
		names[i] = t.Plan.Table
	}
	fmt.Fprintf(w, "release %s of %s: %s\n", res.RunID, words.Count(len(names), "table"), res.Status)
	for _, t := range res.Tables {
		fmt.Fprintln(w)
		printResult(w, t)
	}
	if res.Status == swap.StatusPublished {
		fmt.Fprintf(w, "\nevery table of the release is tagged %s at its snapshot of it: a reader loading the tables one after another reads this release by that tag\n", swap.ReleaseTag(res.RunID))
	}
}

// releasePlanFile names the plan file of a table of a release.
func releasePlanFile(dir, runID, table string) string {
	return filepath.Join(dir, "plan-"+swap.RunSegment(runID)+"-"+swap.EscapeSegment(table)+".json")
}

func fileExists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// writeReleasePlans writes a plan file for each table of a staged
// release; apply takes them together and commits them as one.
func writeReleasePlans(g *globals, rel *swap.Release, dir string, ok *bool) error {
	plans, err := rel.Planned()
	if err != nil {
		return err
	}
	var written []*swap.PlanFile
	var views []planView
	for _, p := range plans {
		pf, err := swap.WritePlan(releasePlanFile(dir, rel.RunID, p.Table), p)
		if err != nil {
			for _, w := range written {
				_ = os.Remove(w.Name) // its staged files go with the release's
			}
			return fmt.Errorf("write the plan of %s: %w", p.Table, err)
		}
		written = append(written, pf)
		views = append(views, planView{RunID: p.RunID, PlanID: pf.PlanID, File: pf.Name, Result: &swap.Result{Plan: p, Status: swap.StatusPlanned}})
	}
	*ok = true // the plans hold their staged files until applied or discarded
	view := releaseView{RunID: rel.RunID, Status: swap.StatusPlanned, Tables: views}
	return g.report(view, nil, func(w io.Writer) {
		fmt.Fprintf(w, "release %s of %s, planned: nothing is committed until the plans are applied together\n", rel.RunID, words.Count(len(plans), "table"))
		var args, ids []string
		for i, pf := range written {
			fmt.Fprintln(w)
			printPlan(w, pf.PlanID, plans[i], false)
			fmt.Fprintf(w, "plan written to %s\n", pf.Name)
			args, ids = append(args, pf.Name), append(ids, "--approve "+short(pf.PlanID))
		}
		fmt.Fprintf(w, "\napply the release, every table in one commit, with: lakeswap%s apply %s %s\n", g.catalogFlags(), strings.Join(args, " "), strings.Join(ids, " "))
	})
}

// applyRelease commits the plans of a release, every table in one commit,
// once each still holds and each job's sources are as planned (a table
// of the release read as the release leaves it).
func applyRelease(ctx context.Context, g *globals, pub *swap.Publisher, opts swap.ApplyOptions, files []*swap.PlanFile, plans []*swap.Plan) error {
	res, err := backfill.ApplyRelease(ctx, pub, opts, g.inputStore, plans)
	if res == nil {
		return err
	}
	view := releaseView{RunID: res.RunID, Status: res.Status}
	for _, t := range res.Tables {
		v := planView{RunID: res.RunID, Result: t}
		for _, pf := range files {
			if pf.Plan.Table == t.Plan.Table { // a release stages each table once
				v.PlanID = pf.PlanID
			}
		}
		view.Tables = append(view.Tables, v)
	}
	return g.report(view, err, func(w io.Writer) { printRelease(w, res) })
}
