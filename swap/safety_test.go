package swap_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
	"github.com/lakeswap/lakeswap/swap/rollback"
	"github.com/lakeswap/lakeswap/verify"
)

// oddValues are partition values that break a path built by string
// concatenation: URL syntax, escapes that decode to "../", separators,
// white space, unicode, the empty string, and values that differ only by a
// character a URL parser drops ("C" and "C#").
var oddValues = []string{
	"/", "..", ".", "#", "?", "%", "=", "&", "+", "C", "C#", "C?x", "eu", "eu#x", "50%", "%2F%2E%2E", "a,b", " x ",
	"eu%2F%2E%2E%2F%2E%2E%2Fmetadata#", "a b", "line\nbreak", "München", "東京", "", "~7E", "a/../../b",
	"a region name longer than sixteen bytes",
}

var salesIdent = table.Identifier{"geo", "sales"}

// salesTable creates geo.sales (region string, id long, amount long),
// partitioned by region, in e's catalog.
func salesTable(t *testing.T, e *env) {
	t.Helper()
	_, err := catalog.CreateTable(e.ctx, e.cat, salesIdent, catalog.TableSpec{
		Columns: []catalog.ColumnSpec{{Name: "region", Type: "string", Required: true},
			{Name: "id", Type: "long", Required: true}, {Name: "amount", Type: "long", Required: true}},
		Identifier: []string{"region", "id"},
		Partition:  []catalog.PartitionSpec{{Column: "region"}},
		Additive:   []string{"amount"},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.ident = salesIdent
}

// sale is one row of geo.sales.
type sale struct {
	id, amount int64
}

// salesSource serves rows by region.
type salesSource map[string][]sale

func (s salesSource) Open(_ context.Context, region string) (array.RecordReader, error) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "region", Type: arrow.BinaryTypes.String},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "amount", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range s[region] {
		b.Field(0).(*array.StringBuilder).Append(region)
		b.Field(1).(*array.Int64Builder).Append(r.id)
		b.Field(2).(*array.Int64Builder).Append(r.amount)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewRecordReader(sc, []arrow.RecordBatch{rec})
}

// readSales reads geo.sales back through iceberg-go's scan, as a reader
// would, by region.
func readSales(t *testing.T, e *env) salesSource {
	t.Helper()
	tbl := e.table()
	out := salesSource{}
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	at, err := tbl.Scan().ToArrowTable(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rr := array.NewTableReader(at, 1024)
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		reg, id, amt := rec.Column(0).(*array.String), rec.Column(1).(*array.Int64), rec.Column(2).(*array.Int64)
		for i := range int(rec.NumRows()) {
			out[reg.Value(i)] = append(out[reg.Value(i)], sale{id.Value(i), amt.Value(i)})
		}
	}
	for _, rows := range out {
		sort.Slice(rows, func(i, j int) bool { return rows[i].id < rows[j].id })
	}
	return out
}

func sameSales(t *testing.T, what string, got, want salesSource) {
	t.Helper()
	for region, rows := range want {
		if len(rows) > 0 && !slices.Equal(got[region], rows) {
			t.Errorf("%s: region %q holds %v, want %v", what, region, got[region], rows)
		}
	}
	for region := range got {
		if len(want[region]) == 0 {
			t.Errorf("%s: region %q holds %v, want nothing", what, region, got[region])
		}
	}
}

// TestOddPartitionValues publishes, reads back, refuses and rolls back
// partitions whose values are path syntax, on local files and on MinIO:
// every file lands inside the table's location, in a folder of its own
// partition whose name decodes to the value, and a refused or rolled-back
// run touches no other partition.
func TestOddPartitionValues(t *testing.T) {
	for _, b := range backends[:2] {
		t.Run(b.name, func(t *testing.T) {
			e := b.open(t)
			e.t = t
			salesTable(t, e)
			tableLoc := strings.TrimSuffix(e.table().Location(), "/") + "/"
			dataLoc := tableLoc + "data/"

			first := salesSource{}
			for i, v := range oddValues {
				first[v] = []sale{{1, int64(i)}, {2, 100}}
			}
			res, err := e.pub.Publish(e.ctx, swap.Request{Table: salesIdent, Partitions: oddValues, Source: first, RunID: "odd-1"})
			if err != nil {
				t.Fatalf("publish odd values: %v", err)
			}
			sameSales(t, "after the first run", readSales(t, e), first)
			for _, pp := range res.Plan.Partitions {
				for _, f := range pp.NewFiles {
					seg, ok := strings.CutPrefix(f.Path, dataLoc)
					seg, _, _ = strings.Cut(seg, "/")
					name, value, _ := strings.Cut(seg, "=")
					got, err := swap.UnescapeSegment(value)
					if !ok || name != "region" || err != nil || got != pp.Value {
						t.Errorf("partition %q staged at %s: folder %q decodes to %q (%v)", pp.Value, f.Path, seg, got, err)
					}
				}
			}
			for _, f := range e.allFiles() {
				if !strings.HasPrefix(f, tableLoc) {
					t.Errorf("file %s lies outside the table's location %s", f, tableLoc)
				}
			}

			// A refused run on "C#" changes no file, "C" least of all.
			before, filesBefore := e.table().MetadataLocation(), e.allFiles()
			bad := salesSource{"C#": {{1, 5}, {1, 6}}}
			if _, err := e.pub.Publish(e.ctx, swap.Request{Table: salesIdent, Partitions: []string{"C#"}, Source: bad}); !errors.Is(err, outcome.ErrRefused) {
				t.Fatalf("duplicate grain in C#: %v, want a refusal", err)
			}
			if after := e.table().MetadataLocation(); after != before {
				t.Errorf("refused run moved the table from %s to %s", before, after)
			}
			if after := e.allFiles(); !slices.Equal(after, filesBefore) {
				t.Errorf("refused run changed the files:\nbefore %v\nafter  %v", filesBefore, after)
			}

			// A second run replaces "C#" and "" only; rolling it back
			// restores them and leaves every other partition as it was.
			second := salesSource{"C#": {{7, 70}}, "": {{8, 80}}}
			if _, err := e.pub.Publish(e.ctx, swap.Request{Table: salesIdent, Partitions: []string{"C#", ""}, Source: second, RunID: "odd-2"}); err != nil {
				t.Fatalf("second run: %v", err)
			}
			// It only added files: its own data files in the folders of
			// "C#" and "", and new metadata files.
			filesAfter := e.allFiles()
			for _, f := range filesBefore {
				if !slices.Contains(filesAfter, f) {
					t.Errorf("the second run removed %s", f)
				}
			}
			for _, f := range filesAfter {
				if slices.Contains(filesBefore, f) || strings.HasPrefix(f, tableLoc+"metadata/") {
					continue
				}
				if !strings.HasPrefix(f, dataLoc+"region=C~23/run-odd-2-") && !strings.HasPrefix(f, dataLoc+"region=/run-odd-2-") {
					t.Errorf("the second run wrote %s, outside the folders of its partitions", f)
				}
			}
			want := salesSource{}
			for k, v := range first {
				want[k] = v
			}
			want["C#"], want[""] = second["C#"], second[""]
			sameSales(t, "after the second run", readSales(t, e), want)
			rb, err := e.pub.Rollback(e.ctx, rollback.Request{Table: salesIdent, RunID: "odd-2"})
			if err != nil || !rb.Verified {
				t.Fatalf("rollback: %+v, %v", rb, err)
			}
			sameSales(t, "after the rollback", readSales(t, e), first)
			if vr, err := audit.Of(e.pub.Catalog).VerifyRun(e.ctx, salesIdent, "odd-1", 0); err != nil || !vr.OK {
				t.Errorf("verify the first run: %+v, %v", vr, err)
			}
		})
	}
}

func TestEscapeSegment(t *testing.T) {
	seen := map[string]string{}
	for _, v := range append(oddValues, "\x00", "\xff", "~", "~7e", "A-z_0.9") {
		seg := swap.EscapeSegment(v)
		for _, c := range []byte(seg) {
			if !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~", rune(c)) {
				t.Errorf("segment %q of %q holds %q", seg, v, c)
			}
		}
		if other, dup := seen[seg]; dup {
			t.Errorf("%q and %q share the segment %q", v, other, seg)
		}
		seen[seg] = v
		if back, err := swap.UnescapeSegment(seg); err != nil || back != v {
			t.Errorf("segment %q of %q decodes to %q, %v", seg, v, back, err)
		}
	}
	for _, bad := range []string{"~", "~4", "~zz", "~4a", "a#b", "a/b"} {
		if _, err := swap.UnescapeSegment(bad); err == nil {
			t.Errorf("UnescapeSegment(%q) accepted it", bad)
		}
	}
}

