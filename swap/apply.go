package swap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/swap/internal/staging"
	"github.com/lakeswap/lakeswap/verify"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/runrecord"
)

// bind prepares a plan read back for a commit against the table as loaded:
// it checks that the plan still holds and restores what a commit needs that
// JSON does not carry (the base's data files, the run's prior snapshot).
// The plan is not trusted further than the table: its staged files must lie
// under its own prefix, and the files it replaces are read again from the
// base. A plan that no longer holds leaves its staged files in place: a
// plan file can be old, and its files since committed by an apply whose
// snapshot has expired, so only the operator can tell that none is in use.
func (p *Publisher) bind(ctx context.Context, tbl *table.Table, plan *run, opts ApplyOptions) error {
	plan.bound = true
	conflict := func(format string, args ...any) error {
		return &outcome.OpError{Op: "apply", Table: plan.Table, RunID: plan.RunID,
			Err:  fmt.Errorf("%w: "+format, append([]any{outcome.ErrConflict}, args...)...),
			Hint: "nothing was committed; stage the run again against the table as it is now; " + plan.discarded(ctx, p, tbl)}
	}
	if !plan.Staged || plan.Refused() {
		return fmt.Errorf("plan of run %s holds no staged files to commit (it was refused, or its files removed); stage it again", plan.RunID)
	}
	c, err := contract.Of(tbl.Metadata())
	if err != nil {
		return fmt.Errorf("table %s: %w", plan.Table, err)
	}
	plan.contract = c
	plan.prior = runrecord.Find(tbl.Metadata(), plan.RunID)
	if err := branchHeld(tbl.Metadata(), plan); err != nil {
		return err
	}
	if found := stillFrozen(c, plan, time.Now()); len(found) > 0 {
		return &outcome.RefusedError{Op: "apply", Table: plan.Table, Findings: found}
	}
	// A plan whose partitions held its content when planned commits
	// nothing, and needs no staged file.
	noop := plan.changesNothing()
	if err := stagedAsPlanned(ctx, tbl, plan, !noop, conflict); err != nil {
		return err
	}
	if opts.Recheck && !noop {
		if err := fingerprintsAsPlanned(ctx, tbl, plan, conflict); err != nil {
			return err
		}
	}
	return baseAsPlanned(ctx, tbl, plan, conflict)
}

// stagedAsPlanned checks that each partition's files are where the run
// stages them (or adoptable where another engine wrote them), and, when
// they are to be committed (bytes), that each holds the size and SHA-256
// it was written with.
func stagedAsPlanned(ctx context.Context, tbl *table.Table, plan *run, bytes bool, conflict func(string, ...any) error) error {
	meta, c := tbl.Metadata(), plan.contract
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	var referenced map[string]bool // by any snapshot, for adopted files
	for i := range plan.Partitions {
		pp := &plan.Partitions[i]
		what := "staged file"
		if pp.Adopted {
			what = "adopted file"
			if referenced == nil {
				if referenced, err = snapshot.Referenced(ctx, fsys, meta); err != nil {
					return err
				}
			}
			if err := adoptable(fsys, meta, pp.NewFiles, referenced); err != nil {
				return fmt.Errorf("plan of run %s: %w", plan.RunID, err)
			}
		} else {
			want, err := staging.Prefix(meta, c.Partition, pp.Value, plan.RunID, plan.Attempt)
			if err != nil || pp.Prefix != want || pp.Key != c.Partition.Key(pp.Value) {
				return fmt.Errorf("plan of run %s: partition %s is staged at %s, not where the run stages it (%s)", plan.RunID, pp.Key, pp.Prefix, want)
			}
			for _, f := range pp.NewFiles {
				if !strings.HasPrefix(f.Path, pp.Prefix+"/") {
					return fmt.Errorf("plan of run %s: file %s lies outside the run's prefix %s", plan.RunID, f.Path, pp.Prefix)
				}
			}
		}
		// A partition that holds the staged content already keeps its
		// files: its staged ones are not committed, and go once the plan
		// is applied, so a plan applied again finds them gone.
		if bytes && !pp.same() {
			if err := sameBytes(ctx, fsys, what, pp.NewFiles, conflict); err != nil {
				return err
			}
		}
	}
	return nil
}

