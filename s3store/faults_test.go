package s3store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/testenv"
)

// storeThrough connects to the test MinIO through a fault proxy.
func storeThrough(t *testing.T, seed uint64, rules ...testenv.Rule) (*s3store.Store, *testenv.S3, *testenv.FaultProxy, string) {
	t.Helper()
	return storeThroughWith(t, nil, seed, rules...)
}

// storeThroughWith is storeThrough with more of the store's properties.
func storeThroughWith(t *testing.T, props map[string]string, seed uint64, rules ...testenv.Rule) (*s3store.Store, *testenv.S3, *testenv.FaultProxy, string) {
	t.Helper()
	srv := testenv.MinIO(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	proxy := testenv.NewFaultProxy(t, srv.Endpoint, seed, rules...)
	all := map[string]string{s3store.PropEndpoint: proxy.Endpoint, s3store.PropRegion: srv.Region, s3store.PropPartSize: "5242880"}
	maps.Copy(all, props)
	_, store, err := s3store.Attach(context.Background(), all)
	if err != nil {
		t.Fatal(err)
	}
	return store, srv, proxy, srv.NewBucket(t)
}

func put(ctx context.Context, store *s3store.Store, bucket, key string, data []byte) error {
	up, err := store.Create(ctx, bucket, key)
	if err != nil {
		return err
	}
	if _, err := up.Write(data); err != nil {
		return err
	}
	return up.Close()
}

func readBack(t *testing.T, srv *testenv.S3, bucket, key string) []byte {
	t.Helper()
	obj, err := srv.Client.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLostCompletionIsTheUploadsOwn: the store completes the upload but its
// answer is lost; the SDK's retry finds the object there. It is the
// upload's own (its size and multipart ETag are what was sent), so the
// upload succeeds, where it used to be refused as a foreign object and
// orphaned.
func TestLostCompletionIsTheUploadsOwn(t *testing.T) {
	store, srv, proxy, bucket := storeThrough(t, 1, testenv.Rule{Op: testenv.OpComplete, Nth: 1, Fault: testenv.DropResponse})
	data := make([]byte, s3store.MinPartSize+4321) // two parts
	_, _ = rand.Read(data)
	if err := put(context.Background(), store, bucket, "run-x/part-00000.parquet", data); err != nil {
		t.Fatalf("upload whose completion answer was lost: %v (injected %v)", err, proxy.Injected())
	}
	if len(proxy.Injected()) != 1 {
		t.Fatalf("injected %v, want the one lost completion", proxy.Injected())
	}
	if !bytes.Equal(readBack(t, srv, bucket, "run-x/part-00000.parquet"), data) {
		t.Error("the object differs from what was sent")
	}
	assertNoUploads(t, store, bucket)

	// An object another upload made, even of the very same bytes, is
	// still refused, whether or not the answer is lost.
	proxy.SetRules(testenv.Rule{Op: testenv.OpComplete, Nth: 1, Fault: testenv.DropResponse})
	if err := put(context.Background(), store, bucket, "run-x/part-00000.parquet", data); !errors.Is(err, parquetio.ErrExists) {
		t.Errorf("a second upload of the same bytes to a taken key: %v, want a refusal", err)
	}
	if !bytes.Equal(readBack(t, srv, bucket, "run-x/part-00000.parquet"), data) {
		t.Error("a refused upload changed the object")
	}
	assertNoUploads(t, store, bucket)
}

// TestUploadThroughResetsAndSlowDowns: resets and 503s at random parts and
// completions are retried; every object reads back byte for byte.
func TestUploadThroughResetsAndSlowDowns(t *testing.T) {
	store, srv, proxy, bucket := storeThrough(t, 7,
		testenv.Rule{Op: testenv.OpPart, Probability: 0.2, Fault: testenv.Reset},
		testenv.Rule{Op: testenv.OpPart, Probability: 0.2, Fault: testenv.Unavailable},
		testenv.Rule{Op: testenv.OpComplete, Probability: 0.3, Fault: testenv.DropResponse})
	for i := range 4 {
		data := make([]byte, 2*s3store.MinPartSize+int(i)*1000)
		_, _ = rand.Read(data)
		key := "run-y/part-0000" + string(rune('0'+i)) + ".parquet"
		if err := put(context.Background(), store, bucket, key, data); err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
		if !bytes.Equal(readBack(t, srv, bucket, key), data) {
			t.Errorf("object %d differs from what was sent", i)
		}
	}
	if len(proxy.Injected()) == 0 {
		t.Error("no fault was injected")
	}
	assertNoUploads(t, store, bucket)
}

// TestTruncatedBodiesAreResumed: a GET body cut off half-way is fetched
// again and completed; one that is cut off every time fails, never passing
// for the whole object.
func TestTruncatedBodiesAreResumed(t *testing.T) {
	store, _, proxy, bucket := storeThrough(t, 3)
	data := make([]byte, 3<<20)
	_, _ = rand.Read(data)
	if err := put(context.Background(), store, bucket, "obj", data); err != nil {
		t.Fatal(err)
	}
	get := func(rng *string) ([]byte, error) {
		out, err := store.Client().GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("obj"), Range: rng})
		if err != nil {
			return nil, err
		}
		defer out.Body.Close()
		return io.ReadAll(out.Body)
	}
	for _, fault := range []testenv.Fault{testenv.Truncate, testenv.Reset} {
		proxy.SetRules(testenv.Rule{Op: testenv.OpGet, Nth: 1, Fault: testenv.Truncate}, testenv.Rule{Op: testenv.OpGet, Nth: 3, Fault: fault})
		got, err := get(nil)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%v: a body cut off once read back %d bytes (%v), want the %d sent", fault, len(got), err, len(data))
		}
		got, err = get(aws.String("bytes=1000-1999999"))
		if err != nil || !bytes.Equal(got, data[1000:2000000]) {
			t.Errorf("%v: a range cut off once read back %d bytes (%v)", fault, len(got), err)
		}
	}
	proxy.SetRules(testenv.Rule{Op: testenv.OpGet, Probability: 1, Fault: testenv.Truncate})
	if got, err := get(nil); err == nil {
		t.Errorf("a body cut off every time read back %d bytes without an error", len(got))
	}
	if err := store.Download(context.Background(), bucket, "obj", `"`+"x"+`"`, int64(len(data)), io.Discard); err == nil {
		t.Error("a download cut off every time passed")
	}
}

