package swap_test

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
	"github.com/lakeswap/lakeswap/testenv"
)

// eventsSource serves events by month; every event of a month is in its
// partition unless stray says otherwise. An event's id is its time, unique
// across the table as its grain says.
type eventsSource struct {
	schema *arrow.Schema
	byPart map[string][]time.Time
}

func (s eventsSource) Open(_ context.Context, partition string) (array.RecordReader, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.schema)
	defer b.Release()
	for _, ts := range s.byPart[partition] {
		b.Field(0).(*array.Int64Builder).Append(ts.UnixMicro())
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewRecordReader(s.schema, []arrow.RecordBatch{rec})
}

// eventsTable creates app.events (id long, at timestamptz, partitioned by
// month) with the given table properties in a fresh embedded catalog.
func eventsTable(t *testing.T, props map[string]string) (*catalog.Catalog, table.Identifier, *contract.Contract) {
	t.Helper()
	ctx := context.Background()
	cat := testenv.Embedded(t)
	ident := table.Identifier{"app", "events"}
	tbl, err := catalog.CreateTable(ctx, cat, ident, catalog.TableSpec{
		Columns:    []catalog.ColumnSpec{{Name: "id", Type: "long", Required: true}, {Name: "at", Type: "timestamptz", Required: true}},
		Identifier: []string{"id"},
		Partition:  []catalog.PartitionSpec{{Column: "at", Transform: "month"}},
		Properties: props,
	})
	if err != nil {
		t.Fatal(err)
	}
	contract, err := contract.Of(tbl.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	return cat, ident, contract
}

// TestMonthPartitionsOfTimestamps publishes to a table partitioned by the
// month of a timestamptz column, and refuses an event a month late.
func TestMonthPartitionsOfTimestamps(t *testing.T) {
	ctx := context.Background()
	cat, ident, contract := eventsTable(t, nil)
	months, err := contract.Partition.Fields[0].ParseSelector("at=2026-01..2026-02")
	if err != nil || len(months) != 2 || months[0] != "2026-01" {
		t.Fatalf("selector gives %v, %v", months, err)
	}
	jan := time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC)
	feb := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	src := eventsSource{schema: contract.Arrow, byPart: map[string][]time.Time{"2026-01": {jan, jan.Add(-time.Hour)}, "2026-02": {feb}}}
	pub := &swap.Publisher{Catalog: cat}
	res, err := pub.Publish(ctx, swap.Request{Table: ident, Partitions: months, Source: src})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	if res.Plan.Partitions[0].Key != "at=2026-01" || res.Plan.Partitions[0].Fingerprint.Rows != 2 || res.Plan.Partitions[1].Fingerprint.Rows != 1 {
		t.Errorf("plan %+v", res.Plan.Partitions)
	}
	// Republishing January alone replaces its two events and leaves
	// February as it was (the publish's own verification checks that).
	src.byPart["2026-01"] = []time.Time{jan}
	again, err := pub.Publish(ctx, swap.Request{Table: ident, Partitions: []string{"2026-01"}, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if pp := again.Plan.Partitions[0]; pp.OldFingerprint.Rows != 2 || pp.Fingerprint.Rows != 1 {
		t.Errorf("January replaced %d rows with %d, want 2 with 1", pp.OldFingerprint.Rows, pp.Fingerprint.Rows)
	}
	// The first run's snapshot still holds what it recorded.
	if v, err := audit.Of(pub.Catalog).VerifyRun(ctx, ident, res.Plan.RunID, 0); err != nil || !v.OK || v.Rows != 3 {
		t.Errorf("verify of the first run: %+v, %v", v, err)
	}
	// An event of February offered as January is refused.
	src.byPart["2026-01"] = []time.Time{jan, feb}
	_, err = pub.Publish(ctx, swap.Request{Table: ident, Partitions: []string{"2026-01"}, Source: src})
	if !errors.Is(err, outcome.ErrRefused) {
		t.Errorf("a February event in January: err = %v, want refused", err)
	}
}

// TestDeltaIntegersTableProperty: a table that sets
// lakeswap.parquet.delta-integers gets its near-unique integer and
// timestamp columns delta-encoded, and the publish's read-back verification
// decodes them to the same fingerprint.
func TestDeltaIntegersTableProperty(t *testing.T) {
	ctx := context.Background()
	cat, ident, contract := eventsTable(t, map[string]string{contract.PropDeltaIntegers: "true"})
	var times []time.Time
	for i := range 1000 {
		times = append(times, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*7*time.Minute+time.Duration(i*i)*time.Microsecond))
	}
	src := eventsSource{schema: contract.Arrow, byPart: map[string][]time.Time{"2026-01": times}}
	res, err := (&swap.Publisher{Catalog: cat}).Publish(ctx, swap.Request{Table: ident, Partitions: []string{"2026-01"}, Source: src})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	if res.Status != "published" || len(res.Mismatches) != 0 {
		t.Fatalf("publish status %s, mismatches %v", res.Status, res.Mismatches)
	}
	for _, f := range res.Plan.Partitions[0].NewFiles {
		rdr, err := file.OpenParquetFile(strings.TrimPrefix(f.Path, "file://"), false)
		if err != nil {
			t.Fatal(err)
		}
		rg := rdr.MetaData().RowGroup(0)
		for i := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(i)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(cc.Encodings(), parquet.Encodings.DeltaBinaryPacked) {
				t.Errorf("%s: column %s has encodings %v, want DELTA_BINARY_PACKED", f.Path, cc.PathInSchema(), cc.Encodings())
			}
		}
		rdr.Close()
	}
}

