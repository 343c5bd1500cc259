package contract

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Check names a column rule a table declares in its lakeswap.check.<column>
// property.
type Check string

// CheckNonNegative refuses a value below zero.
const CheckNonNegative Check = "non-negative"

// Contract is what a table promises about every partition it holds: the
// column layout, the grain (unique, never null), the additive columns whose
// sums are recorded, the column checks, and how a row maps to its partition.
// It is read from the table's metadata by Of.
type Contract struct {
	Schema   *iceberg.Schema
	Fields   []iceberg.NestedField
	Arrow    *arrow.Schema // the staged files' schema, with Iceberg field ids
	Grain    []int         // column indices
	Additive []int         // column indices
	Checks   map[int][]Check
	// Rules are the checks as they are applied, by column index.
	Rules     map[int][]Rule
	Partition Partitioning
	// SpecID is the partition spec's id.
	SpecID int
	// DeltaIntegers says whether the table stores near-unique integers as
	// deltas (PropDeltaIntegers).
	DeltaIntegers bool
	// Band is how far a run may move a partition's rows and sums
	// (PropPlausibleBand).
	Band Band
	// Freeze is when partitions freeze (PropFreezeAfter), or nil.
	Freeze *Freeze
	// Assertions are the table's SQL assertions over a run's staged rows
	// (PropAssertPrefix), by name.
	Assertions []Assertion
}

// NewContract builds a Contract over sc partitioned by one field. grain,
// additive and the keys of checks are column names.
func NewContract(sc *iceberg.Schema, grain, additive []string, checks map[string][]Check, part Partitioner) (*Contract, error) {
	return newContract(sc, grain, additive, checks, Single(part))
}

func newContract(sc *iceberg.Schema, grain, additive []string, checks map[string][]Check, part Partitioning) (*Contract, error) {
	arr, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("arrow schema of table: %w", err)
	}
	c := &Contract{Schema: sc, Fields: sc.Fields(), Arrow: arr, Checks: map[int][]Check{}, Rules: map[int][]Rule{}, Partition: part}
	for _, f := range sc.Fields() {
		if t, ok := unheld(f.Type); ok {
			return nil, fmt.Errorf("column %s holds type %s, which lakeswap cannot validate or fingerprint yet; a table with it cannot be backfilled by lakeswap", f.Name, t)
		}
	}
	index := func(name, role string) (int, error) {
		idx := slices.IndexFunc(sc.Fields(), func(f iceberg.NestedField) bool { return f.Name == name })
		if idx < 0 {
			return 0, fmt.Errorf("%s column %q is not in the table schema", role, name)
		}
		return idx, nil
	}
	for _, g := range grain {
		i, err := index(g, "grain")
		if err != nil {
			return nil, err
		}
		if isNested(sc.Field(i).Type) {
			return nil, fmt.Errorf("grain column %q is a %s; a grain is made of primitive columns (a struct's field cannot be named yet)", g, sc.Field(i).Type)
		}
		c.Grain = append(c.Grain, i)
	}
	for _, a := range additive {
		i, err := index(a, "additive")
		if err != nil {
			return nil, err
		}
		switch sc.Field(i).Type.(type) {
		case iceberg.Int32Type, iceberg.Int64Type, iceberg.DecimalType:
		default:
			return nil, fmt.Errorf("additive column %q is %s; only int, long and decimal columns can be summed exactly", a, sc.Field(i).Type)
		}
		c.Additive = append(c.Additive, i)
	}
	for col, cs := range checks {
		i, err := index(col, "checked")
		if err != nil {
			return nil, err
		}
		for _, ch := range cs {
			r, err := ParseRule(ch, sc.Field(i).Type)
			if err != nil {
				return nil, fmt.Errorf("column %q: %w", col, err)
			}
			for _, name := range r.With {
				j, err := index(name, "set")
				if err != nil {
					return nil, fmt.Errorf("column %q: check %s: %w", col, ch, err)
				}
				if j == i {
					return nil, fmt.Errorf("column %q: check %s names the column itself", col, ch)
				}
				r.WithIdx = append(r.WithIdx, j)
			}
			c.Rules[i] = append(c.Rules[i], r)
		}
		c.Checks[i] = cs
	}
	for _, f := range part.Fields {
		if f.Column < 0 || f.Column >= len(sc.Fields()) {
			return nil, fmt.Errorf("partition column index %d out of range", f.Column)
		}
	}
	return c, nil
}

// ColumnName returns the name of column i.
func (c *Contract) ColumnName(i int) string { return c.Fields[i].Name }

// Partitioner maps a row to the human-readable value of its partition, the
// form people write on the command line: 2026-01-01 for a day, 2026-01 for a
// month, a bucket's number, the value itself for identity and truncate.
type Partitioner struct {
	Column    int    // index of the source column
	Name      string // the source column's name, used in messages
	Field     string // the partition field's name (ts_day), where the table's spec gives one
	Transform string // as Iceberg writes it: identity, year, month, day, hour, bucket[N], truncate[W]
	Type      iceberg.Type
	tr        iceberg.Transform
}

