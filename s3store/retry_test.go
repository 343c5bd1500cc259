package s3store_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/s3store"
)

// faultyTransport answers the first `fail` requests whose query matches with
// a 503, as an overloaded store does, and counts every matching request.
type faultyTransport struct {
	match string
	fail  int64
	seen  atomic.Int64
	next  http.RoundTripper
}

func (f *faultyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.Contains(r.URL.RawQuery, f.match) {
		return f.next.RoundTrip(r)
	}
	if n := f.seen.Add(1); n <= f.fail {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		body := "<Error><Code>SlowDown</Code><Message>injected</Message></Error>"
		return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Body: io.NopCloser(strings.NewReader(body)),
			Header: http.Header{"Content-Type": {"application/xml"}}, Request: r}, nil
	}
	return f.next.RoundTrip(r)
}

func faultyStore(t *testing.T, f *faultyTransport) (*s3store.Store, string) {
	t.Helper()
	_, srv, bucket := newStore(t) // the server, its credentials in the environment, a bucket
	cfg := s3store.Config{Endpoint: srv.Endpoint, Region: srv.Region, PathStyle: true, PartSize: s3store.MinPartSize}
	awsCfg, err := s3store.LoadAWS(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.next = http.DefaultTransport
	awsCfg.HTTPClient = &http.Client{Transport: f}
	awsCfg.Retryer = s3store.Retryer(20 * time.Millisecond) // the production bound, with short waits
	return s3store.New(awsCfg, cfg), bucket
}

func upload(store *s3store.Store, bucket, key string, size int) error {
	up, err := store.Create(context.Background(), bucket, key)
	if err != nil {
		return err
	}
	if _, err := up.Write(make([]byte, size)); err != nil {
		return err
	}
	return up.Close()
}

func TestTransientErrorsAreRetried(t *testing.T) {
	f := &faultyTransport{match: "partNumber=", fail: 2}
	store, bucket := faultyStore(t, f)
	if err := upload(store, bucket, "retried", s3store.MinPartSize+10); err != nil {
		t.Fatalf("upload through two 503s: %v", err)
	}
	if got := f.seen.Load(); got != 4 { // two parts, the first tried three times
		t.Errorf("%d part requests, want 4 (two refused, then two accepted)", got)
	}
}

// TestRetriesAreBounded: a store that always answers 503 is tried five
// times, a part of a multipart upload as a single PUT, and the upload fails.
func TestRetriesAreBounded(t *testing.T) {
	for _, c := range []struct {
		name, match string
		size        int
	}{{"part", "partNumber=", s3store.MinPartSize}, {"single PUT", "x-id=PutObject", 10}} {
		t.Run(c.name, func(t *testing.T) {
			f := &faultyTransport{match: c.match, fail: 1000}
			store, bucket := faultyStore(t, f)
			if err := upload(store, bucket, "never", c.size); err == nil {
				t.Fatal("an upload against a store that always answers 503 succeeded")
			}
			if got := f.seen.Load(); got != 5 {
				t.Errorf("%d attempts, want 5: retries must be bounded", got)
			}
		})
	}
}

// TestRefusedPreconditionIsNotRetried: an upload to a taken key is refused
// once, not retried, whether it is a multipart upload (two parts, the
// refused completion, the abort) or a single PUT (the refused PUT).
func TestRefusedPreconditionIsNotRetried(t *testing.T) {
	for _, c := range []struct {
		name, match string
		size        int
		want        int64
	}{{"multipart", "uploadId=", s3store.MinPartSize + 10, 4}, {"single PUT", "x-id=PutObject", 10, 1}} {
		t.Run(c.name, func(t *testing.T) {
			f := &faultyTransport{match: c.match, fail: 0} // counts the upload's requests
			store, bucket := faultyStore(t, f)
			if err := upload(store, bucket, "taken", c.size); err != nil {
				t.Fatal(err)
			}
			f.seen.Store(0)
			err := upload(store, bucket, "taken", c.size)
			if !errors.Is(err, parquetio.ErrExists) {
				t.Fatalf("err = %v, want ErrExists", err)
			}
			if got := f.seen.Load(); got != c.want {
				t.Errorf("%d requests on the upload, want %d: the refusal was retried", got, c.want)
			}
		})
	}
}

// TestFailedPutLeavesAnotherObject: a PUT that fails (every attempt
// answered 503) where another upload's object already is removes nothing:
// a failed upload deletes only an object it made.
func TestFailedPutLeavesAnotherObject(t *testing.T) {
	f := &faultyTransport{match: "x-id=PutObject", fail: 0}
	store, bucket := faultyStore(t, f)
	if err := upload(store, bucket, "taken", 10); err != nil {
		t.Fatal(err)
	}
	f.seen.Store(0)
	f.fail = 1000
	if err := upload(store, bucket, "taken", 20); err == nil {
		t.Fatal("a PUT answered 503 every time succeeded")
	}
	out, err := store.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("taken")})
	if err != nil {
		t.Fatalf("the object another upload made is gone after a failed PUT to its key: %v", err)
	}
	if got := aws.ToInt64(out.ContentLength); got != 10 {
		t.Errorf("the object at the key holds %d bytes, want the other upload's 10", got)
	}
}
