package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/swap"
)

type tableCreateOptions struct {
	schema string // the schema file
	table  string // default: the file's table:
}

func newTableCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "table", Short: "Manage tables"}
	var o tableCreateOptions
	create := &cobra.Command{
		Use:   "create --schema FILE [--table NS.NAME]",
		Short: "Create a table from a small schema file (columns, grain, partitioning, additive columns, checks)",
		Long: `create makes an Iceberg table from a schema file such as:

  table: retail.daily_orders
  columns:
    - {name: order_date, type: date, required: true}
    - {name: channel, type: string, required: true}
    - {name: order_count, type: long, required: true}
    - {name: amount_cents, type: long, required: true}
  identifier: [order_date, channel]          # the grain: unique, never null
  partition: [{column: order_date, transform: identity}]   # identity, day or month
  additive: [order_count, amount_cents]      # summed into every fingerprint
  checks: {amount_cents: [non-negative]}

Types: boolean, int, long, float, double, string, binary, date, time, timestamp, timestamptz,
decimal(P,S). The grain is stored as the schema's identifier fields; additive columns and checks as
the table properties lakeswap.additive-columns and lakeswap.check.<column>.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTableCreate(cmd.Context(), g, o)
		},
	}
	create.Flags().StringVar(&o.schema, "schema", "", "schema file (required)")
	create.Flags().StringVar(&o.table, "table", "", "table name, NAMESPACE.NAME (default: the file's table:)")
	cmd.AddCommand(create)
	return cmd
}

func runTableCreate(ctx context.Context, g *globals, o tableCreateOptions) error {
	schemaFile, name := o.schema, o.table
	if schemaFile == "" {
		return usagef("--schema is required")
	}
	spec, err := swap.ReadTableSpec(schemaFile)
	if err != nil {
		return err
	}
	if name == "" {
		name = spec.Table
	}
	ident, err := swap.ParseTable(name)
	if err != nil {
		return usageError{err}
	}
	g.writes = true
	ctx, cat, _, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	tbl, err := swap.CreateTable(ctx, cat, ident, spec)
	if err != nil {
		return err
	}
	out := map[string]string{"table": strings.Join(ident, "."), "location": tbl.Location(), "metadata_location": tbl.MetadataLocation()}
	return g.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "created %s at %s\n", out["table"], out["location"])
	})
}
