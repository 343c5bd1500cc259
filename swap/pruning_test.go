//go:build !noduckdb

package swap_test

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

// pruneColumns is a table of every type lakeswap writes.
var pruneColumns = []catalog.ColumnSpec{
	{Name: "id", Type: "long", Required: true},
	{Name: "s", Type: "string"}, {Name: "b", Type: "binary"},
	{Name: "i", Type: "int"}, {Name: "l", Type: "long"},
	{Name: "f", Type: "float"}, {Name: "d", Type: "double"},
	{Name: "dec", Type: "decimal(9,2)"}, {Name: "dt", Type: "date"},
	{Name: "tm", Type: "time"},
	{Name: "ts", Type: "timestamp"}, {Name: "tz", Type: "timestamptz"},
	{Name: "flag", Type: "boolean"},
}

var negZero = math.Copysign(0, -1)

// pruneValues are each column's values, nulls aside: the edges of every type,
// the empty string and the empty binary, NaN, -0.0 and 0.0, infinities, unicode.
var pruneValues = map[string][]any{
	"s":    {"", "a", "", "ab", "é", "\u00ff", "zz", "日本", "a b", "", "a"},
	"b":    {[]byte{}, []byte{0}, []byte{0xff}, []byte("abc"), []byte{}},
	"i":    {int32(math.MinInt32), int32(-1), int32(0), int32(1), int32(math.MaxInt32)},
	"l":    {int64(math.MinInt64), int64(-1), int64(0), int64(7), int64(math.MaxInt64)},
	"f":    {float32(math.NaN()), float32(negZero), float32(0), float32(math.Inf(-1)), float32(math.Inf(1)), float32(1.5), float32(negZero)},
	"d":    {math.NaN(), negZero, 0.0, math.Inf(-1), math.Inf(1), 1e300, negZero, -2.5},
	"dec":  {"-9999999.99", "0.00", "0.01", "9999999.99", "-0.01"},
	"dt":   {"1970-01-01", "2026-01-31", "0001-01-01", "9999-12-31", "1969-12-31"},
	"tm":   {"00:00:00", "23:59:59.999999", "12:00:00"},
	"ts":   {"2026-01-31T23:59:59.999999", "1970-01-01T00:00:00", "1969-12-31T23:59:59.999999", "2026-02-01T00:00:00"},
	"tz":   {"2026-01-31T23:59:59.999999", "1970-01-01T00:00:00", "1969-12-31T23:59:59.999999", "2026-02-01T00:00:00"},
	"flag": {true, false, false},
}

// pruneSpecs are the tables the pruning test writes: one for each transform,
// and of several types for identity.
var pruneSpecs = []struct {
	name string
	part []catalog.PartitionSpec
}{
	{"by_s", []catalog.PartitionSpec{{Column: "s", Transform: "identity"}}},
	{"by_s_trunc", []catalog.PartitionSpec{{Column: "s", Transform: "truncate[1]"}}},
	{"by_b", []catalog.PartitionSpec{{Column: "b", Transform: "identity"}}},
	{"by_l_bucket", []catalog.PartitionSpec{{Column: "l", Transform: "bucket[4]"}}},
	{"by_i", []catalog.PartitionSpec{{Column: "i", Transform: "identity"}}},
	{"by_dec", []catalog.PartitionSpec{{Column: "dec", Transform: "identity"}}},
	{"by_dt", []catalog.PartitionSpec{{Column: "dt", Transform: "identity"}}},
	{"by_dt_year", []catalog.PartitionSpec{{Column: "dt", Transform: "year"}}},
	{"by_ts_day", []catalog.PartitionSpec{{Column: "ts", Transform: "day"}}},
	{"by_tz_month", []catalog.PartitionSpec{{Column: "tz", Transform: "month"}}},
	{"by_ts_hour", []catalog.PartitionSpec{{Column: "ts", Transform: "hour"}}},
	{"by_d", []catalog.PartitionSpec{{Column: "d", Transform: "identity"}}},
	{"by_tm", []catalog.PartitionSpec{{Column: "tm", Transform: "identity"}}},
	{"by_tz", []catalog.PartitionSpec{{Column: "tz", Transform: "identity"}}},
	{"by_flag_and_s", []catalog.PartitionSpec{{Column: "flag", Transform: "identity"}, {Column: "s", Transform: "identity"}}},
}

