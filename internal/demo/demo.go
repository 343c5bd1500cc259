package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/catalog"
	retailjobs "github.com/lakeswap/lakeswap/examples/retail"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/rollback"
	"github.com/lakeswap/lakeswap/verify"
)

// Options are what a story runs on and how it speaks.
type Options struct {
	Catalog *catalog.Catalog
	Pub     *swap.Publisher
	// Home is the folder the story's inputs and jobs go under.
	Home string
	// Inputs says how the jobs read: an S3 store for a warehouse there.
	Inputs source.Options
	Out    io.Writer
	// PrintJob and ExitCode say what the binary would: how a job computed
	// a run, and the exit code of an error.
	PrintJob func(io.Writer, *swap.Plan)
	ExitCode func(error) int
}

// Run tells the story; it fails at the first number that is off, naming
// the step.
func Run(ctx context.Context, o Options) (steps int, err error) {
	d := &Story{ctx: ctx, w: o.Out, cat: o.Catalog, pub: o.Pub, inputs: filepath.Join(o.Home, "inputs"), jobs: filepath.Join(o.Home, "jobs"),
		in: o.Inputs, printJob: o.PrintJob, exitCode: o.ExitCode}
	if err := os.MkdirAll(d.inputs, 0o755); err != nil {
		return 0, err
	}
	if err := d.writeJobs(); err != nil {
		return 0, err
	}
	batch1, err := retail.Daily(retail.AfterBatch1)
	if err != nil {
		return 0, err
	}
	batch2, err := retail.Daily(retail.AfterBatch2)
	if err != nil {
		return 0, err
	}
	for _, s := range []func() error{
		func() error { return d.create(d.cat, batch1) },
		func() error { return d.firstLoad(batch1) },
		func() error { return d.backfill(batch2) },
		d.appendContrast,
		d.refuseWipe,
		func() error { return d.badPublishRolledBack(batch2) },
		func() error { return d.lookBeforeApproving(batch2) },
	} {
		if err := s(); err != nil {
			return d.step, fmt.Errorf("demo step %d: %w", d.step, err)
		}
	}
	return d.step, nil
}

// publishFile publishes one input file to the partitions selector names.
func (d *Story) publishFile(ident table.Identifier, selector, path string) (*swap.Result, error) {
	files := backfill.Files{Selectors: []string{selector}, Paths: []string{path}}
	return files.Run(d.ctx, d.pub, swap.Request{Table: ident}, d.pub.Publish)
}

// Story holds the demo's state; each step prints what a person would check.
type Story struct {
	ctx    context.Context
	w      io.Writer
	cat    *catalog.Catalog
	pub    *swap.Publisher
	inputs string
	jobs   string         // the retail jobs and their raw events
	in     source.Options // how the jobs read (S3 for a warehouse there)
	step   int
	// printJob and exitCode say what the binary would: how a job computed
	// a run, and the exit code of an error.
	printJob func(io.Writer, *swap.Plan)
	exitCode func(error) int
}

var (
	demoTable  = table.Identifier{"retail", "daily_orders"}
	demoAppend = table.Identifier{"retail", "daily_orders_append"}
	demoRange  = "order_date=2026-01-01..2026-01-02"
)

func (d *Story) header(title string) {
	d.step++
	fmt.Fprintf(d.w, "\n== %d. %s\n", d.step, title)
}

func (d *Story) create(cat *catalog.Catalog, _ []retail.DailyOrder) error {
	d.header("create retail.orders_fact (one row per order, by order_date) and retail.daily_orders (grain order_date, channel; additive order_count and amount_cents)")
	facts, err := catalog.ReadTableSpec(filepath.Join(d.jobs, "orders_fact.table.yaml"))
	if err != nil {
		return err
	}
	for ident, spec := range map[string]catalog.TableSpec{"orders_fact": facts, "daily_orders": retail.Spec(), "daily_orders_append": retail.Spec()} {
		ident := table.Identifier{"retail", ident}
		if ok, _ := cat.CheckTableExists(d.ctx, ident); ok {
			if err := dropTable(d.ctx, cat, ident); err != nil {
				return err
			}
		}
		if _, err := catalog.CreateTable(d.ctx, cat, ident, spec); err != nil {
			return err
		}
	}
	fmt.Fprintf(d.w, "created retail.orders_fact, retail.daily_orders and the scratch table retail.daily_orders_append; the jobs that build them are in %s\n", d.jobs)
	return nil
}

