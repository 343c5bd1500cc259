package runrecord

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/lakeswap/lakeswap/internal/exact"
)

// A table's metadata.json carries every snapshot's summary, and every
// Iceberg reader downloads and parses it for every query, and every commit
// rewrites it. A run of years of daily partitions would add each
// partition's value and fingerprint to it, for as long as the snapshot is
// kept. So a record whose per-partition detail is larger than InlineDetail
// keeps in the summary only what is bounded (the run id, counts, sums, the
// run's fingerprint, what it replaced) and the address and SHA-256 of a
// run file, content-addressed under the table's location, that holds the
// rest: written before the commit, read back (and checked against its
// SHA-256) by history, status, verify and rollback. gc keeps a run file as
// long as a snapshot names it, and removes one named by none once older
// than its grace (a commit whose outcome was never settled, an expired
// snapshot's).

// Summary properties of a record whose detail is in a run file.
const (
	PropRunFile        = "lakeswap.run-file"
	PropRunFileSHA     = "lakeswap.run-file-sha256"
	PropPartitionCount = "lakeswap.partition-count"
)

// InlineDetail is the most bytes of per-partition detail (as JSON) a
// snapshot summary holds itself: a daily run of a few partitions.
const InlineDetail = 1024

// detail is the part of a record that grows with its partitions and
// inputs: what a run file holds.
type detail struct {
	// RunID, Batch and Base make the file the run's own, and Commit the
	// commit attempt's (random): no two runs, nor two attempts of one run
	// (two processes applying one plan), share a file, so an attempt that
	// does not land removes its own and never another's.
	RunID           string                          `json:"run_id"`
	Commit          string                          `json:"commit"`
	Batch           string                          `json:"batch,omitempty"`
	Base            *int64                          `json:"base_snapshot_id,omitempty"`
	Partitions      []string                        `json:"partitions"`
	PartitionHashes map[string]string               `json:"partition_fingerprints"`
	Unchanged       []string                        `json:"unchanged,omitempty"`
	Carried         []string                        `json:"carried,omitempty"`
	Reconciled      map[string]map[string]exact.Sum `json:"reconciled,omitempty"`
	Late            map[string]int64                `json:"late,omitempty"`
	Inputs          []Input                         `json:"inputs,omitempty"`
	Checks          []string                        `json:"checks,omitempty"`
}

// detailProps are the summary properties a run file replaces.
var detailProps = []string{PropPartitions, PropPartitionValues, PropPartitionHashes, PropUnchanged, PropCarried, PropReconciled, PropLate, PropInputs, PropChecks}

// RunFilePath is where a run file of the given SHA-256 lies under a
// table's location.
func RunFilePath(location, sum string) string {
	return strings.TrimSuffix(location, "/") + "/lakeswap/runs/" + sum + ".json"
}

// Summary is the record as snapshot summary properties for a table at
// location. When its detail is too large for the summary, body is the run
// file to write at path before the commit, which the properties name.
func (r Record) Summary(location string) (props iceberg.Properties, path string, body []byte) {
	props = r.Properties()
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	d := detail{RunID: r.RunID, Commit: hex.EncodeToString(nonce[:]), Batch: r.Batch, Base: r.BaseSnapshotID, Partitions: r.Partitions, PartitionHashes: r.PartitionHashes, Unchanged: r.Unchanged, Carried: r.Carried,
		Reconciled: r.Reconciled, Late: r.Late, Inputs: r.Inputs, Checks: r.Checks}
	body, _ = json.Marshal(d)
	if len(body) <= InlineDetail {
		return props, "", nil
	}
	for _, k := range detailProps {
		delete(props, k)
	}
	sum := sha256.Sum256(body)
	hexSum := hex.EncodeToString(sum[:])
	path = RunFilePath(location, hexSum)
	props[PropRunFile], props[PropRunFileSHA] = path, hexSum
	props[PropPartitionCount] = strconv.Itoa(len(r.Partitions))
	return props, path, body
}

