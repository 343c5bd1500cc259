//go:build noduckdb

package source

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// engine is absent from a build with the noduckdb tag: CSV is read
// by lakeswap's own reader, one file at a time, more slowly.
type engine struct{}

// Engine names the CSV reader this build has.
const Engine = "lakeswap"

func newEngine(string, int64) (*engine, error)    { return nil, nil }
func readerEngine(string, int64) (*engine, error) { return nil, nil }

func (*engine) close()   {}
func (*engine) release() {}

func (*engine) readCSV(ctx context.Context, path string, schema *arrow.Schema, fn func(Batch) error) error {
	return ReadInput(ctx, path, schema, fn)
}

// SQLEngine is embedded DuckDB, which this build leaves out.
type SQLEngine struct{}

// OpenSQLEngine says that SQL jobs need a build with embedded DuckDB.
func OpenSQLEngine(string, int64) (*SQLEngine, error) {
	return nil, errors.New("SQL jobs run on embedded DuckDB: this lakeswap was built with -tags noduckdb; build it without that tag")
}

func (*SQLEngine) Close()                                  {}
func (*SQLEngine) Confine(context.Context, []string) error { return errors.ErrUnsupported }
func (*SQLEngine) Exec(context.Context, string) error      { return errors.ErrUnsupported }
func (*SQLEngine) Columns(string) ([]string, error)        { return nil, errors.ErrUnsupported }
func (*SQLEngine) ExecParams(context.Context, string, map[string]string) error {
	return errors.ErrUnsupported
}
func (*SQLEngine) Query(context.Context, string, map[string]string) (array.RecordReader, error) {
	return nil, errors.ErrUnsupported
}

// NotAQuery refuses SQL that is a statement other than one query.
func NotAQuery(string) error { return errors.ErrUnsupported }

// OutOfMemory reports whether err is the engine's running out of memory:
// never, in a build without it.
func OutOfMemory(error) bool { return false }
