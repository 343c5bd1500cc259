package swap

// What a run holds while it may need its files, and how it removes exactly
// what it wrote, never a prefix.
import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap/internal/hold"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/swap/internal/staging"
)

// discard removes a plan's staged files when nothing references them, and
// says what it did.
func (p *Publisher) discard(ctx context.Context, tbl *table.Table, plan *run) string {
	if plan.bound {
		var prefixes []string
		for _, pp := range plan.Partitions {
			if !pp.Adopted { // another engine's files are its own to remove
				prefixes = append(prefixes, pp.Prefix)
			}
		}
		if len(prefixes) == 0 {
			return "the plan adopts files another engine wrote; they were left as they are"
		}
		return "the plan's staged files were left under " + strings.Join(prefixes, ", ") +
			" (a plan read back may be old, and its files since committed: remove them once no snapshot references them)"
	}
	return p.removeStaged(ctx, tbl, plan)
}

// discarded discards the run's staged files and notes in its plan what
// became of them, for the result.
func (plan *run) discarded(ctx context.Context, p *Publisher, tbl *table.Table) string {
	plan.Cleanup = p.discard(ctx, tbl, plan)
	return plan.Cleanup
}

// removeStaged deletes what this attempt staged: exactly the files its
// writers created, one by one, never a prefix, since a prefix may hold what
// another attempt wrote. It runs on a context of its own, so that a
// publish cancelled by Ctrl-C or SIGTERM still removes what it wrote. It
// returns, for the operator, what it removed and what it left. The file IO
// is opened afresh on that context, since iceberg-go's object-store IO
// keeps the context it was opened with.
func (p *Publisher) removeStaged(ctx context.Context, tbl *table.Table, plan *run) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), snapshot.CleanupTimeout)
	defer cancel()
	fsys, err := tbl.FS(ctx)
	var wfs icebergio.WriteFileIO
	if err == nil {
		wfs, err = p.stagingIO(ctx, fsys)
	}
	if err != nil {
		p.log().Warn("staged files not removed", "run", plan.RunID, "err", err)
		return fmt.Sprintf("the files staged by run %s (attempt %s) were left in place: %v", plan.RunID, plan.Attempt, err)
	}
	removed := 0
	var left []string
	for i := range plan.Partitions {
		pp := &plan.Partitions[i]
		for _, f := range pp.created {
			if err := wfs.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				p.log().Warn("remove staged file", "path", f, "err", err)
				left = append(left, f)
				continue
			}
			removed++
		}
		if pp.touched && len(left) == 0 {
			// A local attempt's folder is its own; remove it once empty
			// (Remove takes only an empty folder). The partition's folder
			// stays: another attempt may be creating its own inside it.
			if _, ok := wfs.(icebergio.LocalFS); ok {
				_ = wfs.Remove(pp.Prefix)
			}
		}
		pp.NewFiles, pp.created = nil, nil
	}
	plan.Staged = false
	if len(left) > 0 {
		return fmt.Sprintf("removed %s of run %s but could not remove %d: %s", words.Count(removed, "staged file"), plan.RunID, len(left), strings.Join(left, ", "))
	}
	return fmt.Sprintf("removed the %s run %s staged (attempt %s)", words.Count(removed, "file"), plan.RunID, plan.Attempt)
}

// Discard removes the files a plan staged that was never applied: exactly
// the files it lists, one by one, and only if no snapshot of the table
// references any of them (an applied plan's files are the table's). Files
// a plan adopts belong to the engine that wrote them and are left.
func (p *Publisher) Discard(ctx context.Context, plan *Plan) (string, error) {
	ident, err := catalog.ParseIdent(plan.Table)
	if err != nil {
		return "", err
	}
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return "", fmt.Errorf("load table %s: %w", plan.Table, err)
	}
	if plan.Branch == "" {
		return p.discardListed(ctx, tbl, &run{Plan: plan})
	}
	// The branch goes first, its snapshot referencing the staged files,
	// once the plan is found to be this table's.
	if err := listedHere(tbl.Metadata(), plan); err != nil {
		return "", err
	}
	branch := p.dropBranch(ctx, plan)
	if tbl, err = p.Catalog.LoadTable(ctx, ident); err != nil {
		return "", fmt.Errorf("load table %s: %w", plan.Table, err)
	}
	said, err := p.discardListed(ctx, tbl, &run{Plan: plan})
	if branch != "" {
		said = strings.TrimPrefix(said+"; "+branch, "; ")
	}
	return said, err
}

