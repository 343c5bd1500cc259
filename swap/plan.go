package swap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/jsonid"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

// UnmarshalJSON reads a plan, also as lakeswap wrote it before its ids
// were strings: base_snapshot_id as a JSON number.
func (p *Plan) UnmarshalJSON(b []byte) error {
	type plain Plan
	var doc struct {
		*plain
		Base json.RawMessage `json:"base_snapshot_id"`
	}
	doc.plain = (*plain)(p)
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	p.BaseSnapshotID = nil
	raw := bytes.Trim(doc.Base, `"`)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return fmt.Errorf("base_snapshot_id %s: %w", doc.Base, err)
	}
	p.BaseSnapshotID = &id
	return nil
}

// Plan is a stage described as a value: what a run will replace, with what,
// against which base, under which contract, and what the guards found. It
// is the document a person approves (its id, PlanID, is over it), what a
// publish commits and verifies, and what it records; it marshals to JSON,
// and a plan read back, in another process, can be committed by Apply.
// What a running publish knows beside it (the table's files, holds, the
// run the table already records) is a run's.
type Plan struct {
	RunID   string            `json:"run_id"`
	Named   bool              `json:"named_run,omitempty"` // the run id was given (Request.Named)
	Attempt string            `json:"attempt"`             // names this attempt's staging folders
	Table   string            `json:"table"`
	Source  string            `json:"source,omitempty"`
	Inputs  []runrecord.Input `json:"inputs,omitempty"` // the objects read, as listed
	// NameMapping says the plan adopts files whose columns carry no field
	// ids, which readers find by name through the table's name mapping.
	NameMapping     bool             `json:"name_mapping,omitempty"`
	BaseSnapshotID  *int64           `json:"base_snapshot_id,string"`
	BaseMetadata    string           `json:"base_metadata_location"`
	PartitionColumn string           `json:"partition_column"`
	Contract        contract.Summary `json:"contract"` // the contract it was staged under
	// BaseSchemaID is the table schema the base's rows were read with for
	// the band, the base fingerprint and the grain's changes; the staged
	// rows are read with Contract.SchemaID. Both are the table's current
	// schema when the plan is made; a base file written under an earlier
	// schema is read by field id (SchemaEvolved says the table has one).
	BaseSchemaID    *jsonid.Int        `json:"base_schema_id,omitempty"`
	SchemaEvolved   bool               `json:"schema_evolved,omitempty"`
	Partitions      []PartitionPlan    `json:"partitions"`
	Fingerprint     verify.Fingerprint `json:"fingerprint"`
	BaseFingerprint verify.Fingerprint `json:"base_fingerprint"`
	Findings        []verify.Finding   `json:"findings,omitempty"`
	// Checks are the run's guards by name, with what each found.
	Checks []Check `json:"checks,omitempty"`
	// Warnings are what a guard let through because the run allowed it
	// (--allow-implausible, --allow-empty): what the approver should see.
	Warnings        []string `json:"warnings,omitempty"`
	DroppedFindings int64    `json:"dropped_findings,omitempty"`
	Staged          bool     `json:"staged"`
	// Batch, when set, commits the plan in batches of this many
	// partitions, in partition order, one snapshot each (applyBatches).
	Batch int `json:"batch,omitempty"`
	// BatchOf is a batch's place in its run, "2/6".
	BatchOf string `json:"batch_of,omitempty"`
	// Together are the groups of partitions that exchange records within
	// the run (a record the base holds in one and the run stages in
	// another): each group commits in one batch, so that no snapshot
	// between batches holds a record twice or not at all.
	Together [][]string `json:"together,omitempty"`
	// Rewritten are files written under an earlier partition spec that
	// hold rows of the run's partitions (Request.RewriteOverlapping): the
	// commit takes them out, their rows being in the partitions' new
	// files. Each partition names those it holds rows of (OldShares).
	Rewritten []parquetio.File `json:"rewritten_files,omitempty"`
	// Job says how a SQL job computed the rows, when one did.
	Job json.RawMessage `json:"job,omitempty"`
	// Restated says which frozen partitions the run restates, why, and who
	// decided it (Request.RestateFrozen).
	Restated *Restatement `json:"restated_frozen,omitempty"`
	// Release names every table of the release the plan is part of (its
	// own included), when it is committed with others as one.
	Release []string `json:"release,omitempty"`
	// ReadBy are the tables of the release staged from this plan's
	// staged rows: it commits on its base or not at all.
	ReadBy []string `json:"read_by,omitempty"`
	// Branch is the audit branch the plan's snapshot was committed to,
	// built on the base, for any engine to query before approval (Request.
	// AuditBranch); BranchSnapshotID is that snapshot, which apply moves
	// main to when main is still at the base.
	Branch           string `json:"branch,omitempty"`
	BranchSnapshotID int64  `json:"branch_snapshot_id,omitempty,string"`
	// BranchMetadata is the table's metadata file once the branch was
	// made: what a reader given a path (DuckDB's iceberg_scan) opens.
	BranchMetadata string `json:"branch_metadata_location,omitempty"`
	// Cleanup says what removing a refused plan's staged files did.
	Cleanup string `json:"cleanup,omitempty"`
}

