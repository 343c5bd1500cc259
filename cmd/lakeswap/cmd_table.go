package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
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
  partition: [{column: order_date, transform: identity}]   # identity, year, month, day or hour
  additive: [order_count, amount_cents]      # summed into every fingerprint
  checks: {amount_cents: [non-negative]}

Types: boolean, int, long, float, double, string, binary, date, time, timestamp, timestamptz,
decimal(P,S), uuid, fixed(L), and nested: struct<name: type, ...> (a field "name: required type"
when it may not be null), list<type>, map<key type, value type>; quote a nested type in YAML
("struct<os: string>"). The grain is stored as the schema's identifier fields; additive columns and checks as
the table properties lakeswap.additive-columns and lakeswap.check.<column>.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTableCreate(cmd.Context(), g, o)
		},
	}
	create.Flags().StringVar(&o.schema, "schema", "", "schema file (required)")
	create.Flags().StringVar(&o.table, "table", "", "table name, NAMESPACE.NAME (default: the file's table:)")
	cmd.AddCommand(create, newTableDescribeCmd(g), newTableSetCmd(g))
	return cmd
}

type tableDescribeOptions struct {
	table string
}

func newTableDescribeCmd(g *globals) *cobra.Command {
	var o tableDescribeOptions
	cmd := &cobra.Command{
		Use:   "describe --table NS.NAME",
		Short: "Show a table's schema, partitioning, lakeswap contract and properties, and its last runs",
		Args:  tableNotArg,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runTableDescribe(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	return cmd
}

func runTableDescribe(ctx context.Context, g *globals, o tableDescribeOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return err
	}
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	info, err := pub.Describe(ctx, ident)
	if err != nil {
		return err
	}
	return g.emit(info, func(w io.Writer) {
		fmt.Fprintf(w, "table %s at %s\n  metadata %s\ncolumns:\n", info.Table, info.Location, info.MetadataLocation)
		for _, c := range info.Columns {
			req := ""
			if c.Required {
				req = ", required"
			}
			fmt.Fprintf(w, "  %s %s%s\n", c.Name, c.Type, req)
		}
		fmt.Fprintf(w, "partitioned by %s\n", strings.Join(info.Partition, ", "))
		if c := info.Contract; c != nil {
			fmt.Fprintf(w, "contract: grain %s; additive %s; checks %s", strings.Join(c.Grain, ", "), noneIfEmpty(c.Additive), describeChecks(c.Checks))
			if len(c.Assertions) > 0 {
				fmt.Fprintf(w, "; assertions %s", strings.Join(slices.Sorted(maps.Keys(c.Assertions)), ", "))
			}
			fmt.Fprintln(w)
		} else {
			fmt.Fprintf(w, "contract: lakeswap cannot publish to this table: %s\n", info.ContractError)
		}
		for _, k := range slices.Sorted(maps.Keys(info.Properties)) {
			fmt.Fprintf(w, "  %s = %s\n", k, info.Properties[k])
		}
		fmt.Fprintf(w, "last runs main holds (%d):\n", len(info.Runs))
		for _, e := range info.Runs {
			fmt.Fprintf(w, "  %s  snapshot %d  %s  %s\n", e.Time.Format(time.RFC3339), e.SnapshotID, e.RunID, words.Count(e.Rows, "row"))
		}
	})
}

func noneIfEmpty(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

type tableSetOptions struct {
	table string
	set   []string // KEY=VALUE
}

func newTableSetCmd(g *globals) *cobra.Command {
	var o tableSetOptions
	cmd := &cobra.Command{
		Use:   "set --table NS.NAME KEY=VALUE...",
		Short: "Set a table's contract in place (grain, additive columns, checks, band) in one commit",
		Long: `set gives a table its contract in place, whichever engine created it, in one commit that is
refused if the table changed meanwhile (exit 4, nothing changed); no data file is rewritten.

  grain=COL,COL          the schema's identifier fields (a schema update; the columns become
                         required); refused (exit 3) while the table's data holds a key twice or
                         a key with no value, naming them
  additive=COL,COL       lakeswap.additive-columns
  check.COL=CHECKS       lakeswap.check.COL: several joined by ';', each may be warn:KIND
                         non-negative, not-null, unique, accepted:A|B, range:LO..HI,
                         max-null-fraction:F, relationship:NS.TABLE(COLUMN)
  assert.NAME=QUERY      lakeswap.assert.NAME: a query over the run's staged rows (the view
                         rows) that must return no row; warn:QUERY warns instead
  band=LO:HI             lakeswap.plausible-band
  lakeswap.KEY=VALUE     any of lakeswap's properties

A value that would make every publish refuse the table is refused (exit 2); KEY= with no value
removes the property. For example:

  lakeswap table set --table web.events grain=user_id,event_ts additive=views check.views=non-negative

  lakeswap table set --table retail.daily_orders lakeswap.plausible-band=0.8:1.25
  lakeswap table set --table retail.daily_orders lakeswap.check.amount_cents=non-negative`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.set = args
			return runTableSet(cmd.Context(), g, o)
		},
	}
	cmd.Flags().StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	return cmd
}

func runTableSet(ctx context.Context, g *globals, o tableSetOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return err
	}
	set := map[string]string{}
	for _, kv := range o.set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("%q: want KEY=VALUE (KEY= removes the property)", kv)
		}
		set[k] = v
	}
	g.writes = true
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	if err := pub.SetProperties(ctx, ident, set); err != nil {
		return err
	}
	info, err := pub.Describe(ctx, ident)
	if err != nil {
		return err
	}
	return g.emit(info, func(w io.Writer) {
		fmt.Fprintf(w, "set %d property(ies) of %s in one commit (metadata %s)\n", len(set), info.Table, info.MetadataLocation)
	})
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
	out := tableCreated{Table: strings.Join(ident, "."), Location: tbl.Location(), MetadataLocation: tbl.MetadataLocation()}
	return g.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "created %s at %s\n", out.Table, out.Location)
	})
}

// tableCreated is table create's -o json.
type tableCreated struct {
	Table            string `json:"table"`
	Location         string `json:"location"`
	MetadataLocation string `json:"metadata_location"`
}

// describeChecks lists column checks as amount_cents non-negative,
// order_count non-negative; none where there are none.
func describeChecks(checks map[string][]contract.Check) string {
	if len(checks) == 0 {
		return "none"
	}
	var out []string
	for _, col := range slices.Sorted(maps.Keys(checks)) {
		for _, ch := range checks[col] {
			out = append(out, col+" "+string(ch))
		}
	}
	return strings.Join(out, ", ")
}
