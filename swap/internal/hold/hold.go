package hold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"regexp"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/swap/internal/layout"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
)

// Store opens the file IO holds are written and removed through: the
// table's staging IO.
type Store func(context.Context) (icebergio.WriteFileIO, error)

// Record is what a hold records.
type Record struct {
	RunID     string    `json:"run_id"`
	Attempt   string    `json:"attempt"`
	Kind      string    `json:"kind"` // run or plan
	Created   time.Time `json:"created"`
	Refreshed time.Time `json:"refreshed"`
	// Process is the one that wrote the hold and refreshes it.
	Process
	// Plan is what a staged plan's hold says of it: what the list of
	// plans waiting for approval shows.
	Plan *PlanNote `json:"plan,omitempty"`
}

// PlanNote is a staged plan as the list of plans waiting shows it.
type PlanNote struct {
	PlanID     string               `json:"plan_id"`
	Table      string               `json:"table"`
	File       string               `json:"file,omitempty"`
	PlannedBy  string               `json:"planned_by,omitempty"`
	Partitions []string             `json:"partitions"`
	Rows       int64                `json:"rows"`
	BaseRows   int64                `json:"base_rows"`
	Sums       map[string]exact.Sum `json:"sums,omitempty"`
	BaseSums   map[string]exact.Sum `json:"base_sums,omitempty"`
	Scales     map[string]int       `json:"scales,omitempty"` // of the sums, as the plan's contract says
	Branch     string               `json:"branch,omitempty"`
	BranchID   int64                `json:"branch_snapshot_id,omitempty,string"`
}

// Note writes a plan's hold again with what it says of the plan, under
// the hold's other name before the current one goes (a store may refuse
// to overwrite), so that the attempt is held throughout.
func Note(ctx context.Context, store Store, log *slog.Logger, loc string, rec Record) error {
	wfs, err := store(ctx)
	if err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := wfs.WriteFile(Other(loc), b); err != nil {
		return fmt.Errorf("note the plan of run %s in its hold: %w", rec.RunID, err)
	}
	RemoveAt(ctx, store, log, rec.RunID, loc)
	return nil
}

// Refresh is how often a running publish refreshes its hold; gc's
// grace period must be longer.
var Refresh = 10 * time.Minute

// Name matches a hold's file name: <run id>-<attempt>.json (a
// publish's, or a plan's), <run id>-<attempt>.a<process>.json (an apply's
// of a plan, one per process applying it), each also with .r before
// .json, the name a refresh alternates with.
var Name = regexp.MustCompile(`^(` + layout.RunPattern + `)-([0-9a-f]{8})(\.a(?:[0-9a-f]{8})?)?(\.r)?\.json$`)

// Folder is where a table's holds are.
func Folder(meta table.Metadata) string {
	return strings.TrimSuffix(meta.Location(), "/") + "/lakeswap/holds"
}

// Location is where an attempt's hold is.
func Location(meta table.Metadata, runID, attempt string) string {
	return Folder(meta) + "/" + layout.RunSegment(runID) + "-" + attempt + ".json"
}

// Other is the name a refresh writes before it removes the current
// one, so that the attempt is held throughout.
func Other(loc string) string {
	if base, ok := strings.CutSuffix(loc, ".r.json"); ok {
		return base + ".json"
	}
	return strings.TrimSuffix(loc, ".json") + ".r.json"
}

// ApplyLocation is where an apply holds a plan's attempt while it commits,
// beside the plan's own hold: one per process (applier), since several
// may apply one plan at once.
func ApplyLocation(meta table.Metadata, runID, attempt, applier string) string {
	return strings.TrimSuffix(Location(meta, runID, attempt), ".json") + ".a" + applier + ".json"
}

// Write writes an attempt's hold at loc.
func Write(ctx context.Context, store Store, runID, attempt, kind string, created time.Time, loc string) error {
	wfs, err := store(ctx)
	if err != nil {
		return err
	}
	b, err := json.Marshal(Record{RunID: runID, Attempt: attempt, Kind: kind, Created: created.UTC(), Refreshed: time.Now().UTC(), Process: self()})
	if err != nil {
		return err
	}
	if err := wfs.WriteFile(loc, b); err != nil {
		return fmt.Errorf("hold the files of run %s (attempt %s): %w", runID, attempt, err)
	}
	return nil
}

// WhileRunning holds a publish's attempt and refreshes the hold until
// the returned stop is called. A refresh writes the hold under its other
// name before it removes the current one (a store may refuse to
// overwrite), so the attempt is held throughout.
func WhileRunning(ctx context.Context, store Store, log *slog.Logger, runID, attempt, cur string) (stop func(), err error) {
	created := time.Now()
	if err := Write(ctx, store, runID, attempt, "run", created, cur); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(Refresh)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				ctx := context.WithoutCancel(ctx)
				next := Other(cur)
				if err := Write(ctx, store, runID, attempt, "run", created, next); err != nil {
					log.Warn("refresh the run's hold", "run", runID, "err", err)
					continue
				}
				RemoveAt(ctx, store, log, runID, cur)
				cur = next
			}
		}
	}()
	return func() { close(done); <-finished }, nil
}

// RemoveAt removes one hold file, if it is there, on a context of its
// own, as RemoveAttempts does.
func RemoveAt(ctx context.Context, store Store, log *slog.Logger, runID, loc string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), snapshot.CleanupTimeout)
	defer cancel()
	wfs, err := store(ctx)
	if err != nil {
		return
	}
	if err := wfs.Remove(loc); err != nil && !errors.Is(err, fs.ErrNotExist) {
		log.Warn("remove a hold", "run", runID, "location", loc, "err", err)
	}
}

// RemoveAttempts removes an attempt's holds (each of attempts: a plan merged
// from shards has one per shard), if it has any, on a context of its own
// as the removal of staged files does: a cancelled publish removes its
// hold too. An apply's own hold goes when that apply ends.
func RemoveAttempts(ctx context.Context, store Store, log *slog.Logger, meta table.Metadata, runID string, attempts []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), snapshot.CleanupTimeout)
	defer cancel()
	wfs, err := store(ctx)
	if err != nil {
		return
	}
	for _, a := range attempts {
		loc := Location(meta, runID, a)
		for _, l := range []string{loc, Other(loc)} {
			if err := wfs.Remove(l); err != nil && !errors.Is(err, fs.ErrNotExist) {
				log.Warn("remove the plan's hold", "run", runID, "attempt", a, "err", err)
			}
		}
	}
	if _, ok := wfs.(icebergio.LocalFS); ok {
		// The holds' folders, once empty (RemoveAt takes no other).
		_ = wfs.Remove(Folder(meta))
		_ = wfs.Remove(strings.TrimSuffix(Folder(meta), "/holds"))
	}
}

// Read reads the hold at loc.
func Read(fsys icebergio.IO, loc string) (Record, error) {
	var h Record
	f, err := fsys.Open(loc)
	if err != nil {
		return h, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return h, err
	}
	return h, json.Unmarshal(b, &h)
}
