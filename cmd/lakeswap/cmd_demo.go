package main

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
	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/lakeswap/lakeswap/catalog"
	retailjobs "github.com/lakeswap/lakeswap/examples/retail"
	"github.com/lakeswap/lakeswap/internal/devserver"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

const demoDefaultDir = "lakeswap-demo"

// demoOptions choose where the demo's tables live.
type demoOptions struct {
	dir        string
	s3         bool
	s3Endpoint string
	s3Bucket   string
}

func newDemoCmd(g *globals) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR] [--s3 [--s3-endpoint URL --s3-bucket NAME]]",
		Short: "Run the retail-orders backfill story on an embedded catalog in DIR",
		Long: `demo tells the retail-orders story end to end on an embedded catalog in DIR (catalog.db and
warehouse/, left in place so that 'lakeswap --home DIR history --table retail.daily_orders' and other
engines can look afterwards). It runs the shipped SQL jobs from the raw order events (left in DIR/jobs):
batch 1 builds orders_fact and, from it, daily_orders; batch 2 arrives, a backfill of 2026-01-02 alone
is refused because o100 moved, the backfill of both days rebuilds both tables, and a rerun changes
nothing. Then a naive append that doubles, a refused wipe, and a bad publish rolled back. It checks every
number it shows and fails if one is off. A rerun starts the demo's tables afresh.

With --s3 the warehouse is on S3: a MinIO server that lakeswap starts for the demo (built once into
the cache folder), or, with --s3-endpoint and --s3-bucket, an S3-compatible endpoint of one's own with
credentials from the AWS chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.dir, "dir", demoDefaultDir, "embedded catalog home for the demo")
	cmd.Flags().BoolVar(&o.s3, "s3", false, "put the warehouse on S3 (MinIO started for the demo unless --s3-endpoint)")
	cmd.Flags().StringVar(&o.s3Endpoint, "s3-endpoint", "", "S3-compatible endpoint of one's own, e.g. http://127.0.0.1:9000")
	cmd.Flags().StringVar(&o.s3Bucket, "s3-bucket", "", "existing bucket on --s3-endpoint for the demo's warehouse")
	return cmd
}

// demo holds the story's state; each step prints what a person would check.
type demo struct {
	ctx    context.Context
	w      io.Writer
	cat    *catalog.Catalog
	pub    *swap.Publisher
	inputs string
	jobs   string         // the retail jobs and their raw events
	in     source.Options // how the jobs read (S3 for a warehouse there)
	step   int
}

var (
	demoTable  = table.Identifier{"retail", "daily_orders"}
	demoAppend = table.Identifier{"retail", "daily_orders_append"}
	demoRange  = "order_date=2026-01-01..2026-01-02"
)

func runDemo(ctx context.Context, g *globals, o demoOptions) error {
	cfg, err := catalog.Resolve(catalog.Settings{Home: o.dir, Getenv: func(string) string { return "" }, ConfigFile: os.DevNull})
	if err != nil {
		return err
	}
	if o.s3Bucket != "" && o.s3Endpoint == "" {
		return usagef("--s3-bucket needs --s3-endpoint, the endpoint the bucket is on (--s3 alone starts a MinIO with a bucket of its own)")
	}
	if o.s3 || o.s3Endpoint != "" {
		stop, err := demoOnS3(ctx, g, &cfg, o)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctx, cat, pub, err := openPublisher(ctx, cfg, g.logger())
	if err != nil {
		return err
	}
	defer cat.Close()
	// With --output json the story goes to stderr and stdout gets one result.
	w := g.stdout
	if g.json() {
		w = g.stderr
	}
	d := &demo{ctx: ctx, w: w, cat: cat, pub: pub, inputs: filepath.Join(cfg.Home, "inputs"), jobs: filepath.Join(cfg.Home, "jobs")}
	if err := os.MkdirAll(d.inputs, 0o755); err != nil {
		return err
	}
	if err := d.writeJobs(); err != nil {
		return err
	}
	if s3store.UsesS3(cfg.Props) {
		// daily_orders reads the facts' files, on S3 with the warehouse.
		if d.in.Store, err = inputStore(ctx, cfg.Props, g.getenv); err != nil {
			return err
		}
	}
	fmt.Fprintf(d.w, "lakeswap demo: retail-orders on an embedded catalog in %s, warehouse %s\n", cfg.Home, cfg.Props["warehouse"])

	batch1, err := retail.Daily(retail.AfterBatch1)
	if err != nil {
		return err
	}
	batch2, err := retail.Daily(retail.AfterBatch2)
	if err != nil {
		return err
	}
	steps := []func() error{
		func() error { return d.create(cat, batch1) },
		func() error { return d.firstLoad(batch1) },
		func() error { return d.backfill(batch2) },
		d.appendContrast,
		d.refuseWipe,
		func() error { return d.badPublishRolledBack(batch2) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return fmt.Errorf("demo step %d: %w", d.step, err)
		}
	}
	switch {
	case o.s3Endpoint != "":
		// The catalog alone does not say where the warehouse's endpoint is:
		// a config file beside the home does, credentials aside.
		conf, err := writeDemoConfig(cfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(d.w, "\ndemo ok. Look around (with the same AWS credentials in the environment): lakeswap --config %s history --table retail.daily_orders\n", conf)
	case o.s3:
		fmt.Fprintln(d.w, "\ndemo ok. The MinIO server stops with the demo; to keep the warehouse, use --s3-endpoint and --s3-bucket.")
	default:
		fmt.Fprintf(d.w, "\ndemo ok. Look around: lakeswap --home %s history --table retail.daily_orders\n", o.dir)
	}
	if g.json() {
		return g.emit(map[string]any{"ok": true, "home": cfg.Home, "steps": d.step, "table": "retail.daily_orders"}, nil)
	}
	return nil
}

// writeDemoConfig writes lakeswap.yaml into the demo's home, naming its
// catalog with the warehouse's endpoint, and returns its path. The
// properties hold no credential: lakeswap takes those from the AWS chain.
func writeDemoConfig(cfg catalog.Config) (string, error) {
	// The SQL catalog keeps tables under the catalog's name: the config
	// names it as the demo did.
	doc := map[string]any{"default-catalog": cfg.Name, "catalog": map[string]any{cfg.Name: cfg.Props}}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	path := filepath.Join(cfg.Home, "lakeswap.yaml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return "", fmt.Errorf("write the demo's catalog config: %w", err)
	}
	return path, nil
}

// demoOnS3 moves the demo's warehouse to S3: one's own endpoint and bucket,
// or a MinIO started for the demo with a fresh bucket. The started server's
// credentials go into this process's environment, where the AWS chain reads
// them, as it would read one's own. stop ends what was started.
func demoOnS3(ctx context.Context, g *globals, cfg *catalog.Config, o demoOptions) (stop func(), err error) {
	endpoint, bucket, stop := o.s3Endpoint, o.s3Bucket, func() {}
	if endpoint == "" {
		srv, err := devserver.StartS3(ctx, os.Stderr)
		if err != nil {
			return nil, fmt.Errorf("start MinIO for the demo: %w", err)
		}
		for _, kv := range srv.Env() {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
		bucket = "lakeswap-demo-" + devserver.Random(4)
		if err := srv.Client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: srv.Region}); err != nil {
			srv.Stop()
			return nil, fmt.Errorf("create bucket %s: %w", bucket, err)
		}
		endpoint, stop = srv.Endpoint, srv.Stop
		fmt.Fprintf(g.stderr, "demo: MinIO at %s, bucket %s (stopped when the demo ends)\n", endpoint, bucket)
	} else if bucket == "" {
		return nil, usagef("--s3-endpoint needs --s3-bucket, an existing bucket for the demo's warehouse")
	}
	cfg.Props["warehouse"] = "s3://" + bucket + "/lakeswap-demo"
	cfg.Props[s3store.PropEndpoint] = endpoint
	cfg.Source = "embedded catalog, warehouse on S3"
	return stop, nil
}

func (d *demo) header(title string) {
	d.step++
	fmt.Fprintf(d.w, "\n== %d. %s\n", d.step, title)
}

func (d *demo) create(cat *catalog.Catalog, _ []retail.DailyOrder) error {
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

func (d *demo) publish(ident table.Identifier, file string, rows []retail.DailyOrder) (*swap.Result, error) {
	path := filepath.Join(d.inputs, file)
	if err := retail.WriteNDJSON(path, rows); err != nil {
		return nil, err
	}
	return publishFiles(d.ctx, d.pub, swap.Request{Table: ident}, demoRange, []string{path}, source.Options{})
}

// show prints the table as a reader sees it and checks it holds rows.
func (d *demo) show(res *swap.Result, want []retail.DailyOrder) error {
	got, err := d.read(demoTable)
	if err != nil {
		return err
	}
	printGroups(d.w, got)
	fmt.Fprintf(d.w, "run %s: snapshot %d, fingerprint %s\n", res.Plan.RunID, res.SnapshotID, short(res.Plan.Fingerprint.Hash))
	if !slices.Equal(got, want) {
		return fmt.Errorf("table holds %v, want %v", got, want)
	}
	return nil
}

func (d *demo) read(ident table.Identifier) ([]retail.DailyOrder, error) {
	tbl, err := d.cat.LoadTable(d.ctx, ident)
	if err != nil {
		return nil, err
	}
	return retail.ReadDaily(d.ctx, tbl)
}

// writeJobs puts the shipped retail jobs, their tables' schemas and the
// raw events of batch 1 in the demo's jobs folder, afresh.
func (d *demo) writeJobs() error {
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
func (d *demo) runJob(name, runID, selector string) (*swap.Result, error) {
	j, err := job.Load(filepath.Join(d.jobs, name+".yaml"))
	if err != nil {
		return nil, err
	}
	ident, err := swap.ParseTable(j.Table)
	if err != nil {
		return nil, err
	}
	rejects := filepath.Join(d.jobs, "rejects-"+runID+".ndjson")
	return j.Run(d.ctx, d.pub, swap.Request{Table: ident, RunID: runID}, job.RunOptions{Partitions: selector, RejectsFile: rejects, Inputs: d.in}, d.pub.Publish)
}

// buildBoth runs the facts job, then the daily job over the facts it made.
func (d *demo) buildBoth(run string) (facts, daily *swap.Result, err error) {
	if facts, err = d.runJob("orders_fact", "orders-fact-"+run, demoRange); err != nil {
		return nil, nil, err
	}
	if daily, err = d.runJob("daily_orders", "daily-orders-"+run, demoRange); err != nil {
		return nil, nil, err
	}
	return facts, daily, nil
}

func (d *demo) firstLoad(batch1 []retail.DailyOrder) error {
	d.header("batch 1 of raw order events arrives: the orders_fact job builds the facts from it, the daily_orders job the groups from the facts, for " + demoRange)
	facts, daily, err := d.buildBoth("batch1")
	if err != nil {
		return err
	}
	printJob(d.w, facts.Plan)
	fmt.Fprintf(d.w, "orders_fact: %d orders, %d cents (duplicate e2 counted once, o107's tie won by e13)\n", facts.Plan.Fingerprint.Rows, facts.Plan.Fingerprint.Sums["amount_cents"])
	return d.show(daily, batch1)
}

func (d *demo) backfill(batch2 []retail.DailyOrder) error {
	d.header("batch 2 arrives (e10 moves o100 from 2026-01-01 to 2026-01-02): a backfill of 2026-01-02 alone is refused")
	if err := os.WriteFile(filepath.Join(d.jobs, "raw", "batch2.ndjson"), retail.Batch2, 0o644); err != nil {
		return err
	}
	before, err := d.cat.LoadTable(d.ctx, table.Identifier{"retail", "orders_fact"})
	if err != nil {
		return err
	}
	_, err = d.runJob("orders_fact", "orders-fact-alone", "order_date=2026-01-02")
	var refused *swap.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "o100") {
		return fmt.Errorf("a backfill of 2026-01-02 alone: %v, want refused naming o100", err)
	}
	for _, f := range refused.Findings {
		fmt.Fprintf(d.w, "refused (exit code %d): %s\n", exitCode(err), f)
	}
	after, err := d.cat.LoadTable(d.ctx, table.Identifier{"retail", "orders_fact"})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "orders_fact unchanged: %v\n", after.MetadataLocation() == before.MetadataLocation())

	d.header("the backfill of " + demoRange + " rebuilds both tables: o100 moves, o106 is new, the stale e9 loses")
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

func (d *demo) appendContrast() error {
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

func (d *demo) refuseWipe() error {
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
	_, err = publishFiles(d.ctx, d.pub, swap.Request{Table: demoTable}, "order_date=2026-01-02", []string{path}, source.Options{})
	var refused *swap.RefusedError
	if !errors.As(err, &refused) {
		return fmt.Errorf("a publish of zero rows was not refused: %v", err)
	}
	for _, f := range refused.Findings {
		fmt.Fprintf(d.w, "refused (exit code %d): %s\n", exitCode(err), f)
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

func (d *demo) badPublishRolledBack(batch2 []retail.DailyOrder) error {
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
	rb, err := d.pub.Rollback(d.ctx, swap.RollbackRequest{Table: demoTable, RunID: res.Plan.RunID})
	if err != nil {
		return err
	}
	rows, err := d.read(demoTable)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "rolled back run %s: main %d -> %d\n", rb.RunID, rb.FromSnapshotID, rb.ToSnapshotID)
	printGroups(d.w, rows)
	fmt.Fprintf(d.w, "fingerprint %s, the one before the bad run: %v\n", short(rb.Fingerprint), rb.Fingerprint == goodFP)
	if rb.ToSnapshotID != goodSnap || rb.Fingerprint != goodFP || !slices.Equal(rows, batch2) {
		return fmt.Errorf("rollback restored snapshot %d with fingerprint %s, want %d with %s", rb.ToSnapshotID, rb.Fingerprint, goodSnap, goodFP)
	}
	return nil
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
