package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap"
)

type repairOptions struct {
	table  string
	dryRun bool
}

func newRepairStatsCmd(g *globals) *cobra.Command {
	var o repairOptions
	cmd := &cobra.Command{
		Use:   "repair-stats --table NS.NAME [--dry-run]",
		Short: "Correct the bounds, counts and partition summaries other engines prune on, in one commit",
		Long: `repair-stats reads every data file of main, whoever wrote it, and checks what Spark, Trino,
PyIceberg and DuckDB skip files by: each file's column bounds and value, null and NaN counts in its
manifest entry and its Parquet footer, and each manifest's partition summaries in the manifest list.
A bound that leaves out a value the file holds is rows those engines silently lose.

It then commits one "replace" snapshot, pinned to main, in which every manifest with a wrong entry is
written anew with its files' exact figures (every other entry, status and sequence number as it was)
and the manifest list records each manifest's partition summaries as its entries make them. No data
file is written, moved or removed; the table's rows are the same. The commit is checked again.

A Parquet footer's own statistics cannot be corrected in a manifest: those files are listed, and
publishing their partitions again mends them. --dry-run checks and commits nothing (exit 6 if
anything is wrong).

` + exitCodesHelp,
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRepairStats(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "check only; commit nothing")
	return cmd
}

// repairView is repair-stats' -o json.
type repairView struct {
	Status string `json:"status"` // repaired (committed; left lists what it could not), clean, wrong (nothing committed)
	*swap.RepairResult
}

func runRepairStats(ctx context.Context, g *globals, o repairOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return usageError{err}
	}
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	res, err := pub.RepairStats(ctx, ident, o.dryRun)
	if res == nil {
		return err
	}
	status := "clean"
	switch {
	case res.Committed != 0:
		status = "repaired" // with findings left when it also fails
	case err != nil:
		status = "wrong"
	}
	return g.report(repairView{Status: status, RepairResult: res}, err, func(w io.Writer) {
		fmt.Fprintf(w, "table %s at snapshot %d: %s and %s checked, %s\n", res.Table, res.SnapshotID,
			words.Count(res.Files, "data file"), words.Count(res.Manifests, "manifest"), words.Count(len(res.Findings), "wrong figure"))
		for _, f := range res.Findings {
			fmt.Fprintf(w, "  - %s\n", f.String())
		}
		if res.Committed != 0 {
			fmt.Fprintf(w, "committed snapshot %d: %s rewritten (%s corrected), %s corrected in the manifest list only; no data file touched\n",
				res.Committed, words.Count(res.Rewritten, "manifest"), words.Count(res.FilesFixed, "file's entry", "files' entries"), words.Count(res.Summaries, "manifest's summaries", "manifests' summaries"))
		}
	})
}
