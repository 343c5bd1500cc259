package testenv

import (
	"context"
	"os"
	"testing"

	"github.com/lakeswap/lakeswap/catalog"
)

// Embedded opens lakeswap's embedded default in a fresh folder: iceberg-go's
// SQL catalog on SQLite with a local warehouse, as a new user's first run
// has it, configured by nothing in the environment. It closes when the
// test ends.
func Embedded(t testing.TB) *catalog.Catalog {
	t.Helper()
	cfg, err := catalog.Resolve(catalog.Settings{Home: t.TempDir(), ConfigFile: os.DevNull, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat
}
