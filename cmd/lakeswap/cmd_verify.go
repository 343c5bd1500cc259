package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/audit"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/verify"
)

type verifyOptions struct {
	table      string
	runID      string
	snapshotID int64 // a run's snapshot, instead of its id
	at         int64 // with no run: the snapshot the whole table is checked at
}

func newVerifyCmd(g *globals) *cobra.Command {
	var o verifyOptions
	cmd := &cobra.Command{
		Use:   "verify --table NS.NAME [--run RUN_ID | --snapshot ID | --at ID]",
		Short: "Check a committed run's fingerprint, or the whole table's invariants",
		Long: `verify --run (or --snapshot) reads the files of the partitions a run wrote, in the snapshot it
committed, and compares their fingerprint with the one the run recorded in that snapshot; and checks
what other engines prune on for those files (below).

verify with no run checks the table as a whole, at main (or at the snapshot --at names): every file
it references is present and readable with the table's schema; the grain is unique across the table
(a record in two partitions is counted twice); every lakeswap run main still holds, partition by
partition as it committed it, fingerprints as it recorded; and what Spark, Trino, PyIceberg and
DuckDB skip files by holds every row: each data file's bounds and value, null and NaN counts, in its
manifest entry and its Parquet footer, and each manifest's partition summaries. A wrong one is a
finding naming the file, the column, the values and the filter that would miss rows (exit 6);
'lakeswap repair-stats' corrects the manifests. It holds a hash of every key in memory.

` + exitCodesHelp,
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runVerify(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	cmd.Flags().StringVar(&o.runID, "run", "", "run id")
	cmd.Flags().Int64Var(&o.snapshotID, "snapshot", 0, "a run's snapshot id (instead of --run)")
	cmd.Flags().Int64Var(&o.at, "at", 0, "with no run: check the table at this snapshot instead of main")
	return cmd
}

// runVerify checks a run, or with none the whole table.
func runVerify(ctx context.Context, g *globals, o verifyOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return usageError{err}
	}
	if o.runID != "" && o.snapshotID != 0 {
		return usagef("name the run with one of --run or --snapshot")
	}
	if o.runID == "" && o.snapshotID == 0 {
		return runVerifyTable(ctx, g, ident, o.at)
	}
	if o.at != 0 {
		return usagef("--at names the snapshot a whole-table check reads; a run is checked in the snapshot it committed")
	}
	return runVerifyRun(ctx, g, ident, o.runID, o.snapshotID)
}

func runVerifyTable(ctx context.Context, g *globals, ident []string, at int64) error {
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	res, err := audit.Of(pub.Catalog).VerifyTable(ctx, ident, at)
	if res == nil {
		return err
	}
	return g.report(verifyTableView{Status: verdictOf(res.OK), TableCheck: res}, err, func(w io.Writer) {
		verdict := "ok"
		if !res.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(w, "table %s at snapshot %d: %s\n  %s, %s read, %s; grain unique across the table: %v\n",
			res.Table, res.SnapshotID, verdict, words.Count(res.Partitions, "partition"), words.Count(res.Files, "file"), words.Count(res.Rows, "row"), !slices.ContainsFunc(res.Findings, func(f verify.Finding) bool { return f.Kind == verify.KindDuplicateGrain }))
		if res.SnapshotID != 0 {
			fmt.Fprintf(w, "  what other engines prune on: every data file's bounds and counts and %s partition summaries checked against the rows\n",
				words.Count(res.Manifests, "manifest's", "manifests'"))
		}
		for _, r := range res.Runs {
			ok := "ok"
			if !r.OK {
				ok = "MISMATCH"
			}
			fmt.Fprintf(w, "  run %s (snapshot %d): %s in %s main holds as it committed them\n", r.RunID, r.SnapshotID, ok, words.Count(len(r.Partitions), "partition"))
		}
		for _, f := range res.Findings {
			fmt.Fprintf(w, "  - %s\n", f.String())
		}
	})
}

func runVerifyRun(ctx context.Context, g *globals, ident []string, runID string, snapshotID int64) error {
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	res, err := audit.Of(pub.Catalog).VerifyRun(ctx, ident, runID, snapshotID)
	if errors.Is(err, outcome.ErrRunNotFound) && runID != "" {
		// A release that left this table as it was has nothing here to
		// verify: said, and not an error.
		if st, serr := history.Of(pub.Catalog).Status(ctx, ident, runID); serr == nil && st.ReleaseUnchanged != 0 {
			return verifyUnchanged(ctx, g, pub, ident, runID, st.ReleaseUnchanged)
		}
	}
	if res == nil {
		return err
	}
	var scales map[string]int // the decimal sums', to show them as written
	if c, cerr := pub.Contract(ctx, ident); cerr == nil {
		scales = c.Summary().Scales
	}
	view := verifyRunView{Status: verdictOf(res.OK), VerifyResult: res}
	others, oerr := verifyRelease(ctx, pub, ident, res)
	view.Tables = others
	if oerr != nil {
		view.Status = verdictOf(false)
		err = errors.Join(err, oerr)
	}
	return g.report(view, err, func(w io.Writer) {
		defer func() {
			for _, o := range others {
				fmt.Fprintf(w, "%s, of the same release: ", o.Table)
				printVerify(w, o.VerifyResult, nil)
			}
		}()
		if len(res.Batches) > 0 {
			fmt.Fprintf(w, "run %s, committed in %d batches:\n", res.RunID, len(res.Batches))
			for _, b := range res.Batches {
				printVerify(w, &b, scales)
			}
			return
		}
		printVerify(w, res, scales)
	})
}

func printVerify(w io.Writer, res *audit.VerifyResult, scales map[string]int) {
	verdict := "ok"
	if !res.OK {
		verdict = "MISMATCH"
	}
	fmt.Fprintf(w, "run %s, snapshot %d: %s\n  recorded %s\n  computed %s\n  rows %s, sums %s\n",
		res.RunID, res.SnapshotID, verdict, res.Recorded, res.Computed, words.Number(res.Rows), formatSums(res.Sums, scales))
	for k, h := range res.Differences {
		fmt.Fprintf(w, "  partition %s now hashes %s\n", k, short(h))
	}
	for _, f := range res.Statistics {
		fmt.Fprintf(w, "  - %s\n", f.String())
	}
}

// verifyRunView and verifyTableView are verify's -o json, with the
// verdict at the top: "verified" or "mismatch".
type verifyRunView struct {
	Status string `json:"status"`
	*audit.VerifyResult
	// Tables are the other tables of the release the run is part of,
	// each verified: the run is verified when all are.
	Tables []tableVerified `json:"tables,omitempty"`
}

// tableVerified is one other table of a release, verified.
type tableVerified struct {
	Table string `json:"table"`
	*audit.VerifyResult
}

// verifyUnchanged verifies a release asked of a table it left unchanged:
// nothing of it is committed there, so the release's other tables, found
// in the catalog, are verified instead; it says so, and fails as they do.
func verifyUnchanged(ctx context.Context, g *globals, pub *swap.Publisher, ident []string, runID string, at int64) error {
	name := strings.Join(ident, ".")
	tables, err := history.Of(pub.Catalog).ReleaseTables(ctx, runID, ident)
	if err != nil {
		return fmt.Errorf("run %s is a release that committed nothing to %s; finding its other tables to verify: %w", runID, name, err)
	}
	others, err := verifyTables(ctx, pub, slices.DeleteFunc(slices.Clone(tables), func(t string) bool { return t == name }), runID)
	view := verifyRunView{Status: "unchanged", VerifyResult: &audit.VerifyResult{RunID: runID, SnapshotID: at, OK: err == nil}, Tables: others}
	if err != nil {
		view.Status = verdictOf(false)
	}
	return g.report(view, err, func(w io.Writer) {
		fmt.Fprintf(w, "run %s is a release that committed nothing to %s (its partitions held the release's content already, at snapshot %d)", runID, name, at)
		switch {
		case len(tables) <= 1:
			fmt.Fprintln(w, ", nor to any other table of the catalog: nothing of it to verify")
			return
		case len(others) == 0:
			fmt.Fprintf(w, "; its other tables, %s, could not be verified\n", strings.Join(slices.DeleteFunc(slices.Clone(tables), func(t string) bool { return t == name }), ", "))
			return
		}
		fmt.Fprintln(w, "; its other tables:")
		for _, o := range others {
			fmt.Fprintf(w, "%s, of the same release: ", o.Table)
			printVerify(w, o.VerifyResult, nil)
		}
	})
}

// verifyRelease verifies the run on the other tables of the release it
// is part of; a table whose share committed nothing has nothing to check.
func verifyRelease(ctx context.Context, pub *swap.Publisher, ident []string, res *audit.VerifyResult) ([]tableVerified, error) {
	if res.RunID == "" {
		return nil, nil
	}
	st, err := history.Of(pub.Catalog).Status(ctx, ident, res.RunID)
	if err != nil {
		return nil, err
	}
	return verifyTables(ctx, pub, otherTables(st, strings.Join(ident, ".")), res.RunID)
}

// verifyTables verifies a release's run on each of the tables named.
func verifyTables(ctx context.Context, pub *swap.Publisher, tables []string, runID string) ([]tableVerified, error) {
	var out []tableVerified
	var errs []error
	for _, t := range tables {
		ident, err := swap.ParseTable(t)
		if err != nil {
			return nil, err
		}
		r, err := audit.Of(pub.Catalog).VerifyRun(ctx, ident, runID, 0)
		if errors.Is(err, outcome.ErrRunNotFound) {
			continue // unchanged in the release: nothing committed to it
		}
		if r == nil {
			return out, fmt.Errorf("%s, of the same release: %w", t, err)
		}
		errs = append(errs, err)
		out = append(out, tableVerified{Table: t, VerifyResult: r})
	}
	return out, errors.Join(errs...)
}

type verifyTableView struct {
	Status string `json:"status"`
	*audit.TableCheck
}

func verdictOf(ok bool) string {
	if ok {
		return "verified"
	}
	return "mismatch"
}