// dropTable removes a table of an earlier demo run, with its files where the
// catalog can purge.
func dropTable(ctx context.Context, cat *catalog.Catalog, ident table.Identifier) error {
	if p, ok := cat.Catalog.(interface {
		PurgeTable(context.Context, table.Identifier) error
	}); ok {
		return p.PurgeTable(ctx, ident)
	}
	return cat.DropTable(ctx, ident)
}

func (d *Story) publish(ident table.Identifier, file string, rows []retail.DailyOrder) (*swap.Result, error) {
	path := filepath.Join(d.inputs, file)
	if err := retail.WriteNDJSON(path, rows); err != nil {
		return nil, err
	}
	return d.publishFile(ident, demoRange, path)
}

// show prints the table as a reader sees it and checks it holds rows.
func (d *Story) show(res *swap.Result, want []retail.DailyOrder) error {
	got, err := d.read(demoTable)
	if err != nil {
		return err
	}
	printGroups(d.w, got)
	fmt.Fprintf(d.w, "run %s: snapshot %d, fingerprint %s\n", res.Plan.RunID, res.SnapshotID, verify.Short(res.Plan.Fingerprint.Hash))
	if !slices.Equal(got, want) {
		return fmt.Errorf("table holds %v, want %v", got, want)
	}
	return nil
}

func (d *Story) read(ident table.Identifier) ([]retail.DailyOrder, error) {
	tbl, err := d.cat.LoadTable(d.ctx, ident)
	if err != nil {
		return nil, err
	}
	return retail.ReadDaily(d.ctx, tbl)
}

// writeJobs puts the shipped retail jobs, their tables' schemas and the
// raw events of batch 1 in the demo's jobs folder, afresh.
func (d *Story) writeJobs() error {
	if err := os.RemoveAll(d.jobs); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(d.jobs, "raw"), 0o755); err != nil {
		return err
	}
	entries, err := retailjobs.Files.ReadDir(".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := retailjobs.Files.ReadFile(e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d.jobs, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(d.jobs, "raw", "batch1.ndjson"), retail.Batch1, 0o644)
}

// runJob publishes a shipped job for the partitions selector names.
func (d *Story) runJob(name, runID, selector string) (*swap.Result, error) {
	j, err := job.Load(filepath.Join(d.jobs, name+".yaml"))
	if err != nil {
		return nil, err
	}
	ident, err := swap.ParseTable(j.Table)
	if err != nil {
		return nil, err
	}
	rejects := filepath.Join(d.jobs, "rejects-"+runID+".ndjson")
	return j.Run(d.ctx, d.pub, swap.Request{Table: ident, RunID: runID}, job.RunOptions{Partitions: []string{selector}, RejectsFile: rejects, Inputs: d.in}, d.pub.Publish)
}

// buildBoth rebuilds both tables as one release: the facts job, then the
// daily job over the facts as the release leaves them, both committed in
// one catalog commit, so that no reader sees new facts beside old groups.
func (d *Story) buildBoth(run string) (facts, daily *swap.Result, err error) {
	rel := d.pub.NewRelease("release-" + run)
	stage := backfill.Into(rel)
	for _, name := range []string{"orders_fact", "daily_orders"} {
		j, err := job.Load(filepath.Join(d.jobs, name+".yaml"))
		if err != nil {
			return nil, nil, err
		}
		ident, err := swap.ParseTable(j.Table)
		if err != nil {
			return nil, nil, err
		}
		rejects := filepath.Join(d.jobs, "rejects-"+name+"-"+run+".ndjson")
		if _, err := j.Run(d.ctx, d.pub, swap.Request{Table: ident}, job.RunOptions{Partitions: []string{demoRange}, RejectsFile: rejects, Inputs: d.in, Release: rel}, stage); err != nil {
			rel.Discard(d.ctx)
			return nil, nil, err
		}
	}
	res, err := rel.Publish(d.ctx, false)
	if err != nil {
		return nil, nil, err
	}
	if res.Status == swap.StatusPublished {
		fmt.Fprintf(d.w, "release %s: orders_fact and daily_orders published in one commit, each snapshot tagged %s\n", rel.RunID, swap.ReleaseTag(rel.RunID))
	} else {
		fmt.Fprintf(d.w, "release %s: %s, nothing committed to either table\n", rel.RunID, res.Status)
	}
	return res.Tables[0], res.Tables[1], nil
}

