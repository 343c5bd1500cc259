// Package stats holds what other engines prune on: a data file's column
// bounds and counts in its manifest entry and its Parquet footer, and a
// manifest's partition summaries in the manifest list.
//
// Spark, Trino, PyIceberg and DuckDB skip a file, a row group or a whole
// manifest when these say no row can match a filter; a bound that leaves
// out a value the file holds is rows those engines silently lose. The
// package computes the exact figures from a file's rows (Read), checks what
// was recorded against them (CheckFile, CheckFooter, CheckSummaries), and
// writes corrected copies of manifests and manifest lists (PatchManifest,
// PatchList) without touching a data file.
//
// Values are compared in Iceberg's order: numbers as numbers, -0.0 below
// 0.0, NaN outside every bound; strings, binaries, fixed and uuid values
// byte by byte (UTF-8's byte order is its code points' order).
package stats
