// Package doctor checks, before a first backfill, that lakeswap can reach
// what a run needs: the catalog, the warehouse (a probe object written,
// read back and removed), the store's clock, the credentials' source and
// the SQL engine. Each check has a verdict and, when it fails, a fix.
package doctor
