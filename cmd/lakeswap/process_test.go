package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/testenv"
)

// testCommitBarrier names the commit barrier of the test binary run as
// lakeswap (barrier_test.go).
const testCommitBarrier = "LAKESWAP_TEST_COMMIT_BARRIER"

// testCatalogFault names the lost-answer catalog of the test binary run
// as lakeswap (barrier_test.go).
const testCatalogFault = "LAKESWAP_TEST_CATALOG_FAULT"

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// lakeswapBinary is the command the process tests start: this test
// binary under the name lakeswap, which TestMain runs as the command
// (asLakeswap), with the test hooks (barrier_test.go). These tests need
// real processes, which a goroutine cannot stand in for; nothing is
// built for them.
func lakeswapBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(buildBinary)
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// buildBinary names this test binary lakeswap, once for the test process
// (a link in a folder of its own).
func buildBinary() {
	self, err := os.Executable()
	if err != nil {
		binErr = err
		return
	}
	dir, err := os.MkdirTemp("", "lakeswap-bin-")
	if err != nil {
		binErr = err
		return
	}
	binPath = filepath.Join(dir, "lakeswap")
	binErr = os.Symlink(self, binPath)
}

// asLakeswap runs the test binary as the command, which exits, when it
// was started under the name lakeswap (lakeswapBinary).
func asLakeswap() {
	if filepath.Base(os.Args[0]) == "lakeswap" {
		main()
	}
}

// shared is a catalog several processes share: PostgreSQL and MinIO,
// configured in a lakeswap.yaml without credentials, which come from the
// AWS environment.
type shared struct {
	t      *testing.T
	dir    string
	config string
	env    []string
	srv    *testenv.S3
	bucket string
	props  map[string]string
}

func newShared(t *testing.T, partSize int) *shared {
	t.Helper()
	srv := testenv.MinIO(t)
	dsn := testenv.Postgres(t).NewDatabase(t)
	s := &shared{t: t, dir: t.TempDir(), srv: srv, bucket: srv.NewBucket(t)}
	s.props = map[string]string{
		"type": "sql", "sql.driver": "pgx", "sql.dialect": "postgres", "uri": dsn,
		"warehouse": "s3://" + s.bucket + "/warehouse", s3store.PropEndpoint: srv.Endpoint, s3store.PropRegion: srv.Region,
		s3store.PropPartSize: fmt.Sprint(partSize),
	}
	var yaml strings.Builder
	yaml.WriteString("catalog:\n  shared:\n")
	for k, v := range s.props {
		fmt.Fprintf(&yaml, "    %s: %q\n", k, v)
	}
	s.config = write(t, s.dir, "lakeswap.yaml", yaml.String())
	s.env = append(os.Environ(), srv.Env()...)
	schema := write(t, s.dir, "daily_orders.yaml", schemaYAML)
	if r := s.run("table", "create", "--schema", schema); r.code != 0 {
		t.Fatalf("table create: exit %d: %s", r.code, r.stderr)
	}
	return s
}

type result struct {
	code           int
	stdout, stderr string
}

func (s *shared) command(extraEnv []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(lakeswapBinary(s.t), append([]string{"--config", s.config, "--catalog", "shared"}, args...)...)
	// Spill folders in the test's own, as site.command does.
	cmd.Env = append(append(append([]string(nil), s.env...), "TMPDIR="+s.t.TempDir()), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return cmd, &out, &errb
}

func (s *shared) run(args ...string) result {
	s.t.Helper()
	cmd, out, errb := s.command(nil, args...)
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// open opens the shared catalog in this process, with the same settings.
func (s *shared) open() (context.Context, *swap.Publisher) {
	s.t.Helper()
	serverEnv(s.t)
	ctx, cat, pub, err := openPublisher(context.Background(), catalog.Config{Name: "shared", Props: s.props, Source: "test"}, noLog())
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = cat.Close() })
	return ctx, pub
}

