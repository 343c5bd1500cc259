package contract

import (
	"fmt"
	"strconv"
	"strings"
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

// ParseBand reads "LO:HI", for example 0.5:2.
func ParseBand(s string) (Band, error) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(s), ":")
	l, err1 := strconv.ParseFloat(lo, 64)
	h, err2 := strconv.ParseFloat(hi, 64)
	if !ok || err1 != nil || err2 != nil || l < 0 || h < l || h == 0 {
		return Band{}, fmt.Errorf("plausible band %q: write LO:HI, ratios of new to old with 0 <= LO <= HI, for example 0.5:2", s)
	}
	return Band{Lo: l, Hi: h}, nil
}

func (b Band) String() string {
	return strconv.FormatFloat(b.Lo, 'g', -1, 64) + "x-" + strconv.FormatFloat(b.Hi, 'g', -1, 64) + "x"
}

// Holds reports whether after is within the band of before. Only a
// positive before has a band: a partition that held nothing, or a sum of
// zero or below, may become anything.
func (b Band) Holds(before, after int64) (ratio float64, ok bool) {
	if before <= 0 {
		return 0, true
	}
	ratio = float64(after) / float64(before)
	return ratio, ratio >= b.Lo && ratio <= b.Hi
}
