package swap

import "github.com/lakeswap/lakeswap/swap/internal/outcome"

// The outcomes of a publish or rollback that callers act on differently
// (package outcome says what each means). Each typed error below matches
// one of these with errors.Is; ErrRefused, ErrConflict and ErrNotLanded
// all match ErrNotCommitted.
var (
	ErrNotCommitted     = outcome.ErrNotCommitted
	ErrRefused          = outcome.ErrRefused
	ErrConflict         = outcome.ErrConflict
	ErrCommitUnknown    = outcome.ErrCommitUnknown
	ErrNotLanded        = outcome.ErrNotLanded
	ErrVerifyFailed     = outcome.ErrVerifyFailed
	ErrLandedUnverified = outcome.ErrLandedUnverified
	ErrRollbackRefused  = outcome.ErrRollbackRefused
	ErrRunNotFound      = outcome.ErrRunNotFound
)

type (
	// RefusedError lists every finding that stopped a stage.
	RefusedError = outcome.RefusedError
	// OpError carries what an operator needs about a failed step.
	OpError = outcome.OpError
)
