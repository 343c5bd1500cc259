package runrecord

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/lakeswap/lakeswap/internal/exact"
)

// Version is lakeswap's version, recorded in every snapshot it commits.
var Version = "0.1.0-dev"

// Snapshot summary properties that record a run.
const (
	PropRunID      = "lakeswap.run-id"
	PropSource     = "lakeswap.source"
	PropPartitions = "lakeswap.partitions" // column=value, comma-separated, for people
	// PropPartitionValues is the partition values as a JSON array: what
	// lakeswap reads, since a value may hold a comma.
	PropPartitionValues = "lakeswap.partition-values"
	PropPartitionColumn = "lakeswap.partition-column"
	PropFingerprint     = "lakeswap.fingerprint"
	PropFPVersion       = "lakeswap.fingerprint-version"
	PropPartitionHashes = "lakeswap.partition-fingerprints"
	PropRows            = "lakeswap.rows"
	PropSumPrefix       = "lakeswap.sum."
	PropBaseSnapshot    = "lakeswap.base-snapshot-id"
	// PropPlannedBase is the snapshot a run was planned against, when it
	// was committed on a later one (no commit between touched its
	// partitions).
	PropPlannedBase     = "lakeswap.planned-base-snapshot-id"
	PropBaseFingerprint = "lakeswap.base-fingerprint"
	PropBaseRows        = "lakeswap.base-rows"
	PropVersion         = "lakeswap.version"
	// PropAuditBranch names the branch a plan's snapshot was committed
	// to for people to query before approving it: until apply moves main
	// to it, the snapshot records a run that is not published.
	PropAuditBranch = "lakeswap.audit-branch"
	// PropBatch is a batch's place in a run committed in batches: "2/6".
	PropBatch = "lakeswap.batch"
	// PropUnchanged lists the declared partitions whose staged content was
	// what they held: the commit left their files as they were (JSON).
	PropUnchanged = "lakeswap.unchanged"
	// PropCarried lists the partition values the run did not declare but
	// staged again from the table, as a file it rewrote held rows of them
	// (JSON).
	PropCarried = "lakeswap.carried"
	// A run computed by a SQL job: the job's version (the SHA-256 of its
	// file and SQL), the SHA-256 of the listing of its sources, and the
	// source rows its rules rejected, by reason (JSON).
	PropJobVersion  = "lakeswap.job-version"
	PropSourcesHash = "lakeswap.sources-sha256"
	PropRejected    = "lakeswap.rejected"
	// What the job's reconciliation said each partition holds (rows and
	// sums), for up to MaxListedInputs partitions, and the source rows
	// that arrived later than its lookback, by day (JSON).
	PropReconciled = "lakeswap.reconciled"
	PropChecks     = "lakeswap.checks" // the run's checks and their verdicts, name=verdict
	PropLate       = "lakeswap.late"
	// PropRelease names the tables a release committed as one change, as
	// a JSON list; each table's snapshot of it takes the tag
	// lakeswap-release-<run id>.
	PropRelease = "lakeswap.release"
	// PropRestated is a decision to change partitions the table froze:
	// which, why, and who decided it, as JSON.
	PropRestated = "lakeswap.restated-frozen"
	// PropReleaseSnapshots maps each table of a release to its snapshot of
	// it, as JSON (a table the release left unchanged: the snapshot it
	// tagged).
	PropReleaseSnapshots = "lakeswap.release-snapshots"
	// PropWatermark is the arrival time a SQL job's run read up to: every
	// row of its lag source that arrived by then is in a partition the
	// run rebuilt, or decided (RFC 3339). publish --since-last starts from
	// the last landed run's.
	PropWatermark = "lakeswap.watermark"
	// PropLateLeft carries, from run to run, the days whose late rows a
	// run left out (--leave): each day maps to the arrival times of the
	// rows left (Left), as JSON.
	PropLateLeft = "lakeswap.late-left"
	// PropLateDecision is a run's decision on rows that arrived later than
	// its job's lookback into partitions already published: restate or
	// leave, which partitions, how many rows, why and who decided it; or
	// the rows the job's current-period policy loaded into the day they
	// arrived (JSON).
	PropLateDecision = "lakeswap.late-decision"
	// The objects a run read (s3:// inputs): how many, their bytes, the
	// SHA-256 of their list (InputsHash) and, for up to MaxListedInputs,
	// the list itself as JSON.
	PropInputCount = "lakeswap.input-count"
	PropInputBytes = "lakeswap.input-bytes"
	PropInputsHash = "lakeswap.inputs-sha256"
	PropInputs     = "lakeswap.inputs"
)

