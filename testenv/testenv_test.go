package testenv_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lakeswap/lakeswap/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

func TestMinIOServesABucket(t *testing.T) {
	s3 := testenv.MinIO(t)
	bucket := s3.NewBucket(t)
	ok, err := s3.Client.BucketExists(context.Background(), bucket)
	if err != nil || !ok {
		t.Fatalf("bucket %s exists = %v, %v", bucket, ok, err)
	}
	// The server checks credentials: a wrong secret is refused.
	wrong, err := minio.New(s3.Client.EndpointURL().Host, &minio.Options{
		Creds: credentials.NewStaticV4(s3.AccessKey, "wrong-"+testenv.Random(8), ""), Region: s3.Region})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wrong.ListBuckets(context.Background()); err == nil {
		t.Error("a wrong secret key was accepted")
	}
}

func TestPostgresGivesFreshDatabases(t *testing.T) {
	pg := testenv.Postgres(t)
	a, b := pg.NewDatabase(t), pg.NewDatabase(t)
	if a == b {
		t.Fatal("two databases share a DSN")
	}
	db, err := sql.Open("pgx", a)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("query: %v", err)
	}
}
