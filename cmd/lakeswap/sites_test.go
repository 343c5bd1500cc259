package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/testenv"
)

// site is one conformance environment a CLI test runs on: the embedded
// catalog on local files, SQLite with MinIO, PostgreSQL with MinIO, a REST
// catalog (over SQLite) with MinIO. Its
// files are every object under the warehouse, as locations.
type site struct {
	t     *testing.T
	name  string
	args  []string // global flags that select the catalog
	env   []string // the AWS environment, for a process of its own
	props map[string]string
	home  string
	srv   *testenv.S3
	bkt   string
	rest  *testenv.REST // the REST catalog of rest+minio
}

// serverEnv puts in this process's environment what the in-process CLI
// reads of the package's MinIO server from the AWS chain, and returns the
// server. Every test of the package that uses a server uses this one, with
// the same credentials, so they stay set (t.Setenv would keep the tests
// that need them from running in parallel). A test that clears them sets
// its own with t.Setenv, and runs alone.
func serverEnv(t testing.TB) *testenv.S3 {
	t.Helper()
	srv := testenv.MinIO(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		if os.Getenv(k) != v {
			os.Setenv(k, v)
		}
	}
	return srv
}

// forEachSite runs a CLI test on every conformance environment.
func forEachSite(t *testing.T, test func(t *testing.T, s *site)) {
	for _, name := range []string{"sqlite+local", "sqlite+minio", "postgres+minio", "rest+minio"} {
		t.Run(name, func(t *testing.T) { test(t, newSite(t, name)) })
	}
}

func newSite(t *testing.T, name string) *site {
	t.Helper()
	shortTier(t)
	s := &site{t: t, name: name, home: t.TempDir()}
	if name == "sqlite+local" {
		s.args = []string{"--home", s.home, "--config", os.DevNull}
		return s
	}
	s.srv = serverEnv(t)
	s.bkt = s.srv.NewBucket(t)
	s.env = append(os.Environ(), s.srv.Env()...)
	s.props = map[string]string{
		"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri":       "file:" + filepath.Join(s.home, "catalog.db") + "?_pragma=busy_timeout(10000)",
		"warehouse": "s3://" + s.bkt + "/warehouse", s3store.PropEndpoint: s.srv.Endpoint, s3store.PropRegion: s.srv.Region,
		s3store.PropPartSize: fmt.Sprint(s3store.MinPartSize),
	}
	switch name {
	case "postgres+minio":
		s.props["sql.driver"], s.props["sql.dialect"], s.props["uri"] = "pgx", "postgres", testenv.Postgres(t).NewDatabase(t)
	case "rest+minio":
		backend := map[string]string{"warehouse": s.props["warehouse"], s3store.PropEndpoint: s.srv.Endpoint, s3store.PropRegion: s.srv.Region}
		s.rest = testenv.NewREST(t, backend)
		delete(s.props, "sql.driver")
		delete(s.props, "sql.dialect")
		s.props["type"], s.props["uri"] = "rest", s.rest.URL
	}
	var yaml strings.Builder
	yaml.WriteString("catalog:\n  site:\n")
	for k, v := range s.props {
		fmt.Fprintf(&yaml, "    %s: %q\n", k, v)
	}
	s.args = []string{"--config", write(t, s.home, "lakeswap.yaml", yaml.String()), "--catalog", "site"}
	return s
}

// cli runs lakeswap in this process, as a user would, on the site.
func (s *site) cli(args ...string) (code int, stdout, stderr string) {
	s.t.Helper()
	var out, errb bytes.Buffer
	code = mainWithEnv(context.Background(), append(slices.Clone(s.args), args...), &out, &errb, noEnv)
	return code, out.String(), errb.String()
}

// command is lakeswap in a process of its own on the site.
func (s *site) command(args ...string) *exec.Cmd {
	cmd := exec.Command(lakeswapBinary(s.t), append(slices.Clone(s.args), args...)...)
	env := s.env
	if env == nil {
		env = os.Environ()
	}
	// Spill folders in the test's own, so that a process a test kills
	// leaves nothing in the machine's temporary folder.
	cmd.Env = append(slices.Clone(env), "TMPDIR="+s.t.TempDir())
	return cmd
}

