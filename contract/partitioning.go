package contract

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
)

// Partitioning is a table's partition spec as a run sees it: one
// Partitioner per field, in the spec's order. A partition's value is the
// tuple of its fields' values: for one field, that field's value as it
// always was (2026-01-31); for several, each field's value joined with '/'
// ("2026-01-31/eu"), a '/' or '%' inside a value written %2F or %25.
type Partitioning struct {
	Fields []Partitioner
	// Name names the source columns, joined with ',' (order_date; event_ts,region).
	Name string
	ids  []int // the spec's partition field ids
	// void are the ids of the fields a format-v1 table dropped from its
	// spec: they stay in it, always null, and partition nothing.
	void []int
}

// NewPartitioning joins the fields of a spec; ids are their partition
// field ids.
func NewPartitioning(fields []Partitioner, ids []int) Partitioning {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return Partitioning{Fields: fields, Name: strings.Join(names, ","), ids: ids}
}

// Single is the partitioning of one field.
func Single(p Partitioner) Partitioning { return NewPartitioning([]Partitioner{p}, []int{0}) }

// One reports whether there is exactly one field.
func (p Partitioning) One() bool { return len(p.Fields) == 1 }

var (
	escapeParts   = strings.NewReplacer("%", "%25", "/", "%2F")
	unescapeParts = strings.NewReplacer("%2F", "/", "%25", "%")
)

// Join makes a partition value from its fields' values.
func (p Partitioning) Join(parts []string) string {
	if p.One() {
		return parts[0]
	}
	esc := make([]string, len(parts))
	for i, s := range parts {
		esc[i] = escapeParts.Replace(s)
	}
	return strings.Join(esc, "/")
}

// Split gives a partition value's fields' values; ok is false for a text
// that is not a tuple of this partitioning.
func (p Partitioning) Split(value string) ([]string, bool) {
	return SplitTuple(value, len(p.Fields))
}

// SplitTuple gives the n fields' values of a partition value.
func SplitTuple(value string, n int) ([]string, bool) {
	if n == 1 {
		return []string{value}, true
	}
	parts := strings.Split(value, "/")
	if len(parts) != n {
		return nil, false
	}
	for i, s := range parts {
		parts[i] = unescapeParts.Replace(s)
	}
	return parts, true
}

// EarlierSpec stands, where files are grouped by partition value, for the
// files written under an earlier partition spec, which have no value in
// the current one. No partition's value can be it (it is not UTF-8).
const EarlierSpec = "\xffearlier-spec"

// Key is how a partition is named in messages and snapshot summaries:
// column=value, or for several fields column=value/column=value.
func (p Partitioning) Key(value string) string {
	if value == EarlierSpec {
		return "(files of an earlier partition spec)"
	}
	parts, ok := p.Split(value)
	if !ok {
		return p.Name + "=" + value
	}
	keys := make([]string, len(parts))
	for i, s := range parts {
		keys[i] = p.Fields[i].Key(s)
	}
	return strings.Join(keys, "/")
}

// Segments are the folder names of a partition, outermost first, as
// (name, value) before escaping: order_date=2026-01-31; for several fields,
// one folder each, as Hive and Iceberg lay them out.
func (p Partitioning) Segments(value string) [][2]string {
	parts, ok := p.Split(value)
	if !ok {
		parts = []string{value}
	}
	out := make([][2]string, len(parts))
	for i, s := range parts {
		out[i] = [2]string{p.Fields[min(i, len(p.Fields)-1)].Folder(), s}
	}
	return out
}

// ParseValue checks each field's value of a partition as the field's
// Partitioner does.
func (p Partitioning) ParseValue(value string) error {
	parts, ok := p.Split(value)
	if !ok {
		return fmt.Errorf("partition %q is not a value of each of %s", value, p.Name)
	}
	for i, s := range parts {
		if err := p.Fields[i].ParseValue(s); err != nil {
			return err
		}
	}
	return nil
}

// ValueFunc returns a function giving each row's partition value; cols are
// a batch's columns in the contract's order. ok is false for a row with no
// value in some field (a null).
func (p Partitioning) ValueFunc(cols []arrow.Array) (func(row int) (string, bool), error) {
	funcs := make([]func(int) (string, bool), len(p.Fields))
	for i, f := range p.Fields {
		var err error
		if funcs[i], err = f.ValueFunc(cols[f.Column]); err != nil {
			return nil, err
		}
	}
	if p.One() {
		return funcs[0], nil
	}
	parts := make([]string, len(funcs))
	last, lastValue := make([]string, len(funcs)), ""
	return func(row int) (string, bool) {
		same := lastValue != ""
		for i, f := range funcs {
			v, ok := f(row)
			if !ok {
				return "", false
			}
			parts[i] = v
			same = same && v == last[i]
		}
		if same {
			return lastValue, true
		}
		copy(last, parts)
		lastValue = p.Join(parts)
		return lastValue, true
	}, nil
}

