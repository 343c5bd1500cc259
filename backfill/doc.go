// Package backfill holds lakeswap's use cases, each made ready for the
// publish engine (package swap): input files read and split by partition
// (Files), files another engine wrote adopted as they are (Adopted), the
// tables of a release staged one after another (Into), and the memory
// budget a run is sized by (Budget). The command and the demo build their
// runs through it; a Go program can too.
package backfill
