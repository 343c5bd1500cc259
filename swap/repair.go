package swap

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/stats"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// PropRepairStats is what a repair's snapshot records of itself: the
// manifests and files whose statistics it corrected.
const PropRepairStats = "lakeswap.repair-stats"

// RepairResult is what a repair of a table's statistics found and did.
type RepairResult struct {
	Table      string `json:"table"`
	SnapshotID int64  `json:"snapshot_id,string"` // the snapshot checked
	Manifests  int    `json:"manifests"`          // checked
	Files      int    `json:"files"`              // checked
	// Findings are every wrong figure found; Left those no manifest can
	// correct (a Parquet footer's own statistics, a file that cannot be
	// read).
	Findings []verify.Finding `json:"findings,omitempty"`
	Left     []verify.Finding `json:"left,omitempty"`
	// Rewritten are the manifests written anew, Summaries those whose
	// partition summaries alone were corrected, FilesFixed the data files
	// whose entries were.
	Rewritten  int `json:"manifests_rewritten"`
	Summaries  int `json:"summaries_corrected"`
	FilesFixed int `json:"files_corrected"`
	// Committed is the repair's snapshot; 0 when nothing needed repair or
	// it was a dry run.
	Committed int64 `json:"committed_snapshot_id,string,omitempty"`
}

// RepairStats checks the statistics of main's head (stats.CheckSnapshot)
// and corrects what manifests hold wrong in one commit: each manifest with
// a file's wrong bounds or counts is written anew with the file's exact
// figures (every other entry, status and sequence number as it was), and
// the manifest list records every manifest's partition summaries as its
// entries make them. No data file is written, moved or removed, and the
// rows the table holds are the same: the commit is a "replace" snapshot,
// pinned to main. A footer's own wrong statistics are listed as Left: only
// writing the partition again mends them. dryRun checks and commits
// nothing.
func (p *Publisher) RepairStats(ctx context.Context, ident table.Identifier, dryRun bool) (*RepairResult, error) {
	name := strings.Join(ident, ".")
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	}
	res := &RepairResult{Table: name}
	head := tbl.CurrentSnapshot()
	if head == nil {
		return res, nil
	}
	res.SnapshotID = head.SnapshotID
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	rep, err := stats.CheckSnapshot(ctx, fsys, meta, head)
	if err != nil {
		return nil, err
	}
	res.Manifests, res.Files, res.Findings = rep.Manifests, rep.Files, rep.Findings()
	for _, m := range rep.Wrong {
		for _, pr := range m.Problems {
			if pr.Footer || pr.Unread {
				res.Left = append(res.Left, pr.Finding)
			}
		}
	}
	plan := planRepair(rep)
	if dryRun || len(plan) == 0 {
		return res, res.leftOver(name, dryRun)
	}
	written := &snapshot.RecordingIO{IO: fsys}
	id, sent, err := p.commitRepair(ctx, tbl, written, plan, res)
	if err != nil {
		if !sent {
			return res, &outcome.OpError{Op: "repair-stats", Table: name, Err: err, Hint: "nothing was committed; " + snapshot.RemoveWritten(ctx, p.log(), tbl, written)}
		}
		if refused := (*snapshot.Refused)(nil); errors.As(err, &refused) {
			return res, &outcome.OpError{Op: "repair-stats", Table: name, Err: err,
				Hint: "main moved while the repair was written; nothing was committed; " + snapshot.RemoveWritten(ctx, p.log(), tbl, written) + "; run it again"}
		}
		return res, &outcome.OpError{Op: "repair-stats", Table: name, Err: fmt.Errorf("%w: %w", outcome.ErrCommitUnknown, err),
			Hint: "`lakeswap history --table " + name + "` shows whether a replace snapshot recording " + PropRepairStats + " landed; if not, run it again"}
	}
	res.Committed = id
	// What was committed is checked again, as every commit is.
	now, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return res, fmt.Errorf("load table %s after the repair: %w", name, err)
	}
	after, err := stats.CheckSnapshot(ctx, fsys, now.Metadata(), now.Metadata().SnapshotByID(id))
	if err != nil {
		return res, fmt.Errorf("check the repair's snapshot %d: %w", id, err)
	}
	var still []verify.Finding
	for _, m := range after.Wrong {
		for _, pr := range m.Problems {
			if !pr.Footer && !pr.Unread {
				still = append(still, pr.Finding)
			}
		}
		still = append(still, m.Summaries...)
	}
	if len(still) > 0 {
		return res, &outcome.OpError{Op: "repair-stats", Table: name, Err: fmt.Errorf("%w: the repair's snapshot %d still records %s, the first: %s",
			outcome.ErrVerifyFailed, id, words.Count(len(still), "wrong figure"), still[0])}
	}
	return res, res.leftOver(name, false)
}

// leftOver is the error of a repair that leaves wrong figures: a dry run's
// (every one), or the footers no manifest corrects.
func (r *RepairResult) leftOver(name string, dryRun bool) error {
	switch {
	case dryRun && len(r.Findings) > 0:
		return &outcome.OpError{Op: "repair-stats", Table: name, Err: fmt.Errorf("%w: %s found, nothing committed (a dry run)", outcome.ErrVerifyFailed, words.Count(len(r.Findings), "wrong figure")),
			Hint: "run it again without --dry-run to correct the manifests"}
	case len(r.Left) > 0:
		return &outcome.OpError{Op: "repair-stats", Table: name, Err: fmt.Errorf("%w: %s that no manifest corrects (in Parquet footers, or files that cannot be read), the first: %s", outcome.ErrVerifyFailed, words.Count(len(r.Left), "finding"), r.Left[0]),
			Hint: "publish the partitions holding those files again: the files lakeswap writes have exact footers"}
	}
	return nil
}

