package contract

import (
	"testing"

	"github.com/lakeswap/lakeswap/internal/exact"
)

func TestParseBand(t *testing.T) {
	for in, want := range map[string]Band{"0.5:2": {0.5, 2}, "0:10": {0, 10}, " 1:1 ": {1, 1}} {
		if got, err := ParseBand(in); err != nil || got != want {
			t.Errorf("ParseBand(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "2:1", "-1:2", "0:0", "a:b", "NaN:NaN", "0.5:NaN", "NaN:2", "0:Inf", "0.5:+Inf", "-Inf:2", "1e400:1e401"} {
		if _, err := ParseBand(in); err == nil {
			t.Errorf("ParseBand(%q) took it", in)
		}
	}
}

// TestBandHolds: what a person would call implausible is outside the
// default band: a shrink or growth past it, a sign flip, growth from zero,
// and a negative sum that grows in magnitude.
func TestBandHolds(t *testing.T) {
	b := DefaultBand
	for _, c := range []struct {
		before, after int64
		ok            bool
	}{
		{1000, 300, false}, {1000, 1000, true}, {1000, 1999, true}, {1000, 2001, false},
		{-200, 200, false}, {200, -200, false}, {-100, -300, false}, {-100, -150, true}, {-100, -40, false},
		{0, 500, false}, {0, -1, false}, {0, 0, true}, {500, 0, false},
	} {
		if _, ok := b.Holds(exact.Of(c.before), exact.Of(c.after)); ok != c.ok {
			t.Errorf("%d -> %d in %s: %v, want %v", c.before, c.after, b, ok, c.ok)
		}
	}
}