// TestRunIDIsAnIdempotencyKey: a run id the history records is published
// once. The same content again commits nothing and says where it is;
// other content, or a run main no longer holds, is refused; none of it
// removes a file of the committed run.
func TestRunIDIsAnIdempotencyKey(t *testing.T) {
	for _, b := range backends[:2] {
		t.Run(b.name, func(t *testing.T) {
			e := b.open(t)
			e.t = t
			if _, err := catalog.CreateTable(e.ctx, e.cat, dailyOrders, retail.Spec()); err != nil {
				t.Fatal(err)
			}
			e.ident = dailyOrders
			e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
			rows := fixture(t, retail.AfterBatch2)
			publish := func(rows []retail.DailyOrder) (*swap.Result, error) {
				return e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(rows), RunID: "job-42"})
			}
			first, err := publish(rows)
			if err != nil {
				t.Fatal(err)
			}
			meta, files := e.table().MetadataLocation(), e.allFiles()
			unchanged := func(what string) {
				t.Helper()
				if got := e.table().MetadataLocation(); got != meta {
					t.Errorf("%s moved the table from %s to %s", what, meta, got)
				}
				if got := e.allFiles(); !slices.Equal(got, files) {
					t.Errorf("%s changed the files:\nbefore %v\nafter  %v", what, files, got)
				}
				if vr, err := audit.Of(e.pub.Catalog).VerifyRun(e.ctx, e.ident, "job-42", 0); err != nil || !vr.OK {
					t.Errorf("after %s, run job-42 no longer verifies: %v", what, err)
				}
			}

			again, err := publish(rows)
			if err != nil || again.Status != "already-published" || again.SnapshotID != first.SnapshotID {
				t.Errorf("same run id, same rows: %+v, %v; want already-published in snapshot %d", again, err, first.SnapshotID)
			}
			unchanged("the identical rerun")

			other := append([]retail.DailyOrder(nil), rows...)
			other[0].AmountCents++
			_, err = publish(other)
			var refused *outcome.RefusedError
			if !errors.As(err, &refused) || refused.Findings[0].Kind != verify.KindRunID || !strings.Contains(err.Error(), "already used") {
				t.Errorf("same run id, other rows: %v, want a run-id refusal", err)
			}
			unchanged("the rerun with other content")

			if _, err := publish(retail.Only(rows, "2026-01-01")); !errors.Is(err, outcome.ErrRefused) {
				t.Errorf("same run id, an emptied partition: %v, want a refusal", err)
			}
			unchanged("the refused rerun")

			// Once rolled back, the id cannot publish again: the history
			// would say two things of one run.
			e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
			if _, err := e.pub.Rollback(e.ctx, rollback.Request{Table: e.ident, RunID: "job-42", Force: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := publish(rows); !errors.Is(err, outcome.ErrRefused) || !strings.Contains(err.Error(), "no longer holds") {
				t.Errorf("rerun of a rolled-back run: %v, want a refusal", err)
			}
		})
	}
}

