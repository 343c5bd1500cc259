package s3store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ListFiles calls fn for every object under an s3:// location (a prefix),
// with its size and when it was written: what gc needs to judge an
// attempt's files by age.
func (i *IO) ListFiles(ctx context.Context, location string, fn func(location string, size int64, modified time.Time) error) error {
	bucket, prefix, err := splitLocation(location)
	if err != nil {
		return err
	}
	p := s3.NewListObjectsV2Paginator(i.store.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list %s: %w", location, err)
		}
		for _, o := range page.Contents {
			if err := fn(schemeOf(location)+bucket+"/"+aws.ToString(o.Key), aws.ToInt64(o.Size), aws.ToTime(o.LastModified)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ListUploads calls fn for every incomplete multipart upload under an
// s3:// location, with its id and when it was started.
func (i *IO) ListUploads(ctx context.Context, location string, fn func(location, uploadID string, initiated time.Time) error) error {
	bucket, prefix, err := splitLocation(location)
	if err != nil {
		return err
	}
	// The whole bucket's uploads, filtered here: MinIO matches a prefix
	// of uploads only as a whole key, and incomplete uploads are few.
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)}
	for {
		page, err := i.store.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return fmt.Errorf("list incomplete uploads under %s: %w", location, err)
		}
		for _, u := range page.Uploads {
			if !strings.HasPrefix(aws.ToString(u.Key), prefix) {
				continue
			}
			if err := fn(schemeOf(location)+bucket+"/"+aws.ToString(u.Key), aws.ToString(u.UploadId), aws.ToTime(u.Initiated)); err != nil {
				return err
			}
		}
		if !aws.ToBool(page.IsTruncated) {
			return nil
		}
		in.KeyMarker, in.UploadIdMarker = page.NextKeyMarker, page.NextUploadIdMarker
	}
}

// AbortUpload aborts one incomplete multipart upload, freeing its parts.
func (i *IO) AbortUpload(ctx context.Context, location, uploadID string) error {
	bucket, key, err := splitLocation(location)
	if err != nil {
		return err
	}
	_, err = i.store.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: aws.String(uploadID)})
	return err
}

// schemeOf is a location's scheme with its "://" (s3://, s3a://), so that
// what is listed is named as the table names it.
func schemeOf(location string) string {
	scheme, _, _ := strings.Cut(location, "://")
	return scheme + "://"
}
