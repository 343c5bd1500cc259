// Package s3store writes staged files to S3-compatible storage the way a
// large backfill needs: a file larger than a part is a streaming multipart
// upload (one part in memory at a time, the next sent while one is filled),
// a smaller one a single PUT; every part or PUT carries a CRC32C that the
// store checks, the object lands only if none exists at the key
// (If-None-Match), a multipart object's size and composite checksum are
// compared with what was sent, and a failed or cancelled upload is aborted
// (or its PUT's object removed) so that nothing is left behind.
// Transient errors (5xx, resets, throttling) are retried with backoff by the
// AWS SDK's standard retryer, a bounded number of times; a refused
// precondition is never retried.
//
//	cfg := s3store.ConfigFromProps(catalogProps)
//	awsCfg, _ := s3store.LoadAWS(ctx, cfg) // credentials from the AWS chain
//	store := s3store.New(awsCfg, cfg)
//	w, _ := store.Create(ctx, "bucket", "table/data/x/run-1/part-00000.parquet")
package s3store
