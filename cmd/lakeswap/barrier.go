//go:build lakeswaptest

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lakeswap/lakeswap/swap"
)

// envCommitBarrier, for tests of concurrent writers: "DIR:N" makes a publish
// that has staged wait, before it commits, until N publishes have reached
// the same point (each leaves a file in DIR), so that they race for the same
// base. Only binaries built with -tags lakeswaptest, as the process tests
// build theirs, read it; lakeswap as shipped has no such hook.
const envCommitBarrier = "LAKESWAP_TEST_COMMIT_BARRIER"

func commitBarrier(getenv func(string) string) func(context.Context, *swap.Plan) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	spec := getenv(envCommitBarrier)
	dir, nStr, ok := strings.Cut(spec, ":")
	n, err := strconv.Atoi(nStr)
	if spec == "" || !ok || err != nil || n < 1 {
		return nil
	}
	return func(ctx context.Context, plan *swap.Plan) error {
		if err := os.WriteFile(filepath.Join(dir, plan.RunID+"-"+plan.Attempt), nil, 0o644); err != nil {
			return fmt.Errorf("commit barrier: %w", err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			entries, err := os.ReadDir(dir)
			if err != nil {
				return fmt.Errorf("commit barrier: %w", err)
			}
			if len(entries) >= n {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("commit barrier: %d of %d writers after a minute", len(entries), n)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
}
