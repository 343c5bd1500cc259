package gc_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/gc"
)

var daily = table.Identifier{"retail", "daily_orders"}

// TestCollectorTakesOnlyStrays, on a table of the embedded catalog: of a
// file in lakeswap's staging layout that no snapshot references, one an
// attempt wrote past the grace period is listed by a dry run and removed
// with Yes; one within the grace is left; a file another engine wrote
// beside them, and every file main references, are never touched, and
// the table holds what it held.
func TestCollectorTakesOnlyStrays(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	cfg, err := catalog.Resolve(catalog.Settings{Home: home, Getenv: func(string) string { return "" }, ConfigFile: os.DevNull})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if _, err := catalog.CreateTable(ctx, cat, daily, retail.Spec()); err != nil {
		t.Fatal(err)
	}
	rows, err := retail.Daily(retail.AfterBatch1)
	if err != nil {
		t.Fatal(err)
	}
	pub := &swap.Publisher{Catalog: cat}
	if _, err := pub.Publish(ctx, swap.Request{Table: daily, RunID: "first", Partitions: []string{"2026-01-01", "2026-01-02"}, Source: retail.NewSource(rows), SourceName: "test"}); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, daily)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data", "order_date=2026-01-01")
	now := time.Now()
	put := func(rel string, age time.Duration) string {
		t.Helper()
		p := filepath.Join(data, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not a file of the table"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stray := put("run-killed-1a2b3c4d/part-00000.parquet", 48*time.Hour)
	young := put("run-running-5e6f7a8b/part-00000.parquet", time.Minute)
	foreign := put("other-engine.parquet", 48*time.Hour)
	before := tableFiles(t, home)

	c := &gc.Collector{Catalog: cat}
	res, err := c.Run(ctx, gc.Request{Table: daily})
	if err != nil || res.Removed || len(res.Items) != 1 || res.Items[0].Location != "file://"+stray || res.Items[0].RunID != "killed" || res.Young != 1 {
		t.Fatalf("dry run: %+v, %v; want the stray file alone listed, one young", res, err)
	}
	if !slices.Equal(tableFiles(t, home), before) {
		t.Fatal("a dry run removed something")
	}
	if res, err = c.Run(ctx, gc.Request{Table: daily, Yes: true}); err != nil || !res.Removed {
		t.Fatalf("gc --yes: %+v, %v", res, err)
	}
	want := slices.DeleteFunc(before, func(p string) bool { return p == stray })
	if got := tableFiles(t, home); !slices.Equal(got, want) {
		t.Errorf("after gc the files are %v, want %v", got, want)
	}
	for _, p := range []string{young, foreign} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v; gc must leave it", p, err)
		}
	}
	got, err := retail.ReadDaily(ctx, tableNow(t, cat))
	if err != nil || len(got) != len(rows) {
		t.Errorf("the table after gc holds %d rows (%v), want %d", len(got), err, len(rows))
	}
}

func tableNow(t *testing.T, cat *catalog.Catalog) *table.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), daily)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// tableFiles lists every file under the warehouse, sorted.
func tableFiles(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(home, "warehouse"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
