package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap/rollback"
)

type rollbackOptions struct {
	table      string
	runID      string
	snapshotID int64
	force      bool
	scoped     bool
	// restateFrozen, reason and decidedBy: a scoped rollback that changes
	// partitions the table froze, and why, recorded.
	restateFrozen     bool
	reason, decidedBy string
}

func newRollbackCmd(g *globals) *cobra.Command {
	var o rollbackOptions
	cmd := &cobra.Command{
		Use:   "rollback --table NS.NAME (--run RUN_ID | --snapshot ID)",
		Short: "Point main back at the snapshot a run replaced, and check its fingerprint",
		Long: `rollback points the table's main branch back at the snapshot that a run replaced, then recomputes
the fingerprint of the run's partitions there and compares it with the one recorded before the run.
It refuses when main has moved past the run's snapshot, since the later commits would drop out of
main; --force does it anyway.

--scoped undoes only the run's partitions instead: it commits a new snapshot that takes the run's
files out and puts back the files it replaced (kept from snapshot expiry by the tag
lakeswap-before-<run id>), and keeps every later commit. It is refused when a later commit touched
one of the run's partitions. The rollback is recorded as run rollback-<run id>.

A rollback meets the guards a run does. One that changes a partition the table's
lakeswap.freeze-after froze is refused, unless it is --scoped with --restate-frozen --reason TEXT,
which the rollback records (a full rollback moves main and records nothing). One that would drop
from main a table's share of a later release of several tables is refused, --force or not: roll
the release back first.

` + exitCodesHelp,
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRollback(cmd.Context(), g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	f.StringVar(&o.runID, "run", "", "run id to undo")
	f.Int64Var(&o.snapshotID, "snapshot", 0, "snapshot id to undo (instead of --run)")
	f.BoolVar(&o.force, "force", false, "roll back even when later commits would drop out of main")
	f.BoolVar(&o.scoped, "scoped", false, "undo only the run's partitions, as a new snapshot that keeps later commits")
	f.BoolVar(&o.restateFrozen, "restate-frozen", false, "with --scoped: change partitions the table's lakeswap.freeze-after froze (with --reason, recorded in the rollback)")
	f.StringVar(&o.reason, "reason", "", "with --restate-frozen: why, recorded in the rollback and shown by history")
	f.StringVar(&o.decidedBy, "decided-by", "", "with --restate-frozen: who decided it (default the user running lakeswap)")
	return cmd
}

func runRollback(ctx context.Context, g *globals, o rollbackOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return usageError{err}
	}
	if (o.runID == "") == (o.snapshotID == 0) {
		return usagef("name the run to undo with exactly one of --run or --snapshot")
	}
	if o.force && o.scoped {
		return usagef("--force drops later commits and --scoped keeps them: pass one")
	}
	req := rollback.Request{Table: ident, RunID: o.runID, SnapshotID: o.snapshotID, Force: o.force, Scoped: o.scoped}
	switch {
	case o.restateFrozen && !o.scoped:
		return usagef("--restate-frozen goes with --scoped: a full rollback moves main and records nothing, and a restatement is recorded")
	case o.restateFrozen && strings.TrimSpace(o.reason) == "":
		return usagef("--restate-frozen changes numbers already reported: say why with --reason TEXT, which the rollback records")
	case !o.restateFrozen && (o.reason != "" || o.decidedBy != ""):
		return usagef("--reason and --decided-by go with --restate-frozen")
	case strings.ContainsFunc(o.reason, words.Unprintable) || strings.ContainsFunc(o.decidedBy, words.Unprintable):
		return usagef("--reason and --decided-by are one line of text: they hold a newline, tab, terminal escape or direction override")
	case len(o.reason) > maxReason:
		return usagef("--reason is %d bytes; the rollback keeps it in every later metadata file of the table: say it in at most %d and point to the document", len(o.reason), maxReason)
	case o.restateFrozen:
		req.RestateFrozen, req.DecidedBy = strings.TrimSpace(o.reason), cmp.Or(o.decidedBy, osUser())
	}
	g.writes = true
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	res, err := pub.Rollback(ctx, req)
	if err != nil {
		return err
	}
	view := rollbackView{Status: "rolled-back", SnapshotID: res.ToSnapshotID, Result: res}
	if res.AlreadyRolledBack {
		view.Status = "already-rolled-back"
	}
	return g.emit(view, func(w io.Writer) {
		if len(res.Tables) > 0 {
			printReleaseRollback(w, res)
			return
		}
		if res.Unverified != "" {
			defer fmt.Fprintf(w, "warning: the rollback is %s\n", res.Unverified)
		}
		if res.AlreadyRolledBack {
			fmt.Fprintf(w, "run %s was already rolled back at %s: main went back to snapshot %d then and descends from it still; nothing was committed now; fingerprint %s, %s\n",
				res.RunID, res.RolledBackAt.Format(time.RFC3339), res.ToSnapshotID, short(res.Fingerprint), asRecorded(res.Verified))
			return
		}
		if res.Scoped {
			fmt.Fprintf(w, "rolled back run %s's partitions as snapshot %d on %d (run rollback-%s), fingerprint %s, %s\n",
				res.RunID, res.ToSnapshotID, res.FromSnapshotID, res.RunID, short(res.Fingerprint), asRecorded(res.Verified))
			return
		}
		fmt.Fprintf(w, "rolled back run %s: main %d -> %d, fingerprint %s, %s\n",
			res.RunID, res.FromSnapshotID, res.ToSnapshotID, short(res.Fingerprint), asRecorded(res.Verified))
	})
}

// printReleaseRollback says what a rollback of a release did to each of
// its tables, all moved in one commit.
func printReleaseRollback(w io.Writer, res *rollback.Result) {
	names := make([]string, len(res.Tables))
	for i, t := range res.Tables {
		names[i] = t.Table
	}
	all := true
	for _, t := range res.Tables {
		all = all && t.AlreadyRolledBack
	}
	if all {
		fmt.Fprintf(w, "release %s of %s was already rolled back; nothing was committed now:\n", res.RunID, strings.Join(names, ", "))
	} else {
		fmt.Fprintf(w, "rolled back release %s of %s in one commit:\n", res.RunID, strings.Join(names, ", "))
	}
	for _, t := range res.Tables {
		switch {
		case t.AlreadyRolledBack:
			fmt.Fprintf(w, "  %s: already rolled back at %s, to snapshot %d; fingerprint %s, %s\n", t.Table, t.RolledBackAt.Format(time.RFC3339), t.ToSnapshotID, short(t.Fingerprint), asRecorded(t.Verified))
		default:
			fmt.Fprintf(w, "  %s: main %d -> %d, fingerprint %s, %s\n", t.Table, t.FromSnapshotID, t.ToSnapshotID, short(t.Fingerprint), asRecorded(t.Verified))
		}
		if t.Unverified != "" {
			fmt.Fprintf(w, "  warning: the rollback of %s is %s\n", t.Table, t.Unverified)
		}
	}
}

// asRecorded says whether the fingerprint a rollback restored is the one
// the run recorded of what it replaced.
func asRecorded(verified bool) string {
	if verified {
		return "as recorded before the run"
	}
	return "NOT the one recorded before the run"
}

// rollbackView is rollback's -o json: its status, and the snapshot main
// holds after it, at the top.
type rollbackView struct {
	Status     string `json:"status"`
	SnapshotID int64  `json:"snapshot_id,string"`
	*rollback.Result
}
