package contract

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
)

// maxRange bounds the partitions one range may name.
const maxRange = 100_000

// ParseValue checks that value is a partition value of this partitioner
// written as ValueFunc writes it: YYYY-MM-DD for a day, YYYY-MM for a
// month, a base-10 integer in the column's range without sign or leading
// zeros it does not need, any UTF-8 text for a string. A value that no row
// could map to would declare a partition the run can never fill.
func (p Partitioner) ParseValue(value string) error {
	if p.generic() {
		_, err := p.parseGeneric(value)
		return err
	}
	if layout, _, ok := p.dated(); ok {
		t, err := time.Parse(layout, value)
		if err != nil || t.Format(layout) != value {
			return p.want(value)
		}
		return nil
	}
	switch p.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		bits := 64
		if _, ok := p.Type.(iceberg.Int32Type); ok {
			bits = 32
		}
		v, err := strconv.ParseInt(value, 10, bits)
		if err != nil || strconv.FormatInt(v, 10) != value {
			return p.want(value)
		}
		return nil
	case iceberg.StringType:
		if !utf8.ValidString(value) {
			return fmt.Errorf("partition value %q of %s is not valid UTF-8", value, p.Name)
		}
		return nil
	}
	return fmt.Errorf("partition column %s has type %s, which lakeswap does not partition by", p.Name, p.Type)
}

// dated reports whether the partition values are calendar values, with
// their layout and the step from one to the next.
func (p Partitioner) dated() (string, func(time.Time) time.Time, bool) {
	if p.generic() {
		return "", nil, false
	}
	switch p.Type.(type) {
	case iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		layout, step := p.calendar()
		return layout, step, true
	}
	return "", nil, false
}

// Form describes the values of this partition column, for messages.
func (p Partitioner) Form() string {
	if n := p.bucketCount(); n > 0 {
		return fmt.Sprintf("%s is partitioned by %s: write buckets as bucket:B, e.g. %s=bucket:3, bucket:0..%d for all of them, or bucket:1,5", p.Name, p.Transform, p.Name, n-1)
	}
	if w := p.truncateWidth(); w > 0 {
		switch p.Type.(type) {
		case iceberg.Int32Type, iceberg.Int64Type:
			return fmt.Sprintf("%s is a %s column partitioned by %s: write a multiple of %d, e.g. %d, or a range %d..%d", p.Name, p.Type, p.Transform, w, w, 0, 3*w)
		case iceberg.DecimalType:
			return fmt.Sprintf("%s is a %s column partitioned by %s: write a value with every digit of the scale whose unscaled value is a multiple of %d", p.Name, p.Type, p.Transform, w)
		case iceberg.BinaryType:
			return fmt.Sprintf("%s is a %s column partitioned by %s: write its first %d bytes in base64", p.Name, p.Type, p.Transform, w)
		}
		return fmt.Sprintf("%s is a %s column partitioned by %s: write a value's first %d characters, e.g. the partition of ABCDEF is ABCD for 4; separate values with commas and quote one holding a comma", p.Name, p.Type, p.Transform, w)
	}
	if p.generic() {
		switch t := p.Type.(type) {
		case iceberg.BooleanType:
			return fmt.Sprintf("%s is a boolean column: write true or false", p.Name)
		case iceberg.TimestampType:
			return fmt.Sprintf("%s is a timestamp column partitioned by its value: write it as Iceberg does, e.g. 2026-01-31T05:00:00 or 2026-01-31T05:00:00.25", p.Name)
		case iceberg.TimestampTzType:
			return fmt.Sprintf("%s is a timestamptz column partitioned by its value: write it in UTC as Iceberg does, e.g. 2026-01-31T05:00:00+00:00 or 2026-01-31T05:00:00.25+00:00", p.Name)
		case iceberg.TimeType:
			return fmt.Sprintf("%s is a time column: write it as 15:04:05 or 15:04:05.25", p.Name)
		case iceberg.DecimalType:
			return fmt.Sprintf("%s is a %s column: write a value with exactly %d digits after the point, e.g. %s", p.Name, t, t.Scale(), decimalText(big.NewInt(1234), t.Scale()))
		case iceberg.Float32Type, iceberg.Float64Type:
			return fmt.Sprintf("%s is a %s column: write the shortest form of the value, e.g. 0.5, 1e+21, NaN", p.Name, t)
		case iceberg.BinaryType:
			return fmt.Sprintf("%s is a binary column: write the value in base64", p.Name)
		case iceberg.FixedType:
			return fmt.Sprintf("%s is a %s column: write the value's %d bytes in base64", p.Name, t, t.Len())
		case iceberg.UUIDType:
			return fmt.Sprintf("%s is a uuid column: write it as 8-4-4-4-12 lower-case hex digits, e.g. f79c3e09-677c-4bbd-a479-3f349cb785e7", p.Name)
		}
	}
	if layout, _, ok := p.dated(); ok {
		switch layout {
		case "2006":
			return fmt.Sprintf("%s is a %s column partitioned by %s: write a year as YYYY, e.g. 2026, or a range 2024..2026", p.Name, p.Type, p.Transform)
		case "2006-01":
			return fmt.Sprintf("%s is a %s column partitioned by %s: write a month as YYYY-MM, e.g. 2026-01, or a range 2026-01..2026-03", p.Name, p.Type, p.Transform)
		case "2006-01-02-15":
			return fmt.Sprintf("%s is a %s column partitioned by %s: write an hour as YYYY-MM-DD-HH (UTC), e.g. 2026-01-31-05, or a range 2026-01-31-00..2026-01-31-23", p.Name, p.Type, p.Transform)
		}
		return fmt.Sprintf("%s is a %s column partitioned by %s: write a date as YYYY-MM-DD, e.g. 2026-01-31, or a range 2026-01-01..2026-01-31", p.Name, p.Type, p.Transform)
	}
	switch p.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		return fmt.Sprintf("%s is an %s column: write a whole number in its range without a plus sign or leading zeros, e.g. 42, or a range 1..12", p.Name, p.Type)
	}
	return fmt.Sprintf("%s is a %s column: any text; separate values with commas and put a value holding a comma, or the empty value, in double quotes (\"a,b\", \"\")", p.Name, p.Type)
}

