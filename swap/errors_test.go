package swap_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lakeswap/lakeswap/swap"
)

// TestNothingCommittedIsOneFamily: a caller asks errors.Is(err,
// ErrNotCommitted) to know that the table is as it was, whichever way the
// run stopped before a commit; an outcome that may have left a commit on
// main never matches it.
func TestNothingCommittedIsOneFamily(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&swap.RefusedError{Table: "t"}, true},
		{&swap.OpError{Op: "apply", Err: fmt.Errorf("%w: main moved", swap.ErrConflict)}, true},
		{&swap.OpError{Op: "commit", Err: fmt.Errorf("%w: absent twice", swap.ErrNotLanded)}, true},
		{fmt.Errorf("wrapped: %w", &swap.RefusedError{}), true},
		{&swap.OpError{Op: "commit", Err: fmt.Errorf("%w: lost answer", swap.ErrCommitUnknown)}, false},
		{&swap.OpError{Op: "verify", Err: swap.ErrVerifyFailed}, false},
		{&swap.OpError{Op: "verify", Err: swap.ErrLandedUnverified}, false},
		{errors.New("disk full"), false},
	} {
		if got := errors.Is(tc.err, swap.ErrNotCommitted); got != tc.want {
			t.Errorf("%v: matches ErrNotCommitted %v, want %v", tc.err, got, tc.want)
		}
	}
	// The families keep their own names.
	if !errors.Is(&swap.RefusedError{}, swap.ErrRefused) || errors.Is(&swap.RefusedError{}, swap.ErrConflict) {
		t.Error("a refusal is not ErrRefused alone")
	}
	for _, s := range []swap.Status{swap.StatusRefused, swap.StatusNotCommitted, swap.StatusUnchanged, swap.StatusRolledBack, swap.StatusPlanned} {
		if s.Committed() {
			t.Errorf("%s says a commit of the run is on main", s)
		}
	}
}