// binarySource serves rows of an identity(binary) table: a partition's
// key bytes are its value's base64, one row an id.
type binarySource struct {
	schema *arrow.Schema
	ids    map[string][]int64
}

func (s binarySource) Open(_ context.Context, partition string) (array.RecordReader, error) {
	key, err := base64.StdEncoding.DecodeString(partition)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.schema)
	defer b.Release()
	for _, id := range s.ids[partition] {
		b.Field(0).(*array.BinaryBuilder).Append(key)
		b.Field(1).(*array.Int64Builder).Append(id)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewRecordReader(s.schema, []arrow.RecordBatch{rec})
}

// TestEmptyBinaryPartition: b” of an identity(binary) partition is
// declared as "" (quoted, as a string's empty value), published beside
// another value, and read back: the reader finds its rows, and its file's
// partition data is the empty bytes, not null. The same rows again change
// nothing.
func TestEmptyBinaryPartition(t *testing.T) {
	ctx := context.Background()
	cat := testenv.Embedded(t)
	ident := table.Identifier{"app", "keys"}
	tbl, err := catalog.CreateTable(ctx, cat, ident, catalog.TableSpec{
		Columns:    []catalog.ColumnSpec{{Name: "k", Type: "binary", Required: true}, {Name: "id", Type: "long", Required: true}},
		Identifier: []string{"k", "id"},
		Partition:  []catalog.PartitionSpec{{Column: "k", Transform: "identity"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Of(tbl.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	values, err := c.Partition.Fields[0].ParseSelector(`k="",eA==`)
	if err != nil || !slices.Equal(values, []string{"", "eA=="}) {
		t.Fatalf(`k="",eA== declares %q, %v`, values, err)
	}
	src := binarySource{schema: c.Arrow, ids: map[string][]int64{"": {1, 2}, "eA==": {3}}}
	pub := &swap.Publisher{Catalog: cat}
	res, err := pub.Publish(ctx, swap.Request{Table: ident, Partitions: values, Source: src})
	if err != nil || res.Status != swap.StatusPublished || res.Plan.Fingerprint.Rows != 3 {
		t.Fatalf("publish b'' and b'x': %v, %v", err, res)
	}
	tbl, err = cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	empty := 0
	for _, task := range tasks {
		rows += task.File.Count()
		if v, ok := task.File.Partition()[1000].([]byte); ok && v != nil && len(v) == 0 {
			empty++
		}
	}
	if rows != 3 || empty != 1 {
		t.Errorf("the reader plans %d rows and %d file(s) of partition b''; want 3 rows, one file whose partition is the empty bytes", rows, empty)
	}
	again, err := pub.Publish(ctx, swap.Request{Table: ident, Partitions: values, Source: src})
	if err != nil || again.Status != swap.StatusUnchanged {
		t.Errorf("the same rows again: %v, %v; want unchanged", err, again)
	}
}
