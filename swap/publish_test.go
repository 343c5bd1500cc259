package swap_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

var fixtureRange = []string{"2026-01-01", "2026-01-02"}

func TestRerunConverges(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
		corrected := fixture(t, retail.AfterBatch2)

		first := e.mustPublish(corrected, fixtureRange...)
		snapsAfterFirst := snapshots(t, e.table())
		second := e.mustPublish(corrected, fixtureRange...)

		if first.Status != "published" || second.Status != "unchanged" {
			t.Fatalf("statuses %q, %q; want published, then unchanged", first.Status, second.Status)
		}
		if got := snapshots(t, e.table()); got != snapsAfterFirst {
			t.Errorf("main has %d snapshots after the rerun, want %d: an identical rerun commits nothing", got, snapsAfterFirst)
		}
		if first.Plan.Fingerprint.Hash != second.Plan.Fingerprint.Hash {
			t.Errorf("rerun fingerprint %s, first %s: same input must give the same content", second.Plan.Fingerprint.Hash, first.Plan.Fingerprint.Hash)
		}
		if second.Plan.BaseFingerprint.Hash != first.Plan.Fingerprint.Hash {
			t.Errorf("rerun replaced content with fingerprint %s, but the first publish committed %s", second.Plan.BaseFingerprint.Hash, first.Plan.Fingerprint.Hash)
		}
		rows := e.daily()
		if n, c := group(rows, "2026-01-02", "web"); n != 2 || c != 19000 {
			t.Errorf("2026-01-02/web = %d orders, %d cents; want 2, 19000", n, c)
		}
		if n, c := retail.Totals(rows); n != 6 || c != 39000 {
			t.Errorf("totals = %d orders, %d cents; want 6, 39000", n, c)
		}
		if len(rows) != len(corrected) {
			t.Errorf("table holds %d rows, want %d", len(rows), len(corrected))
		}
	})
}

// TestAppendContrast shows what the replace protects against: the same slice
// appended with iceberg-go's plain Append doubles, then triples, the group.
func TestAppendContrast(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		corrected := fixture(t, retail.AfterBatch2)
		e.mustPublish(corrected, fixtureRange...)

		slice := retail.Only(corrected, fixtureRange...)
		for i, want := range []struct{ n, c int64 }{{4, 38000}, {6, 57000}} {
			rec := retail.Record(slice)
			tbl, err := e.table().Append(e.ctx, mustReader(t, rec), nil)
			rec.Release()
			if err != nil {
				t.Fatalf("append %d: %v", i+1, err)
			}
			if n, c := group(readDaily(t, e.ctx, tbl), "2026-01-02", "web"); n != want.n || c != want.c {
				t.Errorf("after append %d: 2026-01-02/web = %d/%d, want %d/%d", i+1, n, c, want.n, want.c)
			}
		}
	})
}

func TestOneCommitPerPublish(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, parts := range []int{1, 30} {
			e := newEnvOn(t, b)
			var rows []retail.DailyOrder
			var dates []string
			for d := range parts {
				date := dayAfter("2026-01-01", d)
				dates = append(dates, date)
				rows = append(rows, retail.DailyOrder{OrderDate: date, Channel: "web", OrderCount: int64(d + 1), AmountCents: 100})
			}
			before := e.cat.Commits()
			e.mustPublish(rows, dates...)
			if got := e.cat.Commits() - before; got != 1 {
				t.Errorf("%d partitions: %d catalog commits, want 1", parts, got)
			}
			before = e.cat.Commits()
			e.mustPublish(rows, dates...) // the same content: nothing to commit
			if got := e.cat.Commits() - before; got != 0 {
				t.Errorf("%d partitions, identical rerun: %d catalog commits, want 0", parts, got)
			}
			for i := range rows {
				rows[i].AmountCents = 200
			}
			before = e.cat.Commits()
			e.mustPublish(rows, dates...) // a replace, not an append
			if got := e.cat.Commits() - before; got != 1 {
				t.Errorf("%d partitions, replace: %d catalog commits, want 1", parts, got)
			}
			if got := len(e.daily()); got != parts {
				t.Errorf("%d partitions: table holds %d rows after replace, want %d", parts, got, parts)
			}
		}
	})
}

