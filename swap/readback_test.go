package swap_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/swap"
)

// damagingCatalog lets a commit land, then replaces the first file the run
// committed with the file of an earlier publish that holds other rows, as
// storage corruption or a concurrent overwrite would.
type damagingCatalog struct {
	swap.Catalog
	t    *testing.T
	with string
	plan *swap.Plan // the plan being committed, as BeforeCommit saw it
}

func (d *damagingCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	meta, loc, err := d.Catalog.CommitTable(ctx, ident, reqs, ups)
	if err == nil && d.plan != nil {
		raw, rerr := os.ReadFile(localPath(d.t, d.with))
		if rerr == nil {
			rerr = os.WriteFile(localPath(d.t, d.plan.Partitions[0].NewFiles[0].Path), raw, 0o644)
		}
		if rerr != nil {
			d.t.Fatal(rerr)
		}
		d.plan = nil
	}
	return meta, loc, err
}

func localPath(t *testing.T, loc string) string {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

func TestVerifyFailureRollsBack(t *testing.T) {
	defer swap.SetCheckBackoff(time.Millisecond)()
	for _, keep := range []bool{false, true} {
		e := newEnv(t)
		other := e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-01", Channel: "web", OrderCount: 9, AmountCents: 9}}, "2026-01-01")
		base := e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
		damaging := &damagingCatalog{Catalog: e.cat, t: t, with: other.Plan.Partitions[0].NewFiles[0].Path}
		e.pub.Catalog = damaging
		e.pub.BeforeCommit = func(_ context.Context, plan *swap.Plan) error { damaging.plan = plan; return nil }

		res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange,
			Source: retail.NewSource(fixture(t, retail.AfterBatch2)), NoAutoRollback: keep})
		if !errors.Is(err, outcome.ErrVerifyFailed) {
			t.Fatalf("keep=%v: err = %v, want outcome.ErrVerifyFailed", keep, err)
		}
		if len(res.Mismatches) == 0 || res.Mismatches[0].Partition != "order_date=2026-01-01" {
			t.Errorf("keep=%v: mismatches %+v, want one naming order_date=2026-01-01", keep, res.Mismatches)
		}
		head := e.table().CurrentSnapshot().SnapshotID
		switch {
		case !keep && (head != base.SnapshotID || res.Status != "rolled-back"):
			t.Errorf("after a failed verification main is at %d (status %s), want rolled back to %d", head, res.Status, base.SnapshotID)
		case keep && (head != res.SnapshotID || res.Status != "verify-failed"):
			t.Errorf("with NoAutoRollback main is at %d (status %s), want the run's %d", head, res.Status, res.SnapshotID)
		}
	}
}

// TestUnreadableCommitIsLandedUnverified: a landed commit whose file cannot
// be read back for a moment (a reset, a cut-off body) is read again and
// verifies; one that stays unreadable is reported as landed, not verified,
// with main holding it, never as rolled back.
func TestUnreadableCommitIsLandedUnverified(t *testing.T) {
	defer swap.SetCheckBackoff(time.Millisecond)()
	for _, lasting := range []bool{false, true} {
		e := newEnv(t)
		e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
		var file string
		var good []byte
		checks := 0
		e.pub.BeforeCommit = func(_ context.Context, plan *swap.Plan) error {
			file = localPath(t, plan.Partitions[0].NewFiles[0].Path)
			return nil
		}
		e.pub.Progress = stepHook{"verify", func() {
			checks++
			switch {
			case checks == 1 && !lasting:
				var err error
				if good, err = os.ReadFile(file); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, good[:len(good)/2], 0o644); err != nil { // cut off
					t.Fatal(err)
				}
			case !lasting:
				if err := os.WriteFile(file, good, 0o644); err != nil {
					t.Fatal(err)
				}
			case checks == 1:
				// A read that fails, not bytes that differ: a folder where
				// the file was.
				if err := os.Remove(file); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(file, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}}
		res, err := e.publish(fixture(t, retail.AfterBatch2), fixtureRange...)
		head := e.table().CurrentSnapshot().SnapshotID
		if !lasting {
			if err != nil || res.Status != "published" || checks != 2 || head != res.SnapshotID {
				t.Errorf("a commit unreadable once: %v, status %s after %d checks", err, res.Status, checks)
			}
			continue
		}
		if !errors.Is(err, outcome.ErrLandedUnverified) || errors.Is(err, outcome.ErrVerifyFailed) || res.Status != "landed-unverified" {
			t.Errorf("a commit that stays unreadable: %v, status %s", err, res.Status)
		}
		if head != res.SnapshotID || checks != 4 {
			t.Errorf("main at %d after %d checks; the commit %d landed and must stay", head, checks, res.SnapshotID)
		}
		if err == nil || !strings.Contains(err.Error(), "lakeswap verify --table") {
			t.Errorf("the error does not say how to finish the check: %v", err)
		}
	}
}

// TestRollbackThatHappenedIsReported: a wrong commit is rolled back, but
// reading the base back after the rollback fails; main is at the base, so
// the publish reports a rollback (exit 6), never "landed, not verified".
func TestRollbackThatHappenedIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs in the full tier (make test)")
	}
	e := newEnv(t)
	other := e.mustPublish([]retail.DailyOrder{{OrderDate: "2026-01-01", Channel: "web", OrderCount: 9, AmountCents: 9}}, "2026-01-01")
	base := e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	damaging := &damagingCatalog{Catalog: e.cat, t: t, with: other.Plan.Partitions[0].NewFiles[0].Path}
	e.pub.Catalog = damaging
	e.pub.BeforeCommit = func(_ context.Context, plan *swap.Plan) error { damaging.plan = plan; return nil }
	baseFile := localPath(t, base.Plan.Partitions[1].NewFiles[0].Path)
	e.pub.Progress = stepHook{"rollback", func() {
		if err := os.WriteFile(baseFile, []byte("not parquet"), 0o644); err != nil {
			t.Fatal(err)
		}
	}}
	res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2))})
	head := e.table().CurrentSnapshot().SnapshotID
	if head != base.SnapshotID {
		t.Fatalf("main at %d, want the base %d after the rollback", head, base.SnapshotID)
	}
	if errors.Is(err, outcome.ErrLandedUnverified) || !errors.Is(err, outcome.ErrVerifyFailed) || res.Status != "rolled-back" {
		t.Errorf("a rollback that happened, then failed its check: %v, status %s", err, res.Status)
	}
}

