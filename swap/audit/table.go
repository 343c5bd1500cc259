package audit

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/stats"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// TableCheck is what a whole-table check found: what must hold for every
// run at once, whatever route each run took.
type TableCheck struct {
	Table      string `json:"table"`
	SnapshotID int64  `json:"snapshot_id,string"`
	Partitions int    `json:"partitions"`
	Files      int    `json:"files"`
	Rows       int64  `json:"rows"`
	// Manifests are the manifests whose partition summaries were checked,
	// and their data files' statistics with them.
	Manifests int `json:"manifests"`
	// Runs are the lakeswap runs whose partitions the snapshot still holds
	// as they committed them, each with its recorded fingerprints checked.
	Runs     []RunCheck       `json:"runs,omitempty"`
	Findings []verify.Finding `json:"findings,omitempty"`
	OK       bool             `json:"ok"`
}

// RunCheck is one run's recorded fingerprints against what the table
// holds in the partitions it still holds as the run committed them.
type RunCheck struct {
	RunID      string   `json:"run_id"`
	SnapshotID int64    `json:"snapshot_id,string"`
	Partitions []string `json:"partitions"` // those held as committed
	OK         bool     `json:"ok"`
}

// maxTableFindings bounds the findings a table check lists.
const maxTableFindings = 100

// VerifyTable checks a snapshot of a table (main's when snapshotID is 0)
// as a whole: every referenced data file is present and readable with the
// table's schema; the grain is unique across the table (within each
// partition, and across partitions where the grain leaves out the
// partition column: a key in two partitions is counted twice); and each
// lakeswap run that main still holds, partition by partition as it
// committed it, fingerprints as it recorded; and every data file's bounds
// and counts (manifest and footer) and every manifest's partition
// summaries hold the rows they describe (stats.CheckSnapshot). It holds a hash of every key
// in memory (about 40 bytes a row). A finding is outcome.ErrVerifyFailed.
func (a Auditor) VerifyTable(ctx context.Context, ident table.Identifier, snapshotID int64) (*TableCheck, error) {
	name := strings.Join(ident, ".")
	tbl, err := a.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	}
	meta := tbl.Metadata()
	snap := meta.CurrentSnapshot()
	if snapshotID != 0 {
		snap = meta.SnapshotByID(snapshotID)
		if snap == nil {
			return nil, fmt.Errorf("snapshot %d is not in the metadata of %s", snapshotID, name)
		}
	}
	res := &TableCheck{Table: name, OK: true}
	if snap == nil {
		return res, nil // an empty table holds nothing to check
	}
	res.SnapshotID = snap.SnapshotID
	at, err := snapshot.Load(ctx, a.Catalog, ident, snap.SnapshotID)
	if err != nil {
		return nil, err
	}
	tc := &tableCheck{res: res, at: at}
	// 1. Every file read whole: present, readable, of the table's schema.
	if err := tc.files(ctx); err != nil {
		return nil, err
	}
	// 2. The grain, across the table.
	if err := tc.grain(ctx); err != nil {
		return nil, err
	}
	// 3. Each run main holds as it committed it.
	if err := tc.runs(ctx, meta, snap); err != nil {
		return nil, err
	}
	// 4. What other engines prune on: every file's bounds and counts, in
	// its manifest entry and its footer, and every manifest's partition
	// summaries, against the rows.
	rep, err := stats.CheckSnapshot(ctx, at.FS, meta, snap)
	if err != nil {
		return nil, fmt.Errorf("check the statistics of snapshot %d: %w", snap.SnapshotID, err)
	}
	res.Manifests = rep.Manifests
	for _, m := range rep.Wrong {
		for _, p := range m.Problems {
			if !p.Unread { // step 1 named it
				tc.find(p.Finding)
			}
		}
		for _, f := range m.Summaries {
			tc.find(f)
		}
	}
	if !res.OK {
		return res, &outcome.OpError{Op: "verify", Table: name, Err: fmt.Errorf("%w: snapshot %d: %s", outcome.ErrVerifyFailed, snap.SnapshotID, words.Count(len(res.Findings), "finding"))}
	}
	return res, nil
}