// TestFailedPublishRemovesOnlyItsFiles: a refusal, a commit that is stopped
// and a conflict each remove exactly the files their attempt created, and
// say so; a file that cannot be removed is named.
func TestFailedPublishRemovesOnlyItsFiles(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	meta, files := e.table().MetadataLocation(), e.allFiles()
	check := func(what string, err error, wantRemoved string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if !strings.Contains(err.Error(), wantRemoved) {
			t.Errorf("%s: error does not say %q: %v", what, wantRemoved, err)
		}
		if got := e.table().MetadataLocation(); got != meta {
			t.Errorf("%s moved the table from %s to %s", what, meta, got)
		}
		if got := e.allFiles(); !slices.Equal(got, files) {
			t.Errorf("%s left files:\nbefore %v\nafter  %v", what, files, got)
		}
	}
	rows := fixture(t, retail.AfterBatch2)

	// Validation refuses a negative amount in the second partition, after
	// the first was staged.
	bad := append([]retail.DailyOrder(nil), rows...)
	bad[len(bad)-1].AmountCents = -1
	_, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(bad), RunID: "refused-1", Parallelism: 1})
	// The second partition wrote nothing once its rows were refused.
	check("a refusal", err, "removed the 1 file run refused-1 staged")

	stop := errors.New("not approved")
	pub := &swap.Publisher{Catalog: e.cat, BeforeCommit: func(context.Context, *swap.Plan) error { return stop }}
	_, err = pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(rows), RunID: "stopped-1"})
	check("a stopped commit", err, "removed the 2 files run stopped-1 staged")

	// Another writer commits between the plan and the commit.
	other := &hookSource{Source: retail.NewSource(rows), before: func() {
		e.mustPublish(retail.Only(rows, "2026-01-02"), "2026-01-02")
		meta, files = e.table().MetadataLocation(), withoutHolds(e.allFiles())
	}}
	_, err = e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: other, RunID: "conflict-1", Parallelism: 1})
	if !errors.Is(err, outcome.ErrConflict) {
		t.Fatalf("conflict: %v", err)
	}
	check("a conflict", err, "removed the 2 files run conflict-1 staged")
	if !strings.Contains(err.Error(), "manifest files the refused commit wrote") {
		t.Errorf("conflict: %v, want the refused commit's metadata files accounted for", err)
	}

	// A store that will not delete: the hint names what was left.
	stubborn := &swap.Publisher{Catalog: e.cat, StagingIO: func(_ context.Context, fsys icebergio.IO) (icebergio.WriteFileIO, error) {
		return noRemoveIO{fsys.(icebergio.WriteFileIO)}, nil
	}}
	_, err = stubborn.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: retail.NewSource(bad), RunID: "stubborn-1"})
	if err == nil || !strings.Contains(err.Error(), "could not remove 1") || !strings.Contains(err.Error(), "run-stubborn-1-") {
		t.Errorf("refusal whose files could not be removed: %v, want the files named", err)
	}
}

