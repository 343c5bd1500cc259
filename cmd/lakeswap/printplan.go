package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// planView is a result as -o json prints it: with its run's id, and a
// plan's id.
type planView struct {
	// RunID is the run's id, at the top where scripts look for it.
	RunID   string   `json:"run_id,omitempty"`
	PlanID  string   `json:"plan_id,omitempty"`
	PlanIDs []string `json:"plan_ids,omitempty"` // of partial plans applied together
	File    string   `json:"plan_file,omitempty"`
	*swap.Result
}

// printPlan shows what a plan changes, the way a person checks it before
// approving: every partition that changes, largest relative change first
// (rows and sums before and after, what changed at the grain with a few
// keys), then the unchanged ones, elided when many unless whole, and what
// the run allowed.
func printPlan(w io.Writer, id string, p *swap.Plan, whole bool) {
	base := "an empty table"
	if p.BaseSnapshotID != nil {
		base = fmt.Sprintf("snapshot %d", *p.BaseSnapshotID)
	}
	fmt.Fprintf(w, "plan %s: run %s on %s, against %s\n", short(id), p.RunID, p.Table, base)
	if p.SchemaEvolved && p.BaseSchemaID != nil {
		fmt.Fprintf(w, "schemas: the staged rows are read with schema %d of the table, the base with schema %d (its files written under an earlier schema are read by field id)\n", p.Contract.SchemaID, *p.BaseSchemaID)
	}
	changed := printPartitions(w, p, whole)
	printBranch(w, p)
	printRewritten(w, p)
	for _, warning := range p.Warnings {
		fmt.Fprintln(w, "warning: "+warning)
	}
	printChecks(w, p.Checks)
	if changed == 0 {
		fmt.Fprintf(w, "no changes: every partition of %s already holds the planned content\n", p.Table)
		return
	}
	printJob(w, p)
	fmt.Fprintf(w, "this will replace %s of %s", words.Count(changed, "partition"), p.Table)
	if n := len(p.Partitions) - changed; n > 0 {
		fmt.Fprintf(w, " (%s)", words.Count(n, "declared partition holds the planned content already and keeps its files",
			"declared partitions hold the planned content already and keep their files"))
	}
	batches := p.Batches()
	if len(batches) > 0 {
		fmt.Fprintf(w, ", in %d batches of %d partitions, one snapshot each", len(batches), p.Batch)
		if len(p.Together) > 0 {
			fmt.Fprintf(w, " (partitions that %s commit in one batch)", togetherWhy(p))
		}
	}
	fmt.Fprintln(w)
	printTogether(w, p, batches)
}

// partitionName is a partition's key, marked when the run carries it.
func partitionName(pp swap.PartitionPlan) string {
	name := verify.DisplayKey(pp.Key)
	if pp.Carried {
		name += " (carried)"
	}
	if pp.Frozen {
		name += " (frozen)"
	}
	return name
}

// printRewritten lists the files of an earlier partition spec the plan
// rewrites (--rewrite-overlapping).
func printRewritten(w io.Writer, p *swap.Plan) {
	if len(p.Rewritten) == 0 {
		return
	}
	fmt.Fprintf(w, "rewrites %s written under an earlier partition spec; their rows are in the new files of the partitions they fall in, those not declared marked (carried) and staged from the table:\n", words.Count(len(p.Rewritten), "file"))
	for _, f := range p.Rewritten {
		fmt.Fprintf(w, "  %s (%s)\n", f.Path, words.Count(f.Rows, "row"))
	}
}

