package job

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
	"gopkg.in/yaml.v3"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// A job's tests are folders under tests/ beside its file (under
// tests/JOB/, JOB its file's name without .yaml, where jobs share a
// folder): each holds a
// fixture for every source the job reads (SOURCE.csv, SOURCE.ndjson,
// SOURCE.parquet, or a folder SOURCE/ of such files) and the rows the job
// must produce, expected.csv or expected.ndjson, in the table's columns.
// A test runs the job's reject rules, its SQL and its reconciliation on
// the fixtures alone: no catalog, no table, nothing written.
const testsDir = "tests"

// TestSpec is a test folder's test.yaml, all of it optional.
type TestSpec struct {
	// Partitions are the partitions the test runs the job for, as
	// --partitions takes them; by default those expected holds.
	Partitions []string `yaml:"partitions"`
	// Rejected are the rows the job's reject rules must refuse, by
	// reason; left out, rejects are not compared.
	Rejected map[string]int64 `yaml:"rejected"`
}

// TestResult is what one test of a job found.
type TestResult struct {
	Job        string           `json:"job"`
	Test       string           `json:"test"`
	Passed     bool             `json:"passed"`
	Partitions string           `json:"partitions,omitempty"`
	Rows       int64            `json:"rows"`
	Expected   int64            `json:"expected_rows"`
	Rejected   map[string]int64 `json:"rejected,omitempty"`
	Problems   []TestProblem    `json:"problems,omitempty"`
	// NotJudged are the table's checks a test cannot judge on fixtures
	// alone: relationships and unique-table (the rest of the catalog), and
	// assertions that read another table.
	NotJudged []string `json:"not_judged,omitempty"`
	// Error is why the test could not run (a fixture missing, SQL that
	// fails): the test fails.
	Error string `json:"error,omitempty"`
}

// TestProblem is one way the job's rows differ from the expected ones.
type TestProblem struct {
	// Kind is missing (a key expected, not produced), unexpected (one
	// produced, not expected), differs (a key both hold, with other
	// values), outside (a row outside the test's partitions), check (a
	// row the table's contract refuses), reconcile or rejected.
	Kind    string       `json:"kind"`
	Key     string       `json:"key,omitempty"`
	Columns []ColumnDiff `json:"columns,omitempty"`
	Message string       `json:"message"`
}

// ColumnDiff is a column of a key whose value the job made is not the
// one expected, each as the table shows values (text quoted).
type ColumnDiff struct {
	Column   string `json:"column"`
	Made     string `json:"made"`
	Expected string `json:"expected"`
}

// String is the problem as a line: the key, then what is wrong with it.
func (p TestProblem) String() string {
	if len(p.Columns) == 0 {
		if p.Key != "" {
			return p.Key + ": " + p.Message
		}
		return p.Message
	}
	parts := make([]string, len(p.Columns))
	for i, c := range p.Columns {
		parts[i] = fmt.Sprintf("%s is %s, expected %s", c.Column, c.Made, c.Expected)
	}
	return p.Key + ": " + strings.Join(parts, "; ")
}

// Tests lists the job's tests: the folders under tests/ beside its file
// that hold expected.csv or expected.ndjson, by name.
func (j *Job) Tests() ([]string, error) {
	entries, err := os.ReadDir(j.testsRoot())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && isTest(filepath.Join(j.testsRoot(), e.Name())) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// testsRoot is the folder of the job's tests: tests/JOB/ where it is a
// folder, else tests/.
func (j *Job) testsRoot() string {
	stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(j.File), ".yaml"), ".yml")
	own := filepath.Join(j.Dir, testsDir, stem)
	if st, err := os.Stat(own); err == nil && st.IsDir() && expectedFile(own) == "" {
		return own
	}
	return filepath.Join(j.Dir, testsDir)
}