type noRemoveIO struct{ icebergio.WriteFileIO }

func (noRemoveIO) Remove(string) error { return errors.New("permission denied") }

// TestRunSumsNeverWrap: two partitions whose sums fit 64 bits and whose
// total does not publish, and the run records the total exact, never
// wrapped: in the plan and in the snapshot's summary.
func TestRunSumsNeverWrap(t *testing.T) {
	e := newEnv(t)
	const big = 9_000_000_000_000_000_000
	rows := []retail.DailyOrder{{OrderDate: "2026-01-01", Channel: "web", OrderCount: 1, AmountCents: big},
		{OrderDate: "2026-01-02", Channel: "web", OrderCount: 1, AmountCents: big}}
	res, err := e.publish(rows, "2026-01-01", "2026-01-02")
	if err != nil {
		t.Fatal(err)
	}
	const total = "18000000000000000000"
	if got := res.Plan.Fingerprint.Sums["amount_cents"].String(); got != total {
		t.Errorf("the run's sum is %s, want %s", got, total)
	}
	rec, ok := runrecord.Read(e.table().CurrentSnapshot().Summary.Properties)
	if !ok || rec.Sums["amount_cents"].String() != total {
		t.Errorf("the snapshot records the sum %s, want %s", rec.Sums["amount_cents"], total)
	}
	if fp := verify.Combine(map[string]verify.Fingerprint{"a": {Sums: map[string]exact.Sum{"x": exact.Of(-big)}}, "b": {Sums: map[string]exact.Sum{"x": exact.Of(-big)}}}); fp.Sums["x"].String() != "-"+total {
		t.Errorf("Combine of two negative sums: %s", fp.Sums["x"])
	}
}

