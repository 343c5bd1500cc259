package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/swap"
)

func newStatusCmd(g *globals) *cobra.Command {
	var table, runID string
	cmd := &cobra.Command{
		Use:   "status --table NS.NAME --run RUN_ID",
		Short: "Say from the table's history whether a run landed",
		Long: "status answers from the table's own history whether a run landed, as which snapshot(s), and whether\n" +
			"main still holds it: what a publish that exited 5 (outcome unknown) leaves to find out.\n\n" +
			"It exits 0 when the run landed (all of its batches, for a run committed in batches) and 1 when no\n" +
			"snapshot of the table records it, or main holds only some of its batches.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ident, err := catalog.ParseIdent(table)
			if err != nil {
				return usageError{err}
			}
			if runID == "" {
				return usagef("name the run with --run")
			}
			return runStatus(cmd.Context(), g, ident, runID)
		},
	}
	cmd.Flags().StringVar(&table, "table", "", "table, NAMESPACE.NAME (required)")
	cmd.Flags().StringVar(&runID, "run", "", "run id (required)")
	return cmd
}

func runStatus(ctx context.Context, g *globals, ident []string, runID string) error {
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	st, err := pub.Status(ctx, ident, runID)
	if err != nil {
		return err
	}
	name := strings.Join(ident, ".")
	switch {
	case !st.Landed:
		err = fmt.Errorf("%w: run %s did not land: no snapshot of %s records it (main is at %s)", swap.ErrRunNotFound, runID, name, orNone(st.Main))
	case !st.Complete:
		err = fmt.Errorf("run %s landed in part: main holds %d of its %d batches; run it again with the same run id to commit the rest", runID, st.OnMainBatches, st.Batches)
	}
	return g.report(st, err, func(w io.Writer) {
		if !st.Landed {
			return
		}
		for _, e := range st.Snapshots {
			batch := ""
			if e.Batch != "" {
				batch = " (batch " + e.Batch + ")"
			}
			fmt.Fprintf(w, "run %s landed as snapshot %d%s at %s: %s, %d rows, fingerprint %s\n",
				runID, e.SnapshotID, batch, e.Time.Format("2006-01-02 15:04:05Z"), strings.Join(e.Partitions, ","), e.Rows, short(e.Fingerprint))
		}
		switch newest := st.Snapshots[len(st.Snapshots)-1].SnapshotID; {
		case st.Batches > 0 && !st.Complete:
			fmt.Fprintf(w, "main holds %d of its %d batches\n", st.OnMainBatches, st.Batches)
		case st.OnMain && st.Main == newest:
			fmt.Fprintln(w, "main holds it")
		case st.OnMain:
			fmt.Fprintf(w, "main holds it, with later commits on top (main is at %d)\n", st.Main)
		default:
			fmt.Fprintf(w, "main no longer holds it (rolled back, or replaced): main is at %s\n", orNone(st.Main))
		}
		if st.RollbackTarget != nil {
			fmt.Fprintf(w, "rollback target: snapshot %d, kept by tag %s\n", *st.RollbackTarget, swap.RollbackTag(runID))
		}
	})
}

func orNone(id int64) string {
	if id == 0 {
		return "no snapshot"
	}
	return fmt.Sprint(id)
}
