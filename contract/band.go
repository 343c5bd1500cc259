package contract

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lakeswap/lakeswap/internal/exact"
)

// PropPlausibleBand bounds how far a run may move a partition it replaces:
// "LO:HI", ratios of the new row count and of each additive sum to what
// the partition held. A wipe is an incident: outside the band a run is
// refused unless the operator allows it.
const PropPlausibleBand = "lakeswap.plausible-band"

// Band is a plausible range of new/old ratios, inclusive.
type Band struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// DefaultBand is half to twice what a partition held.
var DefaultBand = Band{Lo: 0.5, Hi: 2}

// ParseBand reads "LO:HI", for example 0.5:2: finite ratios with
// 0 <= LO <= HI and HI above zero.
func ParseBand(s string) (Band, error) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(s), ":")
	l, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	h, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	finite := !math.IsNaN(l) && !math.IsNaN(h) && !math.IsInf(l, 0) && !math.IsInf(h, 0)
	if !ok || err1 != nil || err2 != nil || !finite || l < 0 || h < l || h == 0 {
		return Band{}, fmt.Errorf("plausible band %q: write LO:HI, finite ratios of new to old with 0 <= LO <= HI and HI above zero, for example 0.5:2", s)
	}
	return Band{Lo: l, Hi: h}, nil
}

func (b Band) String() string {
	return strconv.FormatFloat(b.Lo, 'g', -1, 64) + "x-" + strconv.FormatFloat(b.Hi, 'g', -1, 64) + "x"
}

// Holds reports whether a row count or an additive sum that was before
// is plausibly after. The ratio is signed, so that a sign flip (-200 ->
// 200, ratio -1) lies outside every band and a negative sum is judged by
// its magnitude (-100 -> -300, ratio 3). A sum that was zero has no
// ratio: it may stay zero, and anything else is implausible (growth from
// zero). The ratio returned is after/before, or +Inf from zero.
func (b Band) Holds(before, after exact.Sum) (ratio float64, ok bool) {
	if before.Sign() == 0 {
		if after.Sign() == 0 {
			return 1, true
		}
		return math.Inf(1), false
	}
	ratio = after.Float64() / before.Float64()
	return ratio, ratio >= b.Lo && ratio <= b.Hi
}
