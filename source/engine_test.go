package source

import (
	"os"
	"testing"
)

// TestEngine fails a test run that meant to use a CSV engine and was built
// without it (make test sets LAKESWAP_WANT_ENGINE), so that CI never tests
// the slower reader in the engine's place.
func TestEngine(t *testing.T) {
	if want := os.Getenv("LAKESWAP_WANT_ENGINE"); want != "" && want != Engine {
		t.Fatalf("this build reads CSV with %s, want %s: build without -tags noduckdb", Engine, want)
	}
}