// CheckContract reads main's data as a contract not yet the table's would
// judge it (a grain about to be set in place): every file's rows against
// its columns, and every key against every other. The findings are what
// the contract would refuse, each naming its partition and record.
func (a Auditor) CheckContract(ctx context.Context, ident table.Identifier, c *contract.Contract) (*TableCheck, error) {
	tbl, err := a.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	res := &TableCheck{Table: strings.Join(ident, "."), OK: true}
	snap := tbl.Metadata().CurrentSnapshot()
	if snap == nil {
		return res, nil
	}
	res.SnapshotID = snap.SnapshotID
	at, err := snapshot.Load(ctx, a.Catalog, ident, snap.SnapshotID)
	if err != nil {
		return nil, err
	}
	at.Contract = c
	tc := &tableCheck{res: res, at: at}
	if err := tc.files(ctx); err != nil {
		return nil, err
	}
	for key, fp := range tc.parts {
		for col, n := range fp.NullGrain {
			tc.find(verify.Finding{Kind: verify.KindNullGrain, Partition: key, Column: col,
				Message: fmt.Sprintf("%s no %s", words.Count(n, "row has", "rows have"), col)})
		}
	}
	return res, tc.grain(ctx)
}

// tableCheck is one check of a table's snapshot.
type tableCheck struct {
	res    *TableCheck
	at     *snapshot.At
	values []string                      // the partitions, sorted
	parts  map[string]verify.Fingerprint // by key, of those read
}

// find notes a finding, listing at most maxTableFindings.
func (tc *tableCheck) find(f verify.Finding) {
	if len(tc.res.Findings) < maxTableFindings {
		tc.res.Findings = append(tc.res.Findings, f)
	}
	tc.res.OK = false
}

// files reads every partition's files whole and fingerprints it.
func (tc *tableCheck) files(ctx context.Context) error {
	at, res, c, find := tc.at, tc.res, tc.at.Contract, tc.find
	for v := range at.Live {
		tc.values = append(tc.values, v)
	}
	sort.Strings(tc.values)
	values := tc.values
	res.Partitions = len(values)
	parts := map[string]verify.Fingerprint{}
	for _, v := range values {
		key := c.Partition.Key(v)
		data := snapshot.DataPaths(at.Live[v])
		res.Files += len(data)
		fp, err := snapshot.Fingerprint(ctx, at.FS, c, v, data)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			find(verify.Finding{Kind: verify.KindCheck, Partition: key, Message: "a file the table references cannot be read: " + err.Error()})
			continue
		}
		parts[key] = fp
		res.Rows += fp.Rows
	}

	// Files of an earlier partition spec hold rows of the table too,
	// under no partition of the current spec.
	if data := dataOnly(at.Earlier); len(data) > 0 {
		res.Files += len(data)
		key := c.Partition.Key(contract.EarlierSpec)
		fp, err := snapshot.Fingerprint(ctx, at.FS, c, contract.EarlierSpec, snapshot.Paths(data))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			find(verify.Finding{Kind: verify.KindCheck, Partition: key, Message: "a file the table references cannot be read: " + err.Error()})
		} else {
			parts[key] = fp
			res.Rows += fp.Rows
		}
	}
	tc.parts = parts
	return nil
}

func dataOnly(files []iceberg.DataFile) []iceberg.DataFile {
	var out []iceberg.DataFile
	for _, f := range files {
		if f.ContentType() == iceberg.EntryContentData {
			out = append(out, f)
		}
	}
	return out
}