// must runs lakeswap and fails the test unless it exits 0.
func (s *site) must(args ...string) string {
	s.t.Helper()
	code, out, errs := s.cli(args...)
	if code != 0 {
		s.t.Fatalf("lakeswap %s: exit %d: %s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// createDaily creates retail.daily_orders and publishes the fixture's first
// load, so that every later refusal has something to leave unchanged.
func (s *site) createDaily() {
	s.t.Helper()
	s.must("table", "create", "--schema", write(s.t, s.home, "daily_orders.yaml", schemaYAML))
	s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(s.t))
}

// metadata is a table's metadata location: of retail.NAME, or of NS.NAME.
func (s *site) metadata(name string) string {
	s.t.Helper()
	return s.table(name).MetadataLocation()
}

// mainState is what readers of main see of the table: main's snapshot
// and the refs but plans' audit branches, which a plan adds and apply or
// discard removes.
func (s *site) mainState(name string) string {
	s.t.Helper()
	meta := s.table(name).Metadata()
	state := "main: none"
	if head := meta.CurrentSnapshot(); head != nil {
		state = fmt.Sprintf("main: %d", head.SnapshotID)
	}
	var refs []string
	for ref, r := range meta.Refs() {
		if !strings.HasPrefix(ref, swap.PlanBranchPrefix) {
			refs = append(refs, fmt.Sprintf("%s=%d", ref, r.SnapshotID))
		}
	}
	slices.Sort(refs)
	return state + " refs: " + strings.Join(refs, ",")
}

// content lists the table's files but its metadata versions, one of
// which every catalog commit adds (a plan's branch, its removal): what a
// plan discarded leaves as it was.
func (s *site) content() []string {
	s.t.Helper()
	return slices.DeleteFunc(s.files(), func(f string) bool { return strings.HasSuffix(f, ".metadata.json") })
}

// data lists the table's data files, staged or committed: what a plan
// refused at apply leaves as it was, though its branch went.
func (s *site) data() []string {
	s.t.Helper()
	return slices.DeleteFunc(s.files(), func(f string) bool { return !strings.Contains(f, "/data/") })
}

// table loads the table name (NS.NAME, or a table of retail).
func (s *site) table(name string) *table.Table {
	s.t.Helper()
	ctx, cat, _, err := openPublisher(context.Background(), siteConfig(s.t, s), noLog())
	if err != nil {
		s.t.Fatal(err)
	}
	defer cat.Close()
	ident := []string{"retail", name}
	if strings.Contains(name, ".") {
		ident = strings.Split(name, ".")
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		s.t.Fatal(err)
	}
	return tbl
}

// siteConfig is the site's catalog, as lakeswap resolves it.
func siteConfig(t *testing.T, s *site) catalog.Config {
	t.Helper()
	if s.srv != nil {
		return catalog.Config{Name: "site", Props: s.props, Source: "test"}
	}
	cfg, err := catalog.Resolve(catalog.Settings{Home: s.home, ConfigFile: os.DevNull, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// files lists every file under the warehouse, as locations.
func (s *site) files() []string {
	s.t.Helper()
	var out []string
	if s.srv == nil {
		err := filepath.WalkDir(filepath.Join(s.home, "warehouse"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, "file://"+p)
			}
			return err
		})
		if err != nil {
			s.t.Fatal(err)
		}
	} else {
		for obj := range s.srv.Client.ListObjects(context.Background(), s.bkt, minio.ListObjectsOptions{Recursive: true}) {
			if obj.Err != nil {
				s.t.Fatal(obj.Err)
			}
			out = append(out, "s3://"+s.bkt+"/"+obj.Key)
		}
	}
	slices.Sort(out)
	return out
}

// withoutRecords leaves out the records a named run that changed nothing
// keeps beside the table's files (lakeswap/unchanged/), for status.
func withoutRecords(files []string) []string {
	return slices.DeleteFunc(slices.Clone(files), func(f string) bool { return strings.Contains(f, "/lakeswap/unchanged/") })
}

// uploads lists the incomplete multipart uploads in the bucket, straight
// from MinIO.
func (s *site) uploads() []string {
	s.t.Helper()
	if s.srv == nil {
		return nil
	}
	var out []string
	for up := range s.srv.Client.ListIncompleteUploads(context.Background(), s.bkt, "", true) {
		if up.Err != nil {
			s.t.Fatal(up.Err)
		}
		out = append(out, up.Key)
	}
	return out
}

// read, write and remove reach a file by its location, behind lakeswap's
// back, as another tool or a person would.
func (s *site) read(loc string) []byte {
	s.t.Helper()
	if s.srv == nil {
		return mustRead(s.t, strings.TrimPrefix(loc, "file://"))
	}
	obj, err := s.srv.Client.GetObject(context.Background(), s.bkt, s.key(loc), minio.GetObjectOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	defer obj.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(obj); err != nil {
		s.t.Fatal(err)
	}
	return b.Bytes()
}

func (s *site) write(loc string, body []byte) {
	s.t.Helper()
	var err error
	if s.srv == nil {
		err = os.WriteFile(strings.TrimPrefix(loc, "file://"), body, 0o644)
	} else {
		_, err = s.srv.Client.PutObject(context.Background(), s.bkt, s.key(loc), bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s *site) remove(loc string) {
	s.t.Helper()
	var err error
	if s.srv == nil {
		err = os.Remove(strings.TrimPrefix(loc, "file://"))
	} else {
		err = s.srv.Client.RemoveObject(context.Background(), s.bkt, s.key(loc), minio.RemoveObjectOptions{})
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s *site) key(loc string) string {
	key, ok := strings.CutPrefix(loc, "s3://"+s.bkt+"/")
	if !ok {
		s.t.Fatalf("%s is not in bucket %s", loc, s.bkt)
	}
	return key
}
