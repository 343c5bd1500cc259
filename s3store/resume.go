package s3store

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Reading a body that breaks off is retried this many times, waiting from
// readBackoff and doubling.
var (
	readAttempts = 5
	readBackoff  = 100 * time.Millisecond
)

// resumingClient is the HTTP client every S3 request goes through, lakeswap's
// and iceberg-go's alike (they share one AWS configuration). The SDK
// retries a request whose answer fails; nothing retries a GET whose body
// breaks off half-way (a reset, a proxy that gives up), which is how real
// networks fail. resumingClient makes such a body whole: it sends the same
// request again and skips what was read. (Resuming by a fresh Range would
// need the request signed again, since S3 signs Range.)
type resumingClient struct {
	next aws.HTTPClient
}

// Resuming wraps an HTTP client so that GET bodies survive a broken
// connection.
func Resuming(next aws.HTTPClient) aws.HTTPClient { return resumingClient{next} }

func (c resumingClient) Do(r *http.Request) (*http.Response, error) {
	resp, err := c.next.Do(r)
	if err != nil || r.Method != http.MethodGet || (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent) {
		return resp, err
	}
	want, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	if err != nil {
		want = -1 // unknown: only a read error is retried
	}
	// Only an answer with a validator can be fetched again and known to
	// be the same: a listing has none, and two listings of one length
	// could be spliced.
	etag := resp.Header.Get("ETag")
	if etag == "" {
		return resp, nil
	}
	resp.Body = &resumingBody{client: c.next, req: r, body: resp.Body, want: want, etag: etag, status: resp.StatusCode}
	return resp, nil
}

// resumingBody reads a GET body, fetching it again after a failure and
// skipping the bytes already read, and checks that the length read is the
// length the answer announced.
type resumingBody struct {
	client aws.HTTPClient
	req    *http.Request
	body   io.ReadCloser
	want   int64
	read   int64
	etag   string
	status int
	tries  int
}

func (b *resumingBody) Read(p []byte) (int, error) {
	for {
		n, err := b.body.Read(p)
		b.read += int64(n)
		if err == nil {
			return n, nil
		}
		if errors.Is(err, io.EOF) {
			switch {
			case b.want < 0 || b.read == b.want:
				return n, io.EOF
			case b.read > b.want:
				return n, fmt.Errorf("read %s: %d bytes where the answer announced %d", b.req.URL.Path, b.read, b.want)
			}
		}
		// A read error, or an end before the announced length.
		if err := b.resume(err); err != nil {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// resume fetches the body again and skips what was read.
func (b *resumingBody) resume(cause error) error {
	if errors.Is(cause, io.EOF) {
		cause = io.ErrUnexpectedEOF
	}
	ctx := b.req.Context()
	wait := readBackoff << b.tries
	for ; b.tries < readAttempts; b.tries++ {
		if ctx.Err() != nil {
			return errors.Join(cause, ctx.Err())
		}
		select {
		case <-ctx.Done():
			return errors.Join(cause, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
		_ = b.body.Close()
		resp, err := b.client.Do(b.req.Clone(ctx))
		if err != nil {
			cause = err
			continue
		}
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			cause = fmt.Errorf("the store answered %s", resp.Status)
			continue
		}
		if resp.StatusCode != b.status || resp.Header.Get("ETag") != b.etag {
			resp.Body.Close()
			return fmt.Errorf("read %s again after %v: the answer changed (status %d, ETag %s, was %d, %s)", b.req.URL.Path, cause, resp.StatusCode, resp.Header.Get("ETag"), b.status, b.etag)
		}
		b.body = resp.Body
		skipped, err := io.CopyN(io.Discard, b.body, b.read)
		if err != nil || skipped != b.read {
			cause = fmt.Errorf("skip %d bytes read before: %w", b.read, err)
			continue
		}
		b.tries++
		return nil
	}
	return fmt.Errorf("read %s: %w (after %d attempts)", b.req.URL.Path, cause, readAttempts)
}

func (b *resumingBody) Close() error { return b.body.Close() }
