package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/internal/hold"
	"github.com/lakeswap/lakeswap/swap/internal/layout"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
)

// Catalog is what gc needs of a catalog: loading the table, and a commit
// that expires lakeswap's tags.
type Catalog = table.CatalogIO

// Collector removes what attempts left behind in one catalog's tables.
type Collector struct {
	Catalog Catalog
	// StagingIO gives the file IO staged files and holds are removed
	// through, from the table's own; nil: the table's own.
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

// withDefaults fills what the request leaves zero: a grace of 24 hours,
// a plan retention of 7 days, and now.
func (r Request) withDefaults() Request {
	if r.Grace <= 0 {
		r.Grace = 24 * time.Hour
	}
	if r.PlanRetention <= 0 {
		r.PlanRetention = 7 * 24 * time.Hour
	}
	if r.Now.IsZero() {
		r.Now = time.Now()
	}
	return r
}

// Item is one thing gc removed, or would.
type Item struct {
	Kind     string    `json:"kind"` // file, upload, hold, tag, run-file
	Location string    `json:"location"`
	Bytes    int64     `json:"bytes,omitempty"`
	Time     time.Time `json:"time"`
	RunID    string    `json:"run_id,omitempty"`
	// Note says why a hold refreshed within the grace period goes.
	Note string `json:"note,omitempty"`
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
// <column>=<value>/run-<run id>-<attempt>/<file>, a folder per partition field.
var stagedPath = regexp.MustCompile(`^(?:[^/]*=[^/]*/)+run-(` + layout.RunPattern + `)-([0-9a-f]{8})/[^/]+$`)

// Run removes what attempts that never committed left behind: the files
// they staged (found by lakeswap's staging layout, never by prefix alone),
// their incomplete multipart uploads, holds past their time, and the run
// tags past their retention. It never removes a file that a snapshot of
// the table references, nor one of an attempt a live publish or plan
// holds, nor anything of an attempt that wrote something within the grace
// period.
func (c *Collector) Run(ctx context.Context, req Request) (*Result, error) {
	req = req.withDefaults()
	// 1. Open the table's storage, and refuse a data path gc cannot own.
	g, err := c.open(ctx, req)
	if err != nil {
		return nil, err
	}
	res := &Result{Removed: req.Yes, Items: []Item{}} // a list, never null
	// 2. Holds: which attempts are live, and which holds are past their time.
	live, err := g.holds(ctx, res)
	if err != nil {
		return nil, err
	}
	// Plans' audit branches past the plan retention go, with their
	// snapshots, before the files are judged: their staged files are then
	// referenced by nothing.
	if err := g.expiredBranches(ctx, res); err != nil {
		return nil, err
	}
	// 3. The table is loaded again once the holds are listed: a commit
	//    comes before its attempt's hold is released, so a file whose hold
	//    was gone when listed is referenced by the table as loaded now.
	if g.tbl, err = c.Catalog.LoadTable(ctx, req.Table); err != nil {
		return nil, fmt.Errorf("load table %s: %w", g.name, err)
	}
	emptied, err := g.stray(ctx, live, res)
	if err != nil {
		return nil, err
	}
	if err := g.runFiles(ctx, live, res); err != nil {
		return nil, err
	}
	// 4. Lakeswap's tags past their retention.
	expire := g.expiredTags(res)
	slices.SortFunc(res.Items, func(a, b Item) int { return strings.Compare(a.Kind+a.Location, b.Kind+b.Location) })
	res.Bytes = total(res.Items)
	if !req.Yes {
		return res, nil
	}
	// 5. And once more before anything goes, for a commit since.
	if err := g.leaveReferenced(ctx, res); err != nil {
		return nil, err
	}
	// 6. Remove, one by one, then the tags in one commit.
	if err := g.remove(ctx, res, emptied); err != nil {
		return res, err
	}
	if err := expire(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// expiredBranches lists the audit branches of plans older than the plan
// retention, and with Yes removes each with its snapshot.
func (g *run) expiredBranches(ctx context.Context, res *Result) error {
	meta := g.tbl.Metadata()
	for name, id := range snapshot.PlanBranches(meta) {
		if snapshot.BranchAge(meta, id, g.req.Now) <= g.req.PlanRetention {
			continue
		}
		s := meta.SnapshotByID(id)
		if s == nil || s.Summary == nil || !snapshot.Staged(meta, name, id, s.Summary.Properties[runrecord.PropRunID]) {
			continue // a branch of that name lakeswap did not make
		}
		res.Items = append(res.Items, Item{Kind: "branch", Location: name, Time: time.UnixMilli(s.TimestampMs).UTC(), RunID: s.Summary.Properties[runrecord.PropRunID]})
		if !g.req.Yes {
			continue
		}
		if _, err := snapshot.DropBranch(ctx, g.c.Catalog, g.c.log(), g.tbl, g.wfs, name, id); err != nil {
			// One branch that cannot go stops nothing else gc does.
			g.c.log().Warn("a plan's branch past its retention was left", "table", g.name, "branch", name, "err", err)
		}
	}
	return nil
}

// Pending is a plan staged and waiting for approval: its hold is there,
// as the plan neither was applied nor discarded.
type Pending struct {
	hold.PlanNote
	RunID   string    `json:"run_id"`
	Created time.Time `json:"created"`
	// Expires is when gc stops keeping the plan's files (its plan
	// retention); Expired says that time has passed.
	Expires time.Time `json:"expires"`
	Expired bool      `json:"expired,omitempty"`
}

// Pending lists the table's plans waiting for approval, oldest first,
// from their holds: each says what the plan is (hold.PlanNote).
func (c *Collector) Pending(ctx context.Context, req Request) ([]Pending, error) {
	req = req.withDefaults()
	g, err := c.open(ctx, req)
	if err != nil {
		return nil, err
	}
	out := []Pending{}
	err = g.ls.ListFiles(ctx, hold.Folder(g.tbl.Metadata())+"/", func(loc string, _ int64, _ time.Time) error {
		if hold.Name.FindStringSubmatch(loc[strings.LastIndex(loc, "/")+1:]) == nil {
			return nil
		}
		h, err := hold.Read(g.fsys, loc)
		if err != nil || h.Kind != "plan" || h.Plan == nil {
			return nil // a hold of a running publish, or one that says nothing of its plan
		}
		if runrecord.Find(g.tbl.Metadata(), h.RunID) != nil {
			return nil // applied: its hold is left by an apply that stopped
		}
		exp := h.Created.Add(req.PlanRetention)
		p := Pending{PlanNote: *h.Plan, RunID: h.RunID, Created: h.Created, Expires: exp, Expired: req.Now.After(exp)}
		if at, ok := snapshot.BranchAt(g.tbl.Metadata(), p.Branch); !ok || at != p.BranchID {
			// Its branch went (an apply refused, gc): none to query.
			p.Branch, p.BranchID = "", 0
		}
		out = append(out, p)
		return nil
	})
	slices.SortFunc(out, func(a, b Pending) int { return a.Created.Compare(b.Created) })
	return out, err
}

// run is one gc of one table.
type run struct {
	c    *Collector
	req  Request
	name string
	tbl  *table.Table
	fsys icebergio.IO
	wfs  icebergio.WriteFileIO
	ls   lister
}

// open loads the table and the IO gc lists and removes through.
func (c *Collector) open(ctx context.Context, req Request) (*run, error) {
	g := &run{c: c, req: req, name: strings.Join(req.Table, ".")}
	var err error
	if g.tbl, err = c.Catalog.LoadTable(ctx, req.Table); err != nil {
		return nil, fmt.Errorf("load table %s: %w", g.name, err)
	}
	if g.fsys, err = g.tbl.FS(ctx); err != nil {
		return nil, err
	}
	switch {
	case c.StagingIO != nil:
		if g.wfs, err = c.StagingIO(ctx, g.fsys); err != nil {
			return nil, err
		}
	default:
		// Nil: through the table's own IO, as a publisher's staging.
		wfs, ok := g.fsys.(icebergio.WriteFileIO)
		if !ok {
			return nil, fmt.Errorf("gc of %s: the table's file IO cannot remove files", g.name)
		}
		g.wfs = wfs
	}
	if g.ls, err = listerFor(g.wfs); err != nil {
		return nil, fmt.Errorf("gc of %s: %w", g.name, err)
	}
	// A data path outside the table's location may be another table's
	// too, and what this table's snapshots do not reference may be that
	// table's.
	meta := g.tbl.Metadata()
	if loc := strings.TrimSuffix(meta.Location(), "/") + "/"; !strings.HasPrefix(snapshot.DataLocation(meta)+"/", loc) {
		return nil, fmt.Errorf("gc of %s: its data files are written to %s (write.data.path), outside the table's location %s; other tables may share that path and gc cannot tell their files apart, so it removes nothing there", g.name, snapshot.DataLocation(meta), loc)
	}
	return g, nil
}

// holds lists the table's holds: an attempt held by a running publish
// refreshed within the grace period, or by a plan younger than the plan
// retention, is live (by run id-attempt); a hold past that goes, and its
// attempt's files are judged as any.
func (g *run) holds(ctx context.Context, res *Result) (map[string]bool, error) {
	live := map[string]bool{}
	req := g.req
	err := g.ls.ListFiles(ctx, hold.Folder(g.tbl.Metadata())+"/", func(loc string, size int64, modified time.Time) error {
		m := hold.Name.FindStringSubmatch(loc[strings.LastIndex(loc, "/")+1:])
		if m == nil {
			return nil // not lakeswap's
		}
		key := m[1] + "-" + m[2]
		h, err := hold.Read(g.fsys, loc)
		if err != nil {
			// Kept, as if live: a hold that cannot be read says nothing
			// of its attempt.
			g.c.log().Warn("unreadable hold; its attempt's files are kept", "location", loc, "err", err)
			live[key] = true
			return nil
		}
		switch {
		case h.Kind == "plan" && req.Now.Sub(h.Created) <= req.PlanRetention:
			live[key] = true
		case h.Kind != "plan" && req.Now.Sub(h.Refreshed) < req.Grace && h.Gone():
			// Its process was killed: the hold goes now, and its files
			// are judged as any attempt's, by their age.
			res.Items = append(res.Items, Item{Kind: "hold", Location: loc, Bytes: size, Time: h.Refreshed, RunID: h.RunID,
				Note: fmt.Sprintf("process %d on %s has ended", h.PID, h.Host)})
		case h.Kind != "plan" && req.Now.Sub(h.Refreshed) < req.Grace:
			live[key] = true
		default:
			res.Items = append(res.Items, Item{Kind: "hold", Location: loc, Bytes: size, Time: h.Refreshed, RunID: h.RunID})
		}
		return nil
	})
	return live, err
}

// stray finds the files and uploads of attempts that never committed: in
// lakeswap's staging layout, referenced by no snapshot, held by no live
// attempt, and written before the grace period. An attempt is judged as a
// whole, by its newest file or upload: a backfill staging for longer than
// the grace period writes something newer all along, and keeps its older
// files with it. It returns the attempts' folders, to remove once empty.
func (g *run) stray(ctx context.Context, live map[string]bool, res *Result) (map[string]bool, error) {
	referenced, err := snapshot.Referenced(ctx, g.fsys, g.tbl.Metadata())
	if err != nil {
		return nil, err
	}
	data := snapshot.DataLocation(g.tbl.Metadata()) + "/"
	type attempt struct {
		newest time.Time
		items  []Item
	}
	attempts := map[string]*attempt{}
	note := func(m []string, it Item) {
		key := m[1] + "-" + m[2]
		a := attempts[key]
		if a == nil {
			a = &attempt{}
			attempts[key] = a
		}
		if it.Time.After(a.newest) {
			a.newest = it.Time
		}
		it.RunID = layout.RunOf(m[1])
		a.items = append(a.items, it)
	}
	err = g.ls.ListFiles(ctx, data, func(loc string, size int64, modified time.Time) error {
		m := stagedPath.FindStringSubmatch(strings.TrimPrefix(loc, data))
		switch {
		case referenced[loc] || m == nil:
		case live[m[1]+"-"+m[2]]:
			res.Kept++
		default:
			note(m, Item{Kind: "file", Location: loc, Bytes: size, Time: modified})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = g.ls.ListUploads(ctx, data, func(loc, id string, initiated time.Time) error {
		if m := stagedPath.FindStringSubmatch(strings.TrimPrefix(loc, data)); m != nil && !live[m[1]+"-"+m[2]] {
			note(m, Item{Kind: "upload", Location: loc + "#" + id, Time: initiated})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	emptied := map[string]bool{}
	for _, a := range attempts {
		if g.req.Now.Sub(a.newest) < g.req.Grace {
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
	return emptied, nil
}

// runFiles lists the run files (runrecord) under the table's location that
// no snapshot of its metadata names and that are older than the grace: a
// commit whose outcome was never settled left them, or the snapshots that
// named them have expired. One a snapshot names is kept, however old, and
// so is one of a run with a live attempt (a commit may land late). Files
// are matched by their SHA-256, their name, not by how a location is
// spelled.
func (g *run) runFiles(ctx context.Context, live map[string]bool, res *Result) error {
	named := runFilesNamed(g.tbl.Metadata())
	dir := runrecord.RunFilePath(g.tbl.Metadata().Location(), "")
	dir = dir[:strings.LastIndex(dir, "/")+1]
	return g.ls.ListFiles(ctx, dir, func(loc string, size int64, modified time.Time) error {
		sum, ok := strings.CutSuffix(path.Base(loc), ".json")
		switch {
		case !ok || named[sum]:
		case g.req.Now.Sub(modified) < g.req.Grace:
			res.Young++
		case g.runIsLive(loc, live):
			res.Kept++
		default:
			res.Items = append(res.Items, Item{Kind: "run-file", Location: loc, Bytes: size, Time: modified})
		}
		return nil
	})
}

// runIsLive reports whether the run a run file is of has a live attempt;
// a file that cannot be read is kept, as if it had.
func (g *run) runIsLive(loc string, live map[string]bool) bool {
	f, err := g.fsys.Open(loc)
	if err != nil {
		return true
	}
	defer f.Close()
	var d struct {
		RunID string `json:"run_id"`
	}
	if err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&d); err != nil || d.RunID == "" {
		g.c.log().Warn("unreadable run file; kept", "location", loc, "err", err)
		return true
	}
	for key := range live {
		if strings.HasPrefix(key, d.RunID+"-") {
			return true
		}
	}
	return false
}

// runFilesNamed is the set of run files, by SHA-256, the snapshots of meta
// name.
func runFilesNamed(meta table.Metadata) map[string]bool {
	named := map[string]bool{}
	for _, s := range meta.Snapshots() {
		if s.Summary == nil {
			continue
		}
		if sum := s.Summary.Properties[runrecord.PropRunFileSHA]; sum != "" {
			named[sum] = true
		}
		if loc := s.Summary.Properties[runrecord.PropRunFile]; loc != "" {
			named[strings.TrimSuffix(path.Base(loc), ".json")] = true
		}
	}
	return named
}

// expiredTags lists lakeswap's tags past their retention, and returns the
// commit that expires them, pinned to each tag's snapshot.
func (g *run) expiredTags(res *Result) func(context.Context) error {
	meta := g.tbl.Metadata()
	var expired []table.Update
	var names []string
	var pins []table.Requirement
	for name, ref := range meta.Refs() {
		if ref.SnapshotRefType != table.TagRef || !(strings.HasPrefix(name, snapshot.RollbackTagPrefix) || strings.HasPrefix(name, snapshot.RunTagPrefix)) || ref.MaxRefAgeMs == nil {
			continue
		}
		snap := meta.SnapshotByID(ref.SnapshotID)
		if snap == nil || g.req.Now.UnixMilli()-snap.TimestampMs <= *ref.MaxRefAgeMs {
			continue
		}
		res.Items = append(res.Items, Item{Kind: "tag", Location: name, Time: time.UnixMilli(snap.TimestampMs + *ref.MaxRefAgeMs).UTC()})
		expired, names = append(expired, table.NewRemoveSnapshotRefUpdate(name)), append(names, name)
		pins = append(pins, table.AssertRefSnapshotID(name, &ref.SnapshotID))
	}
	return func(ctx context.Context) error {
		if len(expired) == 0 {
			return nil
		}
		pins = append(pins, table.AssertTableUUID(meta.TableUUID()))
		gone := func(m table.Metadata) bool {
			for _, name := range names {
				if m.SnapshotByName(name) != nil {
					return false
				}
			}
			return true
		}
		change := &snapshot.Change{Table: g.tbl, Commit: table.TableCommit{Identifier: g.req.Table, Requirements: pins, Updates: expired}, Landed: gone}
		if err := snapshot.Send(ctx, g.c.Catalog, g.c.log(), "gc", []*snapshot.Change{change}); err != nil {
			return fmt.Errorf("gc of %s: expire %s: %w (the files were removed)", g.name, words.Count(len(expired), "lakeswap tag"), err)
		}
		return nil
	}
}

// leaveReferenced loads the table once more and leaves out of the items
// what a commit since referenced.
func (g *run) leaveReferenced(ctx context.Context, res *Result) error {
	now, err := g.c.Catalog.LoadTable(ctx, g.req.Table)
	if err != nil {
		return fmt.Errorf("load table %s: %w", g.name, err)
	}
	if now.MetadataLocation() == g.tbl.MetadataLocation() {
		return nil
	}
	again, err := snapshot.Referenced(ctx, g.fsys, now.Metadata())
	if err != nil {
		return err
	}
	named := runFilesNamed(now.Metadata())
	res.Items = slices.DeleteFunc(res.Items, func(it Item) bool {
		return again[it.Location] || it.Kind == "run-file" && named[strings.TrimSuffix(path.Base(it.Location), ".json")]
	})
	res.Bytes = total(res.Items)
	return nil
}

// remove removes the listed files, holds and uploads one by one, then the
// attempts' folders once empty.
func (g *run) remove(ctx context.Context, res *Result, emptied map[string]bool) error {
	for _, it := range res.Items {
		var err error
		switch it.Kind {
		case "file", "hold", "run-file":
			err = g.wfs.Remove(it.Location)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		case "upload":
			loc, id, _ := strings.Cut(it.Location, "#")
			err = g.ls.AbortUpload(ctx, loc, id)
		}
		if err != nil {
			return fmt.Errorf("gc of %s: remove %s: %w (what is listed before it was removed)", g.name, it.Location, err)
		}
	}
	if _, ok := g.wfs.(icebergio.LocalFS); ok {
		for prefix := range emptied {
			_ = g.wfs.Remove(prefix) // the attempt's folder, once empty
		}
	}
	return nil
}

func total(items []Item) int64 {
	var n int64
	for _, it := range items {
		n += it.Bytes
	}
	return n
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
