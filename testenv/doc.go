// Package testenv starts the real servers lakeswap's tests run against: a
// MinIO server for S3 and a PostgreSQL server for the shared SQL catalog.
// Each reuses an endpoint given in the environment, or starts the real
// binary on a free loopback port with random credentials and waits until it
// answers. With CI=true a server that cannot start fails the test; elsewhere
// it skips it.
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
//
//	s3 := testenv.MinIO(t)      // shared by the package's tests
//	bucket := s3.NewBucket(t)   // fresh per test
//	pg := testenv.Postgres(t)
//	dsn := pg.NewDatabase(t)    // fresh per test
package testenv