// TestLostStartLeavesNoUpload: the answer to CreateMultipartUpload is lost
// after the store started the upload, and the SDK's retry starts another;
// the first is found at the key and aborted once the upload completes.
func TestLostStartLeavesNoUpload(t *testing.T) {
	store, srv, proxy, bucket := storeThrough(t, 5, testenv.Rule{Op: testenv.OpCreate, Nth: 1, Fault: testenv.DropResponse})
	data := make([]byte, s3store.MinPartSize+1000) // two parts: a multipart upload
	_, _ = rand.Read(data)
	if err := put(context.Background(), store, bucket, "run-z/part-00000.parquet", data); err != nil {
		t.Fatalf("upload whose start answer was lost: %v", err)
	}
	if len(proxy.Injected()) != 1 {
		t.Fatalf("injected %v, want the one lost start", proxy.Injected())
	}
	if !bytes.Equal(readBack(t, srv, bucket, "run-z/part-00000.parquet"), data) {
		t.Error("the object differs from what was sent")
	}
	assertNoUploads(t, store, bucket)
}

// TestLostPutIsTheUploadsOwn: an object smaller than a part goes up in one
// PUT, no multipart upload started. When the store's answer is lost, the
// SDK's retry is refused by the precondition and finds the upload's own
// object (its token, size and checksum), so the upload succeeds; another
// upload of the same bytes to the key is still refused and changes nothing.
func TestLostPutIsTheUploadsOwn(t *testing.T) {
	store, srv, proxy, bucket := storeThrough(t, 11, testenv.Rule{Op: testenv.OpPut, Nth: 1, Fault: testenv.DropResponse})
	data := make([]byte, 4321)
	_, _ = rand.Read(data)
	if err := put(context.Background(), store, bucket, "run-p/part-00000.parquet", data); err != nil {
		t.Fatalf("upload whose PUT answer was lost: %v (injected %v)", err, proxy.Injected())
	}
	if got := proxy.Injected(); len(got) != 1 {
		t.Fatalf("injected %v, want the one lost PUT", got)
	}
	if !bytes.Equal(readBack(t, srv, bucket, "run-p/part-00000.parquet"), data) {
		t.Error("the object differs from what was sent")
	}
	assertNoUploads(t, store, bucket)

	proxy.SetRules(testenv.Rule{Op: testenv.OpPut, Nth: 1, Fault: testenv.DropResponse})
	if err := put(context.Background(), store, bucket, "run-p/part-00000.parquet", data); !errors.Is(err, parquetio.ErrExists) {
		t.Errorf("a second upload of the same bytes to a taken key: %v, want a refusal", err)
	}
	if !bytes.Equal(readBack(t, srv, bucket, "run-p/part-00000.parquet"), data) {
		t.Error("a refused upload changed the object")
	}
}

// TestFailedPutLeavesNoObject: every answer to the PUT is lost, so the
// upload fails although the store holds the object; the failed upload
// removes it, and nothing of it is left at the key.
func TestFailedPutLeavesNoObject(t *testing.T) {
	store, srv, proxy, bucket := storeThroughWith(t, map[string]string{s3store.PropMaxBackoff: "20ms"}, 13,
		testenv.Rule{Op: testenv.OpPut, Probability: 1, Fault: testenv.DropResponse})
	data := make([]byte, 1000)
	_, _ = rand.Read(data)
	if err := put(context.Background(), store, bucket, "run-q/part-00000.parquet", data); err == nil {
		t.Fatal("an upload whose every answer was lost succeeded")
	}
	if len(proxy.Injected()) == 0 {
		t.Fatal("no fault was injected")
	}
	if _, err := srv.Client.StatObject(context.Background(), bucket, "run-q/part-00000.parquet", minio.StatObjectOptions{}); err == nil {
		t.Error("the failed upload left its object at the key")
	}
	assertNoUploads(t, store, bucket)
}