func (p Partitioner) want(value string) error {
	return fmt.Errorf("partition value %q does not fit: %s", value, p.Form())
}

// Range expands a closed range of partition values, both ends included:
// days, months or integers.
func (p Partitioner) Range(from, to string) ([]string, error) {
	if err := p.ParseValue(from); err != nil {
		return nil, fmt.Errorf("range start: %w", err)
	}
	if err := p.ParseValue(to); err != nil {
		return nil, fmt.Errorf("range end: %w", err)
	}
	var out []string
	if layout, step, ok := p.dated(); ok {
		start, _ := time.Parse(layout, from)
		end, _ := time.Parse(layout, to)
		if end.Before(start) {
			return nil, fmt.Errorf("range %s..%s ends before it starts", from, to)
		}
		for t := start; !t.After(end); t = step(t) {
			if len(out) == maxRange {
				return nil, fmt.Errorf("range %s..%s names more than %d partitions", from, to, maxRange)
			}
			out = append(out, t.Format(layout))
		}
		return out, nil
	}
	lo, err1 := strconv.ParseInt(from, 10, 64)
	hi, err2 := strconv.ParseInt(to, 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("range %s..%s: %s is %s, which has no ranges; list its values instead", from, to, p.Name, p.Type)
	}
	if hi < lo {
		return nil, fmt.Errorf("range %s..%s ends before it starts", from, to)
	}
	step := int64(max(1, p.truncateWidth())) // truncate[W] of an integer steps by W
	if uint64(hi-lo)/uint64(step) >= maxRange {
		return nil, fmt.Errorf("range %s..%s names more than %d partitions", from, to, maxRange)
	}
	for v := lo; ; v += step {
		out = append(out, strconv.FormatInt(v, 10))
		if hi-v < step {
			return out, nil
		}
	}
}

// Names says whether a selector's name names the field: its column's, or
// the partition field's own (ts_day, as the field's folders are named).
func (p Partitioner) Names(name string) bool {
	return name == p.Name || p.Field != "" && name == p.Field
}

