//go:build !noduckdb

package main

import (
	"path/filepath"
	"testing"
)

// TestRetailExampleReadme runs examples/retail/README.md the same way: the
// retail jobs on their own, from the raw events the folder ships.
func TestRetailExampleReadme(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "retail")
	followConsole(t, filepath.Join(dir, "README.md"), "## Run it", dir)
}
