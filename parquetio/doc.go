// Package parquetio moves Arrow record batches to and from Parquet files on
// any iceberg-go file IO (local files, S3): a rolling Writer that stages a
// partition under a fresh prefix and never overwrites an object, and a
// reader of committed files.
//
//	w := parquetio.NewWriter(fs, "file:///wh/t/data/order_date=2026-01-01/run-X", schema, parquetio.Options{})
//	_ = w.Write(rec)
//	files, err := w.Close()
package parquetio
