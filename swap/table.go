package swap

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
)

// TableSpec is a table as a schema file declares it: its columns, its
// partition column and lakeswap's contract.
type TableSpec = catalog.TableSpec

// ReadTableSpec reads and checks a schema file.
func ReadTableSpec(file string) (TableSpec, error) {
	spec, err := catalog.ReadTableSpec(file)
	if err != nil {
		return spec, InvalidRequest(err)
	}
	if _, _, _, err := spec.Build(); err != nil {
		return spec, InvalidRequest(fmt.Errorf("%s: %w", file, err))
	}
	return spec, nil
}

// CreateTable creates a table as its spec declares it, in the catalog
// given.
func CreateTable(ctx context.Context, cat *catalog.Catalog, ident table.Identifier, spec TableSpec) (*table.Table, error) {
	return catalog.CreateTable(ctx, cat, ident, spec)
}
