package contract

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
)

// The kinds of column check a table declares, each written KIND or
// KIND:ARG in lakeswap.check.<column>, several joined by ';'.
const (
	// CheckNotNull refuses a null.
	CheckNotNull Check = "not-null"
	// checkAccepted (accepted:web|store|app) refuses a value not listed.
	checkAccepted = "accepted"
	// checkRange (range:0..1000000, either end open) refuses a value
	// outside the range, ends included.
	checkRange = "range"
	// checkMaxNull (max-null-fraction:0.01) refuses a partition whose
	// share of nulls in the column is larger.
	checkMaxNull = "max-null-fraction"
	// CheckUnique refuses a value a partition holds twice (nulls aside);
	// unique:COL,... a set of the column and others; unique-table and
	// unique-table:COL,... across the table.
	CheckUnique      Check = "unique"
	checkUniqueTable       = "unique-table"
	// CheckRelationship (relationship:retail.customers(customer_id))
	// refuses a value the other table's column does not hold.
	CheckRelationship = "relationship"
)

// checkKinds are the kinds a message lists.
const checkKinds = "non-negative, not-null, unique[:COL,...], unique-table[:COL,...], accepted:A|B|..., range:LO..HI, max-null-fraction:F, relationship:NS.TABLE(COLUMN), each may be warn:KIND"

// Rule is a column check as it is applied.
type Rule struct {
	Check Check  // as written
	Kind  string // non-negative, not-null, accepted, range, max-null-fraction
	// Accepted holds the values an accepted check lists, each as the
	// column's values are written (ValueStr of its Arrow type).
	Accepted map[string]bool
	// Lo and Hi bound a range check, as big.Rat of the column's values
	// (days since 1970 for a date, microseconds for a timestamp); nil is
	// an open end.
	Lo, Hi *big.Rat
	// Fraction is a max-null-fraction check's largest share of nulls.
	Fraction float64
	// With are the other columns a unique check's set holds (their
	// indices WithIdx, once the contract knows them); TableWide says it
	// is judged across the table, not within each partition.
	With      []string
	WithIdx   []int
	TableWide bool
	// Table and Column are the column a relationship check's values
	// must be found in: NAMESPACE.TABLE and COLUMN.
	Table, Column string
	// Warn says a value the check refuses is a warning the run prints
	// and records, not a refusal (warn:range:0..100).
	Warn bool
}

// SplitChecks reads a lakeswap.check.<column> property: checks joined by
// ';' (or, for bare kinds only, by ',' as earlier versions wrote them).
func SplitChecks(v string) []Check {
	sep := ";"
	if !strings.Contains(v, ";") && !strings.Contains(v, ":") {
		sep = ","
	}
	var out []Check
	for _, p := range strings.Split(v, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, Check(p))
		}
	}
	return out
}

// JoinChecks writes checks as the property holds them.
func JoinChecks(cs []string) string { return strings.Join(cs, ";") }