// printPartitions prints the plan's partitions as a table, those that
// change first, largest relative change first, with example keys; it
// returns how many change.
func printPartitions(w io.Writer, p *swap.Plan, whole bool) int {
	var sums []string
	for c := range p.Fingerprint.Sums {
		sums = append(sums, c)
	}
	sort.Strings(sums)
	grain := false
	for _, pp := range p.Partitions {
		grain = grain || pp.Changes != nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "PARTITION\tROWS"
	for _, c := range sums {
		head += "\t" + strings.ToUpper(c)
	}
	if grain {
		head += "\tGRAIN (+added -removed ~changed)"
	}
	fmt.Fprintln(tw, head+"\tCONTENT")
	type entry struct {
		line, keys string
		rel        float64
	}
	var changedRows, sameRows []entry
	var keys []string
	for _, pp := range p.Partitions {
		same := pp.OldFingerprint.Hash == pp.Fingerprint.Hash
		line := partitionName(pp) + "\t" + rowsChange(pp.OldFingerprint.Rows, pp.Fingerprint.Rows)
		rel := relative(exact.Of(pp.OldFingerprint.Rows), exact.Of(pp.Fingerprint.Rows))
		for _, c := range sums {
			line += "\t" + change(pp.OldFingerprint.Sums[c], pp.Fingerprint.Sums[c], p.Contract.Scales[c])
			rel = max(rel, relative(pp.OldFingerprint.Sums[c], pp.Fingerprint.Sums[c]))
		}
		if grain {
			line += "\t" + grainChange(pp.Changes)
		}
		if same && len(pp.OldShares) == 0 {
			sameRows = append(sameRows, entry{line: line + "\tunchanged (files kept)"})
			continue
		}
		if same {
			changedRows = append(changedRows, entry{line: line + "\tsame rows, in new files (rewritten)"})
			continue
		}
		e := entry{line: line + "\t" + short(pp.OldFingerprint.Hash) + " -> " + short(pp.Fingerprint.Hash), rel: rel}
		if k := exampleKeys(pp.Changes); k != "" {
			e.keys = "  " + verify.DisplayKey(pp.Key) + ": " + k
			for _, v := range valueLines(pp.Changes) {
				e.keys += "\n    " + v
			}
		}
		changedRows = append(changedRows, e)
	}
	changed := len(changedRows)
	// Largest relative change first; partition order among equals.
	sort.SliceStable(changedRows, func(i, j int) bool { return changedRows[i].rel > changedRows[j].rel })
	var rows []string
	for _, e := range changedRows {
		rows = append(rows, e.line)
		if e.keys != "" {
			keys = append(keys, e.keys)
		}
	}
	cells := strings.Repeat("\t", strings.Count(head, "\t"))
	if whole || len(sameRows) <= 5 {
		for _, e := range sameRows {
			rows = append(rows, e.line)
		}
	} else {
		rows = append(rows, fmt.Sprintf("... %s unchanged partitions (lakeswap show lists them) ...", words.Number(len(sameRows)))+cells)
	}
	if len(p.Partitions) > 12 {
		line := fmt.Sprintf("total of %s\t%s", words.Number(len(p.Partitions)), rowsChange(p.BaseFingerprint.Rows, p.Fingerprint.Rows))
		for _, c := range sums {
			line += "\t" + change(p.BaseFingerprint.Sums[c], p.Fingerprint.Sums[c], p.Contract.Scales[c])
		}
		if grain {
			line += "\t"
		}
		rows = append(rows, line+"\t"+words.Number(changed)+" changed")
	}
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	_ = tw.Flush()
	if len(keys) > 0 {
		fmt.Fprintln(w, "keys changed at the grain (a few of each):")
		if !whole {
			keys = byEnds(keys, 12, 5)
		}
		for _, k := range keys {
			fmt.Fprintln(w, k)
		}
	}
	return changed
}

// printTogether names the batches that hold partitions exchanging
// records, each shown whole.
func printTogether(w io.Writer, p *swap.Plan, batches [][]string) {
	// Every batch that holds a group is shown whole; the others are the
	// next partitions in order.
	keyOf := map[string]string{}
	for _, pp := range p.Partitions {
		keyOf[pp.Value] = pp.Key
	}
	grouped := map[string]bool{}
	for _, g := range p.Together {
		for _, v := range g {
			grouped[keyOf[v]] = true
		}
	}
	for i, b := range batches {
		keys := make([]string, len(b))
		joined := false
		for j, k := range b {
			keys[j] = verify.DisplayKey(k)
			joined = joined || grouped[k]
		}
		if joined {
			fmt.Fprintf(w, "  batch %d/%d: %s (they %s)\n", i+1, len(batches), strings.Join(keys, ", "), togetherWhy(p))
		}
	}
}

// togetherWhy says why partitions commit in one batch.
func togetherWhy(p *swap.Plan) string {
	if len(p.Rewritten) > 0 {
		return "exchange records or hold rows of one rewritten file"
	}
	return "exchange records"
}

// byEnds shows a long list by its ends: its first and last n lines when it
// has more than most.
func byEnds(lines []string, most, n int) []string {
	if len(lines) <= most {
		return lines
	}
	more := "... " + words.Number(len(lines)-2*n) + " more ..."
	// Kept in a table's columns: as many cells as the lines around it.
	more += strings.Repeat("\t", strings.Count(lines[0], "\t"))
	return append(append(lines[:n:n], more), lines[len(lines)-n:]...)
}

// printChecks says which of the run's guards passed, which refused, which
// a flag overrode and which do not apply to the run, and why.
func printChecks(w io.Writer, checks []swap.Check) {
	by := map[string][]string{}
	var order []string
	for _, c := range checks {
		name := c.Name
		if c.At == "commit" {
			name += " (again at commit)"
		}
		if by[c.Verdict()] == nil {
			order = append(order, c.Verdict())
		}
		by[c.Verdict()] = append(by[c.Verdict()], name)
	}
	var parts []string
	for _, r := range order {
		parts = append(parts, r+": "+strings.Join(by[r], ", "))
	}
	if len(parts) > 0 {
		fmt.Fprintln(w, "checks "+strings.Join(parts, "; "))
	}
}

// relative is how far a figure moved, relative to what it was: 1 is a
// doubling or a halving's loss of half, growth from zero counts as 1 per
// unit, so that the partition that moved most shows first.
func relative(before, after exact.Sum) float64 {
	d := math.Abs(after.Sub(before).Float64())
	return d / max(math.Abs(before.Float64()), 1)
}

// grainChange is a partition's change at the grain in a few characters.
func grainChange(ch *verify.Changes) string {
	switch {
	case ch == nil:
		return "-"
	case ch.Skipped != "":
		return "not compared"
	}
	return fmt.Sprintf("+%s -%s ~%s", words.Number(ch.Added), words.Number(ch.Removed), words.Number(ch.Changed))
}

// exampleKeys names a few keys of each change.
func exampleKeys(ch *verify.Changes) string {
	if ch == nil {
		return ""
	}
	if ch.Skipped != "" {
		return ch.Skipped
	}
	var parts []string
	for _, k := range []struct {
		what string
		n    int64
		keys []string
	}{{"added", ch.Added, ch.AddedKeys}, {"removed", ch.Removed, ch.RemovedKeys}, {"changed", ch.Changed, ch.ChangedKeys}} {
		if len(k.keys) == 0 {
			continue
		}
		part := k.what + " " + strings.Join(k.keys, "; ")
		if more := k.n - int64(len(k.keys)); more > 0 {
			part += " (and " + words.Number(more) + " more)"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " | ")
}

// valueLines shows the values of the keys a comparison names: a key
// changed with each column that differs, old -> new; a key added or
// removed with the row it holds.
func valueLines(ch *verify.Changes) []string {
	if ch == nil {
		return nil
	}
	var out []string
	for _, kc := range ch.Values {
		var cols []string
		for _, c := range kc.Columns {
			switch kc.Kind {
			case "changed":
				cols = append(cols, fmt.Sprintf("%s %s -> %s", c.Column, words.Printable(c.Old), words.Printable(c.New)))
			case "added":
				cols = append(cols, c.Column+" "+words.Printable(c.New))
			default:
				cols = append(cols, c.Column+" "+words.Printable(c.Old))
			}
		}
		what := kc.Key + ": "
		if kc.Kind != "changed" {
			what = kc.Key + " (" + kc.Kind + "): "
		}
		if len(cols) == 0 {
			cols = []string{"no column outside the grain"}
		}
		out = append(out, what+strings.Join(cols, ", "))
	}
	return out
}

// printBranch says where a plan's staged snapshot can be queried before
// it is approved, with the line to paste for each engine.
func printBranch(w io.Writer, p *swap.Plan) {
	if p.Branch == "" {
		return
	}
	fmt.Fprintf(w, "audit branch %s holds the staged snapshot %d (main is untouched); query it before approving:\n", words.Printable(p.Branch), p.BranchSnapshotID)
	// SQL string literals double a quote: a run id may hold one.
	lit := func(s string) string { return "'" + strings.ReplaceAll(words.Printable(s), "'", "''") + "'" }
	fmt.Fprintf(w, "  Spark:     SELECT * FROM %s VERSION AS OF %s\n", p.Table, lit(p.Branch))
	fmt.Fprintf(w, "  Trino:     SELECT * FROM %s FOR VERSION AS OF %s\n", p.Table, lit(p.Branch))
	fmt.Fprintf(w, "  PyIceberg: catalog.load_table(%q).scan(snapshot_id=%d).to_arrow()\n", p.Table, p.BranchSnapshotID)
	if p.BranchMetadata != "" {
		fmt.Fprintf(w, "  DuckDB:    SELECT * FROM iceberg_scan(%s, snapshot_from_id => %d)\n", lit(p.BranchMetadata), p.BranchSnapshotID)
	}
}

// change writes before -> after (difference).
func change(before, after exact.Sum, scale int) string {
	if before.Equal(after) {
		return scaled(after, scale)
	}
	d := scaled(after.Sub(before), scale)
	if after.Cmp(before) > 0 {
		d = "+" + d
	}
	return fmt.Sprintf("%s -> %s (%s)", scaled(before, scale), scaled(after, scale), d)
}