// NewPartitioner checks that transform can be applied to a column of type typ.
func NewPartitioner(column int, name string, typ iceberg.Type, transform string) (Partitioner, error) {
	tr, err := iceberg.ParseTransform(transform)
	if err != nil {
		return Partitioner{}, fmt.Errorf("partition transform %q is not supported (identity, year, month, day, hour, bucket[N], truncate[W])", transform)
	}
	p := Partitioner{Column: column, Name: name, Transform: tr.String(), Type: typ, tr: tr}
	switch tr.(type) {
	case iceberg.IdentityTransform:
		switch typ.(type) {
		case iceberg.DateType, iceberg.StringType, iceberg.Int32Type, iceberg.Int64Type,
			iceberg.BooleanType, iceberg.Float32Type, iceberg.Float64Type, iceberg.DecimalType,
			iceberg.TimeType, iceberg.TimestampType, iceberg.TimestampTzType, iceberg.BinaryType,
			iceberg.UUIDType, iceberg.FixedType:
			return p, nil
		}
	case iceberg.YearTransform, iceberg.MonthTransform, iceberg.DayTransform:
		switch typ.(type) {
		case iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			return p, nil
		}
	case iceberg.HourTransform:
		switch typ.(type) {
		case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			return p, nil
		}
	case iceberg.BucketTransform:
		switch typ.(type) {
		case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimeType, iceberg.TimestampType,
			iceberg.TimestampTzType, iceberg.DecimalType, iceberg.StringType, iceberg.BinaryType,
			iceberg.UUIDType, iceberg.FixedType:
			return p, nil
		}
	case iceberg.TruncateTransform:
		switch typ.(type) {
		case iceberg.Int32Type, iceberg.Int64Type, iceberg.StringType, iceberg.BinaryType, iceberg.DecimalType:
			return p, nil
		}
	default:
		return p, fmt.Errorf("partition transform %q is not supported (identity, year, month, day, hour, bucket[N], truncate[W])", transform)
	}
	return p, fmt.Errorf("partition transform %s cannot apply to column %s of type %s", p.Transform, name, typ)
}

// ValueFunc returns a function giving the partition value of each row of arr,
// which must be the partition column of a batch. ok is false for a null.
func (p Partitioner) ValueFunc(arr arrow.Array) (func(row int) (string, bool), error) {
	layout, _ := p.calendar()
	format := func(t time.Time) string { return t.Format(layout) }
	var val func(row int) string
	if p.generic() {
		var err error
		if val, err = p.genericValueFunc(arr); err != nil {
			return nil, err
		}
		return func(row int) (string, bool) {
			if arr.IsNull(row) {
				return "", false
			}
			return val(row), true
		}, nil
	}
	switch a := arr.(type) {
	case *array.Date32:
		val = memo(func(row int) int64 { return int64(a.Value(row)) }, func(v int64) string { return format(arrow.Date32(v).ToTime()) })
	case *array.Timestamp:
		toTime, err := a.DataType().(*arrow.TimestampType).GetToTimeFunc()
		if err != nil {
			return nil, err
		}
		// Whole days (hours for hour partitions) since the epoch, floored.
		per := int64(86400)
		if p.Transform == "hour" {
			per = 3600
		}
		step := func(row int) int64 {
			sec := toTime(a.Value(row)).Unix()
			d := sec / per
			if sec%per < 0 {
				d--
			}
			return d
		}
		val = memo(step, func(d int64) string { return format(time.Unix(d*per, 0).UTC()) })
	case *array.String:
		val = a.Value
	case *array.Int32:
		val = memo(func(row int) int64 { return int64(a.Value(row)) }, func(v int64) string { return strconv.FormatInt(v, 10) })
	case *array.Int64:
		val = memo(a.Value, func(v int64) string { return strconv.FormatInt(v, 10) })
	default:
		return nil, fmt.Errorf("partition column %s has arrow type %s", p.Name, arr.DataType())
	}
	return func(row int) (string, bool) {
		if arr.IsNull(row) {
			return "", false
		}
		return val(row), true
	}, nil
}

// memo formats a row's raw value, reusing the last result while the raw
// value repeats, as it does for every row of a partition, and earlier
// results for rows whose partitions interleave.
func memo(raw func(row int) int64, format func(int64) string) func(row int) string {
	last, lastStr, primed := int64(0), "", false
	seen := map[int64]string{}
	return func(row int) string {
		v := raw(row)
		if primed && v == last {
			return lastStr
		}
		s, ok := seen[v]
		if !ok {
			s = format(v)
			if len(seen) < memoValues {
				seen[v] = s
			}
		}
		last, lastStr, primed = v, s, true
		return s
	}
}

// memoValues bounds the formatted values a memo keeps.
const memoValues = 4096

