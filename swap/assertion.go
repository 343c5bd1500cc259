package swap

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/verify"
)

// assertionMemory is the SQL engine's share for a table's assertions.
const assertionMemory = 256 << 20

// assertionExamples is how many rows an assertion's finding shows.
const assertionExamples = 3

// judgeTableChecks judges the checks of the contract that read more than
// a row at a time: relationships to other tables, and SQL assertions over
// the run's staged rows.
func judgeTableChecks(ctx context.Context, j *judging) (Verdict, error) {
	v, err := judgeRelationships(ctx, j)
	if err != nil {
		return v, err
	}
	u, err := uniqueAcross(ctx, j)
	if err != nil {
		return v, err
	}
	v.Findings, v.Warnings = append(v.Findings, u.Findings...), append(v.Warnings, u.Warnings...)
	a, err := assertions(ctx, j.fsys, j.plan, j.req.SpillDir)
	v.Findings, v.Warnings = append(v.Findings, a.Findings...), append(v.Warnings, a.Warnings...)
	return v, err
}

// assertions runs each of the table's SQL assertions on the embedded
// engine over the rows the run stages, read as the view rows (local
// copies of the staged files where they are remote), the engine confined
// to them: an assertion that returns a row refuses the run (or, written
// warn:, warns), showing the first rows and how many.
func assertions(ctx context.Context, fsys icebergio.IO, plan *run, spill string) (Verdict, error) {
	c := plan.contract
	var v Verdict
	if len(c.Assertions) == 0 {
		return v, nil
	}
	tmp, err := os.MkdirTemp(spill, "lakeswap-assert-")
	if err != nil {
		return v, err
	}
	defer os.RemoveAll(tmp)
	var paths []string
	for _, pp := range plan.Partitions {
		for _, f := range pp.NewFiles {
			local, err := localFile(ctx, fsys, f.Path, tmp, len(paths))
			if err != nil {
				return v, fmt.Errorf("assertions: read staged file %s: %w", f.Path, err)
			}
			paths = append(paths, local)
		}
	}
	if len(paths) == 0 {
		return v, nil // no row staged, none to return
	}
	eng, err := source.OpenSQLEngine(tmp, assertionMemory)
	if err != nil {
		return v, err
	}
	defer eng.Close()
	if err := eng.Confine(ctx, paths); err != nil {
		return v, err
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = source.SQLString(p)
	}
	if err := eng.Exec(ctx, "CREATE TEMP VIEW rows AS SELECT * FROM read_parquet(["+strings.Join(quoted, ", ")+"])"); err != nil {
		return v, fmt.Errorf("assertions: read the staged rows: %w", err)
	}
	for _, a := range c.Assertions {
		f, err := assert(ctx, eng, a)
		if err != nil {
			return v, err
		}
		if f == nil {
			continue
		}
		r := contract.Rule{Warn: a.Warn}
		v.add(r, *f)
	}
	return v, nil
}

// assert runs one assertion, and gives its finding, or nil when it
// returns no row. An assertion that is no query, or fails, is a finding:
// the run cannot be judged by it.
func assert(ctx context.Context, eng *source.SQLEngine, a contract.Assertion) (*verify.Finding, error) {
	finding := func(format string, args ...any) *verify.Finding {
		return &verify.Finding{Kind: verify.KindCheck, Message: fmt.Sprintf("assertion %s ", a.Name) + fmt.Sprintf(format, args...)}
	}
	if _, err := eng.Columns(a.SQL); err != nil {
		return finding("cannot be run (%v): fix it with lakeswap table set assert.%s=QUERY", err, a.Name), nil
	}
	rr, err := eng.Query(ctx, a.SQL, nil)
	if err != nil {
		return finding("failed (%v)", err), nil
	}
	defer rr.Release()
	var n int64
	var shown []string
	for rr.Next() {
		rec := rr.RecordBatch()
		for row := range int(rec.NumRows()) {
			n++
			if len(shown) < assertionExamples {
				cols := make([]string, rec.NumCols())
				for i := range cols {
					cols[i] = rec.ColumnName(i) + "=" + verify.FormatValue(rec.Column(i), row)
				}
				shown = append(shown, strings.Join(cols, ", "))
			}
		}
	}
	if err := rr.Err(); err != nil {
		return finding("failed (%v)", err), nil
	}
	if n == 0 {
		return nil, nil
	}
	return finding("returned %s, and must return none: %s", words.Count(n, "row"), strings.Join(shown, "; ")), nil
}

// ctxReader stops a copy once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// localFile is a staged file as the engine reads it: its own path when it
// is local, else a copy in dir.
func localFile(ctx context.Context, fsys icebergio.IO, path, dir string, n int) (string, error) {
	if local, ok := strings.CutPrefix(path, "file://"); ok {
		return local, nil
	}
	if !strings.Contains(path, "://") {
		return path, nil
	}
	in, err := fsys.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	local := filepath.Join(dir, fmt.Sprintf("staged-%d.parquet", n))
	out, err := os.Create(local)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, ctxReader{ctx, in})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return local, err
}
