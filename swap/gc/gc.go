// Package gc removes what attempts at a run left behind when they never
// committed: staged files, incomplete uploads, holds past their time, and
// run tags past their retention. It judges files by lakeswap's staging
// layout and the holds (package hold), never by prefix alone, and never
// removes a file a snapshot of the table references.
package gc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/swap/internal/hold"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
)

// Catalog is what gc needs of a catalog: loading the table, and a commit
// that expires lakeswap's tags.
type Catalog interface {
	LoadTable(context.Context, table.Identifier) (*table.Table, error)
	CommitTable(context.Context, table.Identifier, []table.Requirement, []table.Update) (table.Metadata, string, error)
}

// Collector removes what attempts left behind in one catalog's tables.
type Collector struct {
	Catalog Catalog
	// StagingIO gives the file IO staged files and holds are removed
	// through, from the table's own.
	StagingIO func(ctx context.Context, table icebergio.IO) (icebergio.WriteFileIO, error)
	Logger    *slog.Logger // nil: discard
}

func (c *Collector) log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Request says what gc may remove.
type Request struct {
	Table table.Identifier
	// Grace: files and uploads younger than this are left, since an
	// attempt may still be staging them. 0 means 24 hours.
	Grace time.Duration
	// PlanRetention: a held plan older than this no longer keeps its files.
	// 0 means 7 days.
	PlanRetention time.Duration
	// Yes removes; without it gc only lists what it would remove.
	Yes bool
	// Now is the time ages are measured from; zero means now.
	Now time.Time
}

// Item is one thing gc removed, or would.
type Item struct {
	Kind     string    `json:"kind"` // file, upload, hold, tag
	Location string    `json:"location"`
	Bytes    int64     `json:"bytes,omitempty"`
	Time     time.Time `json:"time"`
	RunID    string    `json:"run_id,omitempty"`
}

// Result lists what gc found to remove and whether it did.
type Result struct {
	Removed bool   `json:"removed"` // false: a dry run
	Items   []Item `json:"items"`
	Bytes   int64  `json:"bytes"`
	Kept    int    `json:"kept_by_holds"` // staged files a live publish or plan holds
	Young   int    `json:"young"`         // files and uploads of attempts active within the grace period
}

// stagedPath matches a file an attempt staged, below the data location:
// <column>=<value>/run-<run id>-<attempt>/<file>.
var stagedPath = regexp.MustCompile(`^[^/]*=[^/]*/run-([A-Za-z0-9][A-Za-z0-9._-]{0,99})-([0-9a-f]{8})/[^/]+$`)

