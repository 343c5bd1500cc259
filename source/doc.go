// Package source holds where a run's rows come from: the Source interface a
// publish reads each declared partition through, as Arrow record batches,
// and the sources lakeswap provides. Files is the CLI's: CSV, NDJSON and
// Parquet files read exactly into the table's schema (a value that would
// change on the way in is refused with its file, line and column) and
// split by partition.
//
//	files, err := source.ReadFiles(ctx, contract, []string{"2026-01-01"}, []string{"out/day.csv"})
//	defer files.Release()
//	res, err := pub.Publish(ctx, swap.Request{Table: ident, Partitions: values, Source: files})
package source