// damagingAfterCommit lets a commit land, then does damage to the first
// file the run committed (its local path), once.
type damagingAfterCommit struct {
	swap.Catalog
	t      *testing.T
	damage func(t *testing.T, path string)
	plan   *swap.Plan
}

func (d *damagingAfterCommit) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	meta, loc, err := d.Catalog.CommitTable(ctx, ident, reqs, ups)
	if err == nil && d.plan != nil {
		d.damage(d.t, localPath(d.t, d.plan.Partitions[0].NewFiles[0].Path))
		d.plan = nil
	}
	return meta, loc, err
}

// rewriteUncompressed writes a file's rows again at its path,
// uncompressed: the same rows in other bytes, as another writer reusing
// the path would leave them.
func rewriteUncompressed(t *testing.T, path string) {
	t.Helper()
	rr, err := parquetio.Open(context.Background(), icebergio.LocalFS{}, path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	sc := rr.Schema()
	rr.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Uncompressed)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyChecksCommittedBytes: the read-back checks each committed
// file's bytes against the SHA-256 recorded when it was written, so the
// same rows in other bytes (another writer at the path) fail verification
// and are rolled back, the file named. Routes: publish, and the adopt
// path, whose files' hashes are taken as they are validated.
func TestVerifyChecksCommittedBytes(t *testing.T) {
	defer swap.SetCheckBackoff(time.Millisecond)()
	for _, adopt := range []bool{false, true} {
		e := newEnv(t)
		base := e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
		rewriting := &damagingAfterCommit{Catalog: e.cat, t: t, damage: rewriteUncompressed}
		e.pub.Catalog = rewriting
		e.pub.BeforeCommit = func(_ context.Context, plan *swap.Plan) error { rewriting.plan = plan; return nil }
		req := swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2))}
		if adopt {
			req.Source, req.Adopt = nil, writeForAdoption(t, e, "engine", fixture(t, retail.AfterBatch2))
		}
		res, err := e.pub.Publish(e.ctx, req)
		if !errors.Is(err, outcome.ErrVerifyFailed) {
			t.Fatalf("adopt=%v: err = %v, want outcome.ErrVerifyFailed", adopt, err)
		}
		if len(res.Mismatches) != 1 || !strings.Contains(res.Mismatches[0].What, "SHA-256") || !strings.Contains(res.Mismatches[0].What, ".parquet") {
			t.Errorf("adopt=%v: mismatches %+v, want one naming the file and its SHA-256", adopt, res.Mismatches)
		}
		if head := e.table().CurrentSnapshot().SnapshotID; head != base.SnapshotID || res.Status != "rolled-back" {
			t.Errorf("adopt=%v: main at %d (status %s), want rolled back to %d", adopt, head, res.Status, base.SnapshotID)
		}
	}
}

// cutInHalf cuts a file to half its bytes for good: bytes that no
// longer decode.
func cutInHalf(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		err = os.WriteFile(path, b[:len(b)/2], 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestVerifyGarbledBytesAreAMismatch: a committed file cut short for good
// reads whole but is not the bytes written and does not decode: after the
// checks a failed read gets, it is a mismatch and the commit is rolled
// back (a read that fails, with no bytes to compare, stays "landed, not
// verified": TestUnreadableCommitIsLandedUnverified).
func TestVerifyGarbledBytesAreAMismatch(t *testing.T) {
	defer swap.SetCheckBackoff(time.Millisecond)()
	e := newEnv(t)
	base := e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	g := &damagingAfterCommit{Catalog: e.cat, t: t, damage: cutInHalf}
	e.pub.Catalog = g
	e.pub.BeforeCommit = func(_ context.Context, plan *swap.Plan) error { g.plan = plan; return nil }
	res, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(fixture(t, retail.AfterBatch2))})
	if !errors.Is(err, outcome.ErrVerifyFailed) || len(res.Mismatches) != 1 || !strings.Contains(res.Mismatches[0].What, "SHA-256") {
		t.Fatalf("err = %v, mismatches %+v; want outcome.ErrVerifyFailed naming the file's SHA-256", err, res.Mismatches)
	}
	if head := e.table().CurrentSnapshot().SnapshotID; head != base.SnapshotID || res.Status != "rolled-back" {
		t.Errorf("main at %d (status %s), want rolled back to %d", head, res.Status, base.SnapshotID)
	}
}
