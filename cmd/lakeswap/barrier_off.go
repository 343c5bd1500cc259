//go:build !lakeswaptest

package main

import (
	"context"
	"time"

	"github.com/lakeswap/lakeswap/swap"
)

// commitBarrier is a test hook only binaries built with -tags lakeswaptest
// have (barrier.go); lakeswap as shipped commits without waiting.
func commitBarrier(func(string) string) func(context.Context, *swap.Plan) error { return nil }

// catalogFault is a test hook only binaries built with -tags lakeswaptest
// have (barrier.go).
func catalogFault(cat swap.Catalog, _ func(string) string) swap.Catalog { return cat }

// testClock is a test hook only binaries built with -tags lakeswaptest
// have (barrier.go): gc measures ages from now.
func testClock(func(string) string) time.Time { return time.Time{} }