const oddRows = 40

// oddRow is row r's value of a column: the column's values in turn, from
// an offset of the column's own, with every seventh row null unless the
// column is a partition's source.
func oddRow(col string, r int, partitioned bool) any {
	vals := pruneValues[col]
	if !partitioned && (r+len(col))%7 == 3 {
		return nil
	}
	return vals[(r*3+len(col))%len(vals)]
}

// oddSource serves the odd rows by partition.
type oddSource struct {
	c      *contract.Contract
	byPart map[string][]int
	part   map[string]bool
	omit   map[int]bool // rows left out
}

func newOddSource(t *testing.T, c *contract.Contract) *oddSource {
	t.Helper()
	src := &oddSource{c: c, byPart: map[string][]int{}, part: map[string]bool{}}
	for _, f := range c.Partition.Fields {
		src.part[f.Name] = true
	}
	all := make([]int, oddRows)
	for r := range all {
		all[r] = r
	}
	rec := src.record(t, all)
	defer rec.Release()
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		cols[i] = rec.Column(i)
	}
	value, err := c.Partition.ValueFunc(cols)
	if err != nil {
		t.Fatal(err)
	}
	for r := range oddRows {
		v, ok := value(r)
		if !ok {
			t.Fatalf("row %d has no partition", r)
		}
		src.byPart[v] = append(src.byPart[v], r)
	}
	return src
}