// WriteRunFile writes a record's run file (Summary), if it has one,
// through fsys, the IO of the commit (which removes what it wrote should
// the commit not land). A file already there with the same bytes (an
// earlier attempt of the same run) is left as it is, never rewritten in
// place.
func WriteRunFile(fsys icebergio.IO, path string, body []byte) error {
	if path == "" {
		return nil
	}
	sum := sha256.Sum256(body)
	if _, err := readRunFile(fsys, path, hex.EncodeToString(sum[:]), ""); err == nil {
		return nil
	}
	w, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("write run file %s: the table's file IO cannot write", path)
	}
	if err := w.WriteFile(path, body); err != nil {
		return fmt.Errorf("write run file %s: %w", path, err)
	}
	return nil
}

// Loader reads run records with their run files through a table's IO,
// each run file once.
type Loader struct {
	FS   icebergio.IO
	read map[string]detail
}

// NewLoader reads the run records of a table whose files fsys reads.
func NewLoader(fsys icebergio.IO) *Loader { return &Loader{FS: fsys, read: map[string]detail{}} }

// Read reads the record a snapshot's summary holds, its detail from its
// run file where the summary names one; ok is false for a snapshot
// lakeswap did not commit. A run file that is missing, or whose SHA-256 is
// not the recorded one, is an error: the record is not what was committed.
func (l *Loader) Read(props map[string]string) (Record, bool, error) {
	r, ok := Read(props)
	path := props[PropRunFile]
	if !ok || path == "" {
		return r, ok, nil
	}
	d, seen := l.read[path]
	if !seen {
		var err error
		if d, err = readRunFile(l.FS, path, props[PropRunFileSHA], r.RunID); err != nil {
			return r, true, fmt.Errorf("run %s: %w", r.RunID, err)
		}
		l.read[path] = d
	}
	r.Partitions, r.PartitionHashes, r.Unchanged, r.Carried = d.Partitions, d.PartitionHashes, d.Unchanged, d.Carried
	r.Reconciled, r.Late, r.Inputs, r.Checks = d.Reconciled, d.Late, d.Inputs, d.Checks
	return r, true, nil
}

// Snapshot reads the record of a snapshot, as Read.
func (l *Loader) Snapshot(s *table.Snapshot) (Record, bool, error) {
	if s == nil || s.Summary == nil {
		return Record{}, false, nil
	}
	return l.Read(s.Summary.Properties)
}

func readRunFile(fsys icebergio.IO, path, want, runID string) (detail, error) {
	var d detail
	f, err := fsys.Open(path)
	if err != nil {
		return d, fmt.Errorf("read its run file: %w", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, 1<<30))
	if err != nil {
		return d, fmt.Errorf("read its run file %s: %w", path, err)
	}
	sum := sha256.Sum256(body)
	if got := hex.EncodeToString(sum[:]); got != want {
		return d, fmt.Errorf("its run file %s has SHA-256 %s, the snapshot recorded %s: it is not what the run wrote", path, got, want)
	}
	// Fields a later lakeswap adds are left unread, as summary
	// properties are.
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&d); err != nil {
		return d, fmt.Errorf("its run file %s: %w", path, err)
	}
	if runID != "" && d.RunID != runID {
		return d, fmt.Errorf("its run file %s is run %s's", path, d.RunID)
	}
	return d, nil
}

// Entry describes a snapshot for history, its record read as Read; one
// whose run file cannot be read says so (Problem).
func (l *Loader) Entry(s table.Snapshot) Entry {
	e := entryOf(s)
	r, ok, err := l.Snapshot(&s)
	if !ok {
		return e
	}
	if err != nil {
		e.Problem = err.Error()
	}
	e.RunID, e.Partitions, e.Rows, e.Sums, e.Fingerprint, e.Source, e.Batch = r.RunID, r.Keys(), r.Rows, maps.Clone(r.Sums), r.Fingerprint, r.Source, r.Batch
	e.Release, e.Restated, e.LateDecision = r.Release, r.Restated, r.LateDecision
	if s.Summary != nil {
		e.AuditBranch = s.Summary.Properties[PropAuditBranch]
	}
	return e
}