// isTest says whether a folder under tests/ is a test: one with expected
// rows, or one with files and no expected rows, which its test refuses,
// saying so (a misnamed expected.CSV is not skipped silently). A folder of
// folders alone is another job's tests.
func isTest(dir string) bool {
	if expectedFile(dir) != "" {
		return true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e os.DirEntry) bool { return !e.IsDir() })
}

// expectedFile is a test folder's expected rows, or "".
func expectedFile(dir string) string {
	for _, n := range []string{"expected.csv", "expected.ndjson", "expected.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return filepath.Join(dir, n)
		}
	}
	return ""
}

// TestOptions are how a test reads: where its rows may spill, and the
// memory it may use.
type TestOptions struct {
	SpillDir    string
	MemoryLimit int64
}

// Test runs the job's test name on its fixtures and compares what the job
// makes with what the test expects, exactly, at the table's grain (a row
// is its own key in a table with none). An error is returned only for a
// job or test that cannot be read; what the run finds is the result's.
func (j *Job) Test(ctx context.Context, name string, o TestOptions) *TestResult {
	res := &TestResult{Job: j.File, Test: name}
	if err := j.test(ctx, filepath.Join(j.testsRoot(), name), o, res); err != nil {
		res.Error = err.Error()
	}
	res.Passed = res.Error == "" && len(res.Problems) == 0
	return res
}

