package main

import (
	"context"
	"time"

	"github.com/lakeswap/lakeswap/swap"
)

// The test hooks: lakeswap as shipped commits without waiting, talks to its
// catalog as it is, and measures ages from now. The test binary, which
// the process tests also run as lakeswap, sets them (barrier_test.go).
var (
	commitBarrier = func(func(string) string) func(context.Context, *swap.Plan) error { return nil }
	catalogFault  = func(cat swap.Catalog, _ func(string) string) swap.Catalog { return cat }
	testClock     = func(func(string) string) time.Time { return time.Time{} }
)
