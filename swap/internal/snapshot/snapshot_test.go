package snapshot_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
)

var daily = table.Identifier{"retail", "daily_orders"}

// dailyTable opens an embedded catalog holding the retail story's empty
// daily table, closed when the test ends.
func dailyTable(t *testing.T) *catalog.Catalog {
	t.Helper()
	cfg, err := catalog.Resolve(catalog.Settings{Home: t.TempDir(), Getenv: func(string) string { return "" }, ConfigFile: os.DevNull})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	if _, err := catalog.CreateTable(context.Background(), cat, daily, retail.Spec()); err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestFilesAndAddedSince, on a table of the embedded catalog: Files lists
// a snapshot's live files by partition (the replaced ones gone), and
// AddedSince the files later snapshots on main added outside given
// partitions, oldest first, each with its snapshot; StillLive drops those
// a later commit took out again.
func TestFilesAndAddedSince(t *testing.T) {
	ctx := context.Background()
	cat := dailyTable(t)
	pub := &swap.Publisher{Catalog: cat}
	publish := func(runID, stage string, days ...string) int64 {
		t.Helper()
		rows, err := retail.Daily(stage)
		if err != nil {
			t.Fatal(err)
		}
		res, err := pub.Publish(ctx, swap.Request{Table: daily, RunID: runID, Partitions: days, Source: retail.NewSource(rows), SourceName: "test", AllowImplausible: true, AllowEmpty: true})
		if err != nil {
			t.Fatalf("publish %s: %v", runID, err)
		}
		return res.SnapshotID
	}
	first := publish("first", retail.AfterBatch1, "2026-01-01")
	publish("second", retail.AfterBatch2, "2026-01-02")
	publish("third", retail.AfterBatch2, "2026-01-01")

	tbl, err := cat.LoadTable(ctx, daily)
	if err != nil {
		t.Fatal(err)
	}
	meta := tbl.Metadata()
	c, err := contract.Of(meta)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now, err := snapshot.Files(ctx, fsys, meta.CurrentSnapshot(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(now) != 2 || !allUnder(snapshot.Paths(now["2026-01-01"]), "run-third-") || !allUnder(snapshot.Paths(now["2026-01-02"]), "run-second-") {
		t.Errorf("main's files by partition: %v; want 2026-01-01 of run third, 2026-01-02 of run second", now)
	}

	added, err := snapshot.AddedSince(ctx, fsys, meta, first, c, map[string]string{"2026-01-02": "order_date=2026-01-02"})
	if err != nil {
		t.Fatal(err)
	}
	if len(added) == 0 || !slices.IsSortedFunc(added, func(a, b snapshot.Added) int { return int(a.Snapshot.SequenceNumber - b.Snapshot.SequenceNumber) }) {
		t.Fatalf("added since the first run, outside 2026-01-02: %v", added)
	}
	for _, a := range added {
		if a.Partition != "2026-01-01" || !strings.Contains(a.Path, "run-third-") {
			t.Errorf("added %s of %s; want only run third's files of 2026-01-01", a.Path, a.Partition)
		}
	}
	if live := snapshot.StillLive(added, now); len(live) != len(added) {
		t.Errorf("StillLive kept %d of %d files main holds", len(live), len(added))
	}
	if live := snapshot.StillLive(added, nil); len(live) != 0 {
		t.Errorf("StillLive kept %v, with no file live", live)
	}
	if err := snapshot.Writable(meta); err != nil {
		t.Errorf("a format v2 table: %v", err)
	}
}

func allUnder(paths []string, part string) bool {
	return len(paths) > 0 && !slices.ContainsFunc(paths, func(p string) bool { return !strings.Contains(p, part) })
}

// answering is a catalog whose commit answers as told: applied or not,
// and with which error.
type answering struct {
	snapshot.Catalog
	apply  bool
	answer error
}

func (a *answering) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	if !a.apply {
		return nil, "", a.answer
	}
	meta, loc, err := a.Catalog.CommitTable(ctx, ident, reqs, ups)
	if err != nil {
		return meta, loc, err
	}
	return meta, loc, a.answer
}

// publishedDaily is the embedded catalog's daily table with one run
// published, so that main has a head.
func publishedDaily(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat := dailyTable(t)
	rows, err := retail.Daily(retail.AfterBatch1)
	if err != nil {
		t.Fatal(err)
	}
	pub := &swap.Publisher{Catalog: cat}
	if _, err := pub.Publish(context.Background(), swap.Request{Table: daily, RunID: "first", Partitions: []string{"2026-01-01"}, Source: retail.NewSource(rows), SourceName: "test"}); err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestSend: every commit lakeswap makes is sent and settled by Send, on a
// table of the embedded catalog, here a tag added on main's head. Landed
// and answered so, or answered with an error or a refusal after all, it
// is landed; not applied and answered with an error, it did not land;
// refused (main moved), it is a *Refused matching table.ErrCommitFailed;
// two tables on a catalog that commits one at a time are not sent.
func TestSend(t *testing.T) {
	ctx := context.Background()
	cat := publishedDaily(t)
	defer func(attempts int, backoff time.Duration) {
		snapshot.SettleAttempts, snapshot.SettleBackoff = attempts, backoff
	}(snapshot.SettleAttempts, snapshot.SettleBackoff)
	snapshot.SettleBackoff = time.Millisecond
	tag := func(name string, pinned int64) (*snapshot.Change, func() bool) {
		tbl, err := cat.LoadTable(ctx, daily)
		if err != nil {
			t.Fatal(err)
		}
		head := tbl.CurrentSnapshot().SnapshotID
		c := &snapshot.Change{Table: tbl, ID: head, Landed: func(m table.Metadata) bool { return m.SnapshotByName(name) != nil },
			Commit: table.TableCommit{Identifier: daily, Requirements: []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, &pinned)},
				Updates: []table.Update{snapshot.TagRun(name, head, time.Hour)}}}
		return c, func() bool {
			now, err := cat.LoadTable(ctx, daily)
			if err != nil {
				t.Fatal(err)
			}
			return c.Landed(now.Metadata())
		}
	}
	tbl, err := cat.LoadTable(ctx, daily)
	if err != nil {
		t.Fatal(err)
	}
	head := tbl.CurrentSnapshot().SnapshotID
	lost := errors.New("connection reset")
	for _, tc := range []struct {
		name   string
		cat    snapshot.Catalog
		pinned int64
		landed bool
		check  func(error) bool
	}{
		{"answered", cat, head, true, func(err error) bool { return err == nil }},
		{"applied, answer lost", &answering{cat, true, lost}, head, true, func(err error) bool { return err == nil }},
		{"applied, answered refused", &answering{cat, true, table.ErrCommitFailed}, head, true, func(err error) bool { return err == nil }},
		{"not applied, answer lost", &answering{cat, false, lost}, head, false, func(err error) bool { return errors.Is(err, outcome.ErrNotLanded) }},
		{"refused", cat, head + 1, false, func(err error) bool {
			refused := (*snapshot.Refused)(nil)
			return errors.As(err, &refused) && errors.Is(err, table.ErrCommitFailed)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, landed := tag("t-"+strings.ReplaceAll(tc.name, " ", "-"), tc.pinned)
			c.Commit.Identifier = daily
			err := snapshot.Send(ctx, tc.cat, slog.New(slog.DiscardHandler), "r", []*snapshot.Change{c})
			if !tc.check(err) || landed() != tc.landed {
				t.Errorf("Send: %v, the tag landed: %v; want it landed: %v", err, landed(), tc.landed)
			}
		})
	}
	one, _ := tag("two-a", head)
	two, landed := tag("two-b", head)
	err = snapshot.Send(ctx, &answering{cat, true, nil}, slog.New(slog.DiscardHandler), "r", []*snapshot.Change{one, two})
	if !errors.Is(err, catalog.ErrNoReleases) || landed() {
		t.Errorf("two tables on a catalog without commits across tables: %v; want refused, nothing sent", err)
	}
}

// tagLanding lands a tag on the daily table, pinned to snapshot pinned:
// a refusal because main moved pins main's head and is judged by why.
type tagLanding struct {
	cat                        snapshot.Catalog
	name                       string
	pinned                     int64
	builds, rebases, readBacks int
	why                        func(*tagLanding) string
}

func (l *tagLanding) Build(ctx context.Context) ([]*snapshot.Change, error) {
	l.builds++
	tbl, err := l.cat.LoadTable(ctx, daily)
	if err != nil {
		return nil, err
	}
	head := tbl.CurrentSnapshot().SnapshotID
	return []*snapshot.Change{{Table: tbl, ID: head, Landed: func(m table.Metadata) bool { return m.SnapshotByName(l.name) != nil },
		Commit: table.TableCommit{Identifier: daily, Requirements: []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, &l.pinned)},
			Updates: []table.Update{snapshot.TagRun(l.name, head, time.Hour)}}}}, nil
}