func (j *Job) test(ctx context.Context, dir string, o TestOptions, res *TestResult) error {
	spec, err := readTestSpec(filepath.Join(dir, "test.yaml"))
	if err != nil {
		return err
	}
	if expectedFile(dir) == "" {
		return fmt.Errorf("no expected.csv or expected.ndjson in %s (the names are lower case): the rows the job must make", dir)
	}
	c, err := SchemaContract(j.Dir, j.Table)
	if err != nil {
		return err
	}
	limit := o.MemoryLimit
	if limit <= 0 {
		limit = 512 << 20
	}
	in := source.Options{SpillDir: o.SpillDir, MemoryLimit: limit}
	want, err := source.ReadFiles(ctx, c, c.Partition.Every(), []string{expectedFile(dir)}, in)
	if err != nil {
		return fmt.Errorf("expected rows: %w", err)
	}
	defer want.Release()
	sel, err := testSelection(c, spec, want.Partitions())
	if err != nil {
		return err
	}
	res.Partitions = sel.String()
	for _, v := range want.Partitions() {
		if !sel.Owns(v) {
			return fmt.Errorf("%s holds rows of partition %s, outside the test's partitions (%s)", filepath.Base(expectedFile(dir)), verify.DisplayKey(c.Partition.Key(v)), sel)
		}
	}

	fixture, typed, err := j.fixture(dir)
	if err != nil {
		return err
	}
	listing, err := fixture.List(ctx, nil, nil)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(o.SpillDir, "lakeswap-test-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	eng, err := source.OpenSQLEngine(tmp, EngineMemory(limit))
	if err != nil {
		return err
	}
	defer eng.Close()
	rejected, err := fixture.Prepare(ctx, eng, listing, io.Discard, nil, tmp)
	if err != nil {
		return err
	}
	res.Rejected = rejected.ByReason
	for name, tc := range typed {
		if err := typeAsTable(ctx, eng, name, tc); err != nil {
			return fmt.Errorf("source %s: %w", name, fixture.Named(err))
		}
	}
	if spec.Rejected != nil && !maps.Equal(spec.Rejected, rejected.ByReason) {
		res.Problems = append(res.Problems, TestProblem{Kind: "rejected",
			Message: fmt.Sprintf("the reject rules refused %s, the test expects %s", reasons(rejected.ByReason), reasons(spec.Rejected))})
	}
	field, named := sel.FirstNamed()
	from, to := bounds(c.Partition.Fields[field], named)
	rr, err := fixture.Query(ctx, eng, from, to)
	if err != nil {
		return fixture.Named(err)
	}
	got, err := source.ReadResult(ctx, c, sel, "job "+filepath.Base(j.File), rr, in)
	rr.Release()
	if err != nil {
		return err
	}
	defer got.Release()
	for _, f := range got.Stray() {
		res.Problems = append(res.Problems, TestProblem{Kind: "outside", Message: f.String()})
	}
	values := sel.Resolve(got.Partitions(), want.Partitions())
	gotRows, figures, err := rowsOf(ctx, c, got, values, true)
	if err != nil {
		return err
	}
	for _, f := range figures.findings {
		res.Problems = append(res.Problems, TestProblem{Kind: "check", Message: f.String()})
	}
	wantRows, _, err := rowsOf(ctx, c, want, values, false)
	if err != nil {
		return fmt.Errorf("expected rows: %w", err)
	}
	res.Rows, res.Expected = int64(len(gotRows)), int64(len(wantRows))
	if err := judgeTableChecks(ctx, eng, c, res); err != nil {
		return err
	}
	res.Problems = append(res.Problems, compareRows(c, gotRows, wantRows)...)
	reconciled, err := fixture.expected(ctx, eng, c, values, from, to)
	if err != nil {
		return err
	}
	tolerance, err := j.tolerance(c)
	if err != nil {
		return err
	}
	for _, v := range values {
		if f, ok := reconciled[v]; ok {
			res.Problems = append(res.Problems, reconcileTest(c, v, f.Rows, f.Sums, figures.of[v], tolerance)...)
		}
	}
	return nil
}

func readTestSpec(path string) (TestSpec, error) {
	var spec TestSpec
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return spec, nil
	}
	if err != nil {
		return spec, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil && !errors.Is(err, io.EOF) {
		return spec, fmt.Errorf("%s: %w", path, catalog.YAMLError(err))
	}
	return spec, nil
}

// testSelection is the partitions a test runs the job for: test.yaml's,
// else those the expected rows hold.
func testSelection(c *contract.Contract, spec TestSpec, expected []string) (contract.Selection, error) {
	if len(spec.Partitions) > 0 {
		sel, err := c.Partition.ParseSelectors(spec.Partitions)
		if err != nil {
			return sel, fmt.Errorf("test.yaml partitions: %w", err)
		}
		return sel, nil
	}
	if len(expected) == 0 {
		return contract.Selection{}, errors.New("the expected rows are none, so they name no partition: list the partitions the test runs for in test.yaml (partitions: [COL=FROM..TO])")
	}
	if !c.Partition.One() {
		return contract.Selection{}, fmt.Errorf("the table is partitioned by %s: list the partitions the test runs for in test.yaml (partitions: [...])", c.Partition.Name)
	}
	return c.Partition.ParseSelectors([]string{c.Partition.Fields[0].Name + "=" + strings.Join(expected, ",")})
}

// SchemaContract is the contract of table as its schema file in dir says
// (the *.table.yaml whose table: names it, which `lakeswap table create
// --schema` takes): what a test holds the job's rows to, with no catalog.
func SchemaContract(dir, name string) (*contract.Contract, error) {
	path, err := schemaFile(dir, name)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, fmt.Errorf("no schema file of table %s in %s: a test reads the table's columns, grain and partitioning from the *.table.yaml that `lakeswap table create --schema` takes", name, dir)
	}
	spec, err := catalog.ReadTableSpec(path)
	if err != nil {
		return nil, err
	}
	sc, part, props, err := spec.Build()
	if err != nil {
		return nil, fmt.Errorf("schema file %s: %w", path, err)
	}
	meta, err := table.NewMetadata(sc, part, table.UnsortedSortOrder, "file:///lakeswap-test", props)
	if err != nil {
		return nil, fmt.Errorf("schema file %s: %w", path, err)
	}
	c, err := contract.Of(meta)
	if err != nil {
		return nil, fmt.Errorf("schema file %s: %w", path, err)
	}
	return c, nil
}