// ParseRule reads a check on a column of type typ, refusing one that
// cannot apply to it or whose argument its values cannot take.
func ParseRule(ch Check, typ iceberg.Type) (Rule, error) {
	body, warn := strings.CutPrefix(string(ch), "warn:")
	kind, arg, hasArg := strings.Cut(body, ":")
	r := Rule{Check: ch, Kind: kind, Warn: warn}
	switch kind {
	case string(CheckUnique), checkUniqueTable:
		r.Kind, r.TableWide = string(CheckUnique), kind == checkUniqueTable
		if hasArg {
			for _, col := range strings.Split(arg, ",") {
				if col = strings.TrimSpace(col); col == "" {
					return r, fmt.Errorf("check %s: want %s:COL,COL (the other columns of the set)", ch, kind)
				}
				r.With = append(r.With, col)
			}
		}
		switch typ.(type) {
		case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType:
			return r, fmt.Errorf("check %s applies to a column of single values, not %s", kind, typ)
		}
	case string(CheckNonNegative), string(CheckNotNull):
		if hasArg {
			return r, fmt.Errorf("check %s takes no argument", kind)
		}
	case checkAccepted:
		if arg == "" {
			return r, errors.New("check accepted lists the values: accepted:web|store|app")
		}
		r.Accepted = map[string]bool{}
		for _, v := range strings.Split(arg, "|") {
			w, err := canonical(v, typ)
			if err != nil {
				return r, fmt.Errorf("check %s: value %q: %w", ch, v, err)
			}
			r.Accepted[w] = true
		}
	case checkRange:
		lo, hi, ok := strings.Cut(arg, "..")
		if !ok || lo == "" && hi == "" {
			return r, fmt.Errorf("check %s: want range:LO..HI (ends included, either may be left out)", ch)
		}
		var err error
		if r.Lo, err = rangeEnd(lo, typ); err != nil {
			return r, fmt.Errorf("check %s: %w", ch, err)
		}
		if r.Hi, err = rangeEnd(hi, typ); err != nil {
			return r, fmt.Errorf("check %s: %w", ch, err)
		}
		if r.Lo != nil && r.Hi != nil && r.Lo.Cmp(r.Hi) > 0 {
			return r, fmt.Errorf("check %s: the range is empty (%s is above %s)", ch, lo, hi)
		}
	case CheckRelationship:
		m := relationshipArg.FindStringSubmatch(arg)
		if m == nil {
			return r, fmt.Errorf("check %s: want relationship:NAMESPACE.TABLE(COLUMN), a top-level column, e.g. relationship:retail.customers(customer_id)", ch)
		}
		r.Table, r.Column = m[1], m[2]
		switch typ.(type) {
		case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType:
			return r, fmt.Errorf("check %s applies to a column of single values, not %s", kind, typ)
		}
	case checkMaxNull:
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			return r, fmt.Errorf("check %s: want a share of nulls from 0 to 1, e.g. max-null-fraction:0.01", ch)
		}
		r.Fraction = f
	default:
		return r, fmt.Errorf("unknown check %q (known: %s)", ch, checkKinds)
	}
	if kind == checkRange {
		if _, ok := orderedKind(typ); !ok {
			return r, fmt.Errorf("check %s applies to numbers, dates and timestamps, not %s", kind, typ)
		}
	}
	return r, nil
}

// relationshipArg is a relationship check's argument: a table, namespace
// first, and a column in parentheses.
var relationshipArg = regexp.MustCompile(`^([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)+)\(([^().]+)\)$`)

// orderedKind says how a range compares a type's values.
func orderedKind(typ iceberg.Type) (string, bool) {
	switch typ.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type, iceberg.DecimalType:
		return "number", true
	case iceberg.DateType:
		return "date", true
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return "timestamp", true
	}
	return "", false
}

// rangeEnd reads an end of a range as the column's values compare.
func rangeEnd(s string, typ iceberg.Type) (*big.Rat, error) {
	if s == "" {
		return nil, nil
	}
	kind, _ := orderedKind(typ)
	switch kind {
	case "date":
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, fmt.Errorf("%q is no date (YYYY-MM-DD)", s)
		}
		return new(big.Rat).SetInt64(d.Unix() / 86400), nil
	case "timestamp":
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			if ts, err = time.Parse("2006-01-02T15:04:05.999999", s); err != nil {
				return nil, fmt.Errorf("%q is no timestamp (2026-01-31T05:00:00, or with its zone)", s)
			}
		}
		return new(big.Rat).SetInt64(ts.UnixMicro()), nil
	}
	v, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "/eE") {
		return nil, fmt.Errorf("%q is no number", s)
	}
	return v, nil
}

// canonical writes an accepted value as the column's values are written
// (Arrow's ValueStr), so that a row's value is looked up as it is.
func canonical(v string, typ iceberg.Type) (string, error) {
	switch typ.(type) {
	case iceberg.StringType:
		return v, nil
	case iceberg.Int32Type, iceberg.Int64Type:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", errors.New("not an integer")
		}
		return strconv.FormatInt(n, 10), nil
	case iceberg.BooleanType:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", errors.New("not true or false")
		}
		return strconv.FormatBool(b), nil
	case iceberg.DateType:
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return "", errors.New("not a date (YYYY-MM-DD)")
		}
		return d.Format(time.DateOnly), nil
	}
	return "", fmt.Errorf("check accepted applies to string, int, long, boolean and date columns, not %s", typ)
}
