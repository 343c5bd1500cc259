package swap

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/swap/internal/staging"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

// record is what the run's snapshot records: enough to list, verify and
// roll back the run, and to conclude a rerun of its id, from the table alone.
func (plan *run) record() runrecord.Record {
	r := runrecord.Record{RunID: plan.RunID, Source: plan.Source, PartitionColumn: plan.PartitionColumn,
		Fingerprint: plan.Fingerprint.Hash, FingerprintVersion: verify.VersionOf(plan.contract.Schema), PartitionHashes: map[string]string{},
		Rows: plan.Fingerprint.Rows, Sums: plan.Fingerprint.Sums, BaseSnapshotID: plan.BaseSnapshotID,
		BaseFingerprint: plan.BaseFingerprint.Hash, BaseRows: plan.BaseFingerprint.Rows, Version: runrecord.Version}
	for _, pp := range plan.Partitions {
		r.Partitions = append(r.Partitions, pp.Value)
		r.PartitionHashes[pp.Key] = pp.Fingerprint.Hash
		if pp.same() {
			r.Unchanged = append(r.Unchanged, pp.Key)
		}
		if pp.Carried {
			r.Carried = append(r.Carried, pp.Value)
		}
	}
	for _, c := range plan.Checks {
		name := c.Name
		if c.At == "commit" {
			name += " (again at commit)"
		}
		r.Checks = append(r.Checks, name+"="+c.Verdict())
	}
	r.Batch, r.Release = plan.BatchOf, plan.Release
	if plan.Restated != nil {
		r.Restated = &runrecord.Restatement{Partitions: plan.Restated.Partitions, Reason: plan.Restated.Reason, DecidedBy: plan.Restated.DecidedBy}
	}
	if plan.job != nil {
		plan.job.Record(&r, plan.Partitions, plan.BatchOf == "" || plan.lastBatch)
	}
	return r.WithInputs(plan.Inputs)
}

// pendingCommit is one table's commit, built and not yet sent: its
// transaction, the requirements and updates lakeswap adds to it, the
// snapshot it makes, and the files iceberg-go wrote for it.
type pendingCommit struct {
	tbl     *table.Table
	tx      *table.Transaction
	cat     *snapshot.Extended
	id      int64
	written *snapshot.RecordingIO
}

// tableCommit is the commit as a table's share of a commit across tables.
func (pc *pendingCommit) tableCommit() (table.TableCommit, error) {
	tc, err := pc.tx.TableCommit()
	if err != nil {
		return tc, err
	}
	tc.Requirements = append(tc.Requirements, pc.cat.Reqs...)
	tc.Updates = append(tc.Updates, pc.cat.Updates...)
	return tc, nil
}

// removeWritten removes what iceberg-go wrote for a commit that did not
// land, and says so.
func (pc *pendingCommit) removeWritten(ctx context.Context, p *Publisher) string {
	return snapshot.RemoveWritten(ctx, p.log(), pc.tbl, pc.written)
}

