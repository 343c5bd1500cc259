package contract

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Selection is the partitions a run declares: for each field, the values
// its selector names, or, for a field no selector names, every value of
// it, as Spark's dynamic overwrite replaces every region of the days it
// writes.
type Selection struct {
	p     Partitioning
	named []map[string]bool // per field; nil for a field not named
	exact map[string]bool   // Values, when known
	// Values are the declared partitions, in order, when every field is
	// named; a selection with a field not named has them once the input
	// and the table are read (Resolve).
	Values []string
	text   string
}

// ParseSelectors reads the partition selectors given on the command line,
// one per field named: "event_ts=2026-01-01..2026-01-31", "region=eu,us".
// A table of one field takes exactly one.
func (p Partitioning) ParseSelectors(sels []string) (Selection, error) {
	s := Selection{p: p, named: make([]map[string]bool, len(p.Fields)), text: strings.Join(sels, " ")}
	if p.One() {
		if len(sels) != 1 {
			return s, fmt.Errorf("the table is partitioned by %s alone: give one selector (%s)", p.Name, p.Fields[0].Form())
		}
		values, err := p.Fields[0].ParseSelector(sels[0])
		if err != nil {
			return s, err
		}
		s.Values, s.exact = values, set(values)
		return s, nil
	}
	if len(sels) == 0 {
		return s, fmt.Errorf("the table is partitioned by %s: name the partitions of one field or more, e.g. --partitions %s", p.Name, p.Fields[0].Name+"=...")
	}
	perField := make([][]string, len(p.Fields))
	for _, sel := range sels {
		col, _, _ := strings.Cut(sel, "=")
		i := slices.IndexFunc(p.Fields, func(f Partitioner) bool { return f.Names(col) })
		if i < 0 {
			return s, fmt.Errorf("partition selector %q names column %q, but the table is partitioned by %s", sel, col, p.Name)
		}
		if perField[i] != nil {
			return s, fmt.Errorf("partition selectors name %s twice; give its values in one selector", col)
		}
		values, err := p.Fields[i].ParseSelector(sel)
		if err != nil {
			return s, err
		}
		perField[i], s.named[i] = values, set(values)
	}
	if !slices.ContainsFunc(perField, func(v []string) bool { return v == nil }) {
		n := 1
		for _, v := range perField {
			if n *= len(v); n > maxRange {
				return s, fmt.Errorf("partition selectors name more than %d partitions; split the backfill into several runs", maxRange)
			}
		}
		s.Values = product(p, perField)
		s.exact = set(s.Values)
	}
	return s, nil
}

func set(values []string) map[string]bool {
	m := make(map[string]bool, len(values))
	for _, v := range values {
		m[v] = true
	}
	return m
}

// product is every tuple of the fields' values, in order.
func product(p Partitioning, perField [][]string) []string {
	tuples := [][]string{nil}
	for _, values := range perField {
		var next [][]string
		for _, prefix := range tuples {
			for _, v := range values {
				next = append(next, append(slices.Clone(prefix), v))
			}
		}
		tuples = next
	}
	out := make([]string, len(tuples))
	for i, t := range tuples {
		out[i] = p.Join(t)
	}
	slices.Sort(out)
	return out
}

// FirstNamed is the first field of the spec the selectors name, by its
// index in the partitioning, and the values they name of it, sorted.
func (s Selection) FirstNamed() (int, []string) {
	if s.p.One() {
		return 0, s.Values
	}
	for i, named := range s.named {
		if named != nil {
			return i, slices.Sorted(maps.Keys(named))
		}
	}
	return 0, nil
}

// Named is, for each field of the spec, the values the selectors name of
// it; nil for a field not named.
func (s Selection) Named() []map[string]bool { return s.named }

// Open reports whether a field is not named, so that the declared
// partitions are known only once the input and the table are read.
func (s Selection) Open() bool { return s.exact == nil }

// Owns reports whether the run declares partition value.
func (s Selection) Owns(value string) bool {
	if s.exact != nil {
		return s.exact[value]
	}
	parts, ok := s.p.Split(value)
	if !ok {
		return false
	}
	for i, v := range parts {
		if v == NullPartition || (s.named[i] != nil && !s.named[i][v]) {
			return false
		}
	}
	return true
}

// Resolve gives the partitions the selection matches that the input
// (seen) or the table (held) has.
func (s Selection) Resolve(seen, held []string) []string {
	var out []string
	for _, v := range slices.Concat(seen, held) {
		if s.Owns(v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// String is the selectors as given.
func (s Selection) String() string { return s.text }

// Declared is a selection of exactly these partitions (a plan's, a
// batch's, a job's).
func (p Partitioning) Declared(values []string) Selection {
	return Selection{p: p, Values: slices.Clone(values), exact: set(values), text: strings.Join(values, ",")}
}

// Every is a selection of every partition: what a fixture of rows may
// hold before the partitions it names are known.
func (p Partitioning) Every() Selection {
	return Selection{p: p, named: make([]map[string]bool, len(p.Fields)), text: "every partition"}
}