// Run removes what attempts that never committed left behind: the files
// they staged (found by lakeswap's staging layout, never by prefix alone),
// their incomplete multipart uploads, holds past their time, and the run
// tags past their retention. It never removes a file that a snapshot of
// the table references, nor one of an attempt a live publish or plan
// holds, nor anything of an attempt that wrote something within the grace
// period.
func (c *Collector) Run(ctx context.Context, req Request) (*Result, error) {
	if req.Grace <= 0 {
		req.Grace = 24 * time.Hour
	}
	if req.PlanRetention <= 0 {
		req.PlanRetention = 7 * 24 * time.Hour
	}
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	name := strings.Join(req.Table, ".")
	tbl, err := c.Catalog.LoadTable(ctx, req.Table)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	}
	meta := tbl.Metadata()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, err := c.StagingIO(ctx, fsys)
	if err != nil {
		return nil, err
	}
	ls, err := listerFor(wfs)
	if err != nil {
		return nil, fmt.Errorf("gc of %s: %w", name, err)
	}
	res := &Result{Removed: req.Yes}
	// A data path outside the table's location may be another table's
	// too, and what this table's snapshots do not reference may be that
	// table's.
	if loc := strings.TrimSuffix(meta.Location(), "/") + "/"; !strings.HasPrefix(snapshot.DataLocation(meta)+"/", loc) {
		return nil, fmt.Errorf("gc of %s: its data files are written to %s (write.data.path), outside the table's location %s; other tables may share that path and gc cannot tell their files apart, so it removes nothing there", name, snapshot.DataLocation(meta), loc)
	}

	// Holds: an attempt held by a running publish refreshed within the
	// grace period, or by a plan younger than the plan retention, is live;
	// a hold past that goes, and its attempt's files are judged as any.
	live := map[string]bool{} // run id-attempt
	err = ls.ListFiles(ctx, hold.Folder(meta)+"/", func(loc string, size int64, modified time.Time) error {
		m := hold.Name.FindStringSubmatch(loc[strings.LastIndex(loc, "/")+1:])
		if m == nil {
			return nil // not lakeswap's
		}
		key := m[1] + "-" + m[2]
		h, err := hold.Read(fsys, loc)
		if err != nil {
			// Kept, as if live: a hold that cannot be read says nothing
			// of its attempt.
			c.log().Warn("unreadable hold; its attempt's files are kept", "location", loc, "err", err)
			live[key] = true
			return nil
		}
		switch {
		case h.Kind == "plan" && req.Now.Sub(h.Created) <= req.PlanRetention,
			h.Kind != "plan" && req.Now.Sub(h.Refreshed) < req.Grace:
			live[key] = true
		default:
			res.Items = append(res.Items, Item{Kind: "hold", Location: loc, Bytes: size, Time: h.Refreshed, RunID: h.RunID})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	// The table is loaded again once the holds are listed: a commit comes
	// before its attempt's hold is released, so a file whose hold was gone
	// when listed is referenced by the table as loaded now.
	if tbl, err = c.Catalog.LoadTable(ctx, req.Table); err != nil {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	}
	meta = tbl.Metadata()
	referenced, err := snapshot.Referenced(ctx, fsys, meta)
	if err != nil {
		return nil, err
	}
	data := snapshot.DataLocation(meta) + "/"
	// An attempt is judged as a whole, by its newest file or upload: a
	// backfill staging for longer than the grace period writes something
	// newer all along, and keeps its older files with it.
	type attempt struct {
		newest time.Time
		items  []Item
	}
	attempts := map[string]*attempt{}
	note := func(loc string, it Item) {
		m := stagedPath.FindStringSubmatch(strings.TrimPrefix(loc, data))
		if m == nil {
			return
		}
		key := m[1] + "-" + m[2]
		a := attempts[key]
		if a == nil {
			a = &attempt{}
			attempts[key] = a
		}
		if it.Time.After(a.newest) {
			a.newest = it.Time
		}
		it.RunID = m[1]
		a.items = append(a.items, it)
	}
	err = ls.ListFiles(ctx, data, func(loc string, size int64, modified time.Time) error {
		m := stagedPath.FindStringSubmatch(strings.TrimPrefix(loc, data))
		if referenced[loc] || m == nil {
			return nil
		}
		if live[m[1]+"-"+m[2]] {
			res.Kept++
			return nil
		}
		note(loc, Item{Kind: "file", Location: loc, Bytes: size, Time: modified})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = ls.ListUploads(ctx, data, func(loc, id string, initiated time.Time) error {
		if m := stagedPath.FindStringSubmatch(strings.TrimPrefix(loc, data)); m != nil && !live[m[1]+"-"+m[2]] {
			note(loc, Item{Kind: "upload", Location: loc + "#" + id, Time: initiated})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	emptied := map[string]bool{}
	for _, a := range attempts {
		if req.Now.Sub(a.newest) < req.Grace {
			res.Young += len(a.items)
			continue
		}
		for _, it := range a.items {
			res.Items = append(res.Items, it)
			if it.Kind == "file" {
				emptied[it.Location[:strings.LastIndex(it.Location, "/")]] = true
			}
		}
	}
	var expired []table.Update
	var pins []table.Requirement
	for name, ref := range meta.Refs() {
		if ref.SnapshotRefType != table.TagRef || !(strings.HasPrefix(name, snapshot.RollbackTagPrefix) || strings.HasPrefix(name, snapshot.RunTagPrefix)) || ref.MaxRefAgeMs == nil {
			continue
		}
		snap := meta.SnapshotByID(ref.SnapshotID)
		if snap == nil || req.Now.UnixMilli()-snap.TimestampMs <= *ref.MaxRefAgeMs {
			continue
		}
		res.Items = append(res.Items, Item{Kind: "tag", Location: name, Time: time.UnixMilli(snap.TimestampMs + *ref.MaxRefAgeMs).UTC()})
		expired = append(expired, table.NewRemoveSnapshotRefUpdate(name))
		pins = append(pins, table.AssertRefSnapshotID(name, &ref.SnapshotID))
	}
	slices.SortFunc(res.Items, func(a, b Item) int { return strings.Compare(a.Kind+a.Location, b.Kind+b.Location) })
	for _, it := range res.Items {
		res.Bytes += it.Bytes
	}
	if !req.Yes {
		return res, nil
	}
	// And once more before anything goes, for a commit since.
	if now, err := c.Catalog.LoadTable(ctx, req.Table); err != nil {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	} else if now.MetadataLocation() != tbl.MetadataLocation() {
		again, err := snapshot.Referenced(ctx, fsys, now.Metadata())
		if err != nil {
			return nil, err
		}
		res.Items = slices.DeleteFunc(res.Items, func(it Item) bool { return again[it.Location] })
		res.Bytes = 0
		for _, it := range res.Items {
			res.Bytes += it.Bytes
		}
	}

	for _, it := range res.Items {
		var err error
		switch it.Kind {
		case "file", "hold":
			err = wfs.Remove(it.Location)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		case "upload":
			loc, id, _ := strings.Cut(it.Location, "#")
			err = ls.AbortUpload(ctx, loc, id)
		}
		if err != nil {
			return res, fmt.Errorf("gc of %s: remove %s: %w (what is listed before it was removed)", name, it.Location, err)
		}
	}
	if _, ok := wfs.(icebergio.LocalFS); ok {
		for prefix := range emptied {
			_ = wfs.Remove(prefix) // the attempt's folder, once empty
		}
	}
	if len(expired) > 0 {
		pins = append(pins, table.AssertTableUUID(meta.TableUUID()))
		if _, _, err := c.Catalog.CommitTable(ctx, req.Table, pins, expired); err != nil {
			return res, fmt.Errorf("gc of %s: expire %d lakeswap tag(s): %w (the files were removed)", name, len(expired), err)
		}
	}
	return res, nil
}

// lister is what gc needs of a store: listing with ages, and incomplete
// uploads. lakeswap's S3 store has it; local files get it from the OS.
type lister interface {
	ListFiles(ctx context.Context, location string, fn func(location string, size int64, modified time.Time) error) error
	ListUploads(ctx context.Context, location string, fn func(location, uploadID string, initiated time.Time) error) error
	AbortUpload(ctx context.Context, location, uploadID string) error
}

func listerFor(wfs icebergio.WriteFileIO) (lister, error) {
	if ls, ok := wfs.(lister); ok {
		return ls, nil
	}
	if _, ok := wfs.(icebergio.LocalFS); ok {
		return localLister{}, nil
	}
	return nil, fmt.Errorf("the table's storage (%T) cannot be listed by lakeswap", wfs)
}

// localLister lists local files, named file://path as the table names them.
type localLister struct{}

func (localLister) ListFiles(ctx context.Context, location string, fn func(string, int64, time.Time) error) error {
	root := strings.TrimPrefix(location, "file://")
	dir := root
	if !strings.HasSuffix(root, "/") {
		dir = filepath.Dir(root)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(p, root) {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		loc := p
		if strings.HasPrefix(location, "file://") {
			loc = "file://" + p
		}
		return fn(loc, info.Size(), info.ModTime())
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func (localLister) ListUploads(context.Context, string, func(string, string, time.Time) error) error {
	return nil // local files have no incomplete uploads
}

func (localLister) AbortUpload(context.Context, string, string) error { return os.ErrInvalid }