func (d *Story) firstLoad(batch1 []retail.DailyOrder) error {
	d.header("batch 1 of raw order events arrives: the orders_fact job builds the facts from it, the daily_orders job the groups from the facts, for " + demoRange + ", as one release")
	facts, daily, err := d.buildBoth("batch1")
	if err != nil {
		return err
	}
	d.printJob(d.w, facts.Plan)
	fmt.Fprintf(d.w, "orders_fact: %d orders, %s cents (duplicate e2 counted once, o107's tie won by e13)\n", facts.Plan.Fingerprint.Rows, facts.Plan.Fingerprint.Sums["amount_cents"])
	return d.show(daily, batch1)
}

func (d *Story) backfill(batch2 []retail.DailyOrder) error {
	d.header("batch 2 arrives (e10 moves o100 from 2026-01-01 to 2026-01-02): a backfill of 2026-01-02 alone is refused")
	if err := os.WriteFile(filepath.Join(d.jobs, "raw", "batch2.ndjson"), retail.Batch2, 0o644); err != nil {
		return err
	}
	before, err := d.cat.LoadTable(d.ctx, table.Identifier{"retail", "orders_fact"})
	if err != nil {
		return err
	}
	_, err = d.runJob("orders_fact", "orders-fact-alone", "order_date=2026-01-02")
	var refused *outcome.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "o100") {
		return fmt.Errorf("a backfill of 2026-01-02 alone: %v, want refused naming o100", err)
	}
	for _, f := range refused.Findings {
		fmt.Fprintf(d.w, "refused (exit code %d): %s\n", d.exitCode(err), f)
	}
	after, err := d.cat.LoadTable(d.ctx, table.Identifier{"retail", "orders_fact"})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "orders_fact unchanged: %v\n", after.MetadataLocation() == before.MetadataLocation())

	d.header("the backfill of " + demoRange + " rebuilds both tables as one release: o100 moves, o106 is new, the stale e9 loses")
	_, daily, err := d.buildBoth("backfill")
	if err != nil {
		return err
	}
	if err := d.show(daily, batch2); err != nil {
		return err
	}

	d.header("the same backfill again: replace, never append; the same content commits nothing")
	tbl, err := d.cat.LoadTable(d.ctx, demoTable)
	if err != nil {
		return err
	}
	facts, again, err := d.buildBoth("rerun")
	if err != nil {
		return err
	}
	now, err := d.cat.LoadTable(d.ctx, demoTable)
	if err != nil {
		return err
	}
	rows, _ := d.read(demoTable)
	n, c := retail.Group(rows, "2026-01-02", "web")
	kept := now.MetadataLocation() == tbl.MetadataLocation()
	fmt.Fprintf(d.w, "orders_fact %s, daily_orders %s; no new snapshot: %v; 2026-01-02/web = %d orders, %d cents\n", facts.Status, again.Status, kept, n, c)
	if facts.Status != swap.StatusUnchanged || again.Status != swap.StatusUnchanged || !kept || n != 2 || c != 19000 {
		return fmt.Errorf("the rerun changed the tables: %s, %s, no new snapshot %v, 2026-01-02/web %d/%d (want 2/19000)", facts.Status, again.Status, kept, n, c)
	}
	return nil
}

func (d *Story) appendContrast() error {
	d.header("beside it, a naive append of the same slice on retail.daily_orders_append")
	batch2, _ := retail.Daily(retail.AfterBatch2)
	if _, err := d.publish(demoAppend, "batch2.ndjson", batch2); err != nil {
		return err
	}
	for i, want := range []struct{ n, c int64 }{{4, 38000}, {6, 57000}} {
		tbl, err := d.cat.LoadTable(d.ctx, demoAppend)
		if err != nil {
			return err
		}
		src := retail.NewSource(retail.Only(batch2, "2026-01-01", "2026-01-02"))
		var rows []retail.DailyOrder
		for _, day := range []string{"2026-01-01", "2026-01-02"} {
			rr, _ := src.Open(d.ctx, day)
			if tbl, err = tbl.Append(d.ctx, rr, nil); err != nil {
				rr.Release()
				return fmt.Errorf("append: %w", err)
			}
			rr.Release()
		}
		if rows, err = retail.ReadDaily(d.ctx, tbl); err != nil {
			return err
		}
		n, c := retail.Group(rows, "2026-01-02", "web")
		fmt.Fprintf(d.w, "after append %d: 2026-01-02/web = %d orders, %d cents\n", i+1, n, c)
		if n != want.n || c != want.c {
			return fmt.Errorf("append %d reads %d/%d, want %d/%d", i+1, n, c, want.n, want.c)
		}
	}
	fmt.Fprintln(d.w, "an appended table depends on how often the job ran; the replaced one does not")
	return nil
}

