package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// fileSource serves the rows of the input files a user hands to publish, split
// by partition value. Rows of undeclared partitions are kept as findings.
// It holds the inputs in memory; a job that produces more than fits should
// use the Go API's streaming Source.
type fileSource struct {
	schema *arrow.Schema
	parts  map[string][]slice
	stray  []verify.Finding
	nstray int
}

// slice is a run of consecutive rows of one partition in one input batch.
type slice struct {
	rec  arrow.RecordBatch
	file string
	line []int64
}

var (
	_ swap.Source        = (*fileSource)(nil)
	_ swap.Locator       = (*fileSource)(nil)
	_ swap.StrayReporter = (*fileSource)(nil)
)

// readFiles reads every input file and splits its rows by partition.
func readFiles(ctx context.Context, c *verify.Contract, declared []string, files []string) (*fileSource, error) {
	src := &fileSource{schema: c.Arrow, parts: map[string][]slice{}}
	owned := map[string]bool{}
	for _, d := range declared {
		owned[d] = true
	}
	for _, f := range files {
		batches, err := parquetio.ReadInput(ctx, f, c.Arrow)
		if err != nil {
			src.release()
			return nil, err
		}
		for _, b := range batches {
			if err := src.split(c, owned, b); err != nil {
				src.release()
				return nil, err
			}
			b.Rec.Release()
		}
	}
	return src, nil
}

func (s *fileSource) split(c *verify.Contract, owned map[string]bool, b parquetio.Batch) error {
	valueOf, err := c.Partition.ValueFunc(b.Rec.Column(c.Partition.Column))
	if err != nil {
		return fmt.Errorf("%s: %w", b.File, err)
	}
	n := int(b.Rec.NumRows())
	for start := 0; start < n; {
		v, ok := valueOf(start)
		end := start + 1
		for end < n {
			w, ok2 := valueOf(end)
			if w != v || ok2 != ok {
				break
			}
			end++
		}
		switch {
		case ok && owned[v]:
			s.parts[v] = append(s.parts[v], slice{rec: b.Rec.NewSlice(int64(start), int64(end)), file: b.File, line: b.Line[start:end]})
		default:
			if !ok {
				v = "null"
			}
			for r := start; r < end; r++ {
				s.nstray++
				if len(s.stray) < verify.MaxFindings {
					s.stray = append(s.stray, verify.Finding{Kind: verify.KindOutside, Partition: c.Partition.Key(v),
						Where: fmt.Sprintf("%s:%d", b.File, b.Line[r]), Column: c.Partition.Name,
						Message: "row is outside the partitions this run declares (" + strings.Join(sortedKeys(owned), ", ") + ")"})
				}
			}
		}
		start = end
	}
	return nil
}

// Open returns a partition's rows in input order.
func (s *fileSource) Open(_ context.Context, partition string) (array.RecordReader, error) {
	recs := make([]arrow.RecordBatch, len(s.parts[partition]))
	for i, sl := range s.parts[partition] {
		recs[i] = sl.rec
	}
	return array.NewRecordReader(s.schema, recs)
}

// Locate names the file and line of a partition's row (counting from 1).
func (s *fileSource) Locate(partition string, row int64) string {
	for _, sl := range s.parts[partition] {
		if row <= int64(len(sl.line)) {
			return fmt.Sprintf("%s:%d", sl.file, sl.line[row-1])
		}
		row -= int64(len(sl.line))
	}
	return ""
}

// Stray returns findings for rows of undeclared partitions.
func (s *fileSource) Stray() []verify.Finding {
	if s.nstray > len(s.stray) {
		return append(s.stray, verify.Finding{Kind: verify.KindOutside,
			Message: fmt.Sprintf("%d more rows outside the declared partitions", s.nstray-len(s.stray))})
	}
	return s.stray
}

func (s *fileSource) release() {
	for _, sl := range s.parts {
		for _, x := range sl {
			x.rec.Release()
		}
	}
	s.parts = nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	if len(out) > 6 { // a long range is shown by its ends
		out = append(out[:3], "...", out[len(out)-1])
	}
	return out
}
