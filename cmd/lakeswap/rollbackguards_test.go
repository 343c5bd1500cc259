//go:build !noduckdb

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
)

// TestRollbackMeetsTheGuards: a rollback changes a table as a run does,
// and meets the same guards. Once January is frozen, a full rollback of a
// run of its days is refused (it records nothing), and so is a scoped one
// without --restate-frozen; a scoped one with it puts the days back and
// records the decision, which history shows. A forced rollback of a run
// that a later release's share on the same table would drop is refused,
// while the release's other table keeps its share; the release rolled
// back first, the run rolls back.
func TestRollbackMeetsTheGuards(t *testing.T) {
	t.Run("frozen", func(t *testing.T) {
		s := newSite(t, "sqlite+local")
		s.must("table", "create", "--schema", write(t, s.home, "daily_orders.yaml", schemaYAML))
		s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--run-id", "r1", newHomeInput(t))
		rows, err := retail.Daily(retail.AfterBatch2)
		if err != nil {
			t.Fatal(err)
		}
		changed := filepath.Join(t.TempDir(), "batch2.ndjson")
		if err := retail.WriteNDJSON(changed, rows); err != nil {
			t.Fatal(err)
		}
		s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--run-id", "r2", changed)
		s.must("table", "set", "--table", "retail.daily_orders", "freeze-after=P1M+7D")
		meta, files := s.metadata("daily_orders"), s.files()
		if code, _, errs := s.cli("rollback", "--table", "retail.daily_orders", "--run", "r2"); code != exitRollbackRefuse || !strings.Contains(errs, "order_date=2026-01-01, order_date=2026-01-02, frozen") || !strings.Contains(errs, "--scoped --restate-frozen") {
			t.Errorf("a full rollback of frozen days: exit %d: %s; want refused naming them", code, errs)
		}
		if code, _, errs := s.cli("rollback", "--scoped", "--table", "retail.daily_orders", "--run", "r2"); code != exitRollbackRefuse || !strings.Contains(errs, "needs --restate-frozen --reason") {
			t.Errorf("a scoped rollback of frozen days: exit %d: %s; want refused", code, errs)
		}
		if code, _, errs := s.cli("rollback", "--restate-frozen", "--reason", "x", "--table", "retail.daily_orders", "--run", "r2"); code != exitUsage || !strings.Contains(errs, "goes with --scoped") {
			t.Errorf("--restate-frozen on a full rollback: exit %d: %s; want a usage error", code, errs)
		}
		if code, _, errs := s.cli("rollback", "--scoped", "--restate-frozen", "--table", "retail.daily_orders", "--run", "r2"); code != exitUsage || !strings.Contains(errs, "--reason") {
			t.Errorf("--restate-frozen without a reason: exit %d: %s; want a usage error", code, errs)
		}
		if s.metadata("daily_orders") != meta || !slices.Equal(s.files(), files) {
			t.Fatal("a refused rollback changed the table or its files")
		}
		if code, out, errs := s.cli("rollback", "--scoped", "--restate-frozen", "--reason", "the refunds were wrong", "--decided-by", "ana", "--table", "retail.daily_orders", "--run", "r2"); code != 0 || !strings.Contains(out, "as recorded before the run") {
			t.Fatalf("a scoped rollback with --restate-frozen: exit %d: %s%s", code, out, errs)
		}
		if out := s.must("history", "--table", "retail.daily_orders"); !strings.Contains(out, "run rollback-r2 restated frozen partitions order_date=2026-01-01..02 (2), decided by ana: the refunds were wrong") {
			t.Errorf("history does not record the rollback's restatement:\n%s", out)
		}
		// r1's content again is no change: the days hold what r1 wrote.
		if out := s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, newHomeInput(t)); !strings.Contains(out, "unchanged") {
			t.Errorf("r1's content after the rollback: %s; want unchanged", out)
		}
	})

	t.Run("release share", func(t *testing.T) {
		s := newSite(t, "sqlite+local")
		dir := retailJobs(t, s, releaseEvents(0))
		facts := filepath.Join(dir, "orders_fact.yaml")
		t.Chdir(t.TempDir())
		s.must("publish", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", "base")
		write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(1))
		s.must("publish", "--job", facts, "--partitions", twoDays, "--run-id", "alone")
		write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(2))
		s.must("publish", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", "rel")
		factsMeta, dailyMeta := s.metadata("orders_fact"), s.metadata("daily_orders")
		if code, _, errs := s.cli("rollback", "--force", "--table", "retail.orders_fact", "--run", "alone"); code != exitRollbackRefuse || !strings.Contains(errs, "share of release rel") || !strings.Contains(errs, "rollback --run rel") {
			t.Errorf("a forced rollback dropping a release's share: exit %d: %s; want refused naming the release", code, errs)
		}
		if s.metadata("orders_fact") != factsMeta || s.metadata("daily_orders") != dailyMeta {
			t.Fatal("a refused rollback moved a table")
		}
		s.must("rollback", "--table", "retail.orders_fact", "--run", "rel")
		if code, out, errs := s.cli("rollback", "--table", "retail.orders_fact", "--run", "alone"); code != 0 {
			t.Errorf("the run, once the release is rolled back: exit %d: %s%s", code, out, errs)
		}
	})
}