// Columns are the partition's source columns.
func (p Partitioning) Columns() []int {
	out := make([]int, len(p.Fields))
	for i, f := range p.Fields {
		out[i] = f.Column
	}
	return out
}

// InGrain reports whether every source column is part of grain, so that a
// record cannot move between partitions without changing its key.
func (p Partitioning) InGrain(grain []int) bool {
	for _, f := range p.Fields {
		if !slices.Contains(grain, f.Column) {
			return false
		}
	}
	return true
}

// Span is RawSpan for a one-field partitioning: the raw values of column
// col that map to value.
func (p Partitioning) Span(schema *arrow.Schema, value string) (col int, lo, hi int64, ok bool) {
	if !p.One() {
		return 0, 0, 0, false
	}
	f := p.Fields[0]
	lo, hi, ok = f.RawSpan(schema.Field(f.Column).Type, value)
	return f.Column, lo, hi, ok
}

// Compare orders two values as the partitions they name: as numbers for
// an integer field (9 before 10), as text otherwise (dates, months and
// strings sort as their text does).
func (p Partitioning) Compare(a, b string) int {
	if p.Integers() {
		x, errx := strconv.ParseInt(a, 10, 64)
		y, erry := strconv.ParseInt(b, 10, 64)
		if errx == nil && erry == nil {
			return cmp.Compare(x, y)
		}
	}
	return strings.Compare(a, b)
}

// Integers reports whether the values are whole numbers (one field).
func (p Partitioning) Integers() bool { return p.One() && p.Fields[0].Integers() }

// Raw is a partition's value as a data file records it: each field's,
// by partition field id.
func (p Partitioning) Raw(value string) (map[int]any, error) {
	parts, ok := p.Split(value)
	if !ok {
		return nil, fmt.Errorf("partition %q is not a value of each of %s", value, p.Name)
	}
	out := make(map[int]any, len(parts)+len(p.void))
	for _, id := range p.void {
		out[id] = nil
	}
	for i, s := range parts {
		if s == NullPartition {
			out[p.ids[i]] = nil
			continue
		}
		v, err := p.Fields[i].Raw(s)
		if err != nil {
			return nil, err
		}
		out[p.ids[i]] = v
	}
	return out, nil
}

// Of gives a data file's partition value from what its manifest records.
func (p Partitioning) Of(df iceberg.DataFile) string {
	rec := df.Partition()
	parts := make([]string, len(p.Fields))
	for i, f := range p.Fields {
		v := rec[p.ids[i]]
		switch {
		case v == nil:
			parts[i] = NullPartition
		case f.generic():
			parts[i] = f.human(v)
		case f.Transform == "year":
			// Four digits, as the calendar names a year and as Iceberg
			// Java writes it (iceberg-go writes year 1 as "1").
			if y, ok := v.(int32); ok {
				parts[i] = fmt.Sprintf("%04d", 1970+int(y))
				continue
			}
			parts[i] = f.tr.ToHumanStrType(f.Type, v)
		default:
			parts[i] = f.tr.ToHumanStrType(f.Type, v)
		}
	}
	return p.Join(parts)
}

// LogicalTypes are the Avro logical types of the partition values in a
// manifest, by field id: a data file described by hand states them as
// iceberg-go's own description would.
func (p Partitioning) LogicalTypes() map[int]string {
	out := map[int]string{}
	for i, f := range p.Fields {
		switch f.tr.ResultType(f.Type).(type) {
		case iceberg.DateType:
			out[p.ids[i]] = "date"
		case iceberg.TimeType:
			out[p.ids[i]] = "time-micros"
		case iceberg.TimestampType, iceberg.TimestampTzType:
			out[p.ids[i]] = "timestamp-micros"
		case iceberg.DecimalType:
			out[p.ids[i]] = "decimal"
		}
	}
	return out
}

// Transforms names each field's transform, joined with ','.
func (p Partitioning) Transforms() string {
	out := make([]string, len(p.Fields))
	for i, f := range p.Fields {
		out[i] = f.Transform
	}
	return strings.Join(out, ",")
}
