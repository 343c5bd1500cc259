// Package devserver starts the real servers lakeswap is tried against: a
// MinIO server for S3, built once from the Go module proxy, on a free
// loopback port with random credentials. The demo, `make dev-up` and the
// tests' testenv use it; it holds no test code.
//
//	srv, err := devserver.StartS3(ctx, os.Stderr)
//	defer srv.Stop()
package devserver
