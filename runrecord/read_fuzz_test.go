package runrecord_test

import (
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/lakeswap/lakeswap/runrecord"
)

// FuzzRead: any summary properties, however another engine or a hand
// wrote them, read without a panic; a record read back is written and
// read again as the same record, so that what lakeswap reports of a run
// is what the table says.
func FuzzRead(f *testing.F) {
	f.Add("run-1", `["2026-01-01"]`, "order_date=2026-01-01", `{"order_date=2026-01-01":"h"}`, "3", "2", "1/6", `["order_date=2026-01-01"]`, "7")
	f.Add("old", "", "order_date=2026-01-01,order_date=2026-01-02", "", "x", "", "", "", "-1")
	f.Add("r", `[""]`, "region=", "null", "99999999999999999999", "1e3", "", "{", "")
	f.Fuzz(func(t *testing.T, runID, values, keys, hashes, rows, base, batch, unchanged, sum string) {
		props := map[string]string{
			runrecord.PropRunID: runID, runrecord.PropPartitionValues: values, runrecord.PropPartitions: keys,
			runrecord.PropPartitionHashes: hashes, runrecord.PropRows: rows, runrecord.PropBaseSnapshot: base,
			runrecord.PropBatch: batch, runrecord.PropUnchanged: unchanged, runrecord.PropSumPrefix + "amount": sum,
		}
		r, ok := runrecord.Read(props)
		if ok != (runID != "") {
			t.Fatalf("run id %q read as a run: %v", runID, ok)
		}
		if !ok || !valid(runID, values, keys, hashes, batch, unchanged) {
			// JSON holds only UTF-8; a partition value is refused unless
			// it is (contract.Partition.ParseValue), so lakeswap never
			// writes one that is not.
			return
		}
		again, ok := runrecord.Read(r.Properties())
		if !ok || !reflect.DeepEqual(normal(again), normal(r)) {
			t.Fatalf("a record written and read back changed:\n%+v\n%+v", r, again)
		}
	})
}

func valid(s ...string) bool {
	for _, v := range s {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// normal makes empty and nil the same, as JSON does not tell them apart.
func normal(r runrecord.Record) runrecord.Record {
	if len(r.PartitionHashes) == 0 {
		r.PartitionHashes = nil
	}
	if len(r.Unchanged) == 0 {
		r.Unchanged = nil
	}
	if len(r.Partitions) == 0 {
		r.Partitions = nil
	}
	if len(r.Sums) == 0 {
		r.Sums = nil
	}
	return r
}
