package job

import (
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
)

// TestJobRangeInTheColumnsOrder: for an integer partition column the
// range bound to the SQL is the least and greatest value as numbers:
// bucket=9..10 runs from 9 to 10, not from "10" to "9".
func TestJobRangeInTheColumnsOrder(t *testing.T) {
	ints := contract.Partitioner{Name: "bucket", Transform: "identity", Type: iceberg.Int64Type{}}
	if from, to := bounds(ints, []string{"10", "9", "12", "1"}); from != "1" || to != "12" {
		t.Errorf("bounds of 1, 9, 10, 12: %s..%s, want 1..12", from, to)
	}
	days := contract.Partitioner{Name: "order_date", Transform: "identity", Type: iceberg.DateType{}}
	if from, to := bounds(days, []string{"2026-01-10", "2026-01-09"}); from != "2026-01-09" || to != "2026-01-10" {
		t.Errorf("bounds of two days: %s..%s", from, to)
	}
}