// run is a plan being carried out in this process: the plan, and the
// state the steps hand on beside it, which is never written to the plan
// file. stage returns one, apply and land take it; Apply makes one of a
// plan read back (bind).
type run struct {
	*Plan
	// oldFiles holds the base's data files of each declared partition, as
	// iceberg-go needs them to replace them: from the stage, or read again
	// by Apply.
	oldFiles map[string][]iceberg.DataFile
	// rewritten holds the base's files of Rewritten by path, as the commit
	// needs them to take them out.
	rewritten map[string]iceberg.DataFile
	// baseIO reads the base's data files as its readers do, with the
	// deletes that apply to them left out (snapshot.WithDeletes).
	baseIO icebergio.IO
	// prior is the snapshot that already records this run id, if any, and
	// held whether main still holds what the plan staged.
	prior *table.Snapshot
	held  bool
	// committedOn is the snapshot the commit was made on: the base, or the
	// head it was rebased on.
	committedOn int64
	// contract is the table's contract as staged, or as Apply read it.
	contract *contract.Contract
	// bound marks a plan Apply read back: its staged files are never
	// removed, since nothing but the table says they are not in use.
	bound bool
	// stopHold stops refreshing a running publish's hold.
	stopHold func()
	// job is the SQL job that computed the rows, if one did: the plan's
	// Job is its document.
	job Job
	// onBranch, while the plan's audit branch is built, names it in the
	// snapshot's summary.
	onBranch string
	// whole says the apply commits one plan whole: only such an apply
	// moves main to the plan's branch.
	whole bool
	// lastBatch marks the run's last batch that commits: what a job
	// records of how far the run read goes with it (Job.Record).
	lastBatch bool
}

// fork copies the run with a plan of its own (a batch, shards merged, the
// unchanged part of a plan), which the copy's steps change apart.
func (plan *run) fork() *run {
	doc := *plan.Plan
	c := *plan
	c.Plan = &doc
	return &c
}

// clone copies the document so that nothing the copy's steps write (to
// its lists, its partitions' files) reaches the original.
func (p *Plan) clone() *Plan {
	c := *p
	c.Partitions = slices.Clone(p.Partitions)
	c.Findings, c.Warnings, c.Checks = slices.Clone(p.Findings), slices.Clone(p.Warnings), slices.Clone(p.Checks)
	c.Together, c.Inputs, c.Rewritten = slices.Clone(p.Together), slices.Clone(p.Inputs), slices.Clone(p.Rewritten)
	if p.Restated != nil {
		r := *p.Restated
		c.Restated = &r
	}
	return &c
}

// stopRefresh stops refreshing a running publish's hold, which stays.
func (plan *run) stopRefresh() {
	if plan.stopHold != nil {
		plan.stopHold()
		plan.stopHold = nil
	}
}

// Restatement is a decision to change partitions the table froze.
type Restatement struct {
	Partitions []string `json:"partitions"`
	Reason     string   `json:"reason"`
	DecidedBy  string   `json:"decided_by"`
}