// schemaFile finds the schema file of table in dir, or "".
func schemaFile(dir, name string) (string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.table.y*ml"))
	if err != nil {
		return "", err
	}
	for _, p := range paths {
		spec, err := catalog.ReadTableSpec(p)
		if err != nil {
			return "", err
		}
		if spec.Table == name {
			return p, nil
		}
	}
	return "", nil
}

// fixture is the job reading the test's fixtures in place of its sources,
// with the contract of each table source whose schema file is beside the
// job (its fixture is typed as the table's columns are).
func (j *Job) fixture(dir string) (*Job, map[string]*contract.Contract, error) {
	f := *j
	f.listed = nil
	f.Sources = map[string]Source{}
	typed := map[string]*contract.Contract{}
	for _, name := range j.SourceNames() {
		path, err := fixtureOf(dir, name)
		if err != nil {
			return nil, nil, err
		}
		src := Source{Path: path}
		if t := j.Sources[name].Table; t != "" {
			p, err := schemaFile(j.Dir, t)
			if err != nil {
				return nil, nil, err
			}
			if p != "" {
				if typed[name], err = SchemaContract(j.Dir, t); err != nil {
					return nil, nil, err
				}
			} else if f, _ := source.InputFormat(path); f == "csv" || isFolder(path) {
				return nil, nil, fmt.Errorf("source %s reads table %s: its fixture %s is typed by that table's schema file, and %s holds none (a *.table.yaml whose table: is %s); give one, or a Parquet fixture", name, t, filepath.Base(path), j.Dir, t)
			}
		} else {
			src.Format, src.CSV = j.Sources[name].Format, j.Sources[name].CSV
		}
		f.Sources[name] = src
	}
	return &f, typed, nil
}