// TestTypedPartitionValues: the Go API refuses a partition value that no
// row of the column could have.
func TestTypedPartitionValues(t *testing.T) {
	e := newEnv(t)
	for _, v := range []string{"2026-13-01", "2026/01/01", "", "abc", "2026-1-1"} {
		_, err := e.publish(nil, v)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", v)) {
			t.Errorf("partition %q: %v, want a refusal naming it", v, err)
		}
	}
	if files := e.allFiles(); len(files) > 0 && snapshots(t, e.table()) != 0 {
		t.Errorf("refused values left a snapshot")
	}
}

// cancelSource cancels the publish when it opens its second partition, as
// Ctrl-C or an orchestrator's SIGTERM would midway through staging.
type cancelSource struct {
	source.Source
	cancel context.CancelFunc
	opened int
}

func (c *cancelSource) Open(ctx context.Context, partition string) (array.RecordReader, error) {
	if c.opened++; c.opened == 2 {
		c.cancel()
	}
	return c.Source.Open(ctx, partition)
}

// cancelMidPartition cancels the publish after the first batch of its first
// partition has been written, so that the writer aborts an open file.
type cancelMidPartition struct {
	rows   []retail.DailyOrder
	cancel context.CancelFunc
}

func (c cancelMidPartition) Open(_ context.Context, partition string) (array.RecordReader, error) {
	rec := retail.Record(retail.Only(c.rows, partition))
	defer rec.Release()
	rr, err := array.NewRecordReader(retail.Schema, []arrow.RecordBatch{rec, rec})
	return &cancellingReader{RecordReader: rr, cancel: c.cancel}, err
}

type cancellingReader struct {
	array.RecordReader
	cancel context.CancelFunc
	n      int
}

func (r *cancellingReader) Next() bool {
	if r.n++; r.n == 2 {
		r.cancel()
	}
	return r.RecordReader.Next()
}

// TestCancelledPublishRemovesItsFiles: a publish cancelled midway through
// staging (Ctrl-C, an orchestrator's SIGTERM) still removes what it wrote:
// on MinIO, where every removal is a request that the cancelled context
// would stop, both through lakeswap's S3 store and through iceberg-go's
// own IO (a Go API caller who sets no StagingIO); and locally, where an
// aborted file leaves no empty folder.
func TestCancelledPublishRemovesItsFiles(t *testing.T) {
	variants := []struct {
		name      string
		backend   backend
		icebergIO bool
	}{{"local", backends[0], false}, {"minio", backends[1], false}, {"minio-iceberg-io", backends[1], true}}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			e := v.backend.open(t)
			e.t = t
			if v.icebergIO {
				e.pub.StagingIO = nil
			}
			if _, err := catalog.CreateTable(e.ctx, e.cat, dailyOrders, retail.Spec()); err != nil {
				t.Fatal(err)
			}
			e.ident = dailyOrders
			e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
			meta, files := e.table().MetadataLocation(), e.allFiles()
			rows := fixture(t, retail.AfterBatch2)
			for _, tc := range []struct {
				runID string
				src   func(context.CancelFunc) source.Source
				say   string
			}{
				{"cancelled-1", func(c context.CancelFunc) source.Source {
					return &cancelSource{Source: retail.NewSource(rows), cancel: c}
				}, "removed the 1 file"},
				{"cancelled-2", func(c context.CancelFunc) source.Source { return cancelMidPartition{rows: rows, cancel: c} }, ""},
			} {
				ctx, cancel := context.WithCancel(e.ctx)
				_, err := e.pub.Publish(ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Source: tc.src(cancel), RunID: tc.runID, Parallelism: 1})
				cancel()
				if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), tc.say+" run "+tc.runID+" staged") {
					t.Errorf("%s: %v; want context.Canceled, saying %q", tc.runID, err, tc.say)
				}
				if got := e.table().MetadataLocation(); got != meta {
					t.Errorf("%s moved the table from %s to %s", tc.runID, meta, got)
				}
				if got := e.allFiles(); !slices.Equal(got, files) {
					t.Errorf("%s left files:\nbefore %v\nafter  %v", tc.runID, files, got)
				}
				if e.home != "" {
					_ = filepath.WalkDir(e.home, func(p string, d os.DirEntry, err error) error {
						if err == nil && d.IsDir() && strings.Contains(d.Name(), "run-"+tc.runID+"-") {
							t.Errorf("%s left its folder %s", tc.runID, p)
						}
						return nil
					})
				}
			}
		})
	}
}

