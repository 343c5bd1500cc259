package verify

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
)

// checkRule applies rule k of column i to a batch's values of it (cols:
// the batch's columns, which a unique check of a set reads too).
func (a *Accumulator) checkRule(cols []arrow.Array, i, k int, r contract.Rule, base int64) {
	col := cols[i]
	a.warn = r.Warn
	defer func() { a.warn = false }()
	switch r.Kind {
	case string(contract.CheckNonNegative):
		a.checkNonNegative(col, i, base)
	case string(contract.CheckNotNull):
		if col.NullN() == 0 {
			return
		}
		for row := range col.Len() {
			if col.IsNull(row) {
				a.finding(KindCheck, base+int64(row)+1, i, "value is null (check not-null)")
			}
		}
	case "accepted":
		for row := range col.Len() {
			if col.IsValid(row) && !r.Accepted[col.ValueStr(row)] {
				a.finding(KindCheck, base+int64(row)+1, i, "value %s is not one the column accepts (check %s)", FormatValue(col, row), r.Check)
			}
		}
	case "range":
		in := inRange(col, r)
		for row := range col.Len() {
			if col.IsValid(row) && !in(row) {
				a.finding(KindCheck, base+int64(row)+1, i, "value %s is outside the range (check %s)", FormatValue(col, row), r.Check)
			}
		}
	case string(contract.CheckUnique):
		if r.TableWide {
			return // judged across the table once the run is staged
		}
		if a.unique == nil {
			a.unique = map[[2]int]*grainSet{}
		}
		g := a.unique[[2]int{i, k}]
		if g == nil {
			g = &grainSet{}
			a.unique[[2]int{i, k}] = g
		}
		if len(r.WithIdx) > 0 {
			a.addSets(g, cols, i, r.WithIdx, base)
			return
		}
		switch c := col.(type) {
		case *array.Int64:
			for row, v := range c.Int64Values() {
				if c.IsValid(row) {
					g.addInt(v, base+int64(row)+1)
				}
			}
		case *array.Int32:
			for row, v := range c.Int32Values() {
				if c.IsValid(row) {
					g.addInt(int64(v), base+int64(row)+1)
				}
			}
		default:
			for row := range col.Len() {
				if col.IsValid(row) {
					g.add([]byte(col.ValueStr(row)), base+int64(row)+1)
				}
			}
		}
	case "max-null-fraction":
		if a.nulls == nil {
			a.nulls = map[[2]int]int64{}
		}
		a.nulls[[2]int{i, k}] += int64(col.NullN())
	}
}

// addSets adds to g each row's values of column i and the columns with,
// a row with a null among them aside.
func (a *Accumulator) addSets(g *grainSet, cols []arrow.Array, i int, with []int, base int64) {
	var key []byte
	for row := range cols[i].Len() {
		key = key[:0]
		null := false
		for _, c := range append([]int{i}, with...) {
			if cols[c].IsNull(row) {
				null = true
				break
			}
			v := cols[c].ValueStr(row)
			key = strconv.AppendInt(key, int64(len(v)), 10)
			key = append(key, ':')
			key = append(key, v...)
		}
		if !null {
			g.add(key, base+int64(row)+1)
		}
	}
}

// checkUnique judges, once every row is in, each unique check: a value
// that repeats is named by the row it repeats (an integer by itself).
func (a *Accumulator) checkUnique() {
	for i, rules := range a.c.Rules {
		for k, r := range rules {
			g := a.unique[[2]int{i, k}]
			if r.Kind != string(contract.CheckUnique) || g == nil {
				continue
			}
			ints := g.ints
			for _, d := range g.duplicates() {
				first := fmt.Sprintf("row %d", d.first)
				if a.locate != nil {
					if at := a.locate(d.first); at != "" {
						first += " (" + at + ")"
					}
				}
				a.warn = r.Warn
				if ints {
					a.finding(KindCheck, d.row, i, "value %d repeats %s (check %s)", d.value, first, r.Check)
				} else {
					a.finding(KindCheck, d.row, i, "value repeats %s (check %s)", first, r.Check)
				}
				a.warn = false
			}
		}
	}
	a.unique = nil
}

// checkNullShares judges, once every row is in, each max-null-fraction
// check on the partition's share of nulls.
func (a *Accumulator) checkNullShares() {
	if a.rows == 0 {
		return
	}
	for i, rules := range a.c.Rules {
		for k, r := range rules {
			if r.Kind != "max-null-fraction" {
				continue
			}
			n := a.nulls[[2]int{i, k}]
			if share := float64(n) / float64(a.rows); share > r.Fraction {
				a.warn = r.Warn
				a.finding(KindCheck, 0, i, "%s of %s values are null (%s), more than check %s allows",
					words.Number(n), words.Number(a.rows), strconv.FormatFloat(share*100, 'g', 3, 64)+"%", r.Check)
				a.warn = false
			}
		}
	}
}

