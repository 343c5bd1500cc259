package swap_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

var dailyOrders = table.Identifier{"retail", "daily_orders"}

// env is a catalog on one backend with the retail table.
type env struct {
	t     *testing.T
	ctx   context.Context
	cat   *catalog.Catalog
	pub   *swap.Publisher
	ident table.Identifier
	// dataFiles lists every Parquet file in the warehouse.
	dataFiles func() []string
	// allFiles lists every file in the warehouse, metadata included, as
	// locations (file:///... or s3://...).
	allFiles func() []string
	// home is the embedded catalog's folder on the local backend.
	home string
}

// newEnv is the embedded default: SQLite and local files.
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, backends[0])
}

func newEnvOn(t *testing.T, b backend) *env {
	t.Helper()
	e := b.open(t)
	e.t = t
	if _, err := catalog.CreateTable(e.ctx, e.cat, dailyOrders, retail.Spec()); err != nil {
		t.Fatal(err)
	}
	e.ident = dailyOrders
	return e
}

func openEnv(t *testing.T, ctx context.Context, cfg catalog.Config) *env {
	t.Helper()
	cat, err := catalog.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return &env{t: t, ctx: ctx, cat: cat, pub: &swap.Publisher{Catalog: cat}}
}

func (e *env) publish(rows []retail.DailyOrder, partitions ...string) (*swap.Result, error) {
	e.t.Helper()
	return e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: partitions, Source: retail.NewSource(rows), SourceName: "test"})
}

func (e *env) mustPublish(rows []retail.DailyOrder, partitions ...string) *swap.Result {
	e.t.Helper()
	res, err := e.publish(rows, partitions...)
	if err != nil {
		e.t.Fatalf("publish %v: %v", partitions, err)
	}
	return res
}

func (e *env) table() *table.Table {
	e.t.Helper()
	return e.tableNamed(e.ident)
}

func (e *env) tableNamed(ident table.Identifier) *table.Table {
	e.t.Helper()
	tbl, err := e.cat.LoadTable(e.ctx, ident)
	if err != nil {
		e.t.Fatal(err)
	}
	return tbl
}

// daily reads the table's current rows back, as a reader of the table would.
func (e *env) daily() []retail.DailyOrder {
	e.t.Helper()
	return readDaily(e.t, e.ctx, e.table())
}

func readDaily(t *testing.T, ctx context.Context, tbl *table.Table) []retail.DailyOrder {
	t.Helper()
	rows, err := retail.ReadDaily(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func group(rows []retail.DailyOrder, date, channel string) (int64, int64) {
	return retail.Group(rows, date, channel)
}

func fixture(t *testing.T, stage string) []retail.DailyOrder {
	t.Helper()
	rows, err := retail.Daily(stage)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func snapshots(t *testing.T, tbl *table.Table) int {
	t.Helper()
	return len(tbl.Metadata().Snapshots())
}

// localParquet lists the Parquet files under a local warehouse.
func localParquet(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && filepath.Ext(path) == ".parquet" {
			out = append(out, path)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func mustReader(t *testing.T, rec arrow.RecordBatch) array.RecordReader {
	t.Helper()
	rr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

func dayAfter(date string, days int) string {
	d, _ := time.Parse(time.DateOnly, date)
	return d.AddDate(0, 0, days).Format(time.DateOnly)
}

// hookSource runs before once, when the publish first opens a partition:
// after the plan has noted its base, before the commit.
type hookSource struct {
	source.Source
	before func()
	once   sync.Once
}

func (h *hookSource) Open(ctx context.Context, partition string) (array.RecordReader, error) {
	h.once.Do(h.before)
	return h.Source.Open(ctx, partition)
}

// runFiles lists the data files a run staged.
func (e *env) runFiles(runID string) []string {
	var out []string
	for _, f := range e.dataFiles() {
		if strings.Contains(f, "run-"+runID) {
			out = append(out, f)
		}
	}
	return out
}

// withoutHolds leaves out the holds of attempts (lakeswap/holds/), for a
// list of files taken while a publish runs and holds its attempt: compared
// with the files after, it also says that the hold was released.
func withoutHolds(files []string) []string {
	return slices.DeleteFunc(files, func(f string) bool { return strings.Contains(f, "/lakeswap/holds/") })
}
