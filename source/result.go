package source

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakeswap/lakeswap/contract"
)

// ReadResult splits a query's result (a SQL job's rows) by the declared
// partitions, as ReadFiles does an input's. Its columns are the table's,
// by name, each of the table's exact type: the SQL casts, lakeswap never
// does, so nothing changes on the way in. name says what the rows are
// (the job) in findings, and rows are numbered as the result gives them.
func ReadResult(ctx context.Context, c *contract.Contract, declared contract.Selection, name string, rr array.RecordReader, opts Options) (*Files, error) {
	at, err := resultColumns(rr.Schema(), c.Arrow, name)
	if err != nil {
		return nil, err
	}
	// The engine keeps the result, and its memory, while it is read:
	// rows wait in memory within half the share they would otherwise.
	held := opts
	if held.MemoryLimit <= 0 {
		held.MemoryLimit = 512 << 20 // newFiles' default
	}
	held.MemoryLimit /= 2
	src, _, err := newFiles(c, declared, held, "the job's")
	if err != nil {
		return nil, err
	}
	src.inputs = append(src.inputs, input{path: name})
	var row int64
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			src.Release()
			return nil, err
		}
		rec := rr.RecordBatch()
		cols := make([]arrow.Array, len(at))
		release := func() {
			for _, col := range cols {
				if col != nil {
					col.Release()
				}
			}
		}
		for i, j := range at {
			// A copy in Go's memory: the engine's batch lives only until
			// the next, and the spill may hold rows longer.
			copied, err := array.Concatenate([]arrow.Array{rec.Column(j)}, memory.DefaultAllocator)
			if err != nil {
				release()
				src.Release()
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			f := c.Arrow.Field(i)
			col, bad, err := conform(copied, f)
			copied.Release()
			if err != nil {
				release()
				src.Release()
				return nil, &InputError{File: name, Line: row + int64(bad), Column: f.Name, Err: err}
			}
			cols[i] = col
			if !f.Nullable && cols[i].NullN() > 0 {
				for r := range cols[i].Len() {
					if cols[i].IsNull(r) {
						release()
						src.Release()
						return nil, &InputError{File: name, Line: row + int64(r) + 1, Column: f.Name, Err: fmt.Errorf("null in required column %s", f.Name)}
					}
				}
			}
		}
		conformed := array.NewRecordBatch(c.Arrow, cols, rec.NumRows())
		release() // the batch holds them
		lines := make([]int64, rec.NumRows())
		for i := range lines {
			lines[i] = row + int64(i) + 1
		}
		row += rec.NumRows()
		if opts.Read != nil {
			opts.Read(rec.NumRows(), 0) // a job's result: its size is not known
		}
		err := src.split(ctx, c, declared, 0, Batch{Rec: conformed, File: name, Line: lines})
		conformed.Release()
		if err != nil {
			src.Release()
			return nil, err
		}
	}
	if err := rr.Err(); err != nil {
		src.Release()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := src.spill.finish(); err != nil {
		src.Release()
		return nil, err
	}
	return src, nil
}

// resultColumns finds each of the table's columns in a result, by name,
// of the same type; at[i] is the result's column for the table's i-th. A
// result of other columns is refused as an input of another schema is
// (the schema guard, on a job's route): an input error naming the job.
func resultColumns(got, want *arrow.Schema, name string) ([]int, error) {
	at := make([]int, want.NumFields())
	for i, f := range want.Fields() {
		idx := got.FieldIndices(f.Name)
		switch {
		case len(idx) == 0:
			return nil, &InputError{File: name, Err: fmt.Errorf("its result has no column %s (it has %s); select every column of the table, by name", f.Name, fieldNames(got))}
		case len(idx) > 1:
			return nil, &InputError{File: name, Err: fmt.Errorf("its result has column %s twice", f.Name)}
		case !conformable(got.Field(idx[0]).Type, f.Type):
			return nil, &InputError{File: name, Err: fmt.Errorf("its result column %s is %s, the table's is %s: cast it in the SQL (lakeswap does not cast a job's values)", f.Name, got.Field(idx[0]).Type, f.Type)}
		}
		at[i] = idx[0]
	}
	if got.NumFields() != want.NumFields() {
		return nil, &InputError{File: name, Err: fmt.Errorf("its result has columns %s, the table %s: select exactly the table's columns", fieldNames(got), fieldNames(want))}
	}
	return at, nil
}

func fieldNames(s *arrow.Schema) string {
	out := ""
	for i, f := range s.Fields() {
		if i > 0 {
			out += ", "
		}
		out += f.Name
	}
	return out
}

// sameInstants says whether two timestamp types hold the same values: both
// instants (with a zone, which labels them and does not change them) of
// the same unit. The engine labels its instants with the machine's zone
// name ("Etc/UTC").
func sameInstants(a, b arrow.DataType) bool {
	ta, ok1 := a.(*arrow.TimestampType)
	tb, ok2 := b.(*arrow.TimestampType)
	return ok1 && ok2 && ta.Unit == tb.Unit && ta.TimeZone != "" && tb.TimeZone != ""
}
