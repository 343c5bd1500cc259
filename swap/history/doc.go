// Package history reads what a table's own history says of lakeswap's
// runs: the snapshots of main and those it no longer reaches, the times
// main was set back, what became of a run (Status), a run shown partition
// by partition before and after, two snapshots compared, the data files
// of a snapshot and the tables of a release. It writes nothing.
package history

import "github.com/apache/iceberg-go/table"

// Reader reads the runs of one catalog's tables.
type Reader struct {
	Catalog table.CatalogIO
	// Keys is how many grain keys of each kind of change a comparison
	// names with their values (show, diff); 0 is verify.ExampleKeys.
	Keys int
}

// Of reads the runs of cat's tables.
func Of(cat table.CatalogIO) Reader { return Reader{Catalog: cat} }