func TestReplaceLeavesOtherPartitions(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch1), "2026-01-01", "2026-01-02")
	e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-03", Channel: "app", OrderCount: 7, AmountCents: 700}}, "2026-01-03")
	e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-02", Channel: "web", OrderCount: 1, AmountCents: 1}}, "2026-01-02")
	rows := e.daily()
	if n, _ := group(rows, "2026-01-03", "app"); n != 7 {
		t.Errorf("2026-01-03/app = %d orders after replacing 2026-01-02, want 7", n)
	}
	if n, _ := group(rows, "2026-01-01", "web"); n != 2 {
		t.Errorf("2026-01-01/web = %d orders after replacing 2026-01-02, want 2", n)
	}
	if n, c := group(rows, "2026-01-02", "web"); n != 1 || c != 1 {
		t.Errorf("2026-01-02/web = %d/%d, want 1/1", n, c)
	}
}

// TestConflictCommitsNothing: a commit to a planned partition between the
// plan and the commit is a conflict that commits nothing and leaves nothing.
func TestConflictCommitsNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)

		// Another writer commits to a planned partition after this publish
		// planned.
		var other *swap.Result
		src := &hookSource{Source: retail.NewSource(fixture(t, retail.AfterBatch2)), before: func() {
			var err error
			other, err = e.publish([]retail.DailyOrder{{OrderDate: "2026-01-01", Channel: "store", OrderCount: 3, AmountCents: 300}}, "2026-01-01")
			if err != nil {
				t.Errorf("other writer: %v", err)
			}
		}}
		res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: src, Parallelism: 1})
		if !errors.Is(err, outcome.ErrConflict) || !strings.Contains(err.Error(), "in partition order_date=2026-01-01") {
			t.Fatalf("publish after a concurrent commit: err = %v, want outcome.ErrConflict naming order_date=2026-01-01", err)
		}
		if errors.Is(err, outcome.ErrCommitUnknown) {
			t.Errorf("a lost compare-and-swap is classified as unknown: %v", err)
		}
		head := e.table().CurrentSnapshot()
		if other == nil || head.SnapshotID != other.SnapshotID {
			t.Fatalf("main is at %d, want the other writer's snapshot", head.SnapshotID)
		}
		rows := e.daily()
		if n, _ := group(rows, "2026-01-01", "store"); n != 3 {
			t.Errorf("the other writer's partition reads %d orders, want 3", n)
		}
		if n, c := group(rows, "2026-01-02", "web"); n != 1 || c != 9000 {
			t.Errorf("2026-01-02/web = %d/%d; the conflicting publish must commit nothing (want 1/9000)", n, c)
		}
		if left := e.runFiles(res.Plan.RunID); len(left) != 0 {
			t.Errorf("the conflicting run left staged files %v", left)
		}
	})
}

// TestBuildTwice, on every backend: a second build that gives other rows
// refuses the run, naming the partition, and nothing is committed or left
// behind; the same rows pass.
func TestBuildTwice(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		batch1, batch2 := fixture(t, retail.AfterBatch1), fixture(t, retail.AfterBatch2)
		e.mustPublish(batch1, fixtureRange...)
		meta, files := e.table().MetadataLocation(), e.allFiles()
		res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(batch2), SecondBuild: retail.NewSource(batch1)})
		if !errors.Is(err, outcome.ErrRefused) || res == nil || len(res.Plan.Findings) == 0 || res.Plan.Findings[0].Kind != verify.KindNondeterministic {
			t.Fatalf("a nondeterministic second build: %v (%+v)", err, res)
		}
		if e.table().MetadataLocation() != meta || !slices.Equal(e.allFiles(), files) {
			t.Error("a nondeterministic run changed the table or left files")
		}
		if res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(batch2), SecondBuild: retail.NewSource(batch2)}); err != nil || res.Status != "published" {
			t.Errorf("a deterministic second build: %v (%+v)", err, res)
		}
	})
}