// grain reads every file's keys and finds each held twice, within a
// partition or across two.
func (tc *tableCheck) grain(ctx context.Context) error {
	at, c, find, values := tc.at, tc.at.Contract, tc.find, tc.values
	if len(c.Grain) > 0 {
		seed := maphash.MakeSeed()
		seen := map[uint64]string{} // key hash -> partition value
		display := func(v string) string { return verify.DisplayKey(c.Partition.Key(v)) }
		for _, v := range append(slices.Clone(values), contract.EarlierSpec) {
			files := dataOnly(at.Live[v])
			if v == contract.EarlierSpec {
				files = dataOnly(at.Earlier)
			}
			for _, df := range files {
				err := snapshot.EachKey(ctx, at.FS, c, df.FilePath(), seed, func(h uint64, key func() string) {
					other, dup := seen[h]
					if !dup {
						seen[h] = v
						return
					}
					here := display(v)
					msg := fmt.Sprintf("the record %s is twice in partition %s", key(), here)
					if other != v {
						msg = fmt.Sprintf("the record %s is in partitions %s and %s: counted twice", key(), display(other), here)
					}
					find(verify.Finding{Kind: verify.KindDuplicateGrain, Partition: c.Partition.Key(v), Message: msg})
				})
				if err != nil && ctx.Err() != nil {
					return ctx.Err()
				}
				// An unreadable file is already a finding above.
			}
		}
	}

	return nil
}

// runs checks that each run main holds from snap back holds, in the
// partitions no later commit replaced, what it recorded.
func (tc *tableCheck) runs(ctx context.Context, meta table.Metadata, snap *table.Snapshot) error {
	at, res, c, find, parts := tc.at, tc.res, tc.at.Contract, tc.find, tc.parts
	lookup := func(id int64) *table.Snapshot { return meta.SnapshotByID(id) }
	load := runrecord.NewLoader(at.FS)
	for _, s := range table.AncestorsOf(snap.SnapshotID, lookup) {
		rec, ok, err := load.Snapshot(&s)
		if err != nil {
			find(verify.Finding{Kind: verify.KindCheck, Message: err.Error()})
			continue
		}
		if !ok || rec.Fingerprint == "" {
			continue
		}
		then, err := snapshot.Files(ctx, at.FS, &s, c)
		if err != nil {
			return err
		}
		rc := RunCheck{RunID: rec.RunID, SnapshotID: s.SnapshotID, OK: true}
		for _, v := range rec.Partitions {
			if !slices.Equal(snapshot.Paths(at.Live[v]), snapshot.Paths(then[v])) {
				continue // a later commit replaced it
			}
			key := c.Partition.Key(v)
			if slices.Contains(rec.Unchanged, key) {
				continue // left as it was: an earlier commit's, checked as its
			}
			want, recorded := rec.PartitionHashes[key]
			got, read := parts[key]
			if !recorded || !read {
				continue
			}
			// Its rows among the earlier spec's files are the partition's
			// too (a scoped rollback put back a file a run rewrote).
			shares := snapshot.MayHoldAny(c, at.Earlier, v)
			if !sameSchema(s.SchemaID, snap.SchemaID) || len(shares) > 0 {
				// Recorded over the schema of its own snapshot: read so.
				wrote, err := contract.AtSnapshot(meta, &s)
				if err != nil {
					return err
				}
				if got, err = snapshot.Fingerprint(ctx, at.FS, wrote, v, snapshot.DataPaths(at.Live[v]), shares...); err != nil {
					return err
				}
			}
			rc.Partitions = append(rc.Partitions, key)
			if got.Hash != want {
				rc.OK = false
				find(verify.Finding{Kind: verify.KindCheck, Partition: key,
					Message: fmt.Sprintf("run %s (snapshot %d) recorded fingerprint %s, the partition holds %s", rec.RunID, s.SnapshotID, verify.Short(want), verify.Short(got.Hash))})
			}
		}
		if len(rc.Partitions) > 0 {
			res.Runs = append(res.Runs, rc)
		}
	}
	slices.Reverse(res.Runs) // oldest first
	return nil
}

// sameSchema says whether two snapshots were written under one schema.
func sameSchema(a, b *int) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
