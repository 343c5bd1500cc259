package swap_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// table locations
	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/testenv"
)

func TestMain(m *testing.M) {
	if plan := os.Getenv(envApplyPlan); plan != "" {
		os.Exit(applyProcess(plan, os.Getenv(envApplyHome)))
	}
	os.Exit(testenv.Run(m))
}

// backend is one place the conformance suite runs: a catalog and a warehouse.
type backend struct {
	name string
	open func(t *testing.T) *env
}

// backends are every environment lakeswap supports; the first is the
// embedded default.
var backends = []backend{
	{"sqlite+local", openLocal},
	{"sqlite+minio", func(t *testing.T) *env { return openS3(t, false, false) }},
	{"postgres+minio", func(t *testing.T) *env { return openS3(t, true, false) }},
	{"postgres+minio+faults", func(t *testing.T) *env { return openS3(t, true, true) }},
}

// faults are what the faulty backend's network does to its S3 requests:
// resets, SlowDowns, bodies cut off and answers lost after the store
// applied the request, each at 2% of requests, from a fixed seed.
var faults = []testenv.Rule{
	{Probability: 0.02, Fault: testenv.Reset},
	{Probability: 0.02, Fault: testenv.Unavailable},
	{Op: testenv.OpGet, Probability: 0.02, Fault: testenv.Truncate},
	{Probability: 0.02, Fault: testenv.DropResponse},
}

// forEachBackend runs a conformance test on every backend.
func forEachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

func openLocal(t *testing.T) *env {
	home := t.TempDir()
	cfg, err := catalog.Resolve(catalog.Settings{Home: home, Getenv: func(string) string { return "" }, ConfigFile: os.DevNull})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Embedded {
		t.Fatalf("catalog with no configuration is %+v, want the embedded one", cfg)
	}
	e := openEnv(t, context.Background(), cfg)
	e.home = home
	e.dataFiles = func() []string { return localParquet(t, filepath.Join(home, "warehouse")) }
	e.allFiles = func() []string {
		var out []string
		_ = filepath.Walk(filepath.Join(home, "warehouse"), func(path string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				out = append(out, "file://"+path)
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	return e
}

// s3Catalog is an SQLite catalog whose warehouse is a fresh MinIO bucket,
// with the server's credentials in the standard AWS environment. Every test
// of the package uses the one server, so they stay set (tb.Setenv would keep
// a test that calls this from running in parallel).
func s3Catalog(tb testing.TB) (*testenv.S3, string, map[string]string) {
	srv := testenv.MinIO(tb)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		if os.Getenv(k) != v {
			os.Setenv(k, v)
		}
	}
	bucket := srv.NewBucket(tb)
	return srv, bucket, map[string]string{
		"type":               "sql",
		"warehouse":          "s3://" + bucket + "/warehouse",
		s3store.PropEndpoint: srv.Endpoint,
		s3store.PropRegion:   srv.Region,
		"sql.driver":         "sqlite",
		"sql.dialect":        "sqlite",
		"uri":                "file:" + filepath.Join(tb.TempDir(), "catalog.db") + "?_pragma=busy_timeout(10000)",
	}
}

// openS3 puts the warehouse in a fresh MinIO bucket, with the catalog in
// SQLite or in a fresh PostgreSQL database, and S3 requests through a
// proxy that injects faults when asked. Credentials reach lakeswap and
// iceberg-go through the standard AWS environment, as in production; what
// the bucket holds is read straight from MinIO.
func openS3(t *testing.T, postgres, faulty bool) *env {
	srv, bucket, props := s3Catalog(t)
	props[s3store.PropPartSize] = "5242880"
	if faulty {
		props[s3store.PropEndpoint] = testenv.NewFaultProxy(t, srv.Endpoint, 11, faults...).Endpoint
		props[s3store.PropMaxBackoff] = "100ms" // the production bound of attempts, with short waits
	}
	if postgres {
		props["sql.driver"], props["sql.dialect"], props["uri"] = "pgx", "postgres", testenv.Postgres(t).NewDatabase(t)
	}
	ctx, store, err := s3store.Attach(context.Background(), props)
	if err != nil {
		t.Fatal(err)
	}
	e := openEnv(t, ctx, catalog.Config{Name: "conformance", Props: props, Source: "test"})
	e.pub.StagingIO = store.StagingIO()
	e.allFiles = func() []string {
		var out []string
		for obj := range srv.Client.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
			if obj.Err != nil {
				t.Fatal(obj.Err)
			}
			out = append(out, "s3://"+bucket+"/"+obj.Key)
		}
		sort.Strings(out)
		return out
	}
	e.dataFiles = func() []string {
		var out []string
		for _, f := range e.allFiles() {
			if strings.HasSuffix(f, ".parquet") {
				out = append(out, f)
			}
		}
		return out
	}
	return e
}
