// Package exact holds Sum, an integer of any size: the exact sum of an
// additive column, which for a decimal(38,S) column can pass any machine
// integer after a few rows.
package exact

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Sum is an exact integer; the zero value is 0. Values are immutable:
// every operation returns a new Sum. Compare them with Equal or Cmp; ==
// does not compile, since two representations of one value could differ.
type Sum struct {
	_     [0]func()
	small int64
	big   *big.Int // the value when it does not fit int64, else nil; never changed once set
}

// Of is n as a Sum.
func Of(n int64) Sum { return Sum{small: n} }

// FromBig is n as a Sum; n is copied.
func FromBig(n *big.Int) Sum {
	if n.IsInt64() {
		return Sum{small: n.Int64()}
	}
	return Sum{big: new(big.Int).Set(n)}
}

// Parse reads a base-10 integer of any size, as String writes it.
func Parse(s string) (Sum, error) {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || s == "" || s[0] == '+' {
		return Sum{}, fmt.Errorf("%q is not an integer", s)
	}
	return FromBig(n), nil
}

// Big is s as a new big.Int.
func (s Sum) Big() *big.Int {
	if s.big != nil {
		return new(big.Int).Set(s.big)
	}
	return big.NewInt(s.small)
}

// Int64 is s as an int64, and whether it fits.
func (s Sum) Int64() (int64, bool) { return s.small, s.big == nil }

// Add is s+t.
func (s Sum) Add(t Sum) Sum {
	if s.big == nil && t.big == nil {
		if r := s.small + t.small; (r > s.small) == (t.small > 0) {
			return Sum{small: r}
		}
	}
	return FromBig(new(big.Int).Add(s.Big(), t.Big()))
}

// Sub is s-t.
func (s Sum) Sub(t Sum) Sum { return s.Add(t.Neg()) }

// Neg is -s.
func (s Sum) Neg() Sum {
	if s.big == nil && s.small != math.MinInt64 {
		return Sum{small: -s.small}
	}
	return FromBig(new(big.Int).Neg(s.Big()))
}

// Cmp is -1, 0 or 1 as s is less than, equal to or greater than t.
func (s Sum) Cmp(t Sum) int {
	if s.big == nil && t.big == nil {
		switch {
		case s.small < t.small:
			return -1
		case s.small > t.small:
			return 1
		}
		return 0
	}
	return s.Big().Cmp(t.Big())
}

// Equal says whether s and t are the same integer.
func (s Sum) Equal(t Sum) bool { return s.Cmp(t) == 0 }

// Sign is -1, 0 or 1.
func (s Sum) Sign() int { return s.Cmp(Sum{}) }

// Float64 is the nearest float64 to s (for ratios and charts, never for
// what is stored).
func (s Sum) Float64() float64 {
	if s.big == nil {
		return float64(s.small)
	}
	f, _ := new(big.Float).SetInt(s.big).Float64()
	return f
}

// String is s in base 10.
// Scaled writes the sum of a decimal column at its scale, as the column
// holds its values: 1234 at scale 2 is 12.34; scale 0 is the integer.
func (s Sum) Scaled(scale int) string {
	str := s.String()
	if scale <= 0 {
		return str
	}
	sign := ""
	if s.Sign() < 0 {
		sign, str = "-", str[1:]
	}
	if len(str) <= scale {
		str = strings.Repeat("0", scale-len(str)+1) + str
	}
	return sign + str[:len(str)-scale] + "." + str[len(str)-scale:]
}

func (s Sum) String() string {
	if s.big != nil {
		return s.big.String()
	}
	return fmt.Sprint(s.small)
}

// maxJSON is the largest integer every JSON reader holds exactly: 2^53.
const maxJSON = 1 << 53

// MarshalJSON writes s as a JSON number where every reader holds it
// exactly (|s| <= 2^53), else as a string of its digits.
func (s Sum) MarshalJSON() ([]byte, error) {
	if n, ok := s.Int64(); ok && -maxJSON <= n && n <= maxJSON {
		return []byte(fmt.Sprint(n)), nil
	}
	return json.Marshal(s.String())
}

// UnmarshalJSON reads a number or a string of digits.
func (s *Sum) UnmarshalJSON(data []byte) error {
	text := string(data)
	if len(data) > 0 && data[0] == '"' {
		if err := json.Unmarshal(data, &text); err != nil {
			return err
		}
	}
	v, err := Parse(text)
	if err != nil {
		return fmt.Errorf("a sum: %w", err)
	}
	*s = v
	return nil
}
