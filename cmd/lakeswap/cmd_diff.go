package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap/history"
)

type diffOptions struct {
	table    string
	from, to string
	keys     int
}

func newDiffCmd(g *globals) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff --table NS.NAME FROM TO",
		Short: "List, partition by partition, what changed between two snapshots of a table",
		Long: `diff compares two snapshots of a table, each named by its snapshot id, a tag or branch, or a run id
(the run's newest snapshot): for every partition whose data files differ, the rows and every additive
sum in each with the difference, the fingerprints, and the files only one of them holds. It reads
those partitions' files in both snapshots; it changes nothing.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.from, o.to = args[0], args[1]
			return runDiff(cmd.Context(), g, o)
		},
	}
	cmd.Flags().StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	cmd.Flags().IntVar(&o.keys, "keys", 0, "how many grain keys of each kind of change each partition names with their values (default 3)")
	return cmd
}

func runDiff(ctx context.Context, g *globals, o diffOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return err
	}
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	v, err := history.Reader{Catalog: pub.Catalog, Keys: o.keys}.Diff(ctx, ident, o.from, o.to)
	if err != nil {
		return err
	}
	return g.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "%s from snapshot %d to %d: %s changed\n", v.Table, v.From, v.To, words.Count(len(v.Partitions), "partition"))
		if len(v.Partitions) > 0 {
			printBeforeAfter(w, v.Partitions, v.Scales)
			printFiles(w, v.Partitions)
		}
	})
}
