package testenv

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/lakeswap/lakeswap/internal/devserver"
)

// Random returns n random bytes as hex, for credentials and names.
func Random(n int) string { return devserver.Random(n) }

// servers started by this process, stopped by Run.
var (
	mu      sync.Mutex
	stopFns []func()
)

func atExit(f func()) {
	mu.Lock()
	defer mu.Unlock()
	stopFns = append(stopFns, f)
	stopOnSignal.Do(func() {
		// Ctrl-C (or a CI job's SIGTERM) ends the test binary before Run
		// stops the servers: PostgreSQL runs detached, and would outlive
		// it with its folder.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			s := <-sig
			fmt.Fprintf(os.Stderr, "testenv: %v: stopping the test servers and removing their folders\n", s)
			Stop()
			os.Exit(130)
		}()
	})
}

var stopOnSignal sync.Once

// Run runs the package's tests, then stops the servers they started.
//
// The heap of a test process grows to five times what is live between
// collections rather than twice: the tests are many small runs of the
// command, and none measures the test process's own memory (a run's memory
// limit, where one is held, still bounds it). Measured on cmd/lakeswap's
// fast tier: 57 s of CPU became 50 s, at 390 MB rather than 300 MB; on the
// guard cells of the embedded catalog, 79.2 s of CPU became 74.0 s.
func Run(m *testing.M) int {
	flag.Parse()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	code := m.Run()
	Stop()
	return code
}

// Stop stops every server this process started.
func Stop() {
	mu.Lock()
	fns := stopFns
	stopFns = nil
	mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// InCI reports whether the tests run in CI, where nothing may skip.
func InCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "0" && v != "false"
}

// unavailable fails the test in CI and skips it elsewhere.
func unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s is required in CI: %v", what, err)
	}
	t.Skipf("%s unavailable: %v (set CI=true to make this a failure)", what, err)
}

// Tool finds a program a test drives (tmux, chromium), the first of names
// on the PATH, under the servers' rule: missing in CI is a failure (.ci/run
// installs it), elsewhere a skip.
func Tool(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	unavailable(t, names[0], fmt.Errorf("not on the PATH (.ci/run installs it)"))
	return ""
}
