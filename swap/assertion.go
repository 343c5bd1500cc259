package swap

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/parquetio"
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
	a, err := assertions(ctx, j.fsys, j.plan, j.req.SpillDir, j.load)
	v.Findings, v.Warnings = append(v.Findings, a.Findings...), append(v.Warnings, a.Warnings...)
	return v, err
}

// assertions runs each of the table's SQL assertions on the embedded
// engine over the rows the run stages, read as the view rows (local
// copies of the staged files where they are remote), the engine confined
// to them: an assertion that returns a row refuses the run (or, written
// warn:, warns), showing the first rows and how many.
func assertions(ctx context.Context, fsys icebergio.IO, plan *run, spill string, load loader) (Verdict, error) {
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
			local, err := localFile(ctx, fsys, f.Path, tmp)
			if err != nil {
				return v, fmt.Errorf("assertions: read staged file %s: %w", f.Path, err)
			}
			paths = append(paths, local)
		}
	}
	if len(paths) == 0 {
		return v, nil // no row staged, none to return
	}
	// The tables of the catalog the assertions name (NAMESPACE.TABLE), as
	// main holds them.
	named, err := namedTables(ctx, load, c.Assertions, tmp, true)
	if err != nil {
		return v, err
	}
	eng, err := source.OpenSQLEngine(tmp, assertionMemory)
	if err != nil {
		return v, err
	}
	defer eng.Close()
	read := slices.Clone(paths)
	for _, t := range named {
		read = append(read, t.files...)
	}
	if err := eng.Confine(ctx, read); err != nil {
		return v, err
	}
	for _, t := range named {
		if err := t.view(ctx, eng); err != nil {
			return v, fmt.Errorf("assertions: read table %s: %w", t.name, err)
		}
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = source.SQLString(p)
	}
	if err := eng.Exec(ctx, "CREATE TEMP VIEW rows AS SELECT * FROM read_parquet(["+strings.Join(quoted, ", ")+"])"); err != nil {
		return v, fmt.Errorf("assertions: read the staged rows: %w", err)
	}
	for _, a := range c.Assertions {
		f, err := Assert(ctx, eng, a)
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

// Assert runs one assertion on an engine where rows (and the tables it
// names) are views, and gives its finding, or nil when it returns no row.
// An assertion that is no query, or fails, is a finding: the rows cannot
// be judged by it.
func Assert(ctx context.Context, eng *source.SQLEngine, a contract.Assertion) (*verify.Finding, error) {
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

// localFile is a staged file as the engine reads it: its own path when it
// is local, else a copy in dir.
func localFile(ctx context.Context, fsys icebergio.IO, path, dir string) (string, error) {
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
	out, err := os.CreateTemp(dir, "copy-*.parquet")
	if err != nil {
		return "", err
	}
	local := out.Name()
	_, _, err = parquetio.Checksum(ctx, io.TeeReader(in, out)) // a copy that stops with ctx
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return local, err
}

// loader loads a table of the catalog.
type loader func(context.Context, table.Identifier) (*table.Table, error)

// namedTable is a table of the catalog an assertion reads, as main holds
// it: its data files, local.
type namedTable struct {
	ns, name string
	files    []string
	sc       *iceberg.Schema
}

// tableName is what an assertion names a table by: NAMESPACE.TABLE.
var tableName = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\b`)

// namedTables finds the tables of the catalog the assertions name, and
// makes each readable: its data files at main's snapshot, copied into dir
// where they are remote. A name that is no table (an alias and its
// column) is not one. A table whose rows delete files change cannot be
// read so yet, and says so.
func namedTables(ctx context.Context, load loader, as []contract.Assertion, dir string, withRows bool) ([]*namedTable, error) {
	var out []*namedTable
	seen := map[string]bool{}
	for _, a := range as {
		for _, m := range tableName.FindAllStringSubmatch(a.SQL, -1) {
			key := m[1] + "." + m[2]
			if seen[key] || load == nil {
				continue
			}
			seen[key] = true
			tbl, err := load(ctx, table.Identifier{m[1], m[2]})
			if err != nil {
				continue // an alias and its column, or no table
			}
			t := &namedTable{ns: m[1], name: m[2], sc: tbl.Schema()}
			if withRows && tbl.CurrentSnapshot() != nil {
				tasks, err := tbl.Scan().PlanFiles(ctx)
				if err != nil {
					return nil, fmt.Errorf("assertion %s: read table %s: %w", a.Name, key, err)
				}
				fsys, err := tbl.FS(ctx)
				if err != nil {
					return nil, err
				}
				for _, task := range tasks {
					if len(task.DeleteFiles) > 0 || len(task.EqualityDeleteFiles) > 0 {
						return nil, fmt.Errorf("assertion %s reads table %s, whose delete files an assertion cannot apply yet: name another table, or compact it", a.Name, key)
					}
					local, err := localFile(ctx, fsys, task.File.FilePath(), dir)
					if err != nil {
						return nil, fmt.Errorf("assertion %s: read table %s: %w", a.Name, key, err)
					}
					t.files = append(t.files, local)
				}
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// view makes the table readable by its name.
func (t *namedTable) view(ctx context.Context, eng *source.SQLEngine) error {
	name := ident(t.name)
	if t.ns != "" {
		if err := eng.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+ident(t.ns)); err != nil {
			return err
		}
		name = ident(t.ns) + "." + name
	}
	if len(t.files) > 0 {
		quoted := make([]string, len(t.files))
		for i, p := range t.files {
			quoted[i] = source.SQLString(p)
		}
		return eng.Exec(ctx, "CREATE VIEW "+name+" AS SELECT * FROM read_parquet(["+strings.Join(quoted, ", ")+"], union_by_name = true)")
	}
	// No file: a table of its columns and no row.
	cols := make([]string, 0, len(t.sc.Fields()))
	for _, f := range t.sc.Fields() {
		typ := source.EngineType(f.Type)
		if typ == "" {
			typ = "VARCHAR"
		}
		cols = append(cols, ident(f.Name)+" "+typ)
	}
	return eng.Exec(ctx, "CREATE TABLE "+name+" ("+strings.Join(cols, ", ")+")")
}

func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
