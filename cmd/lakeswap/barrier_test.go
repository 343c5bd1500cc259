// The test hooks: compiled into the test binary alone, which also runs
// as the lakeswap the process tests start (TestMain), so that those
// processes have them; lakeswap as shipped has none (barrier.go).

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/swap"
)

// envCommitBarrier, for tests of concurrent writers: "DIR:N" makes a publish
// that has staged wait, before it commits, until N publishes have reached
// the same point (each leaves a file in DIR), so that they race for the same
// base. Only the test binary reads it; lakeswap as shipped has no such hook.
const envCommitBarrier = "LAKESWAP_TEST_COMMIT_BARRIER"

// envKillAtCommit, for tests of resumable runs: "N" makes the process
// SIGKILL itself as it is about to make its Nth commit (a batch's).
const envKillAtCommit = "LAKESWAP_TEST_KILL_AT_COMMIT"

func hookCommitBarrier(getenv func(string) string) func(context.Context, *swap.Plan) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	if at, err := strconv.Atoi(getenv(envKillAtCommit)); err == nil && at > 0 {
		var commits atomic.Int64
		return func(context.Context, *swap.Plan) error {
			if commits.Add(1) == int64(at) {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way
			}
			return nil
		}
	}
	spec := getenv(envCommitBarrier)
	dir, nStr, ok := strings.Cut(spec, ":")
	n, err := strconv.Atoi(nStr)
	if spec == "" || !ok || err != nil || n < 1 {
		return nil
	}
	return func(ctx context.Context, plan *swap.Plan) error {
		// One file a process: several may apply one plan.
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%s-%d", plan.RunID, plan.Attempt, os.Getpid())), nil, 0o644); err != nil {
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

// envCatalogFault, for tests of lost commit answers: "after-commit" makes
// the first commit land and then answers it with an error, "before-commit"
// answers it with an error without committing, and "unreachable" lands it
// and then fails every later call, as a catalog gone away would.
const envCatalogFault = "LAKESWAP_TEST_CATALOG_FAULT"

func hookCatalogFault(cat swap.Catalog, getenv func(string) string) swap.Catalog {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch mode := getenv(envCatalogFault); mode {
	case "after-commit", "before-commit", "unreachable":
		return &faultyCatalog{Catalog: cat, mode: mode}
	}
	return cat
}

type faultyCatalog struct {
	swap.Catalog
	mode      string
	committed atomic.Bool
}

var errGatewayTimeout = errors.New("504 Gateway Timeout (injected by " + envCatalogFault + ")")

func (c *faultyCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if c.committed.Load() {
		if c.mode == "unreachable" {
			return nil, "", errGatewayTimeout
		}
		return c.Catalog.CommitTable(ctx, ident, reqs, updates)
	}
	c.committed.Store(true)
	if c.mode != "before-commit" {
		if _, _, err := c.Catalog.CommitTable(ctx, ident, reqs, updates); err != nil {
			return nil, "", err
		}
	}
	return nil, "", errGatewayTimeout
}

// CommitTables loses the answer of a release's commit as CommitTable does
// a run's.
func (c *faultyCatalog) CommitTables(ctx context.Context, commits []table.TableCommit) error {
	tc, ok := c.Catalog.(swap.TablesCommitter)
	if !ok {
		return errors.New("the catalog cannot commit several tables as one")
	}
	if c.committed.Load() {
		if c.mode == "unreachable" {
			return errGatewayTimeout
		}
		return tc.CommitTables(ctx, commits)
	}
	c.committed.Store(true)
	if c.mode != "before-commit" {
		if err := tc.CommitTables(ctx, commits); err != nil {
			return err
		}
	}
	return errGatewayTimeout
}

func (c *faultyCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if c.mode == "unreachable" && c.committed.Load() {
		return nil, errGatewayTimeout
	}
	return c.Catalog.LoadTable(ctx, ident)
}

// envClock, for tests of gc: a duration ("48h") that gc adds to the time
// it measures ages from, as if it ran that much later.
const envClock = "LAKESWAP_TEST_CLOCK"

func hookClock(getenv func(string) string) time.Time {
	if getenv == nil {
		getenv = os.Getenv
	}
	d, err := time.ParseDuration(getenv(envClock))
	if err != nil {
		return time.Time{}
	}
	return time.Now().Add(d)
}

func init() {
	commitBarrier, catalogFault, testClock = hookCommitBarrier, hookCatalogFault, hookClock
	file := os.Getenv(envJSONLog)
	if file == "" {
		return
	}
	jsonWritten = func(command string, out []byte) {
		line, err := json.Marshal(struct {
			Command string          `json:"command"`
			Output  json.RawMessage `json:"output"`
		}{command, out})
		if err != nil {
			return
		}
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = f.Write(append(line, '\n'))
	}
}
