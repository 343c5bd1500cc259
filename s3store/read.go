package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// List calls fn for every object under prefix in bucket, in key order, with
// its size and ETag.
func (s *Store) List(ctx context.Context, bucket, prefix string, fn func(key string, size int64, etag string) error) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list s3://%s/%s: %w", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			if err := fn(aws.ToString(o.Key), aws.ToInt64(o.Size), aws.ToString(o.ETag)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ErrChanged is an object that is no longer what was listed.
var ErrChanged = errors.New("the object changed since it was listed")

// Download copies an object to w as it arrives, only if its ETag is still
// etag and its size size: an object rewritten since the listing is refused
// with ErrChanged, never read in its new form.
func (s *Store) Download(ctx context.Context, bucket, key, etag string, size int64, w io.Writer) error {
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if etag != "" { // a table's data file, never rewritten, is listed by size
		in.IfMatch = aws.String(etag)
	}
	out, err := s.client.GetObject(ctx, in)
	if isPreconditionFailed(err) {
		return fmt.Errorf("s3://%s/%s: %w", bucket, key, ErrChanged)
	}
	if err != nil {
		return fmt.Errorf("read s3://%s/%s: %w", bucket, key, err)
	}
	defer out.Body.Close()
	n, err := io.Copy(w, out.Body)
	if err != nil {
		return fmt.Errorf("read s3://%s/%s: %w", bucket, key, err)
	}
	if n != size {
		return fmt.Errorf("read s3://%s/%s: %d bytes, the listing said %d: %w", bucket, key, n, size, ErrChanged)
	}
	return nil
}
