package runrecord_test

import (
	"reflect"
	"testing"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/runrecord"
)

// TestRecordRoundTrip: what a run records reads back as it was, values
// holding commas and the empty value included.
func TestRecordRoundTrip(t *testing.T) {
	base := int64(42)
	wide, _ := exact.Parse("-999999999999999999999999999999999999990") // a decimal(38,S) column's sum
	r := runrecord.Record{RunID: "job-42", Source: "files:a.csv", PartitionColumn: "region", Partitions: []string{"", "a,b", " x "},
		Fingerprint: "f", FingerprintVersion: "v1", PartitionHashes: map[string]string{"region=a,b": "h"}, Rows: 3,
		Sums: map[string]exact.Sum{"amount": exact.Of(-7), "wide": wide}, BaseSnapshotID: &base, BaseFingerprint: "b", BaseRows: 2, Version: "0.1.0-dev"}
	got, ok := runrecord.Read(r.Properties())
	if !ok || !reflect.DeepEqual(got, r) {
		t.Errorf("read back %+v, want %+v", got, r)
	}
	if _, ok := runrecord.Read(map[string]string{"added-records": "3"}); ok {
		t.Error("a snapshot lakeswap did not commit reads as a run")
	}
}

// TestReadsOlderRecords: runs recorded before lakeswap.partition-values
// give their partitions from the comma-joined keys.
func TestReadsOlderRecords(t *testing.T) {
	got, ok := runrecord.Read(map[string]string{runrecord.PropRunID: "old", runrecord.PropPartitions: "order_date=2026-01-01,order_date=2026-01-02"})
	if !ok || !reflect.DeepEqual(got.Partitions, []string{"2026-01-01", "2026-01-02"}) || got.PartitionColumn != "order_date" {
		t.Errorf("read %+v", got)
	}
}
