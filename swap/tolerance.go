package swap

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/lakeswap/lakeswap/internal/exact"
)

// Tolerance is how far a staged figure may lie from what a job's
// reconciliation says before the run is refused: an amount in the
// figure's own units (100, 0.50), or a share of the source's figure
// (0.1%).
type Tolerance struct {
	Text  string
	abs   *big.Rat // in the figure's units
	share *big.Rat // of the source's figure
}

// plainNumber is a tolerance's number: digits, and a fraction.
var plainNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ParseTolerance reads a tolerance: a non-negative number, or one
// followed by %.
func ParseTolerance(s string) (Tolerance, error) {
	t := Tolerance{Text: s}
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, ok := new(big.Rat).SetString(num)
	if !ok || !plainNumber.MatchString(num) {
		return t, fmt.Errorf("tolerance %q: want a non-negative amount (100, 0.50) or share (0.1%%)", s)
	}
	if pct {
		t.share = v.Quo(v, big.NewRat(100, 1))
	} else {
		t.abs = v
	}
	return t, nil
}

// Allows says whether got lies within the tolerance of want, both
// unscaled at scale (a decimal's digits).
func (t Tolerance) Allows(want, got exact.Sum, scale int) bool {
	diff := new(big.Rat).SetInt(new(big.Int).Abs(want.Sub(got).Big()))
	var limit *big.Rat
	switch {
	case t.abs != nil:
		limit = new(big.Rat).Mul(t.abs, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	case t.share != nil:
		limit = new(big.Rat).Mul(t.share, new(big.Rat).SetInt(new(big.Int).Abs(want.Big())))
	default:
		return diff.Sign() == 0
	}
	return diff.Cmp(limit) <= 0
}