// repairPlan is what each wrong manifest becomes.
type repairPlan map[string]manifestRepair

type manifestRepair struct {
	manifest iceberg.ManifestFile
	fixes    map[string]stats.Metrics // by data file path; none: summaries only
	exact    []iceberg.FieldSummary
}

func planRepair(rep *stats.Report) repairPlan {
	plan := repairPlan{}
	for _, m := range rep.Wrong {
		if len(m.Fixes) == 0 && len(m.Summaries) == 0 {
			continue // footers only
		}
		plan[m.Manifest.FilePath()] = manifestRepair{manifest: m.Manifest, fixes: m.Fixes, exact: m.Exact}
	}
	return plan
}

// commitRepair writes the corrected manifests and the new manifest list,
// and commits a snapshot of them on main as tbl holds it; sent says
// whether the commit was sent (else nothing can have landed).
func (p *Publisher) commitRepair(ctx context.Context, tbl *table.Table, written *snapshot.RecordingIO, plan repairPlan, res *RepairResult) (id int64, sent bool, err error) {
	meta, head := tbl.Metadata(), tbl.CurrentSnapshot()
	loc, err := tbl.LocationProvider()
	if err != nil {
		return 0, false, err
	}
	id, err = newSnapshotID(meta)
	if err != nil {
		return 0, false, err
	}
	commit := uuid.New()
	fixes := map[string]stats.ListFix{}
	n := 0
	for path, m := range plan {
		fix := stats.ListFix{Partitions: m.exact}
		if len(m.fixes) > 0 {
			data, err := readAll(written, path)
			if err != nil {
				return 0, false, err
			}
			patched, err := stats.PatchManifest(data, m.fixes)
			if err != nil {
				return 0, false, fmt.Errorf("correct manifest %s: %w", path, err)
			}
			fix.Path = loc.NewMetadataLocation(fmt.Sprintf("%s-m%d-repair.avro", commit, n))
			fix.Length = int64(len(patched))
			n++
			if err := written.WriteFile(fix.Path, patched); err != nil {
				return 0, false, err
			}
			res.Rewritten++
			res.FilesFixed += len(m.fixes)
		} else {
			res.Summaries++
		}
		fixes[path] = fix
	}
	list, err := readAll(written, head.ManifestList)
	if err != nil {
		return 0, false, err
	}
	seq := int64(0)
	header := map[string][]byte{"snapshot-id": []byte(strconv.FormatInt(id, 10)), "parent-snapshot-id": []byte(strconv.FormatInt(head.SnapshotID, 10))}
	if meta.Version() > 1 {
		seq = meta.LastSequenceNumber() + 1
		header["sequence-number"] = []byte(strconv.FormatInt(seq, 10))
	}
	if meta.Version() > 2 {
		header["first-row-id"] = []byte(strconv.FormatInt(meta.NextRowID(), 10))
	}
	patched, err := stats.PatchList(list, fixes, header)
	if err != nil {
		return 0, false, fmt.Errorf("correct manifest list %s: %w", head.ManifestList, err)
	}
	listPath := loc.NewMetadataLocation(fmt.Sprintf("snap-%d-1-%s.avro", id, commit))
	if err := written.WriteFile(listPath, patched); err != nil {
		return 0, false, err
	}
	props := iceberg.Properties{PropRepairStats: fmt.Sprintf("%s corrected, %s with their files' figures, %s",
		words.Count(len(plan), "manifest"), words.Count(res.Rewritten, "rewritten"), words.Count(res.FilesFixed, "data file"))}
	if head.Summary != nil {
		for k, v := range head.Summary.Properties {
			if strings.HasPrefix(k, "total-") {
				props[k] = v
			}
		}
	}
	parent := head.SnapshotID
	snap := table.Snapshot{SnapshotID: id, ParentSnapshotID: &parent, SequenceNumber: seq,
		TimestampMs: max(time.Now().UnixMilli(), meta.LastUpdatedMillis()+1), ManifestList: listPath,
		Summary: &table.Summary{Operation: table.OpReplace, Properties: props}, SchemaID: head.SchemaID}
	if meta.Version() > 2 {
		first, added := meta.NextRowID(), int64(0)
		snap.FirstRowID, snap.AddedRows = &first, &added
	}
	if err := ctx.Err(); err != nil {
		return 0, false, err // stopped before anything was sent
	}
	tc := table.TableCommit{Identifier: tbl.Identifier(),
		Requirements: []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, &parent)},
		Updates:      []table.Update{table.NewAddSnapshotUpdate(&snap), table.NewSetSnapshotRefUpdate(table.MainBranch, id, table.BranchRef, -1, -1, -1)}}
	err = snapshot.Send(ctx, p.Catalog, p.log(), "repair-stats", []*snapshot.Change{{Table: tbl, Commit: tc, ID: id, Landed: snapshot.Adds(id)}})
	if refused := (*snapshot.Refused)(nil); err == nil || errors.As(err, &refused) {
		return id, true, err // refused: nothing landed, and the caller removes what the repair wrote
	}
	return 0, true, err
}

// newSnapshotID draws a positive snapshot id the table has not used.
func newSnapshotID(meta table.Metadata) (int64, error) {
	for {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, err
		}
		id := int64(binary.BigEndian.Uint64(b[:]) >> 1)
		if id != 0 && meta.SnapshotByID(id) == nil {
			return id, nil
		}
	}
}

func readAll(fsys icebergio.IO, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}
