// Package s3store writes staged files to S3-compatible storage the way a
// large backfill needs: each file is a streaming multipart upload (one part
// in memory at a time), every part carries a CRC32C that the store checks,
// the upload completes only if no object exists at the key (If-None-Match),
// the size the store reports is compared with the bytes sent, and a failed
// or cancelled upload is aborted so that no parts are left behind.
// Transient errors (5xx, resets, throttling) are retried with backoff by the
// AWS SDK's standard retryer, a bounded number of times; a refused
// precondition is never retried.
//
//	cfg := s3store.ConfigFromProps(catalogProps)
//	awsCfg, _ := s3store.LoadAWS(ctx, cfg) // credentials from the AWS chain
//	store := s3store.New(awsCfg, cfg)
//	w, _ := store.Create(ctx, "bucket", "table/data/x/run-1/part-00000.parquet")
package s3store
