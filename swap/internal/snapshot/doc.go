// Package snapshot is what swap and its parts know of a table's snapshots:
// the files each partition holds in one (At, Files, with the deletes that
// apply to them), what changed since another (MovedSince, AddedSince), a
// run's snapshot and its partitions' fingerprints, and the one commit
// engine (Land, through Send, the only function that sends a commit to a
// catalog, and LookFor, which settles an unsure answer from the table).
package snapshot
