package main

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

// TestEvolvedSchema: another engine adds a column after lakeswap wrote
// the table (ALTER TABLE ADD COLUMN note string), then renames one of the
// grain's. Files written before are read by field id, the new column null:
// the same rows again commit nothing, new rows publish, and verify of the
// runs from before and after each change passes. On every site.
func TestEvolvedSchema(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		s.must("publish", "--run-id", "before", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))

		ctx, cat, _, err := openPublisher(context.Background(), siteConfig(t, s), noLog())
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := cat.LoadTable(ctx, []string{"retail", "daily_orders"})
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.UpdateSchema(true, false).AddColumn([]string{"note"}, iceberg.PrimitiveTypes.String, "", false, nil).Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		cat.Close()

		meta := s.metadata("daily_orders")
		if out := s.must("publish", "--run-id", "same", "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t)); s.metadata("daily_orders") != meta {
			t.Errorf("the same rows after a column was added committed: %s", out)
		}
		// One day only: run before still holds the other, written under the
		// old schema, which verify --table reads it with.
		day2 := write(t, t.TempDir(), "day2.ndjson", `{"order_date":"2026-01-02","channel":"web","order_count":3,"amount_cents":100,"note":"late"}`+"\n")
		s.must("publish", "--run-id", "after", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-02", day2)
		for _, run := range []string{"before", "after"} {
			if code, out, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", run); code != 0 {
				t.Errorf("verify of run %s: exit %d: %s%s", run, code, out, errs)
			}
		}
		out := s.must("-o", "json", "verify", "--table", "retail.daily_orders")
		if !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"run_id": "before"`) {
			t.Errorf("verify --table does not check run before's partition as it recorded it: %s", out)
		}

		// Then a rename (channel, part of the grain, found by its field id).
		ctx, cat, _, err = openPublisher(context.Background(), siteConfig(t, s), noLog())
		if err != nil {
			t.Fatal(err)
		}
		tbl, err = cat.LoadTable(ctx, []string{"retail", "daily_orders"})
		if err != nil {
			t.Fatal(err)
		}
		tx = tbl.NewTransaction()
		if err := tx.UpdateSchema(true, false).RenameColumn([]string{"channel"}, "sales_channel").Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		cat.Close()
		renamed := write(t, t.TempDir(), "renamed.ndjson", `{"order_date":"2026-01-01","sales_channel":"web","order_count":3,"amount_cents":100}`+"\n")
		s.must("publish", "--run-id", "renamed", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", renamed)
		for _, run := range []string{"before", "after", "renamed"} {
			if code, out, errs := s.cli("verify", "--table", "retail.daily_orders", "--run", run); code != 0 {
				t.Errorf("verify of run %s after the rename: exit %d: %s%s", run, code, out, errs)
			}
		}
		if out := s.must("-o", "json", "verify", "--table", "retail.daily_orders"); !strings.Contains(out, `"ok": true`) {
			t.Errorf("verify --table after the rename: %s", out)
		}
	})
}
