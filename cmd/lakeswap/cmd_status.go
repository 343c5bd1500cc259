package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/history"
)

type statusOptions struct {
	table, runID string
}

func newStatusCmd(g *globals) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:   "status --table NS.NAME --run RUN_ID",
		Short: "Say from the table's history whether a run landed",
		Long: "status answers from the table's own history whether a run landed, as which snapshot(s), and whether\n" +
			"main still holds it: what a publish that exited 5 (outcome unknown) leaves to find out.\n\n" +
			"It exits 0 when the run landed (all of its batches, for a run committed in batches; whether main still\n" +
			"holds it is printed), 1 when no snapshot of the table records it or only some of its batches landed,\n" +
			"and 5 when the table cannot be read.",
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runStatus(cmd.Context(), g, o) },
	}
	cmd.Flags().StringVar(&o.table, "table", "", "table, NAMESPACE.NAME (required)")
	cmd.Flags().StringVar(&o.runID, "run", "", "run id (required)")
	return cmd
}

func runStatus(ctx context.Context, g *globals, o statusOptions) error {
	ident, err := tableFlag(o.table)
	if err != nil {
		return usageError{err}
	}
	if o.runID == "" {
		return usagef("name the run with --run")
	}
	runID := o.runID
	ctx, cat, pub, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer cat.Close()
	st, err := history.Of(pub.Catalog).Status(ctx, ident, runID)
	if err != nil {
		// The question stays open: the exit code an unknown outcome has.
		return fmt.Errorf("%w: the table's history cannot be read: %w", outcome.ErrCommitUnknown, err)
	}
	name := strings.Join(ident, ".")
	var unchanged *swap.Unchanged
	if !st.Landed && st.ReleaseUnchanged == 0 {
		if unchanged, err = pub.UnchangedRun(ctx, ident, runID); err != nil {
			return fmt.Errorf("%w: the record of run %s cannot be read: %w", outcome.ErrCommitUnknown, runID, err)
		}
	}
	switch {
	case unchanged != nil:
		// It committed nothing: its partitions held its content already.
	case !st.Landed && st.ReleaseUnchanged != 0:
		// The release landed elsewhere, and left this table as it was.
	case !st.Landed:
		err = fmt.Errorf("%w: no snapshot of %s records run %s: it did not land, or it found its partitions holding its content already and committed nothing (publish said unchanged), or no run has that id (main is at %s; `lakeswap history --table %s` lists the runs)", outcome.ErrRunNotFound, name, runID, orNone(st.Main), name)
	case !st.Complete && st.OnMainBatches < st.CommittedBatches:
		err = fmt.Errorf("run %s landed in part: it committed %d of its %d batches, and main no longer holds some of them (rolled back); publish the rest under a new run id", runID, st.CommittedBatches, st.Batches)
	case !st.Complete:
		err = fmt.Errorf("run %s landed in part: it committed %d of its %d batches; run it again with the same run id to commit the rest", runID, st.CommittedBatches, st.Batches)
	}
	view := newStatusView(st)
	if unchanged != nil {
		view.Status, view.SnapshotID, view.Unchanged = "unchanged", unchanged.SnapshotID, unchanged
		st.Partitions = len(unchanged.Partitions)
	}
	others, oerr := releaseStatus(ctx, pub, name, st)
	view.Tables = others
	if err == nil {
		err = oerr
	}
	return g.report(view, err, func(w io.Writer) {
		if st.ReleaseUnchanged != 0 {
			fmt.Fprintf(w, "run %s is a release that committed nothing to %s: its partitions held the release's content already; the release tagged its snapshot %d %s\n",
				runID, name, st.ReleaseUnchanged, swap.ReleaseTag(runID))
			return
		}
		if unchanged != nil {
			fmt.Fprintf(w, "run %s is unchanged: at %s it found %s holding its content already (fingerprint %s, %s) as snapshot %d, and committed nothing\n",
				runID, unchanged.Time.UTC().Format("2006-01-02 15:04:05Z"), displayKeys(unchanged.Partitions), short(unchanged.Fingerprint), words.Count(unchanged.Rows, "row"), unchanged.SnapshotID)
			if st.Main != unchanged.SnapshotID {
				fmt.Fprintf(w, "main has moved since: it is at %s (`lakeswap history --table %s` lists what changed)\n", orNone(st.Main), name)
			}
			return
		}
		if !st.Landed {
			return
		}
		defer printReleaseStatus(w, runID, others)
		for _, e := range st.Snapshots {
			batch := ""
			if e.Batch != "" {
				batch = " (batch " + e.Batch + ")"
			}
			fmt.Fprintf(w, "run %s landed as snapshot %d%s at %s: %s, %s, fingerprint %s\n",
				runID, e.SnapshotID, batch, e.Time.UTC().Format("2006-01-02 15:04:05Z"), displayKeys(e.Partitions), words.Count(e.Rows, "row"), short(e.Fingerprint))
		}
		switch newest := st.Snapshots[len(st.Snapshots)-1].SnapshotID; {
		case st.Batches > 0 && !st.OnMain:
			fmt.Fprintf(w, "main holds %d of its %d batches (main is at %s)\n", st.OnMainBatches, st.Batches, orNone(st.Main))
		case st.OnMain && st.Main == newest:
			fmt.Fprintln(w, "main holds it")
		case st.OnMain:
			fmt.Fprintf(w, "main holds it, with later commits on top (main is at %d)\n", st.Main)
		case len(st.Replaced) > 0 && len(st.Replaced) < st.Partitions:
			fmt.Fprintf(w, "main holds it in part: %d of its %s replaced since (%s), by a rollback or a later commit to them; main is at %s\n",
				len(st.Replaced), words.Count(st.Partitions, "partition"), displayKeys(st.Replaced), orNone(st.Main))
		default:
			fmt.Fprintf(w, "main no longer holds it (rolled back, or a later commit changed its partitions: replaced them, or deleted rows in them): main is at %s\n", orNone(st.Main))
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

// statusView is status's -o json: the run's status and newest snapshot at
// the top, where a script looks first. Status is "on-main" (main holds
// what the run committed), "partly-on-main" (some of its partitions a
// later commit replaced since, listed in replaced_since), "off-main" (it
// landed, and a rollback or later commits have replaced all of it),
// "unchanged" (a release that committed nothing to this table, which it
// found holding its content) or "not-landed".
type statusView struct {
	Status     string `json:"status"`
	SnapshotID int64  `json:"snapshot_id,omitempty,string"`
	*history.RunStatus
	// Tables are the other tables of the release the run is part of, each
	// with its status, when it committed several as one.
	Tables []tableStatus `json:"tables,omitempty"`
	// Unchanged is what a run that committed nothing recorded: the
	// snapshot that held its content already.
	Unchanged *swap.Unchanged `json:"unchanged,omitempty"`
}

// tableStatus is where one other table of a release stands.
type tableStatus struct {
	Table      string `json:"table"`
	Status     string `json:"status"`
	SnapshotID int64  `json:"snapshot_id,omitempty,string"`
}

// releaseStatus answers status for the other tables of the release a
// run is part of: the release is one commit, so its tables stand or fall
// together, and a table that says otherwise is an error. A table whose
// share committed nothing (unchanged) records no snapshot of it.
func releaseStatus(ctx context.Context, pub *swap.Publisher, name string, st *history.RunStatus) ([]tableStatus, error) {
	if !st.Landed {
		return nil, nil
	}
	var out []tableStatus
	for _, t := range otherTables(st, name) {
		ident, err := swap.ParseTable(t)
		if err != nil {
			return nil, err
		}
		other, err := history.Of(pub.Catalog).Status(ctx, ident, st.RunID)
		if err != nil {
			return nil, fmt.Errorf("%w: the history of %s, of the same release, cannot be read: %w", outcome.ErrCommitUnknown, t, err)
		}
		v := newStatusView(other)
		out = append(out, tableStatus{Table: t, Status: v.Status, SnapshotID: v.SnapshotID})
	}
	return out, nil
}

// otherTables names the tables of the release a run's newest snapshot
// records, but name: none for a run that is no release.
func otherTables(st *history.RunStatus, name string) []string {
	if len(st.Snapshots) == 0 {
		return nil
	}
	var out []string
	for _, t := range st.Snapshots[len(st.Snapshots)-1].Release {
		if t != name {
			out = append(out, t)
		}
	}
	return out
}

// printReleaseStatus says where the other tables of a release stand.
func printReleaseStatus(w io.Writer, runID string, tables []tableStatus) {
	if len(tables) == 0 {
		return
	}
	fmt.Fprintf(w, "run %s is a release, committed with:\n", runID)
	for _, t := range tables {
		switch t.Status {
		case "unchanged":
			fmt.Fprintf(w, "  %s: its partitions held the release's content already; nothing was committed to it\n", t.Table)
		default:
			fmt.Fprintf(w, "  %s: snapshot %d, %s\n", t.Table, t.SnapshotID, t.Status)
		}
	}
}

func newStatusView(st *history.RunStatus) statusView {
	v := statusView{Status: "not-landed", RunStatus: st}
	if st.ReleaseUnchanged != 0 {
		v.Status, v.SnapshotID = "unchanged", st.ReleaseUnchanged
	}
	if len(st.Snapshots) > 0 {
		v.SnapshotID = st.Snapshots[len(st.Snapshots)-1].SnapshotID
	}
	switch {
	case st.Landed && st.OnMain:
		v.Status = "on-main"
	case st.Landed && len(st.Replaced) > 0 && len(st.Replaced) < st.Partitions:
		v.Status = "partly-on-main"
	case st.Landed:
		v.Status = "off-main"
	}
	return v
}