func isFolder(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// fixtureOf is the fixture of a source in a test folder.
func fixtureOf(dir, name string) (string, error) {
	if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.IsDir() {
		return filepath.Join(dir, name), nil
	}
	paths, err := filepath.Glob(filepath.Join(dir, name+".*"))
	if err != nil {
		return "", err
	}
	paths = slices.DeleteFunc(paths, func(p string) bool {
		b := filepath.Base(p)
		return b == "test.yaml" || strings.HasPrefix(b, "expected.")
	})
	switch len(paths) {
	case 0:
		return "", fmt.Errorf("no fixture for source %s in %s: put its rows in %s.csv, %s.ndjson or %s.parquet (or a folder %s/ of such files)", name, dir, name, name, name, name)
	case 1:
		return paths[0], nil
	}
	return "", fmt.Errorf("source %s has several fixtures in %s (%s): keep one, or put them in a folder %s/", name, dir, strings.Join(baseNames(paths), ", "), name)
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// typeAsTable makes a table source's fixture read as the table's columns
// are typed: a CSV or NDJSON fixture's text becomes dates, numbers and
// times, as the job reads them from the table.
func typeAsTable(ctx context.Context, eng *source.SQLEngine, name string, c *contract.Contract) error {
	have, err := eng.Columns("SELECT * FROM " + kept(name))
	if err != nil {
		return err
	}
	for _, f := range c.Fields {
		if !slices.Contains(have, f.Name) {
			return fmt.Errorf("its fixture has no column %s, which the table has (it has %s)", f.Name, strings.Join(have, ", "))
		}
	}
	cols := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		t := source.EngineType(f.Type)
		if t == "" {
			cols[i] = ident(f.Name)
			continue
		}
		cols[i] = "CAST(" + ident(f.Name) + " AS " + t + ") AS " + ident(f.Name)
	}
	// Kept whole, so that a value the table's type cannot take is said
	// here, of the fixture, not later, of the job's SQL.
	if err := eng.Exec(ctx, "DROP VIEW IF EXISTS "+ident(name)); err != nil {
		return err
	}
	if err := eng.Exec(ctx, "CREATE TEMP TABLE "+ident(name)+" AS SELECT "+strings.Join(cols, ", ")+" FROM "+kept(name)); err != nil {
		return fmt.Errorf("its fixture holds a value the table's column cannot: %w", err)
	}
	return nil
}

// figures are the job's rows as the contract judges them: each
// partition's fingerprint, and what its checks refuse.
type figures struct {
	of       map[string]verify.Fingerprint
	findings []verify.Finding
}

// rowsOf reads the rows of the partitions values from src, each as its
// formatted values; judge also runs the contract's checks and fingerprints
// each partition.
func rowsOf(ctx context.Context, c *contract.Contract, src *source.Files, values []string, judge bool) ([][]string, figures, error) {
	var out [][]string
	fig := figures{of: map[string]verify.Fingerprint{}}
	for _, v := range values {
		acc := verify.NewAccumulator(c, v, func(row int64) string { return src.Locate(v, row) })
		rr, err := src.Open(ctx, v)
		if err != nil {
			return nil, fig, err
		}
		for rr.Next() {
			rec := rr.RecordBatch()
			for r := range int(rec.NumRows()) {
				out = append(out, formatRow(rec, r))
			}
			if judge {
				if err := acc.Add(rec); err != nil {
					rr.Release()
					return nil, fig, err
				}
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil {
			return nil, fig, err
		}
		if judge {
			fs := acc.Findings(true)
			fig.findings = append(fig.findings, fs.List...)
			fig.of[v] = acc.Result()
		}
	}
	return out, fig, nil
}

func formatRow(rec arrow.RecordBatch, r int) []string {
	out := make([]string, rec.NumCols())
	for i := range out {
		out[i] = verify.FormatValue(rec.Column(i), r)
	}
	return out
}

// compareRows compares the job's rows with the expected ones at the
// grain: keys missing, keys unexpected, and keys whose other columns
// differ, in key order. A table without a grain compares whole rows.
func compareRows(c *contract.Contract, got, want [][]string) []TestProblem {
	key := func(row []string) string {
		if len(c.Grain) == 0 {
			return rowText(c, row, nil)
		}
		parts := make([]string, len(c.Grain))
		for i, g := range c.Grain {
			parts[i] = c.Fields[g].Name + "=" + row[g]
		}
		return strings.Join(parts, ", ")
	}
	index := func(rows [][]string) (map[string][][]string, []string) {
		m := map[string][][]string{}
		var keys []string
		for _, r := range rows {
			k := key(r)
			if m[k] == nil {
				keys = append(keys, k)
			}
			m[k] = append(m[k], r)
		}
		return m, keys
	}
	g, gotKeys := index(got)
	w, wantKeys := index(want)
	keys := slices.Concat(gotKeys, wantKeys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var out []TestProblem
	for _, k := range keys {
		gr, wr := g[k], w[k]
		switch {
		case len(wr) == 0:
			out = append(out, TestProblem{Kind: "unexpected", Key: k, Message: "produced, not expected: " + rowText(c, gr[0], c.Grain)})
		case len(gr) == 0:
			out = append(out, TestProblem{Kind: "missing", Key: k, Message: "expected, not produced: " + rowText(c, wr[0], c.Grain)})
		case len(wr) > 1 && len(c.Grain) > 0:
			out = append(out, TestProblem{Kind: "expected", Key: k, Message: fmt.Sprintf("the expected rows hold this key %s: a table holds one row a key at its grain; fix the test's expected rows", words.Count(int64(len(wr)), "time"))})
		case len(gr) != len(wr):
			out = append(out, TestProblem{Kind: "differs", Key: k, Message: fmt.Sprintf("produced %s, expected %s", words.Count(int64(len(gr)), "row"), words.Count(int64(len(wr)), "row"))})
		case len(c.Grain) > 0:
			var cols []ColumnDiff
			for i, f := range c.Fields {
				if gr[0][i] != wr[0][i] {
					cols = append(cols, ColumnDiff{Column: f.Name, Made: gr[0][i], Expected: wr[0][i]})
				}
			}
			if len(cols) > 0 {
				out = append(out, TestProblem{Kind: "differs", Key: k, Columns: cols})
			}
		}
	}
	for i := range out {
		if out[i].Kind == "differs" && out[i].Message == "" {
			out[i].Message = out[i].String()[len(out[i].Key)+2:]
		}
	}
	return out
}

// rowText writes a row's columns but those of skip as name=value.
func rowText(c *contract.Contract, row []string, skip []int) string {
	var parts []string
	for i, f := range c.Fields {
		if !slices.Contains(skip, i) {
			parts = append(parts, f.Name+"="+row[i])
		}
	}
	return strings.Join(parts, ", ")
}

// reconcileTest compares a partition's rows and sums, as the job made
// them, with what its reconciliation query says of the fixtures.
func reconcileTest(c *contract.Contract, v string, rows int64, sums map[string]exact.Sum, got verify.Fingerprint, tolerance map[string]swap.Tolerance) []TestProblem {
	var out []TestProblem
	key := c.Partition.Key(v)
	allows := func(fig string, want, got exact.Sum, scale int) bool {
		t, ok := tolerance[fig]
		return ok && t.Allows(want, got, scale)
	}
	if rows != got.Rows && !allows("rows", exact.Of(rows), exact.Of(got.Rows), 0) {
		out = append(out, TestProblem{Kind: "reconcile", Key: verify.DisplayKey(key),
			Message: fmt.Sprintf("the reconciliation query says %s rows, the job made %s", words.Number(rows), words.Number(got.Rows))})
	}
	scales := c.Summary().Scales
	for _, i := range c.Additive {
		col := c.Fields[i].Name
		if w, ok := sums[col]; ok && !w.Equal(got.Sums[col]) && !allows(col, w, got.Sums[col], scales[col]) {
			out = append(out, TestProblem{Kind: "reconcile", Key: verify.DisplayKey(key),
				Message: fmt.Sprintf("the reconciliation query says a sum of %s of %s, the job made %s", col, words.Grouped(w.Scaled(scales[col])), words.Grouped(got.Sums[col].Scaled(scales[col])))})
		}
	}
	return out
}

// reasons writes rejected rows by reason: `2 "amount_cents < 0", 1 "..."`,
// or "none".
func reasons(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d %q", m[k], k))
	}
	return strings.Join(parts, ", ")
}

// judgeTableChecks runs the table's assertions on the rows the job made
// (the view rows), and names the checks fixtures alone cannot judge.
func judgeTableChecks(ctx context.Context, eng *source.SQLEngine, c *contract.Contract, res *TestResult) error {
	for _, i := range slices.Sorted(maps.Keys(c.Rules)) {
		for _, r := range c.Rules[i] {
			if r.Kind == contract.CheckRelationship || r.TableWide {
				res.NotJudged = append(res.NotJudged, fmt.Sprintf("%s %s (reads the rest of the catalog)", c.Fields[i].Name, r.Check))
			}
		}
	}
	if len(c.Assertions) == 0 {
		return nil
	}
	if err := eng.Exec(ctx, "CREATE OR REPLACE TEMP VIEW rows AS SELECT * FROM "+resultTable); err != nil {
		return err
	}
	for _, a := range c.Assertions {
		f, err := swap.Assert(ctx, eng, a)
		switch {
		case err != nil:
			return err
		case f == nil, a.Warn:
		case strings.Contains(f.Message, "Catalog Error"):
			res.NotJudged = append(res.NotJudged, "assertion "+a.Name+" (reads a table the test does not have)")
		default:
			res.Problems = append(res.Problems, TestProblem{Kind: "check", Message: f.Message})
		}
	}
	return nil
}