// ParseSelector reads a partition selector as given on the command line:
// "order_date=2026-01-01..2026-01-31", "order_date=2026-01-01,2026-01-03",
// "n=1..12", "user_id=bucket:0..15", "region=eu,\"a,b\"". Every value is checked against the
// column's type and transform. It returns the values in order, without
// repeats.
func (p Partitioner) ParseSelector(sel string) ([]string, error) {
	col, spec, ok := strings.Cut(sel, "=")
	if !ok {
		return nil, fmt.Errorf("partition selector %q: want %s=VALUE, %s=V1,V2 or %s=FROM..TO; %s", sel, p.Name, p.Name, p.Name, p.Form())
	}
	if !p.Names(col) {
		return nil, fmt.Errorf("partition selector names column %q, but the table is partitioned by %s", col, p.Name)
	}
	if p.bucketCount() > 0 {
		var ok bool
		// The field's own name (user_id_bucket=3, as its folder says)
		// names buckets already.
		if spec, ok = strings.CutPrefix(spec, "bucket:"); !ok && (p.Field == "" || col != p.Field) {
			return nil, fmt.Errorf("partition selector %q: %s", sel, p.Form())
		}
	}
	items, err := p.splitItems(spec)
	if err != nil {
		return nil, fmt.Errorf("partition selector %q: %w", sel, err)
	}
	var values []string
	for _, it := range items {
		from, to, isRange := strings.Cut(it.text, "..")
		if isRange && !it.quoted && !p.isString() {
			r, err := p.Range(from, shortEnd(from, to))
			if err != nil {
				return nil, err
			}
			values = append(values, r...)
		} else {
			if err := p.ParseValue(it.text); err != nil {
				return nil, err
			}
			values = append(values, it.text)
		}
		if len(values) > maxRange { // counted without repeats
			slices.Sort(values)
			if values = slices.Compact(values); len(values) > maxRange {
				return nil, fmt.Errorf("partition selector names more than %d partitions; split the backfill into several runs", maxRange)
			}
		}
	}
	slices.Sort(values)
	return slices.Compact(values), nil
}

// shortEnd completes the end of a range written as history writes it,
// without what it shares with the start up to a '-': 2026-03-04..05 is
// 2026-03-04..2026-03-05, 2026-01-28..02-03 ends 2026-02-03. A leading
// minus (an integer's) is no such '-'.
func shortEnd(from, to string) string {
	cut := len(from) - len(to)
	if cut > 1 && from[cut-1] == '-' && !strings.Contains(to, "..") {
		return from[:cut] + to
	}
	return to
}

func (p Partitioner) isString() bool {
	_, ok := p.Type.(iceberg.StringType)
	return ok && p.bucketCount() == 0
}

// quotable says whether a value may be double-quoted, as in CSV: a
// string's (to hold a comma, or be empty) or a binary's (base64 holds
// neither a comma nor a quote, and "" is the empty bytes).
func (p Partitioner) quotable() bool {
	_, binary := p.Type.(iceberg.BinaryType)
	return p.isString() || binary && p.bucketCount() == 0
}

type selectorItem struct {
	text   string
	quoted bool
}

// splitItems splits a selector's list at commas. On a string or binary
// column an item may be double-quoted, as in CSV, to hold commas or be
// empty; an empty unquoted item is a mistake (a stray comma), never a
// value.
func (p Partitioner) splitItems(spec string) ([]selectorItem, error) {
	var items []selectorItem
	for rest := spec; ; {
		var it selectorItem
		if p.quotable() && strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for {
				j := strings.IndexByte(rest[i:], '"')
				if j < 0 {
					return nil, errors.New("a quoted value is not closed")
				}
				b.WriteString(rest[i : i+j])
				i += j + 1
				if strings.HasPrefix(rest[i:], `"`) { // "" is a quote
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			it = selectorItem{text: b.String(), quoted: true}
			rest = rest[i:]
			if rest != "" && rest[0] != ',' {
				return nil, errors.New("a quoted value must be followed by a comma or the end")
			}
		} else {
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			it = selectorItem{text: rest[:end]}
			rest = rest[end:]
			if it.text == "" {
				return nil, fmt.Errorf("empty value in the list (a stray comma?); %s", p.Form())
			}
		}
		items = append(items, it)
		if rest == "" {
			return items, nil
		}
		rest = rest[1:] // the comma
		if rest == "" {
			return nil, fmt.Errorf("empty value at the end of the list (a stray comma?); %s", p.Form())
		}
	}
}
