package stats

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/verify"
)

// Problem is one figure recorded wrong for a column: the finding, and the
// column whose recorded figures need correcting.
type Problem struct {
	verify.Finding
	File    string // the data file's path
	FieldID int
	// Footer says the problem is in the Parquet file's own statistics,
	// which no manifest can correct; Unread that the file could not be
	// read, so nothing of it was checked.
	Footer, Unread bool
}

func problem(path, where string, c *Column, msg string, args ...any) Problem {
	return Problem{File: path, FieldID: c.ID, Finding: verify.Finding{Kind: verify.KindStatistics, Where: where, Column: c.Name, Message: fmt.Sprintf(msg, args...)}}
}

// CheckFile checks a data file's manifest entry against the file's rows:
// its record count, and each column's value, null and NaN counts and
// bounds. A bound that is looser than the values (a truncated string's) is
// right; one that leaves a value out is a Problem, saying what a filtered
// query would miss.
func CheckFile(df iceberg.DataFile, f *File) []Problem {
	var out []Problem
	path := df.FilePath()
	if df.Count() != f.Rows {
		out = append(out, Problem{File: path, Finding: verify.Finding{Kind: verify.KindStatistics, Where: path,
			Message: fmt.Sprintf("the manifest records %d rows, the file holds %d", df.Count(), f.Rows)}})
	}
	lower, upper := df.LowerBoundValues(), df.UpperBoundValues()
	values, nulls, nans := df.ValueCounts(), df.NullValueCounts(), df.NaNValueCounts()
	for _, id := range sortedIDs(f.Columns) {
		c := f.Columns[id]
		if n, ok := values[id]; ok && n != c.Values {
			out = append(out, problem(path, path, c, "value count %d, but the file holds %d values (nulls included)", n, c.Values))
		}
		if n, ok := nulls[id]; ok && n != c.Nulls {
			miss := ""
			switch {
			case n < c.Nulls && n == 0:
				miss = fmt.Sprintf(": a filter %s IS NULL skips this file and misses them", c.Name)
			case n == values[id] && c.Nulls < c.Values:
				miss = fmt.Sprintf(": the manifest says every value is null, so a filter on a value of %s skips this file", c.Name)
			}
			out = append(out, problem(path, path, c, "null count %d, but the file holds %s%s", n, words.Count(c.Nulls, "null"), miss))
		}
		if n, ok := nans[id]; ok && n != c.NaNs {
			miss := ""
			if n == 0 {
				miss = fmt.Sprintf(": a filter %s IS NAN skips this file and misses them", c.Name)
			}
			out = append(out, problem(path, path, c, "NaN count %d, but the file holds %s%s", n, words.Count(c.NaNs, "NaN"), miss))
		}
		if c.Min == nil {
			continue // no value a bound could leave out
		}
		if b, ok := lower[id]; ok {
			if lo, ok := fromBound(c.Type, b); ok && !isNaN(lo) && compare(lo, c.Min) > 0 {
				out = append(out, problem(path, path, c, "lower bound %s, but the file holds %s: a filter %s = %s (or < %s) skips this file and misses those rows",
					display(c.Type, lo), display(c.Type, c.Min), c.Name, display(c.Type, c.Min), display(c.Type, lo)))
			}
		}
		if b, ok := upper[id]; ok {
			if hi, ok := fromBound(c.Type, b); ok && !isNaN(hi) && compare(hi, c.Max) < 0 {
				out = append(out, problem(path, path, c, "upper bound %s, but the file holds %s: a filter %s = %s (or > %s) skips this file and misses those rows",
					display(c.Type, hi), display(c.Type, c.Max), c.Name, display(c.Type, c.Max), display(c.Type, hi)))
			}
		}
	}
	return out
}

// CheckFooter checks each row group's Parquet statistics against its rows,
// as DuckDB, Spark and Trino skip row groups by them.
func CheckFooter(f *File) []Problem {
	var out []Problem
	for g, grp := range f.Groups {
		for _, gc := range grp.Columns {
			c := gc.Col
			where := fmt.Sprintf("%s row group %d", f.Path, g)
			footer := func(msg string, args ...any) {
				p := problem(f.Path, where, c, msg, args...)
				p.Footer = true
				out = append(out, p)
			}
			if gc.HasNulls && gc.RecNulls != gc.Nulls {
				footer("the Parquet footer counts %d nulls, the row group holds %d", gc.RecNulls, gc.Nulls)
			}
			if !gc.HasMinMax || gc.Min == nil {
				continue
			}
			// Parquet readers compare -0.0 and 0.0 as equal.
			if compare(gc.RecMin, gc.Min) > 0 && !bothZero(gc.RecMin, gc.Min) {
				footer("the Parquet footer's min is %s, but the row group holds %s: a reader filtering %s = %s skips it",
					raw(c.Type, gc.RecMin), raw(c.Type, gc.Min), c.Name, raw(c.Type, gc.Min))
			}
			if compare(gc.RecMax, gc.Max) < 0 && !bothZero(gc.RecMax, gc.Max) {
				footer("the Parquet footer's max is %s, but the row group holds %s: a reader filtering %s = %s skips it",
					raw(c.Type, gc.RecMax), raw(c.Type, gc.Max), c.Name, raw(c.Type, gc.Max))
			}
		}
	}
	return out
}

func bothZero(a, b value) bool {
	x, ok1 := a.(float64)
	y, ok2 := b.(float64)
	return ok1 && ok2 && x == 0 && y == 0
}

// raw shows a value in a file's own units: a timestamp's as the number
// stored, anything else as display does.
func raw(typ iceberg.Type, v value) string {
	switch typ.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType, iceberg.TimeType:
		return fmt.Sprint(v)
	}
	return display(typ, v)
}

func sortedIDs(m map[int]*Column) []int { return slices.Sorted(maps.Keys(m)) }
