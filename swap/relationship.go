package swap

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/verify"
)

// relationshipExamples is how many rows a relationship finding names.
const relationshipExamples = 3

// judgeRelationships judges a run's relationship checks against the other
// tables as main holds them. A run of a release is judged by the release
// once every table of it is staged (Release.Judge): a table the release
// rebuilds is read as the release leaves it, whatever order its tables
// were staged in.
func judgeRelationships(ctx context.Context, j *judging) (Verdict, error) {
	if j.req.release != nil || !hasRelationships(j.plan.contract) {
		return Verdict{}, nil
	}
	// The run's own table is read as the run leaves it.
	own := &change{plan: j.plan, tbl: j.tbl}
	v, err := relationships(ctx, j.fsys, j.plan, func(ctx context.Context, name, column string, typ iceberg.Type) (map[string]bool, string, error) {
		if name == j.plan.Table {
			return referenced(ctx, j.load, own, "run", name, column, typ)
		}
		return referenced(ctx, j.load, nil, "", name, column, typ)
	})
	if err != nil {
		return v, err
	}
	return v, dangling(ctx, j, own, &v)
}

// dangling judges, for a relationship of a table to itself, the rows the
// run leaves alone too: a value they hold that the run takes away from
// the referenced column (a parent it drops whose child another partition
// keeps) refuses the run as a staged row's would.
func dangling(ctx context.Context, j *judging, own *change, v *Verdict) error {
	c := j.plan.contract
	for _, i := range slices.Sorted(maps.Keys(c.Rules)) {
		for _, r := range c.Rules[i] {
			if r.Kind != contract.CheckRelationship || r.Table != j.plan.Table {
				continue
			}
			refs, read, err := referenced(ctx, j.load, own, "run", r.Table, r.Column, c.Fields[i].Type)
			if err != nil {
				continue // said by relationships
			}
			kept, err := keysHeld(ctx, j.tbl, j.plan.BaseSnapshotID, j.plan.replacedPaths(), []string{c.Fields[i].Name})
			if err != nil {
				return fmt.Errorf("check %s: read %s: %w", r.Check, j.plan.Table, err)
			}
			var gone []string
			for _, val := range slices.Sorted(maps.Keys(kept)) {
				if !refs[val] {
					gone = append(gone, strconv.Quote(val))
				}
			}
			if len(gone) > 0 {
				v.add(r, verify.Finding{Kind: verify.KindCheck, Column: c.Fields[i].Name,
					Message: fmt.Sprintf("the partitions the run leaves alone hold %s %s that %s does not hold (check %s): %s",
						words.Count(len(gone), "value"), c.Fields[i].Name, read, r.Check, strings.Join(gone[:min(len(gone), relationshipExamples)], ", "))})
			}
		}
	}
	return nil
}

func hasRelationships(c *contract.Contract) bool {
	for _, rules := range c.Rules {
		for _, r := range rules {
			if r.Kind == contract.CheckRelationship {
				return true
			}
		}
	}
	return false
}

// values gives the values a table's column holds, each as Arrow writes it
// (ValueStr), and names what was read; an error that is the table's
// (missing, no such column) is said as a finding, not a failure.
type values func(ctx context.Context, name, column string, typ iceberg.Type) (have map[string]bool, read string, err error)

// errNoReference is a relationship whose other side is not there: the
// run is refused, naming it.
type errNoReference struct{ msg string }

func (e errNoReference) Error() string { return e.msg }

// relationships judges each relationship check of the run's contract on
// the rows it stages: every value of the column, nulls aside, must be one
// the other table's column holds. A refusal names the check, the
// partition, how many rows, and a few of them by key.
func relationships(ctx context.Context, fsys icebergio.IO, plan *run, have values) (Verdict, error) {
	c := plan.contract
	var v Verdict
	for _, i := range slices.Sorted(maps.Keys(c.Rules)) {
		for _, r := range c.Rules[i] {
			if r.Kind != contract.CheckRelationship {
				continue
			}
			col := c.Fields[i].Name
			refs, read, err := have(ctx, r.Table, r.Column, c.Fields[i].Type)
			var none errNoReference
			if errors.As(err, &none) {
				v.add(r, verify.Finding{Kind: verify.KindCheck, Column: col, Message: fmt.Sprintf("check %s cannot be judged: %s", r.Check, none.msg)})
				continue
			}
			if err != nil {
				return v, fmt.Errorf("check %s of column %s: %w", r.Check, col, err)
			}
			for _, pp := range plan.Partitions {
				n, keys, err := stagedRows(ctx, fsys, c, []int{i}, pp.NewFiles, func(k string) bool { return !refs[k] })
				if err != nil {
					return v, err
				}
				if n == 0 {
					continue
				}
				v.add(r, verify.Finding{Kind: verify.KindCheck, Partition: pp.Key, Column: col,
					Message: fmt.Sprintf("%s %s a %s that %s does not hold (check %s): %s",
						words.Count(n, "row"), words.Noun(n, "holds", "hold"), col, read, r.Check, strings.Join(keys, "; "))})
			}
		}
	}
	return v, nil
}

