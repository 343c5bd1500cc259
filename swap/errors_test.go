package swap_test

import (
	"context"

	"github.com/apache/iceberg-go/table"

	"errors"
	"fmt"
	"testing"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/outcome"

	"github.com/lakeswap/lakeswap/swap"
)

// TestNothingCommittedIsOneFamily: a caller asks errors.Is(err,
// outcome.ErrNotCommitted) to know that the table is as it was, whichever way the
// run stopped before a commit; an outcome that may have left a commit on
// main never matches it.
func TestNothingCommittedIsOneFamily(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&outcome.RefusedError{Table: "t"}, true},
		{&outcome.OpError{Op: "apply", Err: fmt.Errorf("%w: main moved", outcome.ErrConflict)}, true},
		{&outcome.OpError{Op: "commit", Err: fmt.Errorf("%w: absent twice", outcome.ErrNotLanded)}, true},
		// A later batch's conflict, once earlier batches landed.
		{fmt.Errorf("batch 2/3: %w", &outcome.OpError{Op: "commit", Err: fmt.Errorf("%w: main moved", outcome.ErrConflict), Partial: true}), false},
		{&outcome.RefusedError{Table: "t", Partial: true}, false},
		{fmt.Errorf("wrapped: %w", &outcome.RefusedError{}), true},
		{&outcome.OpError{Op: "commit", Err: fmt.Errorf("%w: lost answer", outcome.ErrCommitUnknown)}, false},
		{&outcome.OpError{Op: "verify", Err: outcome.ErrVerifyFailed}, false},
		{&outcome.OpError{Op: "verify", Err: outcome.ErrLandedUnverified}, false},
		{errors.New("disk full"), false},
	} {
		if got := errors.Is(tc.err, outcome.ErrNotCommitted); got != tc.want {
			t.Errorf("%v: matches outcome.ErrNotCommitted %v, want %v", tc.err, got, tc.want)
		}
	}
	// The families keep their own names.
	if !errors.Is(&outcome.RefusedError{}, outcome.ErrRefused) || errors.Is(&outcome.RefusedError{}, outcome.ErrConflict) {
		t.Error("a refusal is not outcome.ErrRefused alone")
	}

}

// conflictingCatalog refuses, as the catalog would a moved main, every
// commit after the first n.
type conflictingCatalog struct {
	swap.Catalog
	n, commits int
}

func (c *conflictingCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	if c.commits++; c.commits > c.n {
		return nil, "", fmt.Errorf("%w: injected", catalog.ErrConflict)
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

// TestABatchLandedIsCommitted: a run in batches whose second batch cannot
// commit has changed the table with its first: the error says conflict
// (exit 4) but not outcome.ErrNotCommitted, and the result lists the batch that
// landed; a run stopped at its first batch has committed nothing.
func TestABatchLandedIsCommitted(t *testing.T) {
	for _, tc := range []struct {
		landing int
		want    bool // errors.Is(err, outcome.ErrNotCommitted)
	}{{0, true}, {1, false}} {
		e := newEnv(t)
		e.mustPublish(daysOf(1, fourDays...), fourDays...)
		before := e.table().MetadataLocation()
		e.pub.Catalog = &conflictingCatalog{Catalog: e.cat, n: tc.landing}
		res, err := e.publishBatched("bf", 2, daysOf(10, fourDays...), fourDays...)
		if !errors.Is(err, outcome.ErrConflict) || errors.Is(err, outcome.ErrNotCommitted) != tc.want {
			t.Errorf("%d batch(es) landing: err %v; want a conflict, outcome.ErrNotCommitted %v", tc.landing, err, tc.want)
		}
		landed := 0
		for _, b := range res.Batches {
			if b.SnapshotID != 0 {
				landed++
			}
		}
		if moved := e.table().MetadataLocation() != before; landed != tc.landing || moved != (tc.landing > 0) {
			t.Errorf("%d batch(es) landing: the result lists %d, the table moved: %v", tc.landing, landed, moved)
		}
	}
}

// beforeCommit runs its hook once, before the first commit through it.
type beforeCommit struct {
	swap.Catalog
	hook func()
}

func (c *beforeCommit) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	if h := c.hook; h != nil {
		c.hook = nil
		h()
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

// TestSetPropertiesConflicts: a property change is pinned to main as it
// was loaded: a publish that lands first makes it a conflict, and the
// table keeps the publish and not the change.
func TestSetPropertiesConflicts(t *testing.T) {
	e := newEnv(t)
	e.mustPublish(daysOf(1, fourDays...), fourDays...)
	other := &swap.Publisher{Catalog: e.cat}
	e.pub.Catalog = &beforeCommit{Catalog: e.cat, hook: func() {
		if _, err := other.Publish(e.ctx, swap.Request{Table: e.ident, Partitions: fourDays[:1], Source: retail.NewSource(daysOf(2, fourDays[:1]...))}); err != nil {
			t.Fatal(err)
		}
	}}
	err := e.pub.SetProperties(e.ctx, e.ident, map[string]string{"lakeswap.plausible-band": "0.9:1.1"})
	if !errors.Is(err, outcome.ErrConflict) || !errors.Is(err, outcome.ErrNotCommitted) {
		t.Fatalf("set while a publish landed: %v, want a conflict", err)
	}
	if _, ok := e.table().Metadata().Properties()["lakeswap.plausible-band"]; ok {
		t.Error("the conflicting change was committed")
	}
}

// TestNotApprovedIsMatchable: an apply refused for a missing or stray
// approval says so to errors.Is, as well as being a refusal that
// committed nothing.
func TestNotApprovedIsMatchable(t *testing.T) {
	dir := t.TempDir()
	pf, err := swap.WritePlan(dir+"/p.json", &swap.Plan{RunID: "r1", Table: "ns.t"})
	if err != nil {
		t.Fatal(err)
	}
	read, err := swap.ReadPlan(pf.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, approvals := range [][]string{nil, {"000000000000"}, {pf.PlanID, "ffffffffffff"}} {
		_, err := swap.Approve([]*swap.PlanFile{read}, approvals)
		if !errors.Is(err, outcome.ErrNotApproved) || !errors.Is(err, outcome.ErrRefused) || !errors.Is(err, outcome.ErrNotCommitted) {
			t.Errorf("approvals %q: %v, want ErrNotApproved, ErrRefused and ErrNotCommitted", approvals, err)
		}
	}
	if _, err := swap.Approve([]*swap.PlanFile{read}, []string{pf.PlanID}); err != nil {
		t.Errorf("the plan's own id: %v", err)
	}
}
