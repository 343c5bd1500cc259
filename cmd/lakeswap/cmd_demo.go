package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/demo"
	"github.com/lakeswap/lakeswap/internal/devserver"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/source"
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
	in := source.Options{}
	if s3store.UsesS3(cfg.Props) {
		// daily_orders reads the facts' files, on S3 with the warehouse.
		if in.Store, err = inputStore(ctx, cfg.Props, g.getenv); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "lakeswap demo: retail-orders on an embedded catalog in %s, warehouse %s\n", cfg.Home, cfg.Props["warehouse"])
	steps, err := demo.Run(ctx, demo.Options{Catalog: cat, Pub: pub, Home: cfg.Home, Inputs: in, Out: w, PrintJob: printJob, ExitCode: exitCode})
	if err != nil {
		return err
	}
	switch {
	case o.s3Endpoint != "":
		// The catalog alone does not say where the warehouse's endpoint is:
		// a config file beside the home does, credentials aside.
		conf, err := writeDemoConfig(cfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\ndemo ok. Look around (with the same AWS credentials in the environment): lakeswap --config %s history --table retail.daily_orders\n", conf)
	case o.s3:
		fmt.Fprintln(w, "\ndemo ok. The MinIO server stops with the demo; to keep the warehouse, use --s3-endpoint and --s3-bucket.")
	default:
		fmt.Fprintf(w, "\ndemo ok. Look around: lakeswap --home %s history --table retail.daily_orders\n", o.dir)
	}
	if g.json() {
		return g.emit(demoResult{OK: true, Home: cfg.Home, Steps: steps, Table: "retail.daily_orders"}, nil)
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

// demoResult is demo's -o json: the story ran, every number checked.
type demoResult struct {
	OK    bool   `json:"ok"`
	Home  string `json:"home"`
	Steps int    `json:"steps"`
	Table string `json:"table"`
}
