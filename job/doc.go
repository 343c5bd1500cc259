// Package job is a backfill written as SQL: a job file names the table it
// recomputes, the sources the SQL reads (each bound to a name), the SQL
// that computes a closed range of partitions (the range bound as
// parameters, never spliced into the text), the rules that reject source
// rows with a reason, an optional lookback, and an optional reconciliation
// query. The job's transform version is the SHA-256 of the job file and
// its SQL, computed, never typed, so that a rerun is provably the same
// computation; what the sources held is a listing of their files with
// sizes and checksums, recorded as the hash of that list.
//
// A run of a job records its rows' arrival where the job names a lag and
// a lookback (late.go: what arrived since the table's watermark, the
// days left out, --since-last) and judges the rows that arrived late:
// Info is the job's record of the run, the swap.Job that package swap
// asks for the guard late arrivals' verdict and for what a snapshot
// records (judge.go); Read reads it back from a plan for Apply.
//
//	table: retail.orders_fact
//	sources:
//	  events: {path: raw/*.ndjson}
//	sql_file: orders_fact.sql   # or sql: | ...; reads $from and $to
//	rejects:
//	  - {reason: order_id is null, when: order_id is null}
//	lookback: 48h
package job
