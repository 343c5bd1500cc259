package contract_test

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
)

// TestTwoFieldsOfOneColumn: a spec with two fields of one source column
// (bucket(16, id) and id; iceberg-go itself refuses day(ts) beside
// hour(ts)) is refused naming the
// column: a selector and a partition's key name a field by its column, and
// would name either.
func TestTwoFieldsOfOneColumn(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	for name, spec := range map[string]iceberg.PartitionSpec{
		"truncate and bucket": iceberg.NewPartitionSpec(
			iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "id_trunc", Transform: iceberg.TruncateTransform{Width: 10}},
			iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 16}}),
		"bucket and identity": iceberg.NewPartitionSpec(
			iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 16}},
			iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "id", Transform: iceberg.IdentityTransform{}}),
	} {
		meta, err := table.NewMetadata(sc, &spec, table.UnsortedSortOrder, "file:///tmp/t", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := contract.Of(meta); err == nil || !strings.Contains(err.Error(), "two partition fields of column") {
			t.Errorf("%s: %v, want a refusal naming the column", name, err)
		}
	}
}