// TestTwoWritersOneWins: two lakeswap processes publish the same partitions
// against the same base at the same moment, 20 times. Each time exactly one
// commits and the other exits with the conflict code; the table then holds
// exactly the winner's rows, and every committed run verifies.
func TestTwoWritersOneWins(t *testing.T) {
	t.Parallel() // processes of its own: runs beside other tests
	s := newShared(t, s3store.MinPartSize)
	ctx, pub := s.open()
	const rounds = 20
	var winners []string
	for round := range rounds {
		barrier := t.TempDir()
		type writer struct {
			cmd      *exec.Cmd
			out, err *bytes.Buffer
			cents    int64
		}
		var ws []writer
		for w := range 2 {
			cents := int64(round*100 + w + 1)
			rows := []retail.DailyOrder{
				{OrderDate: "2026-01-01", Channel: "web", OrderCount: 1, AmountCents: cents},
				{OrderDate: "2026-01-02", Channel: "web", OrderCount: 1, AmountCents: cents},
			}
			in := filepath.Join(t.TempDir(), "in.ndjson")
			if err := retail.WriteNDJSON(in, rows); err != nil {
				t.Fatal(err)
			}
			cmd, out, errb := s.command([]string{testCommitBarrier + "=" + barrier + ":2"},
				"publish", "-o", "json", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01..2026-01-02", in)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ws = append(ws, writer{cmd, out, errb, cents})
		}
		var won *writer
		conflicts := 0
		for i := range ws {
			err := ws[i].cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			switch code {
			case exitOK:
				if won != nil {
					t.Fatalf("round %d: both writers committed", round)
				}
				won = &ws[i]
			case exitConflict:
				conflicts++
			default:
				t.Fatalf("round %d: writer %d exit %d: %s", round, i, code, ws[i].err)
			}
		}
		if won == nil || conflicts != 1 {
			t.Fatalf("round %d: %d conflicts and winner %v, want exactly one of each", round, conflicts, won != nil)
		}
		var res swap.Result
		if err := json.Unmarshal(won.out.Bytes(), &res); err != nil {
			t.Fatalf("round %d: winner's output: %v\n%s", round, err, won.out)
		}
		winners = append(winners, res.Plan.RunID)

		tbl, err := pub.Catalog.LoadTable(ctx, []string{"retail", "daily_orders"})
		if err != nil {
			t.Fatal(err)
		}
		if got := tbl.CurrentSnapshot().SnapshotID; got != res.SnapshotID {
			t.Fatalf("round %d: main at %d, the winner committed %d", round, got, res.SnapshotID)
		}
		rows, err := retail.ReadDaily(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].AmountCents != won.cents || rows[1].AmountCents != won.cents {
			t.Fatalf("round %d: table holds %+v, want both rows at the winner's %d cents", round, rows, won.cents)
		}
	}
	main, _, err := history.Of(pub.Catalog).History(ctx, []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(main) != rounds {
		t.Errorf("main has %d snapshots after %d rounds, want one per round", len(main), rounds)
	}
	for _, run := range winners {
		if r := s.run("verify", "--table", "retail.daily_orders", "--run", run); r.code != 0 {
			t.Errorf("verify run %s: exit %d: %s", run, r.code, r.stderr)
		}
	}
}

// TestKilledPublishChangesNothing: a publish killed with SIGKILL while its
// staging upload is in flight leaves the table exactly as it was, and what
// it uploaded is found by its run id.
func TestKilledPublishChangesNothing(t *testing.T) {
	s := newShared(t, s3store.MinPartSize)
	ctx, pub := s.open()
	first := write(t, t.TempDir(), "first.ndjson", "{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":5}\n")
	if r := s.run("publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", first); r.code != 0 {
		t.Fatalf("first publish: %s", r.stderr)
	}
	tbl, err := pub.Catalog.LoadTable(ctx, []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	before := tbl.MetadataLocation()

	big := bigInput(t, 1_500_000)
	const runID = "killed-run-1"
	cmd, _, errb := s.command(nil, "publish", "--run-id", runID, "--parallelism", "1", "--table", "retail.daily_orders",
		"--partitions", "order_date=2026-01-01..2026-01-04", big)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	client := waitForUpload(t, s, cmd, errb)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	tbl, err = pub.Catalog.LoadTable(ctx, []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.MetadataLocation() != before {
		t.Errorf("metadata location moved from %s to %s after a killed publish", before, tbl.MetadataLocation())
	}
	left := 0
	for obj := range s.srv.Client.ListObjects(context.Background(), s.bucket, minio.ListObjectsOptions{Recursive: true, Prefix: "warehouse/"}) {
		if strings.HasSuffix(obj.Key, ".parquet") && !strings.Contains(obj.Key, "/run-") {
			t.Errorf("data file %s has no run in its path", obj.Key)
		}
		if strings.Contains(obj.Key, "/run-"+runID+"-") {
			left++
		}
	}
	up, err := client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(s.bucket)})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range up.Uploads {
		if key := aws.ToString(u.Key); !strings.Contains(key, "/run-"+runID+"-") && !strings.Contains(key, "/lakeswap/holds/"+runID+"-") {
			t.Errorf("upload in flight at %s is not named by the killed run", aws.ToString(u.Key))
		}
	}
	if left+len(up.Uploads) == 0 {
		t.Error("found nothing the killed run uploaded; the test did not kill it mid-upload")
	}
	t.Logf("killed run left %d objects and %d multipart uploads, all under run-%s", left, len(up.Uploads), runID)
}

// waitForUpload returns once the publish cmd has a multipart upload in
// flight, with a client of the shared store.
func waitForUpload(t *testing.T, s *shared, cmd *exec.Cmd, errb *bytes.Buffer) *s3.Client {
	t.Helper()
	client := s3.NewFromConfig(mustAWS(t, s), func(o *s3.Options) { o.BaseEndpoint = aws.String(s.srv.Endpoint); o.UsePathStyle = true })
	deadline := time.Now().Add(2 * time.Minute)
	for {
		up, err := client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(s.bucket)})
		if err != nil {
			t.Fatal(err)
		}
		// A staged file's upload, not the run's hold's.
		if slices.ContainsFunc(up.Uploads, func(u types.MultipartUpload) bool { return strings.Contains(aws.ToString(u.Key), "/run-") }) {
			return client
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no upload in flight after two minutes; stderr: %s", errb)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func mustAWS(t *testing.T, s *shared) aws.Config {
	t.Helper()
	cfg, err := s3store.LoadAWS(context.Background(), s3store.ConfigFromProps(s.props))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// bigInput writes rows over four days as a Parquet input file, with
// channels that never repeat so the grain stays unique and the data does not
// compress away.
func bigInput(t *testing.T, rows int) string {
	t.Helper()
	dir := t.TempDir()
	w := parquetio.NewWriter(icebergio.LocalFS{}, "file://"+dir, retail.Schema, parquetio.Options{})
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const batch = 64 << 10
	for start := 0; start < rows; start += batch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, retail.Schema)
		for i := start; i < min(start+batch, rows); i++ {
			b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(day.AddDate(0, 0, i*4/rows)))
			b.Field(1).(*array.StringBuilder).Append(testenv.Random(12))
			b.Field(2).(*array.Int64Builder).Append(1)
			b.Field(3).(*array.Int64Builder).Append(int64(i))
		}
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(files[0].Path, "file://")
}

// TestSecretNeverLeaks greps every byte lakeswap printed and logged, the
// plans it printed, and every metadata file it wrote (where snapshot
// summaries live) for the secret key, through a run that publishes, is
// refused, verifies, rolls back and fails to reach a bucket.
func TestSecretNeverLeaks(t *testing.T) {
	s := newShared(t, s3store.MinPartSize)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ndjson")
	rows, _ := retail.Daily(retail.AfterBatch2)
	if err := retail.WriteNDJSON(good, rows); err != nil {
		t.Fatal(err)
	}
	bad := write(t, dir, "bad.ndjson", "{\"order_date\":\"2026-01-01\",\"channel\":\"web\",\"order_count\":1,\"amount_cents\":-5}\n")
	var printed strings.Builder
	record := func(r result) result {
		printed.WriteString(r.stdout)
		printed.WriteString(r.stderr)
		return r
	}
	sel := "order_date=2026-01-01..2026-01-02"
	first := record(s.run("-v", "publish", "-o", "json", "--table", "retail.daily_orders", "--partitions", sel, good))
	var res swap.Result
	if err := json.Unmarshal([]byte(first.stdout), &res); err != nil {
		t.Fatalf("publish -o json: %v: %s", err, first.stdout)
	}
	record(s.run("-v", "publish", "--table", "retail.daily_orders", "--partitions", sel, good))
	record(s.run("-v", "publish", "-o", "json", "--table", "retail.daily_orders", "--partitions", sel, bad))
	record(s.run("-v", "history", "-o", "json", "--table", "retail.daily_orders"))
	record(s.run("-v", "verify", "--table", "retail.daily_orders", "--run", res.Plan.RunID))
	record(s.run("-v", "rollback", "--force", "--table", "retail.daily_orders", "--run", res.Plan.RunID))

	// A catalog whose warehouse is a bucket that does not exist: the
	// storage error is printed, the secret is not.
	broken := strings.Replace(string(mustRead(t, s.config)), s.bucket, "no-such-bucket-"+testenv.Random(3), 1)
	s.config = write(t, dir, "broken.yaml", broken)
	r := record(s.run("-v", "table", "create", "--table", "retail.other", "--schema", write(t, dir, "s.yaml", schemaYAML)))
	if r.code == 0 {
		t.Error("table create on a missing bucket succeeded")
	}

	if first.code != 0 || !strings.Contains(printed.String(), "refused") {
		t.Fatalf("the run did not go as planned:\n%s", printed.String())
	}
	secret := s.srv.SecretKey
	if strings.Contains(printed.String(), secret) {
		t.Errorf("lakeswap printed the secret key:\n%s", printed.String())
	}
	files := 0
	for obj := range s.srv.Client.ListObjects(context.Background(), s.bucket, minio.ListObjectsOptions{Recursive: true}) {
		if strings.HasSuffix(obj.Key, ".parquet") {
			continue
		}
		o, err := s.srv.Client.GetObject(context.Background(), s.bucket, obj.Key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := b.ReadFrom(o); err != nil {
			t.Fatal(err)
		}
		files++
		if bytes.Contains(b.Bytes(), []byte(secret)) {
			t.Errorf("%s holds the secret key", obj.Key)
		}
	}
	if files == 0 {
		t.Error("no metadata files were read")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInterruptedPublishLeavesNothing: a publish interrupted (Ctrl-C) while
// its parts upload in the background exits as cancelled, leaves the table
// as it was, and removes what it uploaded: no object of its run and no
// incomplete multipart upload.
func TestInterruptedPublishLeavesNothing(t *testing.T) {
	s := newShared(t, s3store.MinPartSize)
	ctx, pub := s.open()
	tbl, err := pub.Catalog.LoadTable(ctx, []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	before := tbl.MetadataLocation()
	big := bigInput(t, 1_500_000)
	const runID = "interrupted-run-1"
	cmd, _, errb := s.command(nil, "publish", "--run-id", runID, "--table", "retail.daily_orders",
		"--partitions", "order_date=2026-01-01..2026-01-04", big)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	client := waitForUpload(t, s, cmd, errb)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitCancelled {
		t.Errorf("exit %d after Ctrl-C, want %d: %s", code, exitCancelled, errb)
	}
	tbl, err = pub.Catalog.LoadTable(ctx, []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.MetadataLocation() != before {
		t.Errorf("an interrupted publish moved the metadata location")
	}
	for obj := range s.srv.Client.ListObjects(context.Background(), s.bucket, minio.ListObjectsOptions{Recursive: true, Prefix: "warehouse/"}) {
		if strings.Contains(obj.Key, "/run-"+runID+"-") {
			t.Errorf("the interrupted run left %s", obj.Key)
		}
	}
	up, err := client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(s.bucket)})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range up.Uploads {
		t.Errorf("the interrupted run left an incomplete upload at %s", aws.ToString(u.Key))
	}
}
