package backfill

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

// Finish carries a ready request to its end: swap's Publish, or a Stage
// that stops at the plan, or a release's Into.
type Finish func(context.Context, swap.Request) (*swap.Result, error)

// Files is a backfill of input files: local files and S3 objects (listed
// in Input.Objects), their rows read into the table's schema and split by
// partition.
type Files struct {
	// Selectors name the partitions the run replaces, as --partitions
	// does (order_date=2026-01-01..2026-01-31).
	Selectors []string
	Paths     []string
	Input     source.Options
	// Twice reads the files a second time, for the build-twice guard.
	Twice bool
	// Writer is what one partition's writer holds (WriterBytes); 0 is a
	// local warehouse's.
	Writer int64
}

// Run reads the files for the partitions the selectors name and hands
// the request, ready, to finish. Unless the request sets its parallelism,
// as many partitions are staged at once as Input.MemoryLimit holds.
func (f Files) Run(ctx context.Context, pub *swap.Publisher, req swap.Request, finish Finish) (*swap.Result, error) {
	target, err := pub.Open(ctx, req.Table)
	if err != nil {
		return nil, err
	}
	contract := target.Contract
	sel, err := target.Partitions(f.Selectors...)
	if err != nil {
		return nil, err
	}
	if p, ok := pub.Progress.(interface{ Partitions(int) }); ok && !sel.Open() {
		p.Partitions(len(sel.Values))
	}
	src, err := source.ReadFiles(ctx, contract, sel, f.Paths, f.Input)
	if err != nil {
		return nil, readCancelled(ctx, req, err)
	}
	defer src.Release()
	values, err := target.Resolve(ctx, sel, src.Partitions())
	if err != nil {
		return nil, err
	}
	if f.Twice {
		again := f.Input
		again.Read, again.Size = nil, nil
		second, err := source.ReadFiles(ctx, contract, contract.Partition.Declared(values), f.Paths, again)
		if err != nil {
			return nil, readCancelled(ctx, req, fmt.Errorf("read the inputs a second time: %w", err))
		}
		defer second.Release()
		req.SecondBuild = second
	}
	if req.Parallelism == 0 && f.Input.MemoryLimit > 0 {
		var most int64
		for _, v := range values {
			most = max(most, src.Rows(v))
		}
		req.Parallelism = Parallelism(f.Input.MemoryLimit, most, cmp.Or(f.Writer, LocalWriterBytes))
	}
	req.Partitions, req.Source, req.SourceName, req.Target = values, src, source.Describe(f.Paths), target
	return finish(ctx, req)
}

// readCancelled says, of a read stopped by Ctrl-C or SIGTERM, what became
// of the run: the read stops before anything is staged, and removes what
// it spilled.
func readCancelled(ctx context.Context, req swap.Request, err error) error {
	if ctx.Err() == nil {
		return err
	}
	run := req.RunID
	if run == "" {
		run = "not yet named"
	}
	return &outcome.OpError{Op: "read", Table: strings.Join(req.Table, "."), RunID: run, Err: fmt.Errorf("%w while reading the inputs", ctx.Err()),
		Hint: "nothing was committed; nothing had been staged, and the rows read so far were removed"}
}

// Adopted is a backfill of Parquet files another engine wrote, committed
// as they are (--adopt): the partitions they replace named in full.
type Adopted struct {
	Selectors []string
	Paths     []string
}

// Run names the files for adoption and hands the request, ready, to
// finish. The files are read only once staged.
func (a Adopted) Run(ctx context.Context, pub *swap.Publisher, req swap.Request, finish Finish) (*swap.Result, error) {
	target, err := pub.Open(ctx, req.Table)
	if err != nil {
		return nil, err
	}
	sel, err := target.Partitions(a.Selectors...)
	if err != nil {
		return nil, err
	}
	if sel.Open() {
		return nil, outcome.Invalid(fmt.Errorf("--adopt replaces the partitions named in full: name the values of every field of %s (%s)", strings.Join(req.Table, "."), target.Contract.Partition.Name))
	}
	values := sel.Values
	if p, ok := pub.Progress.(interface{ Partitions(int) }); ok {
		p.Partitions(len(values))
	}
	loc := target.Location()
	for _, f := range a.Paths {
		if format, _ := source.InputFormat(f); format != "parquet" {
			return nil, outcome.Invalid(fmt.Errorf("--adopt takes Parquet files; %s is not one", f))
		}
		if !source.IsObjectURL(f) && strings.HasPrefix(loc, "file://") {
			abs, err := filepath.Abs(f)
			if err != nil {
				return nil, err
			}
			f = "file://" + abs
		}
		req.Adopt = append(req.Adopt, f)
	}
	req.Partitions, req.SourceName, req.Target = values, "adopted:"+strings.TrimPrefix(source.Describe(a.Paths), "files:"), target
	return finish(ctx, req)
}

// Into stages each request into the release, and stops at the first table
// refused, its files removed, before what reads it is computed: the
// Finish of every job of a release.
func Into(rel *swap.Release) Finish {
	return func(ctx context.Context, req swap.Request) (*swap.Result, error) {
		p, err := rel.Stage(ctx, req)
		if err == nil {
			err = rel.Refusal(ctx)
		}
		return &swap.Result{Plan: p}, err
	}
}