// add refuses the run for f, or, for a check written warn:, warns.
func (v *Verdict) add(r contract.Rule, f verify.Finding) {
	if r.Warn {
		v.Warnings = append(v.Warnings, "check written warn: "+f.String())
		return
	}
	v.Findings = append(v.Findings, f)
}

// referenced reads the values of a table's column: as main holds it, or,
// where part stages that table in a release, as the release leaves it
// (main at the part's base, but the files it replaces, and the files it
// stages).
func referenced(ctx context.Context, load func(context.Context, table.Identifier) (*table.Table, error), part *change, leaves, name, column string, typ iceberg.Type) (map[string]bool, string, error) {
	tbl, err := load(ctx, table.Identifier(strings.Split(name, ".")))
	if err != nil {
		return nil, "", errNoReference{fmt.Sprintf("table %s cannot be read: %v", name, err)}
	}
	i := slices.IndexFunc(tbl.Schema().Fields(), func(f iceberg.NestedField) bool { return f.Name == column })
	if i < 0 {
		return nil, "", errNoReference{fmt.Sprintf("table %s has no column %s", name, column)}
	}
	field := tbl.Schema().Field(i)
	if _, ok := field.Type.(iceberg.PrimitiveType); !ok {
		return nil, "", errNoReference{fmt.Sprintf("%s.%s is %s: a relationship reads a column of single values", name, column, field.Type)}
	}
	if !comparable(typ, field.Type) {
		return nil, "", errNoReference{fmt.Sprintf("%s.%s is %s, the column checked %s: a relationship compares values of one type", name, column, field.Type, typ)}
	}
	read := name
	var snap *int64
	if s := tbl.CurrentSnapshot(); s != nil {
		snap = &s.SnapshotID
	}
	var replaced map[string]bool
	if part != nil {
		read = name + " as the " + leaves + " leaves it"
		snap, replaced = part.plan.BaseSnapshotID, part.plan.replacedPaths()
	}
	have, err := keysHeld(ctx, tbl, snap, replaced, []string{column})
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", name, err)
	}
	if part != nil {
		fsys, err := part.tbl.FS(ctx)
		if err != nil {
			return nil, "", err
		}
		for _, pp := range part.plan.Partitions {
			for _, f := range pp.NewFiles {
				if err := stagedValues(ctx, fsys, f.Path, field, have); err != nil {
					return nil, "", err
				}
			}
		}
	}
	return have, read, nil
}

// stagedValues adds the values a staged file holds of a field.
func stagedValues(ctx context.Context, fsys icebergio.IO, path string, field iceberg.NestedField, have map[string]bool) error {
	col := parquetio.Column{ID: field.ID, Name: field.Name}
	rr, err := readColumns(ctx, fsys, path, []parquetio.Column{col})
	if err != nil {
		return fmt.Errorf("read staged file %s: %w", path, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		addValues(have, rec.Column(parquetio.FieldIndex(rec.Schema(), col)))
	}
	return rr.Err()
}

func addValues(have map[string]bool, col arrow.Array) {
	for row := range col.Len() {
		if col.IsValid(row) {
			have[col.ValueStr(row)] = true
		}
	}
}

// keysHeld reads the keys a table holds in columns at snapshot snap (nil:
// none), the files of replaced aside, deletes applied: each row's values
// as rowKeyOf joins them, a row with a null among them aside.
func keysHeld(ctx context.Context, tbl *table.Table, snap *int64, replaced map[string]bool, columns []string) (map[string]bool, error) {
	have := map[string]bool{}
	if snap == nil {
		return have, nil
	}
	scan := tbl.Scan(table.WithSelectedFields(columns...), table.WithSnapshotID(*snap))
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	tasks = slices.DeleteFunc(tasks, func(t table.FileScanTask) bool { return replaced[t.File.FilePath()] })
	_, recs, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		return nil, err
	}
	for rec, err := range recs {
		if err != nil {
			return nil, err
		}
		cols := make([]arrow.Array, len(columns))
		for i, c := range columns {
			cols[i] = rec.Column(rec.Schema().FieldIndices(c)[0])
		}
		for row := range int(rec.NumRows()) {
			if k, ok := rowKeyOf(cols, row); ok {
				have[k] = true
			}
		}
		rec.Release()
	}
	return have, nil
}

// rowKeyOf is a row's values of cols as one key: the value as Arrow
// writes it for one column, each value length-prefixed for several; ok is
// false where one is null.
func rowKeyOf(cols []arrow.Array, row int) (string, bool) {
	if len(cols) == 1 {
		return cols[0].ValueStr(row), cols[0].IsValid(row)
	}
	var b strings.Builder
	for _, c := range cols {
		if c.IsNull(row) {
			return "", false
		}
		v := c.ValueStr(row)
		fmt.Fprintf(&b, "%d:%s", len(v), v)
	}
	return b.String(), true
}