func (d *Story) refuseWipe() error {
	d.header("publish zero rows for 2026-01-02 (a wipe): refused")
	tbl, err := d.cat.LoadTable(d.ctx, demoTable)
	if err != nil {
		return err
	}
	before := tbl.MetadataLocation()
	path := filepath.Join(d.inputs, "empty.ndjson")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return err
	}
	_, err = d.publishFile(demoTable, "order_date=2026-01-02", path)
	var refused *outcome.RefusedError
	if !errors.As(err, &refused) {
		return fmt.Errorf("a publish of zero rows was not refused: %v", err)
	}
	for _, f := range refused.Findings {
		fmt.Fprintf(d.w, "refused (exit code %d): %s\n", d.exitCode(err), f)
	}
	tbl, err = d.cat.LoadTable(d.ctx, demoTable)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "table unchanged: %v\n", tbl.MetadataLocation() == before)
	if tbl.MetadataLocation() != before {
		return errors.New("a refused publish changed the table")
	}
	return nil
}

func (d *Story) badPublishRolledBack(batch2 []retail.DailyOrder) error {
	d.header("a bad publish (amounts off by 10x) commits, then is rolled back")
	good, err := d.cat.LoadTable(d.ctx, demoTable)
	if err != nil {
		return err
	}
	goodSnap := good.CurrentSnapshot().SnapshotID
	goodFP := good.CurrentSnapshot().Summary.Properties[runrecord.PropFingerprint]
	bad := slices.Clone(batch2)
	for i := range bad {
		bad[i].AmountCents *= 10
	}
	res, err := d.publish(demoTable, "bad.ndjson", bad)
	if err != nil {
		return err
	}
	if err := d.show(res, bad); err != nil {
		return err
	}
	rb, err := d.pub.Rollback(d.ctx, rollback.Request{Table: demoTable, RunID: res.Plan.RunID})
	if err != nil {
		return err
	}
	rows, err := d.read(demoTable)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "rolled back run %s: main %d -> %d\n", rb.RunID, rb.FromSnapshotID, rb.ToSnapshotID)
	printGroups(d.w, rows)
	fmt.Fprintf(d.w, "fingerprint %s, the one before the bad run: %v\n", verify.Short(rb.Fingerprint), rb.Fingerprint == goodFP)
	if rb.ToSnapshotID != goodSnap || rb.Fingerprint != goodFP || !slices.Equal(rows, batch2) {
		return fmt.Errorf("rollback restored snapshot %d with fingerprint %s, want %d with %s", rb.ToSnapshotID, rb.Fingerprint, goodSnap, goodFP)
	}
	return nil
}

