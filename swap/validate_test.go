package swap_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// recSource serves fixed batches by partition, whatever rows they hold.
type recSource map[string]func() arrow.RecordBatch

func (s recSource) Open(_ context.Context, partition string) (array.RecordReader, error) {
	mk, ok := s[partition]
	if !ok {
		return array.NewRecordReader(retail.Schema, nil)
	}
	rec := mk()
	defer rec.Release()
	return array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
}

func rows(r ...retail.DailyOrder) func() arrow.RecordBatch {
	return func() arrow.RecordBatch { return retail.Record(r) }
}

// withNullChannel is one row of 2026-01-01 whose channel is null.
func withNullChannel() arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, retail.Schema)
	defer b.Release()
	b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	b.Field(1).(*array.StringBuilder).AppendNull()
	b.Field(2).(*array.Int64Builder).Append(1)
	b.Field(3).(*array.Int64Builder).Append(100)
	return b.NewRecordBatch()
}

// withInt32Amount has amount_cents as int32 where the table wants long.
func withInt32Amount() arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "order_date", Type: arrow.FixedWidthTypes.Date32},
		{Name: "channel", Type: arrow.BinaryTypes.String},
		{Name: "order_count", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount_cents", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	b.Field(1).(*array.StringBuilder).Append("web")
	b.Field(2).(*array.Int64Builder).Append(1)
	b.Field(3).(*array.Int32Builder).Append(100)
	return b.NewRecordBatch()
}

func TestValidationRefuses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		web := func(date string, n, c int64) retail.DailyOrder {
			return retail.DailyOrder{OrderDate: date, Channel: "web", OrderCount: n, AmountCents: c}
		}
		ok01 := rows(web("2026-01-01", 1, 100))
		ok02 := rows(web("2026-01-02", 1, 100))
		cases := []struct {
			name   string
			src    recSource
			kind   verify.Kind
			part   string
			row    int64
			column string
		}{
			{"row outside the declared partitions", recSource{"2026-01-01": ok01, "2026-01-02": rows(web("2026-01-02", 1, 1), web("2026-01-03", 1, 1))},
				verify.KindOutside, "order_date=2026-01-02", 2, "order_date"},
			{"zero rows", recSource{"2026-01-01": ok01}, verify.KindEmpty, "order_date=2026-01-02", 0, ""},
			{"duplicate grain", recSource{"2026-01-01": ok01, "2026-01-02": rows(web("2026-01-02", 1, 1), web("2026-01-02", 2, 2))},
				verify.KindDuplicateGrain, "order_date=2026-01-02", 2, ""},
			{"null grain value", recSource{"2026-01-01": withNullChannel, "2026-01-02": ok02}, verify.KindNullGrain, "order_date=2026-01-01", 1, "channel"},
			{"negative amount", recSource{"2026-01-01": ok01, "2026-01-02": rows(web("2026-01-02", 1, 5), retail.DailyOrder{OrderDate: "2026-01-02", Channel: "app", OrderCount: 1, AmountCents: -5})},
				verify.KindCheck, "order_date=2026-01-02", 2, "amount_cents"},
			{"column of the wrong type", recSource{"2026-01-01": withInt32Amount, "2026-01-02": ok02}, verify.KindSchema, "order_date=2026-01-01", 0, "amount_cents"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnvOn(t, b)
				e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
				metaBefore, filesBefore := e.table().MetadataLocation(), e.dataFiles()

				res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: tc.src})
				var refused *outcome.RefusedError
				if !errors.As(err, &refused) || !errors.Is(err, outcome.ErrRefused) {
					t.Fatalf("err = %v, want a outcome.RefusedError", err)
				}
				i := slices.IndexFunc(refused.Findings, func(f verify.Finding) bool { return f.Kind == tc.kind })
				if i < 0 {
					t.Fatalf("findings %v lack kind %s", refused.Findings, tc.kind)
				}
				f := refused.Findings[i]
				if f.Partition != tc.part || f.Row != tc.row || f.Column != tc.column {
					t.Errorf("finding %+v; want partition %s, row %d, column %q", f, tc.part, tc.row, tc.column)
				}
				msg := err.Error()
				for _, want := range []string{tc.part, tc.column} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q does not name %q", msg, want)
					}
				}
				if got := e.table().MetadataLocation(); got != metaBefore {
					t.Errorf("metadata location moved from %s to %s on a refused publish", metaBefore, got)
				}
				if got := e.dataFiles(); !slices.Equal(got, filesBefore) {
					t.Errorf("files after a refused publish %v, want only %v", got, filesBefore)
				}
				if res == nil || res.Status != "refused" {
					t.Errorf("result %+v, want status refused", res)
				}
			})
		}
	})
}

func TestEveryFindingReported(t *testing.T) {
	e := newEnv(t)
	src := recSource{
		"2026-01-01": rows(retail.DailyOrder{OrderDate: "2026-01-01", Channel: "web", AmountCents: -1},
			retail.DailyOrder{OrderDate: "2026-01-01", Channel: "web", AmountCents: -2}),
	}
	_, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: src})
	var refused *outcome.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err = %v, want refused", err)
	}
	kinds := map[verify.Kind]int{}
	for _, f := range refused.Findings {
		kinds[f.Kind]++
	}
	want := map[verify.Kind]int{verify.KindCheck: 2, verify.KindDuplicateGrain: 1, verify.KindEmpty: 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d findings of kind %s, want %d (all: %v)", kinds[k], k, n, refused.Findings)
		}
	}
}

func TestAllowEmptyWipesOnRequest(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch2), fixtureRange...)
	_, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: []string{"2026-01-02"}, Source: recSource{}, AllowEmpty: true})
	if err != nil {
		t.Fatalf("publish of zero rows with AllowEmpty: %v", err)
	}
	rows := e.daily()
	if n, _ := group(rows, "2026-01-02", "web"); n != 0 {
		t.Errorf("2026-01-02/web still reads %d orders after an allowed wipe", n)
	}
	if n, _ := group(rows, "2026-01-01", "web"); n != 1 {
		t.Errorf("2026-01-01/web reads %d orders; a wipe of 2026-01-02 must leave it", n)
	}
}
