package catalog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
)

// TestCommitTablesAllOrNothing, on the embedded SQL catalog: two tables'
// changes commit as one, both moving; when one table's requirement fails,
// neither moves, the error is a conflict, and no metadata file written
// for the attempt is left. A catalog that commits one table at a time
// cannot commit several.
func TestCommitTablesAllOrNothing(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	cfg, err := catalog.Resolve(catalog.Settings{Home: home, ConfigFile: os.DevNull, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	spec := catalog.TableSpec{Columns: []catalog.ColumnSpec{{Name: "a", Type: "long", Required: true}}, Identifier: []string{"a"}}
	idents := []table.Identifier{{"ns", "one"}, {"ns", "two"}}
	for _, ident := range idents {
		if _, err := catalog.CreateTable(ctx, cat, ident, spec); err != nil {
			t.Fatal(err)
		}
	}
	locations := func() []string {
		var out []string
		for _, ident := range idents {
			tbl, err := cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tbl.MetadataLocation())
		}
		return out
	}
	metadataFiles := func() int {
		m, _ := filepath.Glob(filepath.Join(home, "warehouse", "ns.db", "*", "metadata", "*.metadata.json"))
		return len(m)
	}
	change := func(schemaID int) []table.TableCommit {
		var commits []table.TableCommit
		for i, ident := range idents {
			reqs := []table.Requirement{table.AssertCurrentSchemaID(0)}
			if i == 1 {
				reqs = []table.Requirement{table.AssertCurrentSchemaID(schemaID)}
			}
			commits = append(commits, table.TableCommit{Identifier: ident, Requirements: reqs,
				Updates: []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"release": "yes"})}})
		}
		return commits
	}

	before, files := locations(), metadataFiles()
	err = cat.CommitTables(ctx, change(7))
	if !errors.Is(err, catalog.ErrConflict) || !strings.Contains(err.Error(), "ns.two") {
		t.Errorf("a commit whose second table's requirement fails: %v; want a conflict naming ns.two", err)
	}
	if now := locations(); now[0] != before[0] || now[1] != before[1] {
		t.Errorf("the refused commit moved a table: %v, was %v", now, before)
	}
	if n := metadataFiles(); n != files {
		t.Errorf("the refused commit left %d metadata files, %d before", n, files)
	}

	if err := cat.CommitTables(ctx, change(0)); err != nil {
		t.Fatal(err)
	}
	now := locations()
	for i := range idents {
		tbl, _ := cat.LoadTable(ctx, idents[i])
		if now[i] == before[i] || tbl.Properties()["release"] != "yes" {
			t.Errorf("%v did not move with the commit: %s", idents[i], now[i])
		}
	}

	hive := catalog.Wrap(cat.Catalog, catalog.Config{Name: "h", Props: map[string]string{"type": "hive"}})
	if err := hive.CanCommitTables(); !errors.Is(err, catalog.ErrNoReleases) {
		t.Errorf("a Hive catalog: %v; want ErrNoReleases", err)
	}
}