// uniqueAcross judges each unique-table check of the run's contract: a
// value (or set of values) the run stages must be held by no other row of
// the table as the run leaves it: none it stages elsewhere, none the
// partitions it leaves alone hold.
func uniqueAcross(ctx context.Context, j *judging) (Verdict, error) {
	c := j.plan.contract
	var v Verdict
	for _, i := range slices.Sorted(maps.Keys(c.Rules)) {
		for _, r := range c.Rules[i] {
			if r.Kind != string(contract.CheckUnique) || !r.TableWide {
				continue
			}
			set := append([]int{i}, r.WithIdx...)
			names := make([]string, len(set))
			for k, f := range set {
				names[k] = c.Fields[f].Name
			}
			have, err := keysHeld(ctx, j.tbl, j.plan.BaseSnapshotID, j.plan.replacedPaths(), names)
			if err != nil {
				return v, fmt.Errorf("check %s of column %s: read %s: %w", r.Check, names[0], j.plan.Table, err)
			}
			for _, pp := range j.plan.Partitions {
				if pp.same() {
					continue // its rows are the ones main holds
				}
				// A key the table keeps elsewhere, or one staged before.
				n, keys, err := stagedRows(ctx, j.fsys, c, set, pp.NewFiles, func(k string) bool {
					if have[k] {
						return true
					}
					have[k] = true
					return false
				})
				if err != nil {
					return v, err
				}
				if n > 0 {
					v.add(r, verify.Finding{Kind: verify.KindCheck, Partition: pp.Key, Column: names[0],
						Message: fmt.Sprintf("%s %s a %s another row of the table holds too (check %s): %s",
							words.Count(n, "row"), words.Noun(n, "holds", "hold"), strings.Join(names, ", "), r.Check, strings.Join(keys, "; "))})
				}
			}
		}
	}
	return v, nil
}

// stagedRows counts the rows of the staged files whose values of set
// (their key, as rowKeyOf makes it; a row with a null among them aside)
// bad says are wrong, naming the first few by their grain.
func stagedRows(ctx context.Context, fsys icebergio.IO, c *contract.Contract, set []int, files []parquetio.File, bad func(key string) bool) (int64, []string, error) {
	var cols []parquetio.Column
	for _, f := range set {
		cols = append(cols, parquetio.Column{ID: c.Fields[f].ID, Name: c.Fields[f].Name})
	}
	for _, g := range c.Grain {
		if !slices.Contains(set, g) {
			cols = append(cols, parquetio.Column{ID: c.Fields[g].ID, Name: c.Fields[g].Name})
		}
	}
	var n int64
	var keys []string
	for _, f := range files {
		rr, err := readColumns(ctx, fsys, f.Path, cols)
		if err != nil {
			return 0, nil, fmt.Errorf("read staged file %s: %w", f.Path, err)
		}
		for rr.Next() {
			rec := rr.RecordBatch()
			at := make([]int, len(cols))
			for k, col := range cols {
				at[k] = parquetio.FieldIndex(rec.Schema(), col)
			}
			vals := make([]arrow.Array, len(set))
			for k := range set {
				vals[k] = rec.Column(at[k])
			}
			for row := range int(rec.NumRows()) {
				if k, ok := rowKeyOf(vals, row); !ok || !bad(k) {
					continue
				}
				n++
				if len(keys) < relationshipExamples {
					keys = append(keys, setKey(rec, cols, at, len(set), row))
				}
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil {
			return 0, nil, fmt.Errorf("read staged file %s: %w", f.Path, err)
		}
	}
	return n, keys, nil
}

// setKey names a row by its grain, then the values of the set judged:
// order_id="o9" (email="a@b").
func setKey(rec arrow.RecordBatch, cols []parquetio.Column, at []int, set, row int) string {
	var vals, grain []string
	for k, col := range cols {
		s := col.Name + "=" + verify.FormatValue(rec.Column(at[k]), row)
		if k < set {
			vals = append(vals, s)
		} else {
			grain = append(grain, s)
		}
	}
	if len(grain) == 0 {
		return strings.Join(vals, ", ")
	}
	return strings.Join(grain, ", ") + " (" + strings.Join(vals, ", ") + ")"
}

// comparable says whether values of two types compare as a relationship
// compares them: of one type, or both integers.
func comparable(a, b iceberg.Type) bool {
	integer := func(t iceberg.Type) bool {
		switch t.(type) {
		case iceberg.Int32Type, iceberg.Int64Type:
			return true
		}
		return false
	}
	return a.Equals(b) || integer(a) && integer(b)
}
