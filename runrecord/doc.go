// Package runrecord is what lakeswap records of a run in the snapshot the run
// commits, and how it reads that back: the table's own history is the
// record of every run (its id, partitions, fingerprints, rows and sums, what
// it replaced, its source and lakeswap's version), so that history, verify,
// rollback and a rerun of the same run id need nothing but the table.
//
//	props := runrecord.Record{RunID: "job-42", PartitionColumn: "order_date", Partitions: []string{"2026-01-01"}}.Properties()
//	rec, ok := runrecord.Read(snapshot.Summary.Properties)
package runrecord
