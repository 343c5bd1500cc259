package main

import (
	"strings"
	"testing"
)

// shortTests are the tests of this package that the fast tier (go test
// -short) runs on a table: the guard-by-route scenarios and the first
// steps a new user takes. Every other test that runs lakeswap on a table
// runs in the full tier (make test); tests that need no table run in both.
var shortTests = map[string]bool{
	"TestGuardsByRoute":          true,
	"TestReadmeFirstBackfill":    true,
	"TestDemo":                   true,
	"TestRollbackMeetsTheGuards": true,
}

// shortTier skips, under -short, a test of a table not in shortTests.
func shortTier(t testing.TB) {
	t.Helper()
	if testing.Short() && !shortTests[strings.SplitN(t.Name(), "/", 2)[0]] {
		t.Skip("-short: runs in the full tier (make test)")
	}
}
