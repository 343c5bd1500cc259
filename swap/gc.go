package swap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
)

// A plan staged for approval is held: a small file under the table's
// location, <location>/lakeswap/plans/<run id>-<attempt>.json, says which
// prefixes it staged and when, so that gc, which removes the files of
// attempts that never committed, keeps a plan's files while it waits for
// approval. Applying or discarding the plan releases it.

// planHold is what a held plan records.
type planHold struct {
	RunID    string    `json:"run_id"`
	Attempt  string    `json:"attempt"`
	Created  time.Time `json:"created"`
	Prefixes []string  `json:"prefixes"`
}

func holdsLocation(meta table.Metadata) string {
	return strings.TrimSuffix(meta.Location(), "/") + "/lakeswap/plans"
}

// Hold records a staged plan in the table's storage as live, so that gc
// keeps its files until it is applied, discarded, or older than gc's plan
// retention.
func (p *Publisher) Hold(ctx context.Context, plan *Plan) error {
	tbl, wfs, err := p.openStorage(ctx, plan.Table)
	if err != nil {
		return err
	}
	h := planHold{RunID: plan.RunID, Attempt: plan.Attempt, Created: time.Now().UTC()}
	for _, pp := range plan.Partitions {
		if !pp.Adopted {
			h.Prefixes = append(h.Prefixes, pp.Prefix)
		}
	}
	if len(h.Prefixes) == 0 {
		return nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return wfs.WriteFile(holdLocation(tbl.Metadata(), plan.RunID, plan.Attempt), b)
}

func holdLocation(meta table.Metadata, runID, attempt string) string {
	return holdsLocation(meta) + "/" + runID + "-" + attempt + ".json"
}

// release removes a plan's hold, if it has one.
func (p *Publisher) release(ctx context.Context, tbl *table.Table, plan *Plan) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	wfs, err := p.stagingIO(ctx, fsys)
	if err != nil {
		return
	}
	attempts := map[string]bool{plan.Attempt: true}
	for i := range plan.Partitions {
		attempts[plan.Partitions[i].attemptOr(plan.Attempt)] = true
	}
	for a := range attempts {
		if err := wfs.Remove(holdLocation(tbl.Metadata(), plan.RunID, a)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.log().Warn("remove the plan's hold", "run", plan.RunID, "attempt", a, "err", err)
		}
	}
	if _, ok := wfs.(icebergio.LocalFS); ok {
		// The holds' folders, once empty (Remove takes no other).
		_ = wfs.Remove(holdsLocation(tbl.Metadata()))
		_ = wfs.Remove(strings.TrimSuffix(holdsLocation(tbl.Metadata()), "/plans"))
	}
}