// PartitionPlan is one declared partition: the files it holds at the base
// and their fingerprint, and the staged files that replace them.
type PartitionPlan struct {
	Value    string           `json:"value"`
	Key      string           `json:"key"`
	Prefix   string           `json:"prefix"`
	OldFiles []parquetio.File `json:"old_files"`
	// OldDeletes are the partition's delete files at the base (a
	// merge-on-read table's): its rows are read with them applied, and
	// they go out with its data files in the same commit, as Iceberg's
	// partition replace takes them.
	OldDeletes []parquetio.File `json:"old_delete_files,omitempty"`
	// OldShares are files of an earlier partition spec (Plan.Rewritten)
	// holding rows of the partition among others': those rows are part
	// of what it holds at the base, and the commit takes the files out.
	OldShares []string `json:"old_shares,omitempty"`
	// Carried says the run does not declare the partition: its rows are
	// the table's, staged again because a rewritten file holds some.
	Carried        bool               `json:"carried,omitempty"`
	OldFingerprint verify.Fingerprint `json:"old_fingerprint"`
	NewFiles       []parquetio.File   `json:"new_files"`
	Fingerprint    verify.Fingerprint `json:"fingerprint"`
	// Adopted says NewFiles are files another engine wrote, committed
	// where they are.
	Adopted bool `json:"adopted,omitempty"`
	// Frozen says the table's lakeswap.freeze-after froze the partition.
	Frozen bool `json:"frozen,omitempty"`
	// Decided says the run rewrites the partition's files though its rows
	// stay: it records a decision about it (--leave), which takes a
	// snapshot.
	Decided bool `json:"decided,omitempty"`
	// Unchanged says the staged rows are what the partition holds: the
	// commit leaves its files as they are, so that readers of the table's
	// changes see no rewrite, and the staged files go.
	Unchanged bool `json:"unchanged,omitempty"`
	// Changes is what the staged rows change at the grain, when the run
	// asked to compare (Request.Changes).
	Changes  *verify.Changes `json:"changes,omitempty"`
	findings verify.Findings
	warnings verify.Findings // of checks written warn:
	attempt  string          // the attempt that staged it, in a plan merged from shards
	created  []string        // every file this attempt created for the partition
	touched  bool            // whether this attempt opened a file for the partition
	// grainHashes are the grain keys of the rows staged in this process,
	// by verify.GrainSeed, where the grain leaves out the partition
	// column: the keys checked across partitions (stagedKeys). Nil for a
	// partition staged elsewhere, whose files are read for them.
	grainHashes []uint64
}

// same reports whether the staged rows are what the partition held at the
// base, by content hash and rows, in the same files: a partition holding
// rows of a rewritten file changes its files.
func (pp *PartitionPlan) same() bool {
	return pp.Fingerprint.Hash == pp.OldFingerprint.Hash && pp.Fingerprint.Rows == pp.OldFingerprint.Rows && len(pp.OldShares) == 0 && !pp.Decided
}

// changesNothing reports whether the plan's partitions held at the base
// what it staged, in files it would leave as they are: a commit would
// change nothing.
func (p *Plan) changesNothing() bool {
	return p.BaseFingerprint.Hash == p.Fingerprint.Hash && p.BaseFingerprint.Rows == p.Fingerprint.Rows && len(p.shares()) == 0 &&
		!slices.ContainsFunc(p.Partitions, func(pp PartitionPlan) bool { return pp.Decided })
}

// shares are the paths of the rewritten files the plan's partitions hold
// rows of, sorted: what its commit (or its batch's) takes out.
func (p *Plan) shares() []string {
	var out []string
	for _, pp := range p.Partitions {
		out = append(out, pp.OldShares...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// attemptOr is the attempt that staged the partition: its own in a plan
// merged from shards, else the plan's.
func (pp *PartitionPlan) attemptOr(plan string) string {
	if pp.attempt != "" {
		return pp.attempt
	}
	return plan
}

// empty reports whether the plan neither replaces nor adds a file.
func (p *Plan) empty() bool {
	for _, pp := range p.Partitions {
		if len(pp.OldFiles) > 0 || len(pp.NewFiles) > 0 || len(pp.OldShares) > 0 {
			return false
		}
	}
	return true
}

// op names what commits the plan: apply for a plan read back, else publish.
func (p *run) op() string {
	if p.bound {
		return "apply"
	}
	return "publish"
}

// Refused reports whether validation found anything.
func (p *Plan) Refused() bool { return len(p.Findings) > 0 || p.DroppedFindings > 0 }

// reading is the IO that reads the plan's files: the base's with their
// deletes applied, the staged as they are.
func (p *run) reading(fsys icebergio.IO) icebergio.IO {
	if p.baseIO != nil {
		return p.baseIO
	}
	return fsys
}

// describeData describes a partition's files: its data files, and its
// delete files apart.
func describeData(files []iceberg.DataFile) (data, deletes []parquetio.File) {
	for _, f := range files {
		d := parquetio.File{Path: f.FilePath(), Rows: f.Count(), Bytes: f.FileSizeBytes()}
		if f.ContentType() == iceberg.EntryContentData {
			data = append(data, d)
		} else {
			deletes = append(deletes, d)
		}
	}
	if data == nil {
		data = []parquetio.File{}
	}
	return data, deletes
}

// oldPaths are the paths of every file the partition holds at the base,
// data and delete files, sorted as the table's listing is.
func (pp *PartitionPlan) oldPaths() []string {
	return slices.Sorted(slices.Values(append(filePaths(pp.OldFiles), filePaths(pp.OldDeletes)...)))
}

func filePaths(files []parquetio.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

// BaseSnapshotIDValue is the base snapshot id, 0 when the table was empty.
func (p *Plan) BaseSnapshotIDValue() int64 {
	if p.BaseSnapshotID == nil {
		return 0
	}
	return *p.BaseSnapshotID
}