// calendar returns the layout of a date partition's values and the step
// from one to the next: days, or months for a month partition.
func (p Partitioner) calendar() (string, func(time.Time) time.Time) {
	switch p.Transform {
	case "year":
		return "2006", func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }
	case "month":
		return "2006-01", func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }
	case "hour":
		// Iceberg's own form of an hour partition: 2026-01-31-05.
		return "2006-01-02-15", func(t time.Time) time.Time { return t.Add(time.Hour) }
	}
	return time.DateOnly, func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }
}

// Ends is when the period a value of a date or time field names ends: the
// day after a day, the month after a month (UTC). ok is false for a field
// that names no period (a string, a number, a bucket, a timestamp as is).
func (p Partitioner) Ends(t arrow.DataType, value string) (time.Time, bool) {
	if !p.namesPeriod(t) {
		return time.Time{}, false
	}
	layout, step := p.calendar()
	start, err := time.Parse(layout, value)
	if err != nil || start.Format(layout) != value {
		return time.Time{}, false
	}
	return step(start), true
}

// namesPeriod says whether the field's values name periods of time: a
// date, or a year, month, day or hour of a date or time.
func (p Partitioner) namesPeriod(t arrow.DataType) bool {
	return !p.generic() && (t.ID() == arrow.DATE32 || t.ID() == arrow.TIMESTAMP && p.Transform != "identity")
}

// RawSpan returns the raw values [lo, hi) of a column of type t whose
// partition value is value: days since the epoch for a date, the column's
// own unit for a timestamp, the number itself for an integer. ok is false
// where there is no such span (strings) or value does not parse; ValueFunc
// is then the only judge.
func (p Partitioner) RawSpan(t arrow.DataType, value string) (lo, hi int64, ok bool) {
	if p.generic() {
		return 0, 0, false
	}
	switch t.ID() {
	case arrow.INT32, arrow.INT64:
		v, err := strconv.ParseInt(value, 10, 64)
		if p.Transform != "identity" || err != nil || v == math.MaxInt64 {
			return 0, 0, false
		}
		return v, v + 1, true
	case arrow.DATE32, arrow.TIMESTAMP:
		layout, step := p.calendar()
		start, err := time.Parse(layout, value)
		if err != nil || start.Format(layout) != value {
			return 0, 0, false
		}
		s, e := start.Unix(), step(start).Unix()
		if t.ID() == arrow.DATE32 {
			return s / 86400, e / 86400, true
		}
		if p.Transform == "identity" {
			return 0, 0, false
		}
		per := int64(time.Second / t.(*arrow.TimestampType).Unit.Multiplier()) // units a second
		if s < math.MinInt64/per || e > math.MaxInt64/per {
			return 0, 0, false
		}
		return s * per, e * per, true
	}
	return 0, 0, false
}

// Integers reports whether the partition values are whole numbers, which
// order as numbers: a bucket's, an int or long column's.
func (p Partitioner) Integers() bool {
	switch p.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		return true
	}
	return p.bucketCount() > 0
}

// Folder is the name a partition's folders go by: the partition field's,
// as Iceberg Java names them (ts_day=2026-01-02, s_trunc=AB), so that a
// reader taking values from folder names (DuckDB's hive partitioning)
// never reads a day or a prefix as the column's value. Without a field
// name: the column's, or for buckets column_bucket.
func (p Partitioner) Folder() string {
	switch {
	case p.Field != "":
		return p.Field
	case p.bucketCount() > 0:
		return p.Name + "_bucket"
	}
	return p.Name
}

// Key is how a partition is named in paths, messages and snapshot summaries:
// column=value.
func (p Partitioner) Key(value string) string {
	if value == NullPartition {
		return p.Name + " is null"
	}
	if p.bucketCount() > 0 {
		return p.Name + "=bucket:" + value
	}
	return p.Name + "=" + value
}

// isNested says whether t is a struct, list or map.
func isNested(t iceberg.Type) bool {
	switch t.(type) {
	case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType:
		return true
	}
	return false
}

// unheld returns the first type within t that lakeswap does not hold
// (variant, geometry, geography, unknown), if any.
func unheld(t iceberg.Type) (iceberg.Type, bool) {
	switch t := t.(type) {
	case *iceberg.StructType:
		for _, f := range t.FieldList {
			if u, ok := unheld(f.Type); ok {
				return u, true
			}
		}
		return nil, false
	case *iceberg.ListType:
		return unheld(t.Element)
	case *iceberg.MapType:
		if u, ok := unheld(t.KeyType); ok {
			return u, true
		}
		return unheld(t.ValueType)
	case iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type,
		iceberg.StringType, iceberg.BinaryType, iceberg.DateType, iceberg.TimeType, iceberg.TimestampType,
		iceberg.TimestampTzType, iceberg.DecimalType, iceberg.UUIDType, iceberg.FixedType,
		iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return nil, false
	}
	return t, true
}