func (l *tagLanding) Rebase(ctx context.Context, _ *snapshot.Refused) (string, error) {
	l.rebases++
	tbl, err := l.cat.LoadTable(ctx, daily)
	if err != nil {
		return "", err
	}
	l.pinned = tbl.CurrentSnapshot().SnapshotID
	return l.why(l), nil
}

func (l *tagLanding) ReadBack(ctx context.Context) error {
	l.readBacks++
	tbl, err := l.cat.LoadTable(ctx, daily)
	if err != nil {
		return err
	}
	if tbl.Metadata().SnapshotByName(l.name) == nil {
		return errors.New("the tag is not there")
	}
	return nil
}

// TestLand: the commit engine commits a landing and reads it back;
// refused because main moved, it asks the landing to judge the new main
// and commits again when it allows, says the conflict when it does not
// or main keeps moving, and reads back only what landed.
func TestLand(t *testing.T) {
	ctx := context.Background()
	cat := publishedDaily(t)
	tbl, err := cat.LoadTable(ctx, daily)
	if err != nil {
		t.Fatal(err)
	}
	head := tbl.CurrentSnapshot().SnapshotID
	log := slog.New(slog.DiscardHandler)
	allow := func(*tagLanding) string { return "" }
	for _, tc := range []struct {
		name                       string
		pinned                     int64
		why                        func(*tagLanding) string
		builds, rebases, readBacks int
		conflict                   string
	}{
		{"on main", head, allow, 1, 0, 1, ""},
		{"main moved, judged fine", head + 1, allow, 2, 1, 1, ""},
		{"main moved, judged not", head + 1, func(*tagLanding) string { return "a later commit changed the partition" }, 1, 1, 0, "a later commit changed the partition"},
		// Another writer commits before every attempt: the pin is never main.
		{"main keeps moving", head + 1, func(l *tagLanding) string { l.pinned = head + 1; return "" },
			snapshot.RebaseAttempts, snapshot.RebaseAttempts, 0, "main kept moving"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &tagLanding{cat: cat, name: "t-" + strings.ReplaceAll(tc.name, " ", "-"), pinned: tc.pinned, why: tc.why}
			err := snapshot.Land(ctx, cat, log, "r", l)
			conflict := (*snapshot.Conflict)(nil)
			switch {
			case tc.conflict == "" && err != nil:
				t.Errorf("Land: %v; want landed", err)
			case tc.conflict != "" && (!errors.As(err, &conflict) || !strings.Contains(conflict.Why, tc.conflict) || !errors.Is(err, table.ErrCommitFailed)):
				t.Errorf("Land: %v; want a conflict saying %q", err, tc.conflict)
			}
			if l.builds != tc.builds || l.rebases != tc.rebases || l.readBacks != tc.readBacks {
				t.Errorf("built %d, rebased %d, read back %d times; want %d, %d, %d", l.builds, l.rebases, l.readBacks, tc.builds, tc.rebases, tc.readBacks)
			}
			now, err := cat.LoadTable(ctx, daily)
			if err != nil {
				t.Fatal(err)
			}
			if landed := now.Metadata().SnapshotByName(l.name) != nil; landed != (tc.conflict == "") {
				t.Errorf("the tag landed: %v; want %v", landed, tc.conflict == "")
			}
		})
	}
	// A refusal other than main moving (the catalog cannot commit two
	// tables as one) is no conflict: Land says it, and never rebases.
	two := &twoTables{tagLanding: &tagLanding{cat: cat, name: "two", pinned: head, why: allow}}
	if err := snapshot.Land(ctx, &answering{cat, true, nil}, log, "r", two); !errors.Is(err, catalog.ErrNoReleases) || two.rebases != 0 || two.readBacks != 0 {
		t.Errorf("two tables on a catalog without commits across tables: %v, rebased %d, read back %d; want refused, neither", err, two.rebases, two.readBacks)
	}
}

// twoTables builds its tag twice, as a commit across two tables.
type twoTables struct{ *tagLanding }

func (l *twoTables) Build(ctx context.Context) ([]*snapshot.Change, error) {
	one, err := l.tagLanding.Build(ctx)
	if err != nil {
		return nil, err
	}
	two, err := l.tagLanding.Build(ctx)
	return append(one, two...), err
}
