package snapshot

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/verify"
)

// A table whose partition spec changed (months, then days) keeps the files
// written under the earlier spec: a month's file holds rows of thirty
// days. A partition's rows at a snapshot are its own files' and the rows
// of the earlier spec's files whose value in the current spec is the
// partition's (shares of those files). Replacing a day around such a file
// would leave its rows of that day beside the new ones, so a run finds the
// earlier files that hold rows of what it replaces, and refuses, or
// rewrites them with every partition they hold rows of.

// Overlap is a file written under an earlier partition spec and the
// partitions of the current spec it holds rows of.
type Overlap struct {
	File   iceberg.DataFile
	Values []string // sorted; none for a delete file
	// Unplaced counts its rows with no partition value in the current
	// spec (a null in a partition column): no partition holds them.
	Unplaced int64
}

// Overlaps finds, among files written under an earlier spec, those holding
// rows of the partitions values. Closed, it goes on to those holding rows
// of any partition a file found holds, until it finds no more: the files
// a rewrite takes out together, so that no partition it rewrites keeps
// rows in a file left behind. A file whose column bounds leave every value
// out is passed over unread; the rest are read (by field id, in the
// table's current schema) once each. A delete file whose bounds do not
// rule it out is an overlap.
func Overlaps(ctx context.Context, fsys icebergio.IO, c *contract.Contract, files []iceberg.DataFile, values []string, closed bool) ([]Overlap, error) {
	want := map[string]bool{}
	for _, v := range values {
		want[v] = true
	}
	type read struct {
		values   []string
		unplaced int64
	}
	held := map[string]read{} // a file read: the values it holds
	var out []Overlap
	taken := map[string]bool{}
	for grew := len(want) > 0; grew; {
		grew = false
		bounds := perField(c, want)
		for _, df := range files {
			path := df.FilePath()
			if taken[path] || !MayHold(c, df, bounds) {
				continue
			}
			if df.ContentType() != iceberg.EntryContentData {
				taken[path] = true
				out = append(out, Overlap{File: df})
				continue
			}
			got, done := held[path]
			if !done {
				var err error
				if got.values, got.unplaced, err = valuesIn(ctx, fsys, c, path); err != nil {
					return nil, fmt.Errorf("read %s, written under an earlier partition spec: %w", path, err)
				}
				held[path] = got
			}
			if !slices.ContainsFunc(got.values, func(v string) bool { return want[v] }) {
				continue
			}
			taken[path] = true
			out = append(out, Overlap{File: df, Values: got.values, Unplaced: got.unplaced})
			for _, v := range got.values {
				if closed && !want[v] {
					want[v], grew = true, true
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Overlap) int { return strings.Compare(a.File.FilePath(), b.File.FilePath()) })
	return out, nil
}

// ValuesIn reads a data file's rows (through fsys, deletes applied where
// it applies them) and lists the partition values they hold, and counts
// the rows that have none (a null in a partition column).
func ValuesIn(ctx context.Context, fsys icebergio.IO, c *contract.Contract, path string) ([]string, int64, error) {
	return valuesIn(ctx, fsys, c, path)
}

func valuesIn(ctx context.Context, fsys icebergio.IO, c *contract.Contract, path string) ([]string, int64, error) {
	seen := map[string]bool{}
	var unplaced int64
	err := eachProjected(ctx, fsys, c, path, func(rec arrow.RecordBatch) error {
		valueOf, err := c.Partition.ValueFunc(rec.Columns())
		if err != nil {
			return err
		}
		for r := range int(rec.NumRows()) {
			if v, ok := valueOf(r); ok {
				seen[v] = true
			} else {
				unplaced++
			}
		}
		return nil
	})
	return slices.Sorted(func(yield func(string) bool) {
		for v := range seen {
			if !yield(v) {
				return
			}
		}
	}), unplaced, err
}

// eachProjected reads a data file's rows through fsys, batch by batch, in
// the contract's schema.
func eachProjected(ctx context.Context, fsys icebergio.IO, c *contract.Contract, path string, fn func(arrow.RecordBatch) error) error {
	acc := verify.NewAccumulator(c, "", nil) // only to project batches
	rr, err := Open(ctx, fsys, path)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := acc.Project(rr.RecordBatch())
		if err != nil {
			return fmt.Errorf("%s does not read as the table's schema: %w", path, err)
		}
		err = fn(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return rr.Err()
}

// EachShare reads the rows of partition value among an earlier spec's
// data files (shares), batch by batch, in the contract's schema.
func EachShare(ctx context.Context, fsys icebergio.IO, c *contract.Contract, value string, shares []string, fn func(arrow.RecordBatch) error) error {
	for _, path := range shares {
		err := eachProjected(ctx, fsys, c, path, func(rec arrow.RecordBatch) error {
			only, err := Only(ctx, c, value, rec)
			if err != nil {
				return err
			}
			defer only.Release()
			if only.NumRows() == 0 {
				return nil
			}
			return fn(only)
		})
		if err != nil {
			return fmt.Errorf("%s, written under an earlier partition spec: %w", path, err)
		}
	}
	return nil
}

// Only is rec with the rows of partition value alone.
func Only(ctx context.Context, c *contract.Contract, value string, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	valueOf, err := c.Partition.ValueFunc(rec.Columns())
	if err != nil {
		return nil, err
	}
	mask := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer mask.Release()
	for r := range int(rec.NumRows()) {
		v, ok := valueOf(r)
		mask.Append(ok && v == value)
	}
	filter := mask.NewArray()
	defer filter.Release()
	return compute.FilterRecordBatch(ctx, rec, filter, compute.DefaultFilterOptions())
}

// MayHoldAny lists the data files among earlier whose bounds leave room
// for partition value: the files to read, filtered, for its rows.
func MayHoldAny(c *contract.Contract, earlier []iceberg.DataFile, value string) []string {
	bounds := perField(c, map[string]bool{value: true})
	var out []string
	for _, df := range earlier {
		if df.ContentType() == iceberg.EntryContentData && MayHold(c, df, bounds) {
			out = append(out, df.FilePath())
		}
	}
	return out
}

// perField splits partition values into the values of each field.
func perField(c *contract.Contract, values map[string]bool) []map[string]bool {
	out := make([]map[string]bool, len(c.Partition.Fields))
	for i := range out {
		out[i] = map[string]bool{}
	}
	for v := range values {
		parts, _ := c.Partition.Split(v)
		for i, p := range parts {
			out[i][p] = true
		}
	}
	return out
}

// MayHold reports whether a file's column bounds leave room for a value of
// every partition field among perField: for a field whose values span a
// range of the column's raw values (a day, a month, an hour, an integer),
// the file's [lower, upper] must meet the span of one of them.
func MayHold(c *contract.Contract, df iceberg.DataFile, perField []map[string]bool) bool {
	lower, upper := df.LowerBoundValues(), df.UpperBoundValues()
	for i, f := range c.Partition.Fields {
		if len(perField[i]) == 0 {
			continue // a field left open: any value of it
		}
		id := c.Fields[f.Column].ID
		typ := c.Arrow.Field(f.Column).Type
		lo, okLo := rawBound(typ, lower[id])
		hi, okHi := rawBound(typ, upper[id])
		if !okLo || !okHi {
			continue
		}
		meets := false
		for v := range perField[i] {
			from, to, ok := f.RawSpan(typ, v)
			if !ok || (from <= hi && lo < to) {
				meets = true
				break
			}
		}
		if !meets {
			return false
		}
	}
	return true
}

// rawBound decodes an Iceberg bound of a date, timestamp, int or long
// column (its single-value binary form, little-endian) as the column's
// raw value.
func rawBound(t arrow.DataType, b []byte) (int64, bool) {
	switch t.ID() {
	case arrow.DATE32, arrow.INT32:
		if len(b) == 4 {
			return int64(int32(binary.LittleEndian.Uint32(b))), true
		}
	case arrow.INT64:
		if len(b) == 8 {
			return int64(binary.LittleEndian.Uint64(b)), true
		}
	case arrow.TIMESTAMP:
		if len(b) == 8 && t.(*arrow.TimestampType).Unit == arrow.Microsecond {
			return int64(binary.LittleEndian.Uint64(b)), true
		}
	}
	return 0, false
}
