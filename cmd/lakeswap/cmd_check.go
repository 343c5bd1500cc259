package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/swap/audit"
)

type checkOptions struct {
	table      string
	maxAge     string
	band       string
	trailing   int
	verified   bool
	contract   bool
	partitions []string
}

// checkResult is check's -o json: the verdict, and each check's line.
type checkResult struct {
	Table  string            `json:"table"`
	Status string            `json:"status"` // "passed" or "failed"
	Checks []audit.CheckLine `json:"checks"`
}

func newCheckCmd(g *globals) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check --table NS.NAME [--max-age 36h] [--volume-band LO:HI] [--trailing N] [--partitions SEL]",
		Short: "Standing checks a scheduler runs: freshness, volume against recent partitions, the last run verified, the contract kept",
		Long: `check runs a table's standing checks and prints one line each, then exits 0 when all pass, 1 when
any fails: what a scheduler runs after each backfill, or on its own clock, so that a pipeline that stops
working is noticed.

  --max-age D       the newest partition (of a date or time field: since its period ended; of another
                    field: the last commit) is at most D old: 36h, 2d
  --volume-band B   the newest partition's rows and additive sums lie within LO:HI of the mean of the
                    --trailing partitions before it (default 7); default the table's
                    lakeswap.plausible-band, else 0.6:1.67; "off" skips it
  the last run      main's newest run of lakeswap's fingerprints as it recorded (--verified=false
                    skips it)
  the contract      the newest partition's rows (or those --partitions selects) keep the table's
                    contract as a run's must: grain, required columns, column checks,
                    relationships to other tables (as main holds them), unique-table,
                    assertions (--contract=false skips it)

It reads the table and commits nothing.`,
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCheck(cmd.Context(), g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "the table, NAMESPACE.NAME (required)")
	f.StringVar(&o.maxAge, "max-age", "", "fail when the newest partition, or the last commit, is older: 36h, 2d (default: not checked)")
	f.StringVar(&o.band, "volume-band", "", "LO:HI of the mean of the trailing partitions the newest may hold (default the table's plausible band, else 0.6:1.67; off: not checked)")
	f.IntVar(&o.trailing, "trailing", 7, "partitions before the newest that --volume-band compares it with")
	f.BoolVar(&o.verified, "verified", true, "check that main's newest run fingerprints as it recorded")
	f.BoolVar(&o.contract, "contract", true, "check that the newest partition's rows keep the table's contract: grain, required columns, column checks")
	f.StringArrayVar(&o.partitions, "partitions", nil, "with --contract: the partitions to judge, COL=FROM..TO or COL=V1,V2 (default the newest)")
	return cmd
}

func runCheck(ctx context.Context, g *globals, o checkOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return err
	}
	req := audit.CheckRequest{Table: ident, Trailing: o.trailing, Verified: o.verified, Contract: o.contract, Partitions: o.partitions}
	if len(o.partitions) > 0 && !o.contract {
		return usagef("--partitions names the partitions --contract judges; it does nothing with --contract=false")
	}
	if o.trailing < 1 {
		return usagef("--trailing %d: want 1 or more partitions", o.trailing)
	}
	if o.band == "off" && !o.verified && !o.contract && o.maxAge == "" {
		// Passing with nothing checked would tell a scheduler all is well.
		return usagef("--volume-band off, --verified=false and --contract=false leave no check to run: give --max-age, or keep one of them")
	}
	if o.maxAge != "" {
		if req.MaxAge, err = parseAge(o.maxAge); err != nil {
			return usagef("--max-age %s: %v", o.maxAge, err)
		}
	}
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	if o.band != "off" {
		band := checkBand
		if o.band != "" {
			if band, err = contract.ParseBand(o.band); err != nil {
				return usageError{err}
			}
		} else if info, err := pub.Describe(ctx, ident); err == nil && info.Properties[contract.PropPlausibleBand] != "" {
			if band, err = contract.ParseBand(info.Properties[contract.PropPlausibleBand]); err != nil {
				return fmt.Errorf("table %s: %w", o.table, err)
			}
		}
		req.Band = &band
	}
	req.TableChecks = pub.TableChecks
	lines, err := audit.Of(pub.Catalog).Check(ctx, req)
	if err != nil {
		return err
	}
	res := checkResult{Table: o.table, Status: "passed", Checks: lines}
	var failed []string
	for _, l := range lines {
		if !l.OK {
			res.Status = "failed"
			failed = append(failed, l.Name)
		}
	}
	if len(failed) > 0 {
		err = fmt.Errorf("check of %s failed: %s", o.table, strings.Join(failed, ", "))
	}
	return g.report(res, err, func(w io.Writer) {
		for _, l := range lines {
			verdict := "ok  "
			if !l.OK {
				verdict = "FAIL"
			}
			fmt.Fprintf(w, "%s %s: %s\n", verdict, l.Name, l.Message)
		}
	})
}

// checkBand is the volume band of a table that names none: tighter than
// publish's guard (0.5:2), which judges a run against what it replaces,
// for a check that judges a pipeline's newest partition against its
// recent ones: a partition half its neighbours fails it.
var checkBand = contract.Band{Lo: 0.6, Hi: 1.67}

// parseAge reads 36h, 90m or a number of days, 2d.
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != days {
			return 0, fmt.Errorf("want a duration such as 36h, or a whole number of days such as 2d")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a duration such as 36h, or a whole number of days such as 2d")
	}
	return d, nil
}