// discardListed removes the files a plan lists as staged, as Discard does,
// from the table as loaded.
func (p *Publisher) discardListed(ctx context.Context, tbl *table.Table, plan *run) (string, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return "", err
	}
	meta := tbl.Metadata()
	referenced, err := snapshot.Referenced(ctx, fsys, meta)
	if err != nil {
		return "", err
	}
	if err := listedHere(meta, plan.Plan); err != nil {
		return "", err
	}
	var files, applied []string
	for _, pp := range plan.Partitions {
		if pp.Adopted {
			continue
		}
		for _, f := range pp.NewFiles {
			if referenced[f.Path] {
				applied = append(applied, f.Path)
				continue
			}
			files = append(files, f.Path)
		}
	}
	// A plan applied is the table's: nothing of it goes. A plan applied in
	// part (batches, the later ones stopped) keeps what was committed and
	// loses the rest.
	if len(applied) > 0 && len(files) == 0 {
		return "", fmt.Errorf("a snapshot of %s references %s: the plan of run %s was applied, and its files are the table's; nothing was removed", plan.Table, applied[0], plan.RunID)
	}
	wfs, err := p.stagingIO(ctx, fsys)
	if err != nil {
		return "", err
	}
	removed, gone := 0, 0
	for _, f := range files {
		switch err := wfs.Remove(f); {
		case err == nil:
			removed++
		case errors.Is(err, fs.ErrNotExist):
			gone++
		default:
			return fmt.Sprintf("removed %d of the plan's %d files", removed, len(files)), fmt.Errorf("remove %s: %w", f, err)
		}
	}
	if _, ok := wfs.(icebergio.LocalFS); ok {
		// A local attempt's folder, once empty (Remove takes no other).
		for _, pp := range plan.Partitions {
			if !pp.Adopted {
				_ = wfs.Remove(pp.Prefix)
			}
		}
	}
	p.removeHolds(ctx, tbl, plan)
	said := fmt.Sprintf("removed the %s the plan of run %s staged (%d already gone)", words.Count(removed, "file"), plan.RunID, gone)
	if len(applied) > 0 {
		said += fmt.Sprintf("; its %s a snapshot references (batches that were applied) are the table's and stay", words.Count(len(applied), "file"))
	}
	return said, nil
}

// listedHere refuses a plan that lists files other than what its run's
// attempts staged under this table: a plan of another table, or one
// edited to name other files, removes nothing.
func listedHere(meta table.Metadata, plan *Plan) error {
	c, err := contract.Of(meta)
	if err != nil {
		return fmt.Errorf("table %s: %w", plan.Table, err)
	}
	for _, pp := range plan.Partitions {
		if pp.Adopted {
			continue
		}
		if want, err := staging.Prefix(meta, c.Partition, pp.Value, plan.RunID, pp.attemptOr(plan.Attempt)); err != nil || pp.Prefix != want {
			return fmt.Errorf("the plan of run %s stages partition %s at %s, which is not where the run stages under %s (%s); is it a plan of this table? nothing was removed",
				plan.RunID, pp.Key, pp.Prefix, plan.Table, want)
		}
		for _, f := range pp.NewFiles {
			if !strings.HasPrefix(f.Path, pp.Prefix+"/") {
				return fmt.Errorf("plan of run %s lists %s outside its prefix %s; nothing was removed", plan.RunID, f.Path, pp.Prefix)
			}
		}
	}
	return nil
}

// holds is where a table's holds are written: its staging IO.
func (p *Publisher) holds(tbl *table.Table) hold.Store { return staging.Holds(p.StagingIO, tbl) }

// removeHolds removes a plan's holds, one per attempt that staged it (a plan
// merged from shards has several).
func (p *Publisher) removeHolds(ctx context.Context, tbl *table.Table, plan *run) {
	attempts := []string{plan.Attempt}
	for i := range plan.Partitions {
		// Once each: a shard's partitions share its attempt.
		if a := plan.Partitions[i].attemptOr(plan.Attempt); !slices.Contains(attempts, a) {
			attempts = append(attempts, a)
		}
	}
	hold.RemoveAttempts(ctx, p.holds(tbl), p.log(), tbl.Metadata(), plan.RunID, attempts)
}