// lookBeforeApproving plans a correction, reads its audit branch as any
// engine would while main stays where it is, applies it (main moves to
// the branch's very snapshot), then plans another and discards it.
func (d *Story) lookBeforeApproving(batch2 []retail.DailyOrder) error {
	d.header("plan a correction, read it on its audit branch before approving, apply it")
	fixed := slices.Clone(batch2)
	for i := range fixed {
		if fixed[i].OrderDate == "2026-01-01" && fixed[i].Channel == "store" {
			fixed[i].AmountCents += 100
		}
	}
	plan, err := d.stage("fixed.ndjson", fixed)
	if err != nil {
		return err
	}
	tbl, err := d.cat.LoadTable(d.ctx, demoTable)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "plan of run %s staged on branch %s (snapshot %d); main still at %d: %v\n", plan.RunID, plan.Branch, plan.BranchSnapshotID, tbl.CurrentSnapshot().SnapshotID,
		plan.BaseSnapshotID != nil && *plan.BaseSnapshotID == tbl.CurrentSnapshot().SnapshotID)
	for _, pp := range plan.Partitions {
		for _, kc := range changesOf(pp) {
			fmt.Fprintf(d.w, "  %s %s\n", pp.Key, kc)
		}
	}
	onBranch, err := retail.ReadDailyAt(d.ctx, tbl, plan.BranchSnapshotID)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "read on the branch, as Spark, Trino, PyIceberg or DuckDB would (SELECT * FROM retail.daily_orders VERSION AS OF '%s'):\n", plan.Branch)
	printGroups(d.w, onBranch)
	if !slices.Equal(onBranch, fixed) {
		return fmt.Errorf("the branch holds %v, want the staged %v", onBranch, fixed)
	}
	res, err := d.pub.Apply(d.ctx, swap.ApplyOptions{}, plan)
	if err != nil {
		return err
	}
	tbl, err = d.cat.LoadTable(d.ctx, demoTable)
	if err != nil {
		return err
	}
	ff := res.SnapshotID == plan.BranchSnapshotID && tbl.CurrentSnapshot().SnapshotID == plan.BranchSnapshotID && tbl.Metadata().SnapshotByName(plan.Branch) == nil
	fmt.Fprintf(d.w, "applied: main is the branch's snapshot %d, the branch gone: %v\n", res.SnapshotID, ff)
	if !ff {
		return fmt.Errorf("apply committed snapshot %d, main at %d, want the branch's %d", res.SnapshotID, tbl.CurrentSnapshot().SnapshotID, plan.BranchSnapshotID)
	}
	again, err := d.stage("again.ndjson", batch2)
	if err != nil {
		return err
	}
	said, err := d.pub.Discard(d.ctx, again)
	if err != nil {
		return err
	}
	tbl, err = d.cat.LoadTable(d.ctx, demoTable)
	if err != nil {
		return err
	}
	gone := tbl.Metadata().SnapshotByName(again.Branch) == nil && tbl.CurrentSnapshot().SnapshotID == plan.BranchSnapshotID
	fmt.Fprintf(d.w, "another plan discarded (%s): its branch gone, main unmoved: %v\n", said, gone)
	if !gone {
		return errors.New("discard left the plan's branch, or main moved")
	}
	return nil
}

// stage plans rows for the demo's partitions, with an audit branch.
func (d *Story) stage(file string, rows []retail.DailyOrder) (*swap.Plan, error) {
	path := filepath.Join(d.inputs, file)
	if err := retail.WriteNDJSON(path, rows); err != nil {
		return nil, err
	}
	files := backfill.Files{Selectors: []string{demoRange}, Paths: []string{path}}
	var plan *swap.Plan
	_, err := files.Run(d.ctx, d.pub, swap.Request{Table: demoTable, AuditBranch: true, Changes: true}, func(ctx context.Context, req swap.Request) (*swap.Result, error) {
		var err error
		plan, err = d.pub.Stage(ctx, req)
		return &swap.Result{Plan: plan, Status: swap.StatusPlanned}, err
	})
	if err == nil && (plan == nil || plan.Branch == "") {
		err = errors.New("the plan has no audit branch")
	}
	return plan, err
}

// changesOf shows the values a partition's plan changes, key by key.
func changesOf(pp swap.PartitionPlan) []string {
	if pp.Changes == nil {
		return nil
	}
	var out []string
	for _, kc := range pp.Changes.Values {
		var cols []string
		for _, c := range kc.Columns {
			cols = append(cols, c.Column+" "+strings.TrimSpace(c.Old+" -> "+c.New))
		}
		what := kc.Key
		if kc.Kind != "changed" {
			what += " (" + kc.Kind + ")"
		}
		out = append(out, what+": "+strings.Join(cols, ", "))
	}
	return out
}

func printGroups(w io.Writer, rows []retail.DailyOrder) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ORDER_DATE\tCHANNEL\tORDERS\tCENTS\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t\n", r.OrderDate, r.Channel, r.OrderCount, r.AmountCents)
	}
	n, c := retail.Totals(rows)
	fmt.Fprintf(tw, "total\t\t%d\t%d\t\n", n, c)
	_ = tw.Flush()
}