// TestLongPartitionValues: a value whose folder name is too long for a file
// system or MinIO is refused before anything is staged, on every store
// alike; one just short enough is published.
func TestLongPartitionValues(t *testing.T) {
	tooLong := strings.Repeat("é", 60) // a 367-byte folder name
	long := strings.Repeat("é", 40)    // 247 bytes
	for _, b := range backends[:2] {
		t.Run(b.name, func(t *testing.T) {
			e := b.open(t)
			e.t = t
			salesTable(t, e)
			_, err := e.pub.Publish(e.ctx, swap.Request{Table: salesIdent, Partitions: []string{tooLong}, Source: salesSource{tooLong: {{1, 5}}}})
			if err == nil || !strings.Contains(err.Error(), "folder name of 367 bytes") || len(e.dataFiles()) != 0 {
				t.Errorf("%v, %d data files; want a refusal before staging", err, len(e.dataFiles()))
			}
			src := salesSource{long: {{1, 5}}}
			if _, err := e.pub.Publish(e.ctx, swap.Request{Table: salesIdent, Partitions: []string{long}, Source: src}); err != nil {
				t.Fatal(err)
			}
			sameSales(t, "a 247-byte folder", readSales(t, e), src)
		})
	}
}

// countingCatalog counts the loads and commits that pass through it.
type countingCatalog struct {
	swap.Catalog
	loads, commits int
}

func (c *countingCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	c.loads++
	return c.Catalog.LoadTable(ctx, ident)
}

func (c *countingCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	c.commits++
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

// TestPublishLoadsTheTableTwice: a publish loads the table once to stage and
// once to check the commit, and commits once; a caller that opened the
// table first to read its contract saves the first load.
func TestPublishLoadsTheTableTwice(t *testing.T) {
	e := newEnv(t)
	counting := &countingCatalog{Catalog: e.cat}
	e.pub.Catalog = counting
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	if counting.loads != 2 || counting.commits != 1 {
		t.Errorf("publish: %d loads and %d commits, want 2 and 1", counting.loads, counting.commits)
	}
	counting.loads, counting.commits = 0, 0
	target, err := e.pub.Open(e.ctx, e.ident)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pub.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fixtureRange, Target: target,
		Source: retail.NewSource(fixture(t, retail.AfterBatch2))}); err != nil {
		t.Fatal(err)
	}
	if counting.loads != 2 || counting.commits != 1 {
		t.Errorf("open, then publish: %d loads and %d commits, want 2 and 1", counting.loads, counting.commits)
	}
}

