package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/doctor"
	"github.com/lakeswap/lakeswap/internal/words"
)

type doctorOptions struct{}

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check that lakeswap can reach the catalog, write the warehouse and run SQL jobs, with a fix for each failure",
		Long: `doctor says which catalog lakeswap would use and where it was configured, its URI with secrets
masked, the warehouse, and where credentials come from (the AWS chain's provider, never a secret). Then
it checks: the catalog is reachable and lists its namespaces; a probe object is written under the
warehouse, read back and removed; the machine's clock is within 2 minutes of the store's; the SQL engine
is built in. It exits 0 only when every check passes, else 1, naming a fix for each that failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDoctor(cmd.Context(), g, doctorOptions{}) },
	}
}

func runDoctor(ctx context.Context, g *globals, _ doctorOptions) error {
	cfg, err := catalog.Resolve(catalog.Settings{Home: g.home, Catalog: g.catalogName, ConfigFile: g.configFile, Getenv: g.getenv})
	if err != nil {
		return err
	}
	r := doctor.Run(ctx, cfg)
	var failed error
	if !r.OK {
		n := 0
		for _, c := range r.Checks {
			if !c.OK && !c.Skipped {
				n++
			}
		}
		failed = fmt.Errorf("doctor: %s failed", words.Count(n, "check"))
	}
	return g.report(r, failed, func(w io.Writer) {
		fmt.Fprintf(w, "catalog %s (%s), configured by %s\n", r.Catalog, r.Type, r.ConfiguredBy)
		if r.URI != "" {
			fmt.Fprintf(w, "  uri %s\n", r.URI)
		}
		if r.Warehouse != "" {
			fmt.Fprintf(w, "  warehouse %s\n", r.Warehouse)
		}
		if r.Credentials != "" {
			fmt.Fprintf(w, "  credentials from %s\n", r.Credentials)
		}
		for _, c := range r.Checks {
			verdict := "ok  "
			switch {
			case c.Skipped:
				verdict = "skip"
			case !c.OK:
				verdict = "FAIL"
			}
			fmt.Fprintf(w, "%s %s: %s\n", verdict, c.Name, c.Detail)
			if c.Fix != "" {
				fmt.Fprintf(w, "     fix: %s\n", c.Fix)
			}
		}
	})
}
