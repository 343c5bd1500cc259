package swap

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/verify"
)

// A table whose partition spec changed (months, then days) keeps the files
// written under the earlier spec: a month's file holds rows of thirty
// days. Replacing a day around such a file would leave the file's rows of
// that day beside the new ones, so a run finds the earlier files that hold
// rows of what it declares.

// overlap is an earlier spec's file that holds rows of declared partitions.
type overlap struct {
	file iceberg.DataFile
	keys []string // the declared partitions it holds rows of, as keys
}

// earlierOverlaps finds, among files written under an earlier spec, those
// holding rows of the declared partitions. A file whose column bounds
// leave every declared value out is passed over unread; the rest are read
// (by field id, in the table's current schema) row by row. A delete file
// whose bounds do not rule it out counts as overlapping.
func earlierOverlaps(ctx context.Context, fsys icebergio.IO, c *contract.Contract, files []iceberg.DataFile, declared []string) ([]overlap, error) {
	if len(files) == 0 || len(declared) == 0 {
		return nil, nil
	}
	owned := map[string]bool{}
	perField := make([]map[string]bool, len(c.Partition.Fields))
	for i := range perField {
		perField[i] = map[string]bool{}
	}
	for _, v := range declared {
		owned[v] = true
		parts, _ := c.Partition.Split(v)
		for i, p := range parts {
			perField[i][p] = true
		}
	}
	var out []overlap
	for _, df := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !mayHold(c, df, perField) {
			continue
		}
		if df.ContentType() != iceberg.EntryContentData {
			out = append(out, overlap{file: df, keys: []string{"(a delete file)"}})
			continue
		}
		held := map[string]bool{}
		err := eachBatch(ctx, fsys, c, []parquetio.File{{Path: df.FilePath()}}, func(rec arrow.RecordBatch) (bool, error) {
			valueOf, err := c.Partition.ValueFunc(rec.Columns())
			if err != nil {
				return false, err
			}
			for r := range int(rec.NumRows()) {
				if v, ok := valueOf(r); ok && owned[v] && !held[v] {
					held[v] = true
				}
			}
			return false, nil
		})
		if err != nil {
			return nil, fmt.Errorf("read %s, written under an earlier partition spec: %w", df.FilePath(), err)
		}
		if len(held) > 0 {
			keys := make([]string, 0, len(held))
			for v := range held {
				keys = append(keys, verify.DisplayKey(c.Partition.Key(v)))
			}
			slices.Sort(keys)
			out = append(out, overlap{file: df, keys: keys})
		}
	}
	return out, nil
}

// mayHold reports whether a file's column bounds leave room for a declared
// value of every partition field: for a field whose values span a range
// of the column's raw values (a day, a month, an hour, an integer), the
// file's [lower, upper] must meet the span of one declared value.
func mayHold(c *contract.Contract, df iceberg.DataFile, perField []map[string]bool) bool {
	lower, upper := df.LowerBoundValues(), df.UpperBoundValues()
	for i, f := range c.Partition.Fields {
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

// refuseOverlaps is the refusal of a run that declares partitions an
// earlier spec's files hold rows of.
func refuseOverlaps(op, table string, overlaps []overlap) error {
	var findings []verify.Finding
	for _, o := range overlaps {
		findings = append(findings, verify.Finding{Kind: verify.KindEarlierSpec, Partition: o.keys[0],
			Message: fmt.Sprintf("%s, written under an earlier partition spec, holds rows of %s; replacing around it would leave them beside the new rows: rewrite the table's files to its current spec first (Spark's rewrite_data_files does), or declare only partitions such files hold no rows of",
				o.file.FilePath(), strings.Join(o.keys, ", "))})
	}
	return &RefusedError{Op: op, Table: table, Findings: findings, Cleanup: "nothing was staged"}
}

// earlierSpec groups the earlier spec's files among files by partition.
const earlierSpec = contract.EarlierSpec
