package testenv

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/lakeswap/lakeswap/internal/devserver"
)

// S3 is a running S3-compatible server, with what tests add to it.
type S3 struct{ *devserver.S3 }

var (
	s3Once sync.Once
	s3Srv  *S3
	s3Err  error
)

// MinIO returns the process's S3 server, starting it on first use.
func MinIO(t testing.TB) *S3 {
	t.Helper()
	shortTier(t)
	s3Once.Do(func() {
		var s *devserver.S3
		if s, s3Err = devserver.StartS3(context.Background(), os.Stderr); s3Err == nil {
			atExit(s.Stop)
			s3Srv = &S3{s}
		}
	})
	if s3Err != nil {
		unavailable(t, "MinIO", s3Err)
	}
	return s3Srv
}

// NewBucket creates a bucket with a fresh name for one test.
func (s *S3) NewBucket(t testing.TB) string {
	t.Helper()
	name := "lakeswap-" + devserver.Random(6)
	if err := s.Client.MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: s.Region}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}