// TestNullPartitionIsNotTheTextNull: a run that declares the string value
// "null" replaces that partition and leaves the table's null partition,
// which another writer filled, alone.
func TestNullPartitionIsNotTheTextNull(t *testing.T) {
	e := newEnv(t)
	ident := table.Identifier{"geo", "nullable"}
	tbl, err := catalog.CreateTable(e.ctx, e.cat, ident, catalog.TableSpec{
		Columns: []catalog.ColumnSpec{{Name: "region", Type: "string"},
			{Name: "id", Type: "long", Required: true}, {Name: "amount", Type: "long", Required: true}},
		Identifier: []string{"id"},
		Partition:  []catalog.PartitionSpec{{Column: "region"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	target, err := e.pub.Open(e.ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	record := func(region *string, id int64) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, target.Contract.Arrow)
		defer b.Release()
		if region == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append(*region)
		}
		b.Field(1).(*array.Int64Builder).Append(id)
		b.Field(2).(*array.Int64Builder).Append(5)
		return b.NewRecordBatch()
	}
	// Another writer appends a row whose region is null.
	nullRow := record(nil, 1)
	at := array.NewTableFromRecords(target.Contract.Arrow, []arrow.RecordBatch{nullRow})
	if _, err := tbl.AppendTable(e.ctx, at, 1024, nil); err != nil {
		t.Fatal(err)
	}
	text := "null"
	src := recordSource{"null": record(&text, 3)}
	if _, err := e.pub.Publish(e.ctx, swap.Request{Table: ident, Partitions: []string{"null"}, Source: src}); err != nil {
		t.Fatal(err)
	}
	scan, err := e.tableNamed(ident).Scan().ToArrowTable(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer scan.Release()
	ids := map[int64]string{}
	rr := array.NewTableReader(scan, 1024)
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range int(rec.NumRows()) {
			region := "<null>"
			if rec.Column(0).IsValid(i) {
				region = rec.Column(0).(*array.String).Value(i)
			}
			ids[rec.Column(1).(*array.Int64).Value(i)] = region
		}
	}
	if len(ids) != 2 || ids[1] != "<null>" || ids[3] != "null" {
		t.Errorf("table holds %v; want id 1 in the null partition kept and id 3 in \"null\"", ids)
	}
}

// recordSource serves one batch per partition.
type recordSource map[string]arrow.RecordBatch

func (s recordSource) Open(_ context.Context, partition string) (array.RecordReader, error) {
	rec := s[partition]
	return array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
}

// TestEarlierPartitionSpecIsRefused: after the table moves from month to
// day partitions, a run cannot replace the old month files (they have no
// day), so it is refused rather than leaving their rows beside the new.
func TestEarlierPartitionSpecIsRefused(t *testing.T) {
	ctx := context.Background()
	cat, ident, _ := eventsTable(t, nil) // month(at)
	pub := &swap.Publisher{Catalog: cat}
	jan := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	if _, err := pub.Publish(ctx, swap.Request{Table: ident, Partitions: []string{"2026-01"}, Source: eventsSource{schemaOf(t, cat, ident), map[string][]time.Time{"2026-01": {jan}}}}); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.UpdateSpec(true).RemoveField("at_month").AddField("at", iceberg.DayTransform{}, "at_day").Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tbl, _ = cat.LoadTable(ctx, ident)
	before := tbl.MetadataLocation()
	_, err = pub.Publish(ctx, swap.Request{Table: ident, Partitions: []string{"2026-01-05"}, Source: eventsSource{schemaOf(t, cat, ident), map[string][]time.Time{"2026-01-05": {jan}}}})
	if err == nil || !strings.Contains(err.Error(), "partition spec") {
		t.Errorf("publish after a spec change: %v, want a refusal naming the partition spec", err)
	}
	if tbl, _ = cat.LoadTable(ctx, ident); tbl.MetadataLocation() != before {
		t.Error("the refused publish moved the table")
	}
}

func schemaOf(t *testing.T, cat *catalog.Catalog, ident table.Identifier) *arrow.Schema {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Of(tbl.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	return c.Arrow
}

// TestDeletesElsewhereDoNotBlock: a merge-on-read delete in one partition
// leaves a run beside it alone, and a run that declares that partition
// takes its delete files out with its data files.
func TestDeletesElsewhereDoNotBlock(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(fixture(t, retail.AfterBatch1), fixtureRange...)
	tx := e.table().NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete(e.ctx, iceberg.EqualTo(iceberg.Reference("channel"), "app"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	// The fixture's "app" orders are on 2026-01-01 only.
	rows := fixture(t, retail.AfterBatch2)
	if _, err := e.publish(retail.Only(rows, "2026-01-02"), "2026-01-02"); err != nil {
		t.Errorf("publish beside a partition with deletes: %v", err)
	}
	if _, err := e.publish(retail.Only(rows, "2026-01-01"), "2026-01-01"); err != nil {
		t.Fatalf("publish to the partition with deletes: %v", err)
	}
	tasks, err := e.table().Scan().PlanFiles(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if n := len(task.DeleteFiles) + len(task.EqualityDeleteFiles); n > 0 {
			t.Errorf("after the publish %d delete files still apply to %s", n, task.File.FilePath())
		}
	}
}
