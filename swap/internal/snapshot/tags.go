package snapshot

import (
	"time"

	"github.com/apache/iceberg-go/table"
)

// Each publish tags, in its commit, the snapshot it replaces
// (lakeswap-before-<run id>: the run's rollback target) and the snapshot it
// makes (lakeswap-run-<run id>: the run's record), so that snapshot expiry
// by any engine keeps both for the retention, and a rollback of the run
// stays possible while main moves on.
const (
	RollbackTagPrefix = "lakeswap-before-"
	RunTagPrefix      = "lakeswap-run-"
	ReleaseTagPrefix  = "lakeswap-release-"
)

// DefaultRollbackRetention is how long a run's tags keep its snapshots
// from expiry when the publisher does not say.
const DefaultRollbackRetention = 30 * 24 * time.Hour

// RollbackTag names the tag that keeps run's rollback target.
func RollbackTag(runID string) string { return RollbackTagPrefix + runID }

// RunTag names the tag that keeps run's own snapshot.
func RunTag(runID string) string { return RunTagPrefix + runID }

// ReleaseTag names the tag every table's snapshot of a release takes, so
// that a reader loading the tables one after another can pin one release.
func ReleaseTag(runID string) string { return ReleaseTagPrefix + runID }

// Retention is the retention given, or the default for 0.
func Retention(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultRollbackRetention
	}
	return d
}

// TagRollbackTarget tags the snapshot a run replaces. Iceberg measures a
// tag's age from its snapshot's time, so the tag of an old snapshot is
// given that age now plus the retention.
func TagRollbackTarget(runID string, base *table.Snapshot, retention time.Duration) table.Update {
	age := max(time.Since(time.UnixMilli(base.TimestampMs)), 0)
	return table.NewSetSnapshotRefUpdate(RollbackTag(runID), base.SnapshotID, table.TagRef, (age + Retention(retention)).Milliseconds(), 0, 0)
}

// TagRun tags the snapshot a run makes, with the tag name.
func TagRun(name string, id int64, retention time.Duration) table.Update {
	return table.NewSetSnapshotRefUpdate(name, id, table.TagRef, Retention(retention).Milliseconds(), 0, 0)
}

// TagStaged tags a snapshot made before it is published (a plan's, which
// apply moves main to): its age at the tag is added to the retention, as
// Iceberg measures a tag's age from its snapshot's time.
func TagStaged(name string, s *table.Snapshot, retention time.Duration) table.Update {
	age := max(time.Since(time.UnixMilli(s.TimestampMs)), 0)
	return table.NewSetSnapshotRefUpdate(name, s.SnapshotID, table.TagRef, (age + Retention(retention)).Milliseconds(), 0, 0)
}
