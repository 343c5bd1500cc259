package swap

import (
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
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
