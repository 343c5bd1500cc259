package swap

import (
	"time"

	"github.com/lakeswap/lakeswap/swap/internal/hold"
)

// SetCheckBackoff shortens the wait between reads of a landed commit, for
// tests; it returns the function that restores it.
func SetCheckBackoff(d time.Duration) func() {
	old := readBackBackoff
	readBackBackoff = d
	return func() { readBackBackoff = old }
}

// SetHoldRefresh sets how often a running publish refreshes its hold, for
// tests; it returns the function that restores it.
func SetHoldRefresh(d time.Duration) func() {
	old := hold.Refresh
	hold.Refresh = d
	return func() { hold.Refresh = old }
}
