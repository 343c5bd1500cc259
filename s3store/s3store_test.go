package s3store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// newStore connects to the test MinIO through the standard AWS chain, as
// lakeswap does, with a small part size so that files span several parts.
func newStore(t *testing.T) (*s3store.Store, *testenv.S3, string) {
	t.Helper()
	srv := testenv.MinIO(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	_, store, err := s3store.Attach(context.Background(), map[string]string{
		s3store.PropEndpoint: srv.Endpoint, s3store.PropRegion: srv.Region, s3store.PropPartSize: "5242880",
	})
	if err != nil {
		t.Fatal(err)
	}
	return store, srv, srv.NewBucket(t)
}

func TestLargeUploadReadsBackWithChecksum(t *testing.T) {
	store, srv, bucket := newStore(t)
	ctx := context.Background()
	data := make([]byte, 2*s3store.MinPartSize+123_457) // three parts
	_, _ = rand.Read(data)

	up, err := store.Create(ctx, bucket, "big/part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	// Write in odd-sized pieces, as a Parquet writer does.
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 777_777)
		if _, err := up.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := up.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	obj, err := srv.Client.GetObject(ctx, bucket, "big/part-00000.parquet", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(data))
	}
	head, err := store.Client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("big/part-00000.parquet"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if c := aws.ToString(head.ChecksumCRC32C); !strings.HasSuffix(c, "-3") {
		t.Errorf("store reports CRC32C %q; want the composite checksum of 3 parts it checked", c)
	}
}

func TestCorruptPartIsRefusedByTheStore(t *testing.T) {
	store, _, bucket := newStore(t)
	ctx := context.Background()
	up, err := store.Client().CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("x"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
	if err != nil {
		t.Fatal(err)
	}
	// A part whose declared CRC32C does not match its bytes.
	_, err = store.Client().UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("x"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("hello"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c, ChecksumCRC32C: aws.String("AAAAAA==")})
	if err == nil {
		t.Error("the store accepted a part whose checksum does not match")
	}
	_, _ = store.Client().AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("x"), UploadId: up.UploadId})
}

func TestSecondWriteIsRefusedByPrecondition(t *testing.T) {
	store, srv, bucket := newStore(t)
	ctx := context.Background()
	write := func(content string) error {
		up, err := store.Create(ctx, bucket, "data/part-00000.parquet")
		if err != nil {
			return err
		}
		if _, err := up.Write([]byte(content)); err != nil {
			return err
		}
		return up.Close()
	}
	if err := write("first"); err != nil {
		t.Fatal(err)
	}
	err := write("second")
	if !errors.Is(err, parquetio.ErrExists) || !strings.Contains(err.Error(), "If-None-Match") {
		t.Fatalf("second write: err = %v, want a refused precondition", err)
	}
	obj, _ := srv.Client.GetObject(ctx, bucket, "data/part-00000.parquet", minio.GetObjectOptions{})
	if got, _ := io.ReadAll(obj); string(got) != "first" {
		t.Errorf("object holds %q after a refused overwrite, want %q", got, "first")
	}
	assertNoUploads(t, store, bucket)
}

func TestCancelledUploadLeavesNoParts(t *testing.T) {
	store, _, bucket := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	up, err := store.Create(ctx, bucket, "cancelled/part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, s3store.MinPartSize)
	if _, err := up.Write(chunk); err != nil { // one part uploaded
		t.Fatal(err)
	}
	if uploads := listUploads(t, store, bucket); len(uploads) != 1 {
		t.Fatalf("%d multipart uploads in flight, want 1", len(uploads))
	}
	cancel()
	if _, err := up.Write(chunk); err == nil {
		t.Fatal("a write after cancellation succeeded")
	}
	assertNoUploads(t, store, bucket)
	if err := up.Close(); err == nil {
		t.Error("close after a failed write succeeded")
	}
}

func listUploads(t *testing.T, store *s3store.Store, bucket string) []types.MultipartUpload {
	t.Helper()
	out, err := store.Client().ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Uploads
}

func assertNoUploads(t *testing.T, store *s3store.Store, bucket string) {
	t.Helper()
	if uploads := listUploads(t, store, bucket); len(uploads) != 0 {
		t.Errorf("%d incomplete multipart uploads remain: %v", len(uploads), uploads)
	}
}

// TestFitUploads: an upload's parts and how many are in flight follow the
// memory it may hold, where the catalog's properties leave them to
// lakeswap: more parts in flight first, then bigger parts; never less than
// one part in flight of the default size, and a size or count the
// properties set is kept.
func TestFitUploads(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		props          map[string]string
		budget         int64
		part, inFlight string
	}{
		{nil, 0, "", ""}, // no budget: the properties as they are
		{nil, 20 * mib, "16777216", "1"},
		{nil, 36 * mib, "16777216", "1"},
		{nil, 128 * mib, "16777216", "4"},
		{nil, 160 * mib, "33554432", "4"},
		{nil, 1400 * mib, "67108864", "4"},
		{map[string]string{s3store.PropPartSize: "8388608"}, 128 * mib, "8388608", "4"},
		{map[string]string{s3store.PropPartsInFlight: "1"}, 1400 * mib, "67108864", "1"},
		// Parts grow only while as many as the properties send at once fit.
		{map[string]string{s3store.PropPartsInFlight: "8"}, 320 * mib, "33554432", "8"},
		{map[string]string{s3store.PropPartsInFlight: "16"}, 160 * mib, "16777216", "16"},
		{map[string]string{s3store.PropPartSize: "5242880", s3store.PropPartsInFlight: "2"}, 1400 * mib, "5242880", "2"},
	} {
		got := s3store.FitUploads(c.props, c.budget)
		if got[s3store.PropPartSize] != c.part || got[s3store.PropPartsInFlight] != c.inFlight {
			t.Errorf("FitUploads(%v, %d MiB): parts of %q, %q in flight; want %q, %q", c.props, c.budget/mib,
				got[s3store.PropPartSize], got[s3store.PropPartsInFlight], c.part, c.inFlight)
		}
	}
}
