package rows

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakeswap/lakeswap/runrecord"
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
	Objects() []runrecord.Input
}

// StrayReporter is an optional Source power: findings about input rows that
// belong to no declared partition, which no Open call will return.
type StrayReporter interface {
	Stray() []verify.Finding
}