func (s *oddSource) values() []string {
	var out []string
	for v := range s.byPart {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

func (s *oddSource) Open(_ context.Context, partition string) (array.RecordReader, error) {
	rows := slices.DeleteFunc(slices.Clone(s.byPart[partition]), func(r int) bool { return s.omit[r] })
	rec := s.record(nil, rows)
	defer rec.Release()
	return array.NewRecordReader(s.c.Arrow, []arrow.RecordBatch{rec})
}

func (s *oddSource) record(t *testing.T, rows []int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.c.Arrow)
	defer b.Release()
	for _, r := range rows {
		for i, f := range s.c.Arrow.Fields() {
			if f.Name == "id" {
				b.Field(i).(*array.Int64Builder).Append(int64(r))
				continue
			}
			appendOdd(b.Field(i), oddRow(f.Name, r, s.part[f.Name]))
		}
	}
	return b.NewRecordBatch()
}

func appendOdd(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch x := b.(type) {
	case *array.StringBuilder:
		x.Append(v.(string))
	case *array.BinaryBuilder:
		x.Append(v.([]byte))
	case *array.Int32Builder:
		x.Append(v.(int32))
	case *array.Int64Builder:
		x.Append(v.(int64))
	case *array.Float32Builder:
		x.Append(v.(float32))
	case *array.Float64Builder:
		x.Append(v.(float64))
	case *array.BooleanBuilder:
		x.Append(v.(bool))
	case *array.Decimal128Builder:
		n, err := decimal128.FromString(v.(string), 9, 2)
		if err != nil {
			panic(err)
		}
		x.Append(n)
	case *array.Date32Builder:
		d, _ := time.Parse(time.DateOnly, v.(string))
		x.Append(arrow.Date32FromTime(d))
	case *array.Time64Builder:
		d, _ := time.Parse("15:04:05.999999", v.(string))
		x.Append(arrow.Time64(d.Sub(d.Truncate(24 * time.Hour)).Microseconds()))
	case *array.TimestampBuilder:
		d, _ := time.Parse("2006-01-02T15:04:05.999999", v.(string))
		x.Append(arrow.Timestamp(d.UnixMicro()))
	default:
		panic(fmt.Sprintf("no odd values for %T", b))
	}
}

// createOdd creates a table of the odd columns, partitioned by part, and
// returns its rows' source.
func createOdd(t *testing.T, e *env, ident table.Identifier, part []catalog.PartitionSpec) *oddSource {
	t.Helper()
	tbl, err := catalog.CreateTable(e.ctx, e.cat, ident, catalog.TableSpec{Columns: pruneColumns, Partition: part})
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Of(tbl.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	return newOddSource(t, c)
}

// filter is one filter as iceberg-go plans it and as SQL states it.
type filter struct {
	expr iceberg.BooleanExpression
	sql  string
}

// oddFilters are, for every column, equality with each of its values,
// ranges around them, prefixes of strings, IS NULL, NOT NULL and IS NAN.
// A float's NaN is no range's (SQL orders NaN above every number).
func oddFilters() []filter {
	var out []filter
	for _, col := range pruneColumns[1:] {
		name := col.Name
		ref := iceberg.Reference(name)
		out = append(out, filter{iceberg.IsNull(ref), name + " IS NULL"}, filter{iceberg.NotNull(ref), name + " IS NOT NULL"})
		float := name == "f" || name == "d"
		if float {
			out = append(out, filter{iceberg.IsNaN(ref), "isnan(" + name + ")"})
		}
		seen := map[string]bool{}
		for _, v := range pruneValues[name] {
			lit, sqlv := oddLiteral(name, v)
			if lit == nil || seen[sqlv] {
				continue
			}
			seen[sqlv] = true
			num := name
			if name == "ts" || name == "tz" {
				num = "epoch_us(" + name + ")"
			}
			if float {
				num = "(NOT isnan(" + name + ") AND " + name
			}
			close := map[bool]string{true: ")", false: ""}[float]
			out = append(out,
				filter{iceberg.LiteralPredicate(iceberg.OpEQ, ref, lit), num + " = " + sqlv + close},
				filter{iceberg.LiteralPredicate(iceberg.OpLT, ref, lit), num + " < " + sqlv + close},
				filter{iceberg.LiteralPredicate(iceberg.OpGT, ref, lit), num + " > " + sqlv + close},
				filter{iceberg.LiteralPredicate(iceberg.OpLTEQ, ref, lit), num + " <= " + sqlv + close},
				filter{iceberg.LiteralPredicate(iceberg.OpGTEQ, ref, lit), num + " >= " + sqlv + close})
			if s, ok := v.(string); ok && name == "s" {
				for _, p := range []string{"", s, strings.TrimRight(s, s[len(s)-min(1, len(s)):])} {
					out = append(out, filter{iceberg.StartsWith(ref, p), "starts_with(s, " + sqlString(p) + ")"})
				}
			}
		}
	}
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(f filter) bool {
		dup := seen[f.sql]
		seen[f.sql] = true
		return dup
	})
}

func sqlFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return fmt.Sprint(f)
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// oddLiteral is v as an Iceberg literal of the column and as SQL; nil for
// NaN, which IS NAN filters.
func oddLiteral(col string, v any) (iceberg.Literal, string) {
	switch col {
	case "s":
		return iceberg.NewLiteral(v.(string)), sqlString(v.(string))
	case "b":
		return iceberg.NewLiteral(v.([]byte)), "unhex('" + hex.EncodeToString(v.([]byte)) + "')"
	case "i":
		return iceberg.NewLiteral(v.(int32)), fmt.Sprint(v)
	case "l":
		return iceberg.NewLiteral(v.(int64)), fmt.Sprint(v)
	case "f":
		f := v.(float32)
		if math.IsNaN(float64(f)) {
			return nil, ""
		}
		return iceberg.NewLiteral(f), "'" + sqlFloat(float64(f)) + "'::FLOAT"
	case "d":
		f := v.(float64)
		if math.IsNaN(f) {
			return nil, ""
		}
		return iceberg.NewLiteral(f), "'" + sqlFloat(f) + "'::DOUBLE"
	case "dec":
		n, _ := decimal128.FromString(v.(string), 9, 2)
		return iceberg.NewLiteral(iceberg.Decimal{Val: n, Scale: 2}), v.(string) + "::DECIMAL(9,2)"
	case "dt":
		d, _ := time.Parse(time.DateOnly, v.(string))
		return iceberg.NewLiteral(iceberg.Date(d.Unix() / 86400)), "DATE '" + v.(string) + "'"
	case "tm":
		d, _ := time.Parse("15:04:05.999999", v.(string))
		return iceberg.NewLiteral(iceberg.Time(d.Sub(d.Truncate(24 * time.Hour)).Microseconds())), "TIME '" + v.(string) + "'"
	case "ts", "tz":
		d, _ := time.Parse("2006-01-02T15:04:05.999999", v.(string))
		return iceberg.NewLiteral(iceberg.Timestamp(d.UnixMicro())), fmt.Sprint(d.UnixMicro())
	case "flag":
		return iceberg.NewLiteral(v.(bool)), fmt.Sprint(v)
	}
	panic(col)
}

// TestPruningFindsEveryRow publishes tables of odd values under every
// transform, then asks iceberg-go's scan planning, which prunes on the
// manifest list's partition summaries and the manifests' column bounds and
// counts as Spark, Trino and PyIceberg do, which files a filter reads. For
// every filter, each file that DuckDB (reading every file of the table,
// unpruned) finds a matching row in must be planned; and verify finds no
// wrong statistic, footers included.
func TestPruningFindsEveryRow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs in the full tier (make test)")
	}
	for _, b := range []backend{backends[0], backends[2]} {
		t.Run(b.name, func(t *testing.T) {
			e := b.open(t)
			e.t = t
			connector, err := duckdb.NewConnector("", nil)
			if err != nil {
				t.Fatal(err)
			}
			db := sql.OpenDB(connector)
			defer db.Close()
			filters := oddFilters()
			for _, spec := range pruneSpecs {
				t.Run(spec.name, func(t *testing.T) {
					ident := table.Identifier{"odd", spec.name}
					src := createOdd(t, e, ident, spec.part)
					if _, err := e.pub.Publish(e.ctx, swap.Request{Table: ident, Partitions: src.values(), Source: src, SourceName: "odd"}); err != nil {
						t.Fatalf("publish: %v", err)
					}
					tbl := e.tableNamed(ident)
					checkPruning(t, e.ctx, db, tbl, filters)
					if e.home != "" {
						checkHiveRead(t, db, tbl)
					}
					check, err := audit.Of(e.pub.Catalog).VerifyTable(e.ctx, ident, 0)
					if err != nil || !check.OK {
						t.Errorf("verify --table: %v %+v", err, check)
					}
				})
			}
		})
	}
}

