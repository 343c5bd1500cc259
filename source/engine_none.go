//go:build !duckdb_arrow

package source

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// engine is absent from a build without the duckdb_arrow tag: CSV is read
// by lakeswap's own reader, one file at a time, more slowly.
type engine struct{}

// Engine names the CSV reader this build has.
const Engine = "lakeswap"

func newEngine(string, int64) (*engine, error) { return nil, nil }

func (*engine) close() {}

func (*engine) readCSV(ctx context.Context, path string, schema *arrow.Schema, fn func(Batch) error) error {
	return ReadInput(ctx, path, schema, fn)
}
