// Package audit checks a table against what its runs recorded: a run's
// partitions fingerprinted again in the snapshot it committed (with the
// statistics other engines prune on), the whole table (every grain key
// once, every run's partitions as recorded), a contract against the rows
// a table holds, and the standing checks of freshness, volume and the
// last run. It writes nothing.
package audit

import "github.com/apache/iceberg-go/table"

// Auditor checks the tables of one catalog.
type Auditor struct {
	Catalog table.CatalogIO
}

// Of checks the tables of cat.
func Of(cat table.CatalogIO) Auditor { return Auditor{Catalog: cat} }