func (p *Publisher) openStorage(ctx context.Context, name string) (*table.Table, icebergio.WriteFileIO, error) {
	ident, err := catalog.ParseIdent(name)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, nil, fmt.Errorf("load table %s: %w", name, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	wfs, err := p.stagingIO(ctx, fsys)
	if err != nil {
		return nil, nil, err
	}
	return tbl, wfs, nil
}

// GCRequest says what gc may remove.
type GCRequest struct {
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

// GCItem is one thing gc removed, or would.
type GCItem struct {
	Kind     string    `json:"kind"` // file, upload, plan, tag
	Location string    `json:"location"`
	Bytes    int64     `json:"bytes,omitempty"`
	Time     time.Time `json:"time"`
	RunID    string    `json:"run_id,omitempty"`
}

// GCResult lists what gc found to remove and whether it did.
type GCResult struct {
	Removed bool     `json:"removed"` // false: a dry run
	Items   []GCItem `json:"items"`
	Bytes   int64    `json:"bytes"`
	Kept    int      `json:"kept_by_plans"` // staged files a live plan keeps
	Young   int      `json:"young"`         // files and uploads of attempts active within the grace period
}

// stagedPath matches a file an attempt staged, below the data location:
// <column>=<value>/run-<run id>-<attempt>/<file>.
var stagedPath = regexp.MustCompile(`^[^/]*=[^/]*/run-([A-Za-z0-9][A-Za-z0-9._-]{0,99})-([0-9a-f]{8})/[^/]+$`)

// GC removes what attempts that never committed left behind: the files
// they staged (found by lakeswap's staging layout, never by prefix alone),
// their incomplete multipart uploads, plans held past their retention,
// and the run tags past their retention. It never removes a file that a
// snapshot of the table references, nor one under a live plan's prefixes,
// nor anything of an attempt that wrote something within the grace period.
func (p *Publisher) GC(ctx context.Context, req GCRequest) (*GCResult, error) {
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
	tbl, err := p.Catalog.LoadTable(ctx, req.Table)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	}
	meta := tbl.Metadata()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, err := p.stagingIO(ctx, fsys)
	if err != nil {
		return nil, err
	}
	ls, err := listerFor(wfs)
	if err != nil {
		return nil, fmt.Errorf("gc of %s: %w", name, err)
	}
	res := &GCResult{Removed: req.Yes}

	// Held plans: live ones keep their prefixes; expired ones go.
	live := map[string]bool{}
	err = ls.ListFiles(ctx, holdsLocation(meta)+"/", func(loc string, size int64, modified time.Time) error {
		h, err := readHold(fsys, loc)
		if err != nil {
			p.log().Warn("unreadable plan hold; its plan's files are kept", "location", loc, "err", err)
			live["*"+loc] = true
			return nil
		}
		if req.Now.Sub(h.Created) <= req.PlanRetention {
			for _, pre := range h.Prefixes {
				live[pre] = true
			}
			return nil
		}
		res.Items = append(res.Items, GCItem{Kind: "plan", Location: loc, Bytes: size, Time: h.Created, RunID: h.RunID})
		return nil
	})
	if err != nil {
		return nil, err
	}

	referenced, err := referencedFiles(ctx, fsys, meta)
	if err != nil {
		return nil, err
	}
	data := dataLocation(meta) + "/"
	// An attempt is judged as a whole, by its newest file or upload: a
	// backfill staging for longer than the grace period writes something
	// newer all along, and keeps its older files with it.
	type attempt struct {
		newest time.Time
		items  []GCItem
	}
	attempts := map[string]*attempt{}
	note := func(loc string, it GCItem) {
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
		if referenced[loc] || !stagedPath.MatchString(strings.TrimPrefix(loc, data)) {
			return nil
		}
		if live[loc[:strings.LastIndex(loc, "/")]] {
			res.Kept++
			return nil
		}
		note(loc, GCItem{Kind: "file", Location: loc, Bytes: size, Time: modified})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = ls.ListUploads(ctx, data, func(loc, id string, initiated time.Time) error {
		if !live[loc[:strings.LastIndex(loc, "/")]] {
			note(loc, GCItem{Kind: "upload", Location: loc + "#" + id, Time: initiated})
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
		if ref.SnapshotRefType != table.TagRef || !(strings.HasPrefix(name, RollbackTagPrefix) || strings.HasPrefix(name, RunTagPrefix)) || ref.MaxRefAgeMs == nil {
			continue
		}
		snap := meta.SnapshotByID(ref.SnapshotID)
		if snap == nil || req.Now.UnixMilli()-snap.TimestampMs <= *ref.MaxRefAgeMs {
			continue
		}
		res.Items = append(res.Items, GCItem{Kind: "tag", Location: name, Time: time.UnixMilli(snap.TimestampMs + *ref.MaxRefAgeMs).UTC()})
		expired = append(expired, table.NewRemoveSnapshotRefUpdate(name))
		pins = append(pins, table.AssertRefSnapshotID(name, &ref.SnapshotID))
	}
	slices.SortFunc(res.Items, func(a, b GCItem) int { return strings.Compare(a.Kind+a.Location, b.Kind+b.Location) })
	for _, it := range res.Items {
		res.Bytes += it.Bytes
	}
	if !req.Yes {
		return res, nil
	}

	for _, it := range res.Items {
		var err error
		switch it.Kind {
		case "file", "plan":
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
		if _, _, err := p.Catalog.CommitTable(ctx, req.Table, pins, expired); err != nil {
			return res, fmt.Errorf("gc of %s: expire %d lakeswap tag(s): %w (the files were removed)", name, len(expired), err)
		}
	}
	return res, nil
}

func readHold(fsys icebergio.IO, loc string) (planHold, error) {
	var h planHold
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