// fingerprintsAsPlanned reads every staged file's rows again and compares
// each partition's fingerprint with the plan's.
func fingerprintsAsPlanned(ctx context.Context, tbl *table.Table, plan *run, conflict func(string, ...any) error) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	for _, pp := range plan.Partitions {
		got, err := snapshot.Fingerprint(ctx, fsys, plan.contract, pp.Value, filePaths(pp.NewFiles))
		if err != nil {
			return conflict("partition %s: reading its staged files again: %v", pp.Key, err)
		}
		if got.Hash != pp.Fingerprint.Hash || got.Rows != pp.Fingerprint.Rows {
			return conflict("partition %s's staged files hold %s fingerprinting %s now, the plan %s fingerprinting %s",
				pp.Key, words.Count(got.Rows, "row"), verify.Short(got.Hash), words.Count(pp.Fingerprint.Rows, "row"), verify.Short(pp.Fingerprint.Hash))
		}
	}
	return nil
}

// baseAsPlanned restores what a commit needs that JSON does not carry: a
// plan whose run the table records concludes as a rerun (held: whether main
// still holds the run's files); any other holds if no commit since its
// base touched its partitions, and replaces their files as they are now.
func baseAsPlanned(ctx context.Context, tbl *table.Table, plan *run, conflict func(string, ...any) error) error {
	meta, c := tbl.Metadata(), plan.contract
	plan.prior = runrecord.Find(meta, plan.RunID)
	if plan.prior != nil {
		now, err := snapshot.FilesAt(ctx, tbl, meta.CurrentSnapshot(), c)
		if err != nil {
			return err
		}
		then, err := snapshot.FilesAt(ctx, tbl, plan.prior, c)
		if err != nil {
			return err
		}
		plan.held = true
		for _, pp := range plan.Partitions {
			plan.held = plan.held && slices.Equal(snapshot.Paths(now[pp.Value]), snapshot.Paths(then[pp.Value]))
		}
		return nil
	}
	// Main may have moved since the plan: the plan holds if no commit since
	// touched its partitions (rebase).
	why, err := rebase(ctx, tbl, plan)
	if err != nil {
		return err
	}
	if why != "" {
		return conflict("main moved since the plan's base snapshot %s: %s", fmtID(plan.BaseSnapshotID), why)
	}
	return nil
}

// sameBytes refuses, as a conflict, files removed or rewritten since the
// plan: they are not what was validated. A cancelled read is a cancel.
func sameBytes(ctx context.Context, fsys icebergio.IO, what string, files []parquetio.File, conflict func(string, ...any) error) error {
	for _, f := range files {
		if why := unchanged(ctx, fsys, f); why != "" {
			if err := ctx.Err(); err != nil {
				return err
			}
			return conflict("%s %s %s: stage the run again", what, f.Path, why)
		}
	}
	return nil
}

// unchanged says how a staged file differs from what the plan recorded, or
// "" when it holds the same bytes: its size and its SHA-256, read in full.
func unchanged(ctx context.Context, fsys icebergio.IO, f parquetio.File) string {
	if f.SHA256 == "" {
		return "has no checksum in the plan (a plan lakeswap wrote records one)"
	}
	n, sum, err := parquetio.HashFile(ctx, fsys, f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return "is gone since the plan"
	}
	if err != nil {
		return fmt.Sprintf("cannot be read: %v", err)
	}
	if n != f.Bytes || sum != f.SHA256 {
		return fmt.Sprintf("changed since the plan: %d bytes with SHA-256 %s, the plan recorded %d bytes with SHA-256 %s", n, verify.Short(sum), f.Bytes, verify.Short(f.SHA256))
	}
	return ""
}