// prepareCommit builds the commit of a staged plan on main as tbl holds it:
// one snapshot that replaces exactly the base files of the declared
// partitions, pinned to main, the schema and the spec. The snapshot of a
// table in a release takes the release's tag too.
func (p *Publisher) prepareCommit(ctx context.Context, tbl *table.Table, plan *run) (*pendingCommit, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	added, err := dataFiles(ctx, fsys, tbl.Metadata(), plan)
	if err != nil {
		return nil, &outcome.OpError{Op: "commit", Table: plan.Table, RunID: plan.RunID, Err: err,
			Hint: "nothing was committed"}
	}
	var removed, deletes []iceberg.DataFile
	for _, pp := range plan.Partitions {
		if pp.same() { // an unchanged partition keeps its files
			continue
		}
		for _, f := range plan.oldFiles[pp.Value] {
			if f.ContentType() == iceberg.EntryContentData {
				removed = append(removed, f)
			} else {
				deletes = append(deletes, f)
			}
		}
	}
	// The files of an earlier spec the run rewrites go out with the
	// partitions whose rows they held.
	for _, path := range plan.shares() {
		df, ok := plan.rewritten[path]
		if !ok {
			return nil, &outcome.OpError{Op: "commit", Table: plan.Table, RunID: plan.RunID, Hint: "nothing was committed",
				Err: fmt.Errorf("%s, written under an earlier partition spec, which the run rewrites, is not among the table's files", path)}
		}
		removed = append(removed, df)
	}
	head := tbl.CurrentSnapshot()
	rec := plan.record()
	if head != nil {
		rec.BaseSnapshotID = &head.SnapshotID
		if plan.BaseSnapshotID == nil || *plan.BaseSnapshotID != head.SnapshotID {
			rec.PlannedBaseSnapshotID = plan.BaseSnapshotID
		}
	}

	// iceberg-go writes the new manifests and manifest list before the
	// catalog's compare-and-swap; noting them lets a lost swap take them
	// away again, so that a conflict leaves no file behind. The snapshot
	// the run replaces and the run's own are tagged in the same commit, so
	// that snapshot expiry keeps the run's rollback target and its record.
	pc := &pendingCommit{tbl: tbl, written: &snapshot.RecordingIO{IO: fsys, Meta: tbl.Metadata()}}
	// Main pinned alone would let a schema change (which moves no branch)
	// slip in between: files staged under the old schema would then be
	// committed under the new. The schema and spec are pinned too.
	meta := tbl.Metadata()
	pc.cat = &snapshot.Extended{Catalog: p.Catalog, Reqs: []table.Requirement{
		table.AssertCurrentSchemaID(meta.CurrentSchema().ID),
		table.AssertDefaultSpecID(meta.DefaultPartitionSpec()),
	}}
	// A run committed in batches keeps the target of its first batch.
	if head != nil && tbl.Metadata().SnapshotByName(RollbackTag(plan.RunID)) == nil {
		pc.cat.Updates = append(pc.cat.Updates, snapshot.TagRollbackTarget(plan.RunID, head, p.RollbackRetention))
	}
	pc.tx = table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(context.Context) (icebergio.IO, error) { return pc.written.FS(), nil }, pc.cat).NewTransaction()
	if err := pc.tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return nil, fmt.Errorf("pin main at the base snapshot: %w", err)
	}
	if _, ok := tbl.Metadata().Properties()[table.DefaultNameMappingKey]; plan.NameMapping && !ok {
		// Adopted files without field ids are read by column name; the
		// table's name mapping is how every Iceberg reader knows to.
		mapping, err := json.Marshal(tbl.Metadata().CurrentSchema().NameMapping())
		if err == nil {
			err = pc.tx.SetProperties(iceberg.Properties{table.DefaultNameMappingKey: string(mapping)})
		}
		if err != nil {
			return nil, fmt.Errorf("set the table's name mapping for adopted files: %w", err)
		}
	}
	// A partition's delete files go out with its data files: left behind
	// they would apply to nothing, or to a later file that reuses a key.
	// A run of many partitions keeps their detail in a run file, written
	// before the commit that names it (runrecord.Summary).
	props, runFile, body := rec.Summary(meta.Location())
	if plan.onBranch != "" {
		props[runrecord.PropAuditBranch] = plan.onBranch
	}
	if err := runrecord.WriteRunFile(pc.written, runFile, body); err != nil {
		return nil, &outcome.OpError{Op: "commit", Table: plan.Table, RunID: plan.RunID, Err: err,
			Hint: "nothing was committed; " + pc.removeWritten(ctx, p)}
	}
	if err := pc.tx.ReplaceFiles(ctx, removed, added, deletes, props); err != nil {
		return nil, &outcome.OpError{Op: "commit", Table: plan.Table, RunID: plan.RunID, Err: err,
			Hint: "nothing was committed; " + pc.removeWritten(ctx, p)}
	}
	// The snapshot id is decided before the commit: it is how an
	// unanswered commit is found, or not, in the table's history.
	staged, err := pc.tx.StagedTable()
	if err != nil {
		return nil, fmt.Errorf("read the commit's snapshot id: %w", err)
	}
	pc.id = staged.CurrentSnapshot().SnapshotID
	pc.cat.Updates = append(pc.cat.Updates, snapshot.TagRun(runTagName(plan), pc.id, p.RollbackRetention))
	if len(plan.Release) > 0 {
		pc.cat.Updates = append(pc.cat.Updates, snapshot.TagRun(ReleaseTag(plan.RunID), pc.id, p.RollbackRetention))
	}
	return pc, nil
}

// dataFiles describes the staged files for the catalog, reading each footer
// for its statistics and partition value, which must be the partition the
// file was staged for.
func dataFiles(ctx context.Context, fsys icebergio.IO, meta table.Metadata, plan *run) ([]iceberg.DataFile, error) {
	c := plan.contract
	// iceberg-go infers a file's partition from its column bounds, which it
	// truncates to 16 characters for strings by default: the partition
	// columns' bounds are kept whole, as the partition values are.
	props := maps.Clone(meta.Properties())
	for _, f := range c.Partition.Fields {
		props["write.metadata.metrics.column."+f.Name] = "full"
	}
	type job struct {
		path, value string
		schema      *iceberg.Schema
	}
	var jobs []job
	for _, pp := range plan.Partitions {
		if pp.same() {
			continue // it keeps the files it holds
		}
		schema := meta.CurrentSchema()
		if pp.Adopted {
			schema = relaxed(schema)
		}
		for _, f := range pp.NewFiles {
			jobs = append(jobs, job{f.Path, pp.Value, schema})
		}
	}
	out := make([]iceberg.DataFile, len(jobs))
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(parallelism(0))
	for i, j := range jobs {
		g.Go(func() error {
			df, err := staging.Describe(ctx, fsys, meta, c, j.path, j.schema, props, j.value)
			if err != nil {
				return fmt.Errorf("describe staged file %s: %w", j.path, err)
			}
			if got := c.PartitionOf(df); got != j.value {
				return fmt.Errorf("staged file %s reads as partition %q, not %q", j.path, got, j.value)
			}
			out[i] = df
			return nil
		})
	}
	return out, g.Wait()
}

func fmtID(id *int64) string {
	if id == nil {
		return "(none: the table was empty)"
	}
	return strconv.FormatInt(*id, 10)
}

// runTagName names the tag of a run's snapshot: one for each batch of a
// run committed in batches (lakeswap-run-<run id>-batch-<k>), so that
// expiry keeps every batch, and with them the run's way back.
func runTagName(plan *run) string {
	if k, _, ok := strings.Cut(plan.BatchOf, "/"); ok {
		return RunTag(plan.RunID) + "-batch-" + k
	}
	return RunTag(plan.RunID)
}
