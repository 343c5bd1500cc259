package swap

import (
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/swap/internal/layout"
	"github.com/lakeswap/lakeswap/swap/internal/staging"
)

// EscapeSegment encodes a partition column name or value for a path, as
// docs/layout.md says.
func EscapeSegment(s string) string { return layout.EscapeSegment(s) }

// UnescapeSegment decodes what EscapeSegment wrote.
func UnescapeSegment(s string) (string, error) { return layout.UnescapeSegment(s) }

// RunSegment is a run id as the names of its files hold it (escaped as a
// partition value is, and shortened past 120 bytes): plan-<segment>.json.
func RunSegment(runID string) string { return layout.RunSegment(runID) }

// CheckPartitionValue says, before anything is read, whether a partition
// of the table can be staged: whether its folder, under the longest run
// id, fits what the table's storage takes.
func CheckPartitionValue(meta table.Metadata, part contract.Partitioning, value string) error {
	_, err := staging.Prefix(meta, part, value, strings.Repeat("x", layout.MaxRunSegment), staging.NewAttempt())
	return err
}
