// Package swap is lakeswap's publish protocol. A publish notes main's
// snapshot (the base) and the files each declared partition holds there,
// stages the new rows as Parquet under a prefix no earlier attempt used,
// validates and fingerprints them, commits one snapshot that replaces exactly
// the declared partitions' files on condition that main is still at the base,
// then reads the commit back and compares fingerprints. A run id the table
// already records is concluded as a rerun, not committed twice. Stage and Apply split a
// publish in two, so that a plan can be approved, stored as a plan file
// (WritePlan, ReadPlan, Approve) and committed by another process. A
// rollback points main back at the snapshot a run replaced.
//
// The steps are three functions whose calls are the steps, in stage.go,
// publish.go and engine.go:
//
//   - stage: planRun (the base and each partition's prefix), holdAttempt
//     (gc keeps the attempt's files), stageAll (rows to Parquet, validated
//     and fingerprinted), guard (guards.go: every guard of Guards that
//     judges a run as a whole, in one list), fingerprintRun;
//   - apply: concludeUncommitted (refused, a rerun, nothing to change), then
//     land, or applyBatches (batches.go: land once a batch);
//   - land: a run of one table, a batch and a release of several tables
//     alike go through snapshot.Land, the one commit engine, which
//     rollbacks (package swap/rollback) go through too: one catalog
//     operation (snapshot.Send, through which every commit of lakeswap's
//     goes), rebased when main moved elsewhere with the run's guards
//     judging it again, an unsure answer settled from the table, and read
//     back; a publish that reads back otherwise is undone whole.
//
// What a run holds and removes is in cleanup.go. Beside swap, each taking
// only the catalog it needs: package swap/rollback undoes a run
// (Publisher.Rollback gives it the guards and the restaging of rows),
// swap/history reads what the table's history says of the runs (history,
// status, show, diff), swap/audit checks a run or the whole table against
// what the runs recorded, and swap/gc removes what attempts that never
// committed left behind.
//
//	p := &swap.Publisher{Catalog: cat} // any Catalog: LoadTable, CommitTable
//	res, err := p.Publish(ctx, swap.Request{
//		Table:      table.Identifier{"retail", "daily_orders"},
//		Partitions: []string{"2026-01-01", "2026-01-02"},
//		Source:     src, // a source.Source: partition value -> array.RecordReader
//	})
//	switch {
//	case errors.Is(err, outcome.ErrRefused):      // findings; nothing committed
//	case errors.Is(err, outcome.ErrConflict):     // main moved; nothing committed
//	case errors.Is(err, outcome.ErrNotCommitted): // either, or a commit that did not land
//	}
package swap