// TestPruningAfterEveryRoute: the summaries of a table partitioned by a
// string holding the empty string stay right through the other routes that write
// manifests: plan then apply, a rebase over another writer's commit, and a
// scoped rollback, each committing a manifest of the empty partition.
func TestPruningAfterEveryRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs in the full tier (make test)")
	}
	e := backends[0].open(t)
	e.t = t
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ident := table.Identifier{"odd", "routes"}
	src := createOdd(t, e, ident, pruneSpecs[0].part)
	filters := oddFilters()
	check := func(step string) {
		t.Helper()
		checkPruning(t, e.ctx, db, e.tableNamed(ident), filters)
		if v, err := audit.Of(e.pub.Catalog).VerifyTable(e.ctx, ident, 0); err != nil || !v.OK {
			t.Fatalf("%s: verify --table: %v %+v", step, err, v)
		}
	}
	if _, err := e.pub.Publish(e.ctx, swap.Request{Table: ident, Partitions: src.values(), Source: src}); err != nil {
		t.Fatal(err)
	}
	// Plan then apply, of '' and "a" with a row of each left out, rebased
	// over another writer's commit to "zz".
	src.omit = map[int]bool{src.byPart[""][0]: true, src.byPart["a"][0]: true}
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: ident, Partitions: []string{"", "a"}, Source: src, RunID: "planned"})
	if err != nil || plan.Refused() {
		t.Fatalf("plan: %v %v", err, plan)
	}
	src.omit = map[int]bool{src.byPart["zz"][0]: true}
	if _, err := e.pub.Publish(e.ctx, swap.Request{Table: ident, Partitions: []string{"zz"}, Source: src}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Apply(e.ctx, swap.ApplyOptions{}, plan); err != nil {
		t.Fatalf("apply, rebased: %v", err)
	}
	check("plan, apply rebased")
	// Another writer again, then the planned run undone in its partitions.
	src.omit = nil
	if _, err := e.pub.Publish(e.ctx, swap.Request{Table: ident, Partitions: []string{"zz"}, Source: src}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Rollback(e.ctx, rollback.Request{Table: ident, RunID: "planned", Scoped: true}); err != nil {
		t.Fatalf("scoped rollback: %v", err)
	}
	check("scoped rollback")
}

// checkHiveRead reads the table's files as DuckDB does by default, taking
// key=value folder names as columns: each folder is named by its partition
// field (s_trunc=a, ts_day=2026-01-31), so a transform's value never
// stands in for the column's own, and every row reads as it was written.
func checkHiveRead(t *testing.T, db *sql.DB, tbl *table.Table) {
	t.Helper()
	glob := sqlString(strings.TrimPrefix(tbl.Location(), "file://") + "/data/**/*.parquet")
	var extra []string
	spec := tbl.Metadata().PartitionSpec()
	for _, f := range spec.Fields() {
		if _, ok := f.Transform.(iceberg.IdentityTransform); !ok {
			extra = append(extra, f.Name)
		}
	}
	if len(extra) == 0 {
		return // an identity folder holds the column's own value
	}
	q := fmt.Sprintf("SELECT count(*) FROM (SELECT * EXCLUDE (%s) FROM read_parquet(%s, hive_partitioning=true) EXCEPT ALL SELECT * FROM read_parquet(%s, hive_partitioning=false))",
		strings.Join(extra, ", "), glob, glob)
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if n != 0 {
		t.Errorf("DuckDB's hive-partitioned read of %s gives %d rows other than the files hold", tbl.Location(), n)
	}
}

// checkPruning asks, for each filter, which files iceberg-go plans and
// which hold a matching row as DuckDB reads them all.
func checkPruning(t *testing.T, ctx context.Context, db *sql.DB, tbl *table.Table, filters []filter) {
	t.Helper()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	local := map[string]string{} // local copy -> table path
	var list []string
	for i, task := range all {
		src, err := fsys.Open(task.File.FilePath())
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%03d.parquet", i))
		dst, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		dst.Close()
		local[p] = task.File.FilePath()
		list = append(list, sqlString(p))
	}
	// Every row read once, whole, into a table the filters then query:
	// the truth each plan is judged against owes nothing to the files'
	// statistics (a filter on read_parquet lets DuckDB skip row groups by
	// them), and the files are not read again for every filter (half the
	// test's CPU went to that).
	if _, err := db.ExecContext(ctx, "CREATE OR REPLACE TABLE pruning_rows AS SELECT * FROM read_parquet(["+strings.Join(list, ",")+"], filename=true, hive_partitioning=false)"); err != nil {
		t.Fatal(err)
	}
	defer db.ExecContext(ctx, "DROP TABLE pruning_rows") //nolint:errcheck
	lost := 0
	for _, f := range filters {
		tasks, err := tbl.Scan(table.WithRowFilter(f.expr)).PlanFiles(ctx)
		if err != nil {
			t.Fatalf("plan %s: %v", f.expr, err)
		}
		planned := map[string]bool{}
		for _, task := range tasks {
			planned[task.File.FilePath()] = true
		}
		rows, err := db.QueryContext(ctx, "SELECT filename, count(*) FROM pruning_rows WHERE "+f.sql+" GROUP BY filename")
		if err != nil {
			t.Fatalf("%s: %v", f.sql, err)
		}
		for rows.Next() {
			var name string
			var n int
			if err := rows.Scan(&name, &n); err != nil {
				t.Fatal(err)
			}
			if path := local[name]; !planned[path] {
				lost++
				if lost <= 20 {
					t.Errorf("filter %s (SQL %s): %d matching rows of %s are in no planned file", f.expr, f.sql, n, path)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	if lost > 20 {
		t.Errorf("and %d more files lost", lost-20)
	}
}
