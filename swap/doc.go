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
// A run is a plan (the document a person approves, Plan) carried out by a
// run (private: the state the steps hand on beside it). The steps are
// three functions whose calls are the steps, in stage.go, publish.go and
// engine.go; each step below is the function named.
//
// stage (Publisher.stage; Stage stops at the plan):
//
//  1. planRun: the base snapshot, the files each declared partition holds
//     there, the attempt and each partition's staging prefix;
//  2. holdAttempt: gc keeps the attempt's files while it runs;
//  3. stageAll: rows to Parquet under the prefixes, validated and
//     fingerprinted (adopt.go for files another engine wrote);
//  4. guard (guards.go): every guard of Guards that judges a run as a
//     whole, in one list, each returning its Verdict, which judgeAll
//     alone writes into the plan, and summed up in the plan's Checks;
//  5. fingerprints: the run's fingerprint and what it replaces;
//  6. removeStaged (cleanup.go): a stage refused or failed removes exactly
//     what it wrote.
//
// The plan a person approved is a value: Apply and BindRelease run a copy
// of it (runOf), and what the apply adds (the checks again at commit,
// what was removed) is the result's plan, never the one given.
//
// apply (Publisher.apply; Apply binds plans read back first, apply.go):
//
//  1. concludeUncommitted: a plan refused, a rerun of a recorded run id
//     (rerun), or one that changes nothing ends without a commit;
//  2. land, or applyBatches (batches.go: land once a batch).
//
// land (Publisher.land): a run of one table, a batch and a release of
// several tables alike go through snapshot.Land, the one commit engine,
// which rollbacks (package swap/rollback) go through too:
//
//  1. Build (buildChanges): one commit per table, replacing exactly the
//     declared partitions' files, on condition that main is at the base;
//  2. snapshot.Send: one catalog operation, through which every commit of
//     lakeswap's goes; an unsure answer is settled from the tables;
//  3. Rebase (rebaseChanges, rebase.go): main moved, so the guards of
//     rebase judge what landed since, and the commit is built again on the
//     new head, or the conflict is said;
//  4. ReadBack (readBack, readback.go): each change read back and compared
//     with its plan (readBackCommit); a mismatch is undone whole (undo)
//     unless NoAutoRollback.
//
// A run a SQL job computed carries the job (Job, package job's Info),
// whose document the plan keeps as JSON swap does not read: the guard late
// arrivals asks it for its verdict (JudgeLate), a commit for what the
// snapshot records of it (Record), a rebase whether runs landed since
// that it would overwrite (Stale), shards for their join (JoinShard). Apply
// reads it back with ApplyOptions.Jobs.
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
