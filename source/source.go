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

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakeswap/lakeswap/verify"
)

// Source gives the rows a run publishes for each partition it declares,
// keyed by partition value (2026-01-01 for a day partition). Open is called
// once per declared partition, possibly from several goroutines at once.
type Source interface {
	Open(ctx context.Context, partition string) (array.RecordReader, error)
}

// Locator is an optional Source power: naming where a row of a partition came
// from (file and line), for findings.
type Locator interface {
	Locate(partition string, row int64) string
}

// ObjectReporter is an optional Source power: the input objects it read, as
// listed, for the run's record.
type ObjectReporter interface {
	Objects() []Object
}

// StrayReporter is an optional Source power: findings about input rows that
// belong to no declared partition, which no Open call will return.
type StrayReporter interface {
	Stray() []verify.Finding
}