// TestReleaseRefusesAPinnedUpstream: a downstream job that pins a
// snapshot of a table the release rebuilds is refused naming both (exit
// 2), where the release computed it from the old snapshot and committed
// the new upstream beside a downstream of the old; nothing moves.
func TestReleaseRefusesAPinnedUpstream(t *testing.T) {
	s := newSite(t, "sqlite+local")
	dir := retailJobs(t, s, releaseEvents(0))
	facts := filepath.Join(dir, "orders_fact.yaml")
	t.Chdir(t.TempDir())
	s.must("publish", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", "base")
	tbl, done := retailTable(t, s, "orders_fact")
	pinned := tbl.CurrentSnapshot().SnapshotID
	done()
	daily := filepath.Join(dir, "daily_orders.yaml")
	spec := strings.Replace(string(mustRead(t, daily)), "{table: retail.orders_fact, partitions: same}", fmt.Sprintf("{table: retail.orders_fact, snapshot: %d, partitions: same}", pinned), 1)
	write(t, dir, "daily_orders.yaml", spec)
	write(t, filepath.Join(dir, "raw"), "batch.ndjson", releaseEvents(1))
	factsMeta, dailyMeta := s.metadata("orders_fact"), s.metadata("daily_orders")
	code, _, errs := s.cli("publish", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", "stale")
	if code != exitUsage || !strings.Contains(errs, fmt.Sprintf("reads table retail.orders_fact pinned at snapshot %d, and the release rebuilds retail.orders_fact", pinned)) {
		t.Errorf("a release whose downstream pins the upstream's old snapshot: exit %d: %s; want refused", code, errs)
	}
	if s.metadata("orders_fact") != factsMeta || s.metadata("daily_orders") != dailyMeta {
		t.Error("the refused release moved a table")
	}
}

// TestVerifyOfAReleaseFromATableItLeftUnchanged: verify --run of a release
// asked of a table the release left unchanged verifies the release's
// other tables, found in the catalog, and fails when a file of the
// release there cannot be read, where it exited 0 having verified
// nothing.
func TestVerifyOfAReleaseFromATableItLeftUnchanged(t *testing.T) {
	s := newSite(t, "sqlite+local")
	dir := retailJobs(t, s, releaseEvents(0))
	facts := filepath.Join(dir, "orders_fact.yaml")
	t.Chdir(t.TempDir())
	s.must("publish", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", "base")
	other := write(t, t.TempDir(), "other.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,1\n2026-01-01,app,1,1\n")
	s.must("publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01", "--run-id", "other-writer", "--allow-implausible", other)
	s.must("publish", "--job", facts, "--downstream", "--jobs", dir, "--partitions", twoDays, "--run-id", "back")
	if code, out, errs := s.cli("verify", "--table", "retail.orders_fact", "--run", "back"); code != 0 || !strings.Contains(out, "retail.daily_orders, of the same release: run back") || !strings.Contains(out, ": ok") {
		t.Errorf("verify of the release from the facts it left unchanged: exit %d: %s%s; want daily_orders verified", code, out, errs)
	}
	var damaged string
	for _, f := range s.files() {
		if strings.Contains(f, "daily_orders") && strings.Contains(f, "run-back-") && strings.HasSuffix(f, ".parquet") {
			damaged = strings.TrimPrefix(f, "file://")
		}
	}
	if damaged == "" {
		t.Fatal("no file of the release on daily_orders")
	}
	if err := os.WriteFile(damaged, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := s.cli("verify", "--table", "retail.orders_fact", "--run", "back"); code != exitVerifyFailed || !strings.Contains(out, "retail.daily_orders, of the same release: run back") ||
		!strings.Contains(errs, "verify retail.daily_orders (run back)") || !strings.Contains(errs, "cannot be read: read parquet footer") {
		t.Errorf("verify of the release from the facts with a file of it on daily_orders damaged: exit %d: %s%s; want a failure naming daily_orders", code, out, errs)
	}
}