// MaxListedInputs is the most input objects a snapshot lists one by one:
// every later version of the table's metadata carries the summary.
const MaxListedInputs = 100

// Input is an object a run read, as it was listed.
type Input struct {
	URL  string `json:"url"` // s3://bucket/key
	Size int64  `json:"size"`
	ETag string `json:"etag"`
}

// InputsHash is the SHA-256 of a list of inputs' JSON: one value that says
// exactly what a run read.
func InputsHash(in []Input) string {
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Record is what one run records.
type Record struct {
	RunID              string
	Source             string // the input's description; never a credential
	PartitionColumn    string
	Partitions         []string          // the partition values, in order
	Fingerprint        string            // the run's fingerprint
	FingerprintVersion string            // the algorithm's version
	PartitionHashes    map[string]string // each partition's fingerprint, by key (column=value)
	Rows               int64
	Sums               map[string]exact.Sum
	BaseSnapshotID     *int64 // the snapshot the run replaced; nil on an empty table
	// PlannedBaseSnapshotID is the snapshot the run was planned against,
	// when it was committed on a later one.
	PlannedBaseSnapshotID *int64
	BaseFingerprint       string // the fingerprint of what the run replaced
	BaseRows              int64
	Version               string                          // lakeswap's
	Batch                 string                          // "2/6" for a run committed in batches
	Unchanged             []string                        // partition keys whose files the run left as they were
	Carried               []string                        // partition values the run staged from the table (--rewrite-overlapping)
	JobVersion            string                          // a SQL job's version
	SourcesHash           string                          // the SHA-256 of the job's sources' listing
	Rejected              map[string]int64                // source rows a job's rules rejected, by reason
	Reconciled            map[string]map[string]exact.Sum // a job's reconciliation: partition -> rows and sums
	Late                  map[string]int64                // source rows later than the job's lookback, by day
	Inputs                []Input                         // the objects read; only their count, bytes and hash past MaxListedInputs
	InputCount            int
	InputBytes            int64
	InputsHash            string
	Checks                []string          // the run's checks, as name=verdict (passed, allowed, not run)
	Release               []string          // the tables of the release the run committed with this one, its own included
	ReleaseSnapshots      map[string]string // each table of the release, its snapshot of it
	Restated              *Restatement      // frozen partitions the run restated, and why
	Watermark             string            // the arrival time a job's run read up to
	LateLeft              map[string]Left   // days whose late rows stay left out, and which
	LateDecision          *LateDecision     // what the run did with rows that arrived late
}

// Left are the late rows of a day a run left out: those that arrived
// after After (empty: any time) up to Through, RFC 3339 times, later than
// Lookback (seconds) after their event, the job's lookback then.
type Left struct {
	After    string  `json:"after,omitempty"`
	Through  string  `json:"through"`
	Lookback float64 `json:"lookback_seconds"`
}

// LateDecision is what a run did with source rows that arrived later than
// its job's lookback, into partitions already published.
type LateDecision struct {
	// Decision is restate (rebuilt with them), leave (kept as published,
	// the rows left out) or current-period (loaded into the day they
	// arrived, as the job's policy says).
	Decision   Late             `json:"decision"`
	Partitions []string         `json:"partitions,omitempty"` // column=value
	Rows       map[string]int64 `json:"rows"`                 // by day
	Reason     string           `json:"reason,omitempty"`
	DecidedBy  string           `json:"decided_by,omitempty"`
	Owner      string           `json:"owner,omitempty"` // the job's late.owner
}

// Late is what becomes of source rows that arrived later than a job's
// lookback: a run's decision (restate, leave, or current-period as the
// job's policy says), or a job's late policy (escalate, restate,
// current-period).
type Late string

const (
	// LateEscalate refuses a published partition such rows change: the
	// metric's owner decides (the default policy).
	LateEscalate Late = "escalate"
	// LateRestate rebuilds the partitions with them.
	LateRestate Late = "restate"
	// LateLeave keeps the partitions as published, the rows left out.
	LateLeave Late = "leave"
	// LateCurrentPeriod loads them into the day they arrived.
	LateCurrentPeriod Late = "current-period"
)

// Restatement is a run's decision to change partitions the table froze.
type Restatement struct {
	Partitions []string `json:"partitions"`
	Reason     string   `json:"reason"`
	DecidedBy  string   `json:"decided_by"`
}

var unescapeTuple = strings.NewReplacer("%2F", "/", "%25", "%")

// Keys names the run's partitions as column=value, or for several
// partition fields column=value/column=value.
func (r Record) Keys() []string {
	keys := make([]string, len(r.Partitions))
	cols := strings.Split(r.PartitionColumn, ",")
	for i, v := range r.Partitions {
		keys[i] = r.PartitionColumn + "=" + v
		if parts := strings.Split(v, "/"); len(cols) > 1 && len(parts) == len(cols) {
			for j := range parts {
				// A tuple's values are joined with '/', a '/' or '%' in one
				// written %2F or %25 (contract.Partitioning.Join).
				parts[j] = cols[j] + "=" + unescapeTuple.Replace(parts[j])
			}
			keys[i] = strings.Join(parts, "/")
		}
	}
	return keys
}

// Properties is the record as snapshot summary properties.
func (r Record) Properties() iceberg.Properties {
	values, _ := json.Marshal(r.Partitions)
	hashes, _ := json.Marshal(r.PartitionHashes)
	props := iceberg.Properties{
		PropRunID:           r.RunID,
		PropPartitions:      strings.Join(r.Keys(), ","),
		PropPartitionValues: string(values),
		PropPartitionColumn: r.PartitionColumn,
		PropFingerprint:     r.Fingerprint,
		PropFPVersion:       r.FingerprintVersion,
		PropPartitionHashes: string(hashes),
		PropRows:            strconv.FormatInt(r.Rows, 10),
		PropBaseFingerprint: r.BaseFingerprint,
		PropBaseRows:        strconv.FormatInt(r.BaseRows, 10),
		PropVersion:         r.Version,
	}
	if r.Source != "" {
		props[PropSource] = r.Source
	}
	if r.BaseSnapshotID != nil {
		props[PropBaseSnapshot] = strconv.FormatInt(*r.BaseSnapshotID, 10)
	}
	if r.Batch != "" {
		props[PropBatch] = r.Batch
	}
	if len(r.Unchanged) > 0 {
		unchanged, _ := json.Marshal(r.Unchanged)
		props[PropUnchanged] = string(unchanged)
	}
	if len(r.Carried) > 0 {
		carried, _ := json.Marshal(r.Carried)
		props[PropCarried] = string(carried)
	}
	if r.JobVersion != "" {
		props[PropJobVersion], props[PropSourcesHash] = r.JobVersion, r.SourcesHash
		rejected, _ := json.Marshal(r.Rejected)
		props[PropRejected] = string(rejected)
	}
	if r.Reconciled != nil && len(r.Reconciled) <= MaxListedInputs {
		b, _ := json.Marshal(r.Reconciled)
		props[PropReconciled] = string(b)
	}
	if r.Late != nil {
		b, _ := json.Marshal(r.Late)
		props[PropLate] = string(b)
	}
	if len(r.Checks) > 0 {
		props[PropChecks] = strings.Join(r.Checks, ",")
	}
	if len(r.Release) > 0 {
		b, _ := json.Marshal(r.Release)
		props[PropRelease] = string(b)
	}
	if r.Restated != nil {
		b, _ := json.Marshal(r.Restated)
		props[PropRestated] = string(b)
	}
	if r.Watermark != "" {
		props[PropWatermark] = r.Watermark
	}
	if r.LateLeft != nil {
		b, _ := json.Marshal(r.LateLeft)
		props[PropLateLeft] = string(b)
	}
	if r.LateDecision != nil {
		b, _ := json.Marshal(r.LateDecision)
		props[PropLateDecision] = string(b)
	}
	if r.PlannedBaseSnapshotID != nil {
		props[PropPlannedBase] = strconv.FormatInt(*r.PlannedBaseSnapshotID, 10)
	}
	for col, sum := range r.Sums {
		props[PropSumPrefix+col] = sum.String()
	}
	if r.InputCount > 0 {
		props[PropInputCount] = strconv.Itoa(r.InputCount)
		props[PropInputBytes] = strconv.FormatInt(r.InputBytes, 10)
		props[PropInputsHash] = r.InputsHash
		if len(r.Inputs) > 0 && len(r.Inputs) <= MaxListedInputs {
			list, _ := json.Marshal(r.Inputs)
			props[PropInputs] = string(list)
		}
	}
	return props
}

// WithInputs records the objects a run read.
func (r Record) WithInputs(in []Input) Record {
	if len(in) == 0 {
		return r
	}
	r.Inputs, r.InputCount, r.InputsHash, r.InputBytes = in, len(in), InputsHash(in), 0
	for _, o := range in {
		r.InputBytes += o.Size
	}
	return r
}

// Read reads the record a snapshot's summary holds; ok is false for a
// snapshot lakeswap did not commit. Runs recorded before the values were
// kept as JSON give their values from the comma-joined keys.
func Read(props map[string]string) (r Record, ok bool) {
	r.RunID = props[PropRunID]
	if r.RunID == "" {
		return Record{}, false
	}
	r.Source, r.PartitionColumn = props[PropSource], props[PropPartitionColumn]
	r.Fingerprint, r.FingerprintVersion = props[PropFingerprint], props[PropFPVersion]
	r.BaseFingerprint, r.Version, r.Batch = props[PropBaseFingerprint], props[PropVersion], props[PropBatch]
	r.JobVersion, r.SourcesHash = props[PropJobVersion], props[PropSourcesHash]
	_ = json.Unmarshal([]byte(props[PropRejected]), &r.Rejected)
	_ = json.Unmarshal([]byte(props[PropUnchanged]), &r.Unchanged)
	_ = json.Unmarshal([]byte(props[PropCarried]), &r.Carried)
	_ = json.Unmarshal([]byte(props[PropReconciled]), &r.Reconciled)
	if c := props[PropChecks]; c != "" {
		r.Checks = strings.Split(c, ",")
	}
	_ = json.Unmarshal([]byte(props[PropLate]), &r.Late)
	_ = json.Unmarshal([]byte(props[PropRelease]), &r.Release)
	_ = json.Unmarshal([]byte(props[PropReleaseSnapshots]), &r.ReleaseSnapshots)
	if v := props[PropRestated]; v != "" {
		r.Restated = &Restatement{}
		_ = json.Unmarshal([]byte(v), r.Restated)
	}
	r.Watermark = props[PropWatermark]
	_ = json.Unmarshal([]byte(props[PropLateLeft]), &r.LateLeft)
	if v := props[PropLateDecision]; v != "" {
		r.LateDecision = &LateDecision{}
		_ = json.Unmarshal([]byte(v), r.LateDecision)
	}
	r.Rows, _ = strconv.ParseInt(props[PropRows], 10, 64)
	r.BaseRows, _ = strconv.ParseInt(props[PropBaseRows], 10, 64)
	if v, err := strconv.ParseInt(props[PropBaseSnapshot], 10, 64); err == nil {
		r.BaseSnapshotID = &v
	}
	if v, err := strconv.ParseInt(props[PropPlannedBase], 10, 64); err == nil {
		r.PlannedBaseSnapshotID = &v
	}
	_ = json.Unmarshal([]byte(props[PropPartitionHashes]), &r.PartitionHashes)
	r.InputCount, _ = strconv.Atoi(props[PropInputCount])
	r.InputBytes, _ = strconv.ParseInt(props[PropInputBytes], 10, 64)
	r.InputsHash = props[PropInputsHash]
	_ = json.Unmarshal([]byte(props[PropInputs]), &r.Inputs)
	if err := json.Unmarshal([]byte(props[PropPartitionValues]), &r.Partitions); err != nil {
		r.Partitions = nil
		for _, key := range strings.Split(props[PropPartitions], ",") {
			if key = strings.TrimSpace(key); key != "" {
				col, v, _ := strings.Cut(key, "=")
				r.Partitions, r.PartitionColumn = append(r.Partitions, v), col
			}
		}
	}
	for k, v := range props {
		if col, found := strings.CutPrefix(k, PropSumPrefix); found {
			if r.Sums == nil {
				r.Sums = map[string]exact.Sum{}
			}
			r.Sums[col], _ = exact.Parse(v) // any size: a decimal(38,S) column's sum passes 64 bits
		}
	}
	return r, true
}

// ScopedRollback is the run id and the source a scoped rollback of run
// records: a run of its own, named for the run it took back.
func ScopedRollback(run string) (id, source string) {
	return "rollback-" + run, "scoped rollback of run " + run
}

// UndoneBy names the run a scoped rollback's snapshot took back, from the
// snapshot's properties.
func UndoneBy(props map[string]string) (string, bool) {
	run, ok := strings.CutPrefix(props[PropRunID], "rollback-")
	if !ok {
		return "", false
	}
	_, source := ScopedRollback(run)
	return run, props[PropSource] == source
}

// Find returns the snapshot of the table that records runID, or nil. A run
// id is recorded at most once: it is the run's idempotency key.
func Find(meta table.Metadata, runID string) *table.Snapshot {
	staged := Unpublished(meta)
	for _, s := range meta.Snapshots() {
		if s.Summary != nil && s.Summary.Properties[PropRunID] == runID && !staged[s.SnapshotID] {
			return &s
		}
	}
	return nil
}

// Unpublished are the snapshots a plan committed to its audit branch that
// no other ref holds: they record a run staged, not published. A
// snapshot whose summary names a plan's branch (lakeswap.audit-branch) is
// published once main, a tag or any other branch holds it or builds on
// it: apply moves main to it and tags it with the run, which stays
// whatever becomes of the plan's branch, or of main's log. One nothing
// holds (its branch moved elsewhere) was never published either.
func Unpublished(meta table.Metadata) map[int64]bool {
	var out map[int64]string
	for _, s := range meta.Snapshots() {
		if s.Summary == nil || s.Summary.Properties[PropAuditBranch] == "" {
			continue
		}
		if out == nil {
			out = map[int64]string{}
		}
		out[s.SnapshotID] = s.Summary.Properties[PropAuditBranch]
	}
	if out == nil {
		return nil
	}
	byID := func(i int64) *table.Snapshot { return meta.SnapshotByID(i) }
	for name, ref := range meta.Refs() {
		for id, branch := range out {
			if name != branch && table.IsAncestorOf(ref.SnapshotID, id, byID) {
				delete(out, id)
			}
		}
	}
	staged := make(map[int64]bool, len(out))
	for id := range out {
		staged[id] = true
	}
	return staged
}

// StagedOn returns the audit branches of the snapshots, staged and not
// published, that record runID: a run a plan staged and no one applied.
func StagedOn(meta table.Metadata, runID string) []string {
	var out []string
	for id := range Unpublished(meta) {
		s := meta.SnapshotByID(id)
		if s != nil && s.Summary.Properties[PropRunID] == runID {
			out = append(out, s.Summary.Properties[PropAuditBranch])
		}
	}
	slices.Sort(out)
	return out
}

// FindAll returns every snapshot of the table that records runID, oldest
// first: one for a run committed whole, one a batch for a run committed in
// batches.
func FindAll(meta table.Metadata, runID string) []table.Snapshot {
	var out []table.Snapshot
	staged := Unpublished(meta)
	for _, s := range meta.Snapshots() {
		if s.Summary != nil && s.Summary.Properties[PropRunID] == runID && !staged[s.SnapshotID] {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b table.Snapshot) int { return cmp.Compare(a.SequenceNumber, b.SequenceNumber) })
	return out
}

// Entry is one snapshot of a table's history, with the run that made it
// where lakeswap did.
type Entry struct {
	SnapshotID  int64                `json:"snapshot_id,string"`
	ParentID    *int64               `json:"parent_id,omitempty,string"`
	Time        time.Time            `json:"time"`
	Operation   string               `json:"operation"`
	Current     bool                 `json:"current"`
	RunID       string               `json:"run_id,omitempty"`
	Partitions  []string             `json:"partitions,omitempty"` // column=value
	Rows        int64                `json:"rows,omitempty"`
	Sums        map[string]exact.Sum `json:"sums,omitempty"`
	Fingerprint string               `json:"fingerprint,omitempty"`
	Source      string               `json:"source,omitempty"`
	Batch       string               `json:"batch,omitempty"` // "2/6" for a run committed in batches
	// AuditBranch is the plan's branch the snapshot was staged on, for
	// people to query before approving it; Staged says main never held it
	// (the plan waits, or was discarded).
	AuditBranch string `json:"audit_branch,omitempty"`
	Staged      bool   `json:"staged,omitempty"`
	// Release names the tables of the release the run committed as one,
	// its own included.
	Release []string `json:"release,omitempty"`
	// Restated is the run's decision to change frozen partitions.
	Restated *Restatement `json:"restated_frozen,omitempty"`
	// LateDecision is what the run did with rows that arrived late.
	LateDecision *LateDecision `json:"late_decision,omitempty"`
	// TableRows are the rows of the whole table at this snapshot, as the
	// snapshot's summary counts them (Iceberg's total-records); nil where
	// it does not count them, or where delete files make the count of rows
	// a reader sees unknown from the summary alone.
	TableRows *int64 `json:"table_rows,omitempty"`
	// Problem says why the run's record could not be read whole (its run
	// file missing or changed): the entry shows what the summary holds.
	Problem string `json:"problem,omitempty"`
}

// entryOf describes a snapshot for history, without its run.
func entryOf(s table.Snapshot) Entry {
	e := Entry{SnapshotID: s.SnapshotID, ParentID: s.ParentSnapshotID, Time: time.UnixMilli(s.TimestampMs).UTC()}
	if s.Summary != nil {
		e.Operation = string(s.Summary.Operation)
		e.TableRows = tableRows(s.Summary.Properties)
	}
	return e
}

// tableRows reads a snapshot summary's count of the table's rows.
func tableRows(p map[string]string) *int64 {
	n, err := strconv.ParseInt(p["total-records"], 10, 64)
	if err != nil {
		return nil
	}
	for _, k := range []string{"total-equality-deletes", "total-position-deletes"} {
		if d, err := strconv.ParseInt(p[k], 10, 64); err == nil && d > 0 {
			return nil // deleted rows are not known from counts alone
		}
	}
	return &n
}
