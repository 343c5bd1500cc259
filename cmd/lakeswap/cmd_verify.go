package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/swap"
)

func newVerifyCmd(g *globals) *cobra.Command {
	var table, runID string
	var snapshotID int64
	cmd := &cobra.Command{
		Use:   "verify --table NS.NAME (--run RUN_ID | --snapshot ID)",
		Short: "Recompute a committed run's fingerprint from its files and compare it with the recorded one",
		Long:  "verify reads the files of the partitions a run wrote, in the snapshot it committed, and compares\ntheir fingerprint with the one the run recorded in that snapshot.\n\n" + exitCodesHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ident, err := catalog.ParseIdent(table)
			if err != nil {
				return usageError{err}
			}
			if (runID == "") == (snapshotID == 0) {
				return usagef("name the run with exactly one of --run or --snapshot")
			}
			return runVerify(cmd.Context(), g, ident, runID, snapshotID)
		},
	}
	cmd.Flags().StringVar(&table, "table", "", "table, NAMESPACE.NAME (required)")
	cmd.Flags().StringVar(&runID, "run", "", "run id")
	cmd.Flags().Int64Var(&snapshotID, "snapshot", 0, "snapshot id (instead of --run)")
	return cmd
}

func runVerify(ctx context.Context, g *globals, ident []string, runID string, snapshotID int64) error {
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	res, err := pub.VerifyRun(ctx, ident, runID, snapshotID)
	if res == nil {
		return err
	}
	return g.report(res, err, func(w io.Writer) {
		if len(res.Batches) > 0 {
			fmt.Fprintf(w, "run %s, committed in %d batches:\n", res.RunID, len(res.Batches))
			for _, b := range res.Batches {
				printVerify(w, &b)
			}
			return
		}
		printVerify(w, res)
	})
}

func printVerify(w io.Writer, res *swap.VerifyResult) {
	verdict := "ok"
	if !res.OK {
		verdict = "MISMATCH"
	}
	fmt.Fprintf(w, "run %s, snapshot %d: %s\n  recorded %s\n  computed %s\n  rows %d, sums %s\n",
		res.RunID, res.SnapshotID, verdict, res.Recorded, res.Computed, res.Rows, formatSums(res.Sums))
	for k, h := range res.Differences {
		fmt.Fprintf(w, "  partition %s now hashes %s\n", k, short(h))
	}
}