// TestApplyRecheck: --recheck reads the staged rows again; a plan whose
// recorded fingerprint they do not give is refused as a conflict with the
// table unchanged, and the same plan as staged applies.
func TestApplyRecheck(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	plan, err := e.pub.Stage(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2))})
	if err != nil {
		t.Fatal(err)
	}
	meta := e.table().MetadataLocation()
	right := plan.Partitions[1].Fingerprint
	plan.Partitions[1].Fingerprint.Hash = strings.Repeat("0", 64)
	if _, err := e.pub.Apply(e.ctx, swap.ApplyOptions{Recheck: true}, plan); !errors.Is(err, outcome.ErrConflict) || !strings.Contains(err.Error(), "order_date=2026-01-02's staged files hold") {
		t.Errorf("apply --recheck of a plan its files do not match: %v", err)
	}
	if e.table().MetadataLocation() != meta {
		t.Error("the refused apply changed the table")
	}
	plan.Partitions[1].Fingerprint = right
	if res, err := e.pub.Apply(e.ctx, swap.ApplyOptions{Recheck: true}, plan); err != nil || res.Status != "published" {
		t.Errorf("apply --recheck of the plan as staged: %v", err)
	}
}

// TestMissingCommittedFileRollsBack, on every backend: a staged file removed
// behind the run's back (a discard of the same plan racing its apply, say)
// before the commit fails the commit; removed once the commit landed, it
// leaves a snapshot that cannot be read, which the check after the commit
// finds, and main goes back to the base.
func TestMissingCommittedFileRollsBack(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnvOn(t, b)
		e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
		base := e.table().CurrentSnapshot().SnapshotID
		var staged string
		remove := func(ctx context.Context) error {
			fsys, err := e.table().FS(ctx)
			if err != nil {
				return err
			}
			return fsys.Remove(staged)
		}
		e.pub.BeforeCommit = func(ctx context.Context, plan *swap.Plan) error {
			staged = plan.Partitions[1].NewFiles[0].Path
			return remove(ctx)
		}
		res, err := e.publish(fixture(t, retail.AfterBatch2), fixtureRange...)
		if err == nil || res == nil || res.Status != "not-committed" || e.table().CurrentSnapshot().SnapshotID != base {
			t.Fatalf("a staged file removed before the commit: %v (%+v)", err, res)
		}

		e.pub.BeforeCommit = func(_ context.Context, plan *swap.Plan) error {
			staged = plan.Partitions[1].NewFiles[0].Path
			return nil
		}
		e.pub.Progress = stepHook{"verify", func() {
			if err := remove(e.ctx); err != nil {
				t.Error(err)
			}
		}}
		res, err = e.publish(fixture(t, retail.AfterBatch2), fixtureRange...)
		if !errors.Is(err, outcome.ErrVerifyFailed) || res == nil || res.Status != "rolled-back" {
			t.Fatalf("a committed file removed: %v (%+v)", err, res)
		}
		if got := e.table().CurrentSnapshot().SnapshotID; got != base {
			t.Errorf("main at %d after the rollback, want the base %d", got, base)
		}
		if got := e.daily(); !slices.Equal(got, retail.Only(fixture(t, retail.AfterBatch1), fixtureRange...)) {
			t.Errorf("the table holds %v after the rollback", got)
		}
	})
}

// stepHook runs fn when a publish reaches the step named.
type stepHook struct {
	step string
	fn   func()
}

func (h stepHook) Step(s string) {
	if s == h.step {
		h.fn()
	}
}

func (stepHook) Staged(string, int64, int64) {}
