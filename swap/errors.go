package swap

import (
	"github.com/lakeswap/lakeswap/swap/internal/outcome"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
)

// The outcomes of a publish or rollback that callers act on differently
// (package outcome says what each means). Each typed error below matches
// one of these with errors.Is; ErrRefused, ErrConflict and ErrNotLanded
// all match ErrNotCommitted, unless earlier batches of the run landed.
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
	// ErrInvalidRequest marks a request that names something wrong (a
	// partition selector, a table name, a plan file, a value the table's
	// storage cannot hold): the caller's to correct, before anything is
	// read. Its message is the problem's alone.
	ErrInvalidRequest = outcome.ErrInvalidRequest
)

// InvalidRequest marks err as ErrInvalidRequest, keeping its message.
func InvalidRequest(err error) error { return outcome.Invalid(err) }

type (
	// RefusedError lists every finding that stopped a stage.
	RefusedError = outcome.RefusedError
	// OpError carries what an operator needs about a failed step.
	OpError = outcome.OpError
)

// Each publish tags, in its commit, the snapshot it replaces
// (lakeswap-before-<run id>: the run's rollback target) and the snapshot it
// makes (lakeswap-run-<run id>: the run's record), so that snapshot expiry
// by any engine keeps both for the retention.
const (
	RollbackTagPrefix        = snapshot.RollbackTagPrefix
	RunTagPrefix             = snapshot.RunTagPrefix
	ReleaseTagPrefix         = snapshot.ReleaseTagPrefix
	DefaultRollbackRetention = snapshot.DefaultRollbackRetention
)

// RollbackTag names the tag that keeps run's rollback target.
func RollbackTag(runID string) string { return snapshot.RollbackTag(runID) }

// RunTag names the tag that keeps run's own snapshot.
func RunTag(runID string) string { return snapshot.RunTag(runID) }

// ReleaseTag names the tag on every table's snapshot of a release.
func ReleaseTag(runID string) string { return snapshot.ReleaseTag(runID) }