// inRange says whether a row's value lies in a range check's range, ends
// included, comparing as the column's type does.
func inRange(col arrow.Array, r contract.Rule) func(row int) bool {
	switch c := col.(type) {
	case *array.Int32:
		lo, hi := intBounds(r, 0)
		return func(row int) bool { v := int64(c.Value(row)); return v >= lo && v <= hi }
	case *array.Int64:
		lo, hi := intBounds(r, 0)
		return func(row int) bool { v := c.Value(row); return v >= lo && v <= hi }
	case *array.Date32:
		lo, hi := intBounds(r, 0)
		return func(row int) bool { v := int64(c.Value(row)); return v >= lo && v <= hi }
	case *array.Timestamp:
		// Bounds are in microseconds; scale them to the column's unit.
		lo, hi := intBounds(r, 0)
		if c.DataType().(*arrow.TimestampType).Unit == arrow.Nanosecond {
			lo, hi = mulClamp(lo, 1000), mulClamp(hi, 1000)
		}
		return func(row int) bool { v := int64(c.Value(row)); return v >= lo && v <= hi }
	case *array.Float32:
		lo, hi := floatBounds(r)
		return func(row int) bool { v := float64(c.Value(row)); return v >= lo && v <= hi }
	case *array.Float64:
		lo, hi := floatBounds(r)
		return func(row int) bool { v := c.Value(row); return v >= lo && v <= hi }
	case *array.Decimal128:
		lo, hi, none := decimalBounds(r, c.DataType().(*arrow.Decimal128Type).Scale)
		return func(row int) bool {
			v := c.Value(row)
			return !none && (lo == nil || v.Cmp(*lo) >= 0) && (hi == nil || v.Cmp(*hi) <= 0)
		}
	}
	return func(int) bool { return true }
}

// intBounds are a range's ends as integers at 10^scale: the least integer
// at or above Lo, the greatest at or below Hi, clamped to int64.
func intBounds(r contract.Rule, scale int32) (int64, int64) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if r.Lo != nil {
		lo = clamp(ceilRat(scaled(r.Lo, scale)))
	}
	if r.Hi != nil {
		hi = clamp(floorRat(scaled(r.Hi, scale)))
	}
	return lo, hi
}

func floatBounds(r contract.Rule) (float64, float64) {
	lo, hi := math.Inf(-1), math.Inf(1)
	if r.Lo != nil {
		lo, _ = r.Lo.Float64()
	}
	if r.Hi != nil {
		hi, _ = r.Hi.Float64()
	}
	return lo, hi
}

// decimalBounds are a range's ends as unscaled values at scale, nil where
// open or past every value a decimal holds; none says no value lies in it.
func decimalBounds(r contract.Rule, scale int32) (lo, hi *decimal128.Num, none bool) {
	const bits = 126 // within decimal(38)'s values
	if r.Lo != nil {
		v := ceilRat(scaled(r.Lo, scale))
		switch {
		case v.BitLen() <= bits:
			n := decimal128.FromBigInt(v)
			lo = &n
		case v.Sign() > 0:
			none = true
		}
	}
	if r.Hi != nil {
		v := floorRat(scaled(r.Hi, scale))
		switch {
		case v.BitLen() <= bits:
			n := decimal128.FromBigInt(v)
			hi = &n
		case v.Sign() < 0:
			none = true
		}
	}
	return lo, hi, none
}

func scaled(v *big.Rat, scale int32) *big.Rat {
	if scale == 0 {
		return v
	}
	return new(big.Rat).Mul(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
}

// floorRat is the greatest integer at or below v: Div is Euclidean, which
// floors for the positive denominator a Rat keeps.
func floorRat(v *big.Rat) *big.Int { return new(big.Int).Div(v.Num(), v.Denom()) }

func ceilRat(v *big.Rat) *big.Int {
	q := floorRat(v)
	if !v.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func clamp(v *big.Int) int64 {
	switch {
	case v.IsInt64():
		return v.Int64()
	case v.Sign() < 0:
		return math.MinInt64
	}
	return math.MaxInt64
}

func mulClamp(v, by int64) int64 {
	if v > math.MaxInt64/by {
		return math.MaxInt64
	}
	if v < math.MinInt64/by {
		return math.MinInt64
	}
	return v * by
}
