package retail

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
)

//go:embed fixture/expected.json
var expectedJSON []byte

// The raw order events of the fixture's two batches.
var (
	//go:embed fixture/batch1.ndjson
	Batch1 []byte
	//go:embed fixture/batch2.ndjson
	Batch2 []byte
)

// The fixture's stages.
const (
	AfterBatch1 = "after_batch1"
	AfterBatch2 = "after_batch1_and_batch2"
)

// DailyOrder is one row of retail.daily_orders: orders and cents per day and
// channel.
type DailyOrder struct {
	OrderDate   string `json:"order_date"`
	Channel     string `json:"channel"`
	OrderCount  int64  `json:"order_count"`
	AmountCents int64  `json:"amount_cents"`
}

// Daily returns the fixture's daily groups after a stage.
func Daily(stage string) ([]DailyOrder, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(expectedJSON, &doc); err != nil {
		return nil, fmt.Errorf("parse fixture expected.json: %w", err)
	}
	raw, ok := doc[stage]
	if !ok {
		return nil, fmt.Errorf("fixture has no stage %q", stage)
	}
	var s struct {
		Daily []DailyOrder `json:"daily_orders"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("parse fixture stage %s: %w", stage, err)
	}
	return s.Daily, nil
}

// Spec is the daily_orders table: grain (order_date, channel), partitioned
// by order_date, additive order_count and amount_cents, which must not be
// negative.
func Spec() catalog.TableSpec {
	return catalog.TableSpec{
		Table: "retail.daily_orders",
		Columns: []catalog.ColumnSpec{
			{Name: "order_date", Type: "date", Required: true},
			{Name: "channel", Type: "string", Required: true},
			{Name: "order_count", Type: "long", Required: true},
			{Name: "amount_cents", Type: "long", Required: true},
		},
		Identifier: []string{"order_date", "channel"},
		Partition:  []catalog.PartitionSpec{{Column: "order_date", Transform: "identity"}},
		Additive:   []string{"order_count", "amount_cents"},
		Checks:     map[string][]string{"amount_cents": {"non-negative"}, "order_count": {"non-negative"}},
	}
}

// Contract is daily_orders' contract as lakeswap reads it from the table
// Spec creates, for code that reads inputs without a catalog.
func Contract() (*contract.Contract, error) {
	sc := iceberg.NewSchemaWithIdentifiers(0, []int{1, 2},
		iceberg.NestedField{ID: 1, Name: "order_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "channel", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "order_count", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 4, Name: "amount_cents", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	part, err := contract.NewPartitioner(0, "order_date", iceberg.PrimitiveTypes.Date, "identity")
	if err != nil {
		return nil, err
	}
	return contract.NewContract(sc, []string{"order_date", "channel"}, []string{"order_count", "amount_cents"},
		map[string][]contract.Check{"amount_cents": {"non-negative"}, "order_count": {"non-negative"}}, part)
}

// Schema is the Arrow schema of the daily groups, without field ids, as a
// job that computes them would produce it.
var Schema = arrow.NewSchema([]arrow.Field{
	{Name: "order_date", Type: arrow.FixedWidthTypes.Date32},
	{Name: "channel", Type: arrow.BinaryTypes.String},
	{Name: "order_count", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount_cents", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// Record builds one batch of rows.
func Record(rows []DailyOrder) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, Schema)
	defer b.Release()
	for _, r := range rows {
		d, err := time.Parse(time.DateOnly, r.OrderDate)
		if err != nil {
			panic(fmt.Sprintf("fixture date %q: %v", r.OrderDate, err))
		}
		b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(d))
		b.Field(1).(*array.StringBuilder).Append(r.Channel)
		b.Field(2).(*array.Int64Builder).Append(r.OrderCount)
		b.Field(3).(*array.Int64Builder).Append(r.AmountCents)
	}
	return b.NewRecordBatch()
}

// Source serves daily groups to a publish, by order_date. A partition with no
// groups gets no rows.
type Source struct {
	byDate map[string][]DailyOrder
}

// NewSource serves rows; rows may hold any dates, including ones the run
// does not declare (which the publish must refuse).
func NewSource(rows []DailyOrder) *Source {
	s := &Source{byDate: map[string][]DailyOrder{}}
	for _, r := range rows {
		s.byDate[r.OrderDate] = append(s.byDate[r.OrderDate], r)
	}
	return s
}

// Open returns the partition's rows as one batch.
func (s *Source) Open(_ context.Context, partition string) (array.RecordReader, error) {
	rec := Record(s.byDate[partition])
	defer rec.Release()
	return array.NewRecordReader(Schema, []arrow.RecordBatch{rec})
}

// Only keeps the rows of the given dates.
func Only(rows []DailyOrder, dates ...string) []DailyOrder {
	var out []DailyOrder
	for _, r := range rows {
		for _, d := range dates {
			if r.OrderDate == d {
				out = append(out, r)
			}
		}
	}
	return out
}

// Totals sums order_count and amount_cents.
func Totals(rows []DailyOrder) (orders, cents int64) {
	for _, r := range rows {
		orders += r.OrderCount
		cents += r.AmountCents
	}
	return orders, cents
}

// WriteNDJSON writes rows as a partition-output file, as a job would hand it
// to `lakeswap publish`.
func WriteNDJSON(path string, rows []DailyOrder) error {
	sorted := append([]DailyOrder(nil), rows...)
	sortRows(sorted)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range sorted {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// ReadDaily reads a daily_orders table's current rows back through
// iceberg-go's scan, as any reader of the table would, sorted by date and
// channel.
func ReadDaily(ctx context.Context, tbl *table.Table) ([]DailyOrder, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	return readDaily(ctx, tbl.Scan())
}

// ReadDailyAt reads the table's rows at a snapshot (a branch's), sorted.
func ReadDailyAt(ctx context.Context, tbl *table.Table, snapshotID int64) ([]DailyOrder, error) {
	return readDaily(ctx, tbl.Scan(table.WithSnapshotID(snapshotID)))
}

func readDaily(ctx context.Context, scan *table.Scan) ([]DailyOrder, error) {
	at, err := scan.ToArrowTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan the daily orders: %w", err)
	}
	defer at.Release()
	rr := array.NewTableReader(at, 1024)
	defer rr.Release()
	var out []DailyOrder
	for rr.Next() {
		rec := rr.RecordBatch()
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		dates, ch := col("order_date").(*array.Date32), col("channel")
		cnt, amt := col("order_count").(*array.Int64), col("amount_cents").(*array.Int64)
		for i := range int(rec.NumRows()) {
			out = append(out, DailyOrder{
				OrderDate: dates.Value(i).ToTime().Format(time.DateOnly), Channel: ch.ValueStr(i),
				OrderCount: cnt.Value(i), AmountCents: amt.Value(i)})
		}
	}
	sortRows(out)
	return out, nil
}

// Group sums order_count and amount_cents of one day and channel over every
// row a reader sees, so that an appended duplicate shows up doubled.
func Group(rows []DailyOrder, date, channel string) (orders, cents int64) {
	for _, r := range rows {
		if r.OrderDate == date && r.Channel == channel {
			orders += r.OrderCount
			cents += r.AmountCents
		}
	}
	return orders, cents
}

func sortRows(rows []DailyOrder) {
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].OrderDate != rows[j].OrderDate {
			return rows[i].OrderDate < rows[j].OrderDate
		}
		return rows[i].Channel < rows[j].Channel
	})
}
