package swap

import (
	"context"
	"fmt"
	"hash/maphash"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// movedKeyExamples is how many keys a moved-records finding names.
const movedKeyExamples = 5

// moved finds records the run stages that the table holds today in a
// partition the run does not declare. It applies where the grain leaves
// out the partition column (one row per order_id, partitioned by
// order_date): the grain is then unique across the table, and a key found
// in another partition is a record that moved, by a late correction, say.
// Replacing only its new partition would leave its old row beside the new,
// counted twice; the run must declare both. A key the run stages in two of
// its own partitions would be counted twice too, and is found on the way.
// Where no other partition holds files, the staged keys are held only for
// that second check, and only up to maxRows (0: any number); past it the
// check is left to verify --table, and skipped says so.
func moved(ctx context.Context, fsys icebergio.IO, c *contract.Contract, plan *run, all map[string][]iceberg.DataFile, maxRows int64) (out []verify.Finding, skipped string, err error) {
	if len(c.Grain) == 0 || c.Partition.InGrain(c.Grain) {
		return nil, "", nil
	}
	declared := map[string]bool{}
	var rows int64
	for _, pp := range plan.Partitions {
		declared[pp.Value] = true
		rows += pp.Fingerprint.Rows
	}
	var others []string
	for v, files := range all {
		if !declared[v] && len(files) > 0 {
			others = append(others, v)
		}
	}
	if len(others) == 0 && (len(plan.Partitions) < 2 || maxRows > 0 && rows > maxRows) {
		if len(plan.Partitions) >= 2 {
			skipped = fmt.Sprintf("the grain across the run's %s partitions was not checked: its %s rows' keys would not fit in half the memory limit; `lakeswap verify --table %s` checks the table after the commit", words.Number(len(plan.Partitions)), words.Number(rows), plan.Table)
		}
		return nil, skipped, nil // no record can live anywhere else
	}
	if len(others) == 0 {
		out, err := stagedTwice(ctx, fsys, c, plan)
		return out, "", err
	}
	sort.Strings(others)
	seed := verify.GrainSeed()
	staged, out, err := stagedKeys(ctx, fsys, c, plan)
	if err != nil {
		return nil, "", err
	}
	if staged.len() == 0 {
		return out, "", nil
	}
	for _, v := range others {
		var keys []string
		n := 0
		for _, df := range all[v] {
			if df.ContentType() != iceberg.EntryContentData {
				continue
			}
			err := snapshot.EachKey(ctx, fsys, c, df.FilePath(), seed, func(h uint64, key func() string) {
				if staged.has(h) {
					n++
					if len(keys) < movedKeyExamples {
						keys = append(keys, key())
					}
				}
			})
			if err != nil {
				return nil, "", fmt.Errorf("read %s: %w", df.FilePath(), err)
			}
		}
		if n > 0 {
			part := verify.DisplayKey(c.Partition.Key(v))
			out = append(out, verify.Finding{Kind: verify.KindMoved, Partition: c.Partition.Key(v),
				Message: fmt.Sprintf("%s this run stages live today in %s, which the run does not declare (%s): they moved; declare %s too, or the table would hold them twice",
					words.Count(n, "record"), part, strings.Join(keys, "; "), part)})
		}
	}
	return out, "", nil
}

// stagedKeys is the grain keys a plan stages, by hash: the hashes kept as
// its partitions were staged where they answer (keptKeys), else as
// readStagedKeys finds them, with the keys staged in two partitions named.
func stagedKeys(ctx context.Context, fsys icebergio.IO, c *contract.Contract, plan *run) (keySet, []verify.Finding, error) {
	if staged, ok := keptKeys(plan); ok {
		return staged, nil, nil
	}
	return readStagedKeys(ctx, fsys, c, plan)
}

// readStagedKeys reads the grain keys of every file a plan stages, by
// hash, with the index of the partition that stages each, and names the
// keys staged in two of the plan's partitions, which the table would hold
// twice.
func readStagedKeys(ctx context.Context, fsys icebergio.IO, c *contract.Contract, plan *run) (keySet, []verify.Finding, error) {
	seed := verify.GrainSeed() // as the kept hashes, and moved's reads
	staged := map[uint64]int{} // key hash -> staged partition index
	twice := map[int]map[int][]string{}
	for i, pp := range plan.Partitions {
		for _, f := range pp.NewFiles {
			err := snapshot.EachKey(ctx, fsys, c, f.Path, seed, func(h uint64, key func() string) {
				j, seen := staged[h]
				if !seen {
					staged[h] = i
					return
				}
				if j != i {
					if twice[j] == nil {
						twice[j] = map[int][]string{}
					}
					twice[j][i] = append(twice[j][i], key())
				}
			})
			if err != nil {
				return nil, nil, fmt.Errorf("read staged file %s: %w", f.Path, err)
			}
		}
	}
	var out []verify.Finding
	for j, pp := range plan.Partitions {
		for i := range plan.Partitions {
			keys := twice[j][i]
			if len(keys) == 0 {
				continue
			}
			a, b := verify.DisplayKey(pp.Key), verify.DisplayKey(plan.Partitions[i].Key)
			out = append(out, verify.Finding{Kind: verify.KindDuplicateGrain, Partition: plan.Partitions[i].Key,
				Message: fmt.Sprintf("%s the run stages in %s are staged in %s too (%s): the table would hold them twice; each record belongs to one partition",
					words.Count(len(keys), "record"), a, b, strings.Join(keys[:min(len(keys), movedKeyExamples)], "; "))})
		}
	}
	return keyMap(staged), out, nil
}

// keySet is the staged keys, by hash: gathered from the kept hashes
// (hashSet) or from the staged files (keyMap).
type keySet interface {
	has(h uint64) bool
	len() int
}

// keyMap is the staged keys read from the staged files: hash to the index
// of the partition that stages the key.
type keyMap map[uint64]int

func (m keyMap) has(h uint64) bool {
	_, ok := m[h]
	return ok
}

func (m keyMap) len() int { return len(m) }

// movedInto judges again, at commit time, what the commits since the
// plan's base added outside its partitions: a record one of them brought
// into another partition that this run stages too would be in two
// partitions once the run commits, counted twice. It names the first such
// record, the snapshot and both partitions, or says "". The keys of what
// was added (a daily job's commit, small) are held; the staged keys
// stream past them. The run's own earlier batches are its own.
func movedInto(ctx context.Context, fsys icebergio.IO, c *contract.Contract, plan *run, added []snapshot.Added) (string, error) {
	ours := map[string][]string{}
	for _, pp := range plan.Partitions {
		ours[pp.Key] = filePaths(pp.NewFiles)
	}
	return snapshot.KeysAddedElsewhere(ctx, fsys, c, plan.RunID, ours, added, "this run stages")
}

// exchanges finds the declared partitions that exchange records within the
// run: a grain key the base holds in one of them that the run stages in
// another moved between them. Committed in separate batches, the snapshot
// between would hold the record in both, or in neither. It returns the
// groups (connected by such moves, each of two or more values, in order).
// It holds a hash of every key the base holds in the declared partitions.
func exchanges(ctx context.Context, fsys icebergio.IO, c *contract.Contract, plan *run) ([][]string, error) {
	if len(c.Grain) == 0 || c.Partition.InGrain(c.Grain) || len(plan.Partitions) < 2 {
		return nil, nil
	}
	seed := maphash.MakeSeed()
	old := map[uint64]int{} // key hash -> partition index at the base
	shared := map[string]bool{}
	for i, pp := range plan.Partitions {
		// A rewritten file's keys are taken for the first partition that
		// holds rows of it: every such partition commits in one batch.
		for _, path := range append(filePaths(pp.OldFiles), pp.OldShares...) {
			if shared[path] {
				continue
			}
			shared[path] = true
			if err := snapshot.EachKey(ctx, fsys, c, path, seed, func(h uint64, _ func() string) { old[h] = i }); err != nil {
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
		}
	}
	if len(old) == 0 {
		return nil, nil
	}
	parent := make([]int, len(plan.Partitions))
	for i := range parent {
		parent[i] = i
	}
	root := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i, pp := range plan.Partitions {
		for _, f := range pp.NewFiles {
			err := snapshot.EachKey(ctx, fsys, c, f.Path, seed, func(h uint64, _ func() string) {
				if j, ok := old[h]; ok && j != i {
					if a, b := root(i), root(j); a != b {
						parent[max(a, b)] = min(a, b)
					}
				}
			})
			if err != nil {
				return nil, fmt.Errorf("read staged file %s: %w", f.Path, err)
			}
		}
	}
	members := map[int][]string{}
	for i, pp := range plan.Partitions {
		r := root(i)
		members[r] = append(members[r], pp.Value)
	}
	var out [][]string
	for i := range plan.Partitions {
		if g := members[i]; len(g) > 1 {
			out = append(out, g)
		}
	}
	return out, nil
}

// keptBudget bounds the grain hashes a run keeps across its partitions
// (8 bytes a row) by the keys it may hold (Request.KeysMaxRows): past it
// no partition keeps them, and the checks read the staged files, which
// skip the check where nothing else holds files, as before hashes were
// kept.
type keptBudget struct {
	max int64 // 0: no bound
	n   atomic.Int64
}

// take counts a staged partition's kept hashes, and drops them past the
// bound.
func (b *keptBudget) take(pp *PartitionPlan) {
	if b.max > 0 && b.n.Add(int64(len(pp.grainHashes))) > b.max {
		pp.grainHashes = nil
	}
}

// settle drops every partition's kept hashes once the run went past the
// bound: the checks then read the files of every one.
func (b *keptBudget) settle(plan *run) {
	if b.max > 0 && b.n.Load() > b.max {
		for i := range plan.Partitions {
			plan.Partitions[i].grainHashes = nil
		}
	}
}

// keepKeys makes a partition's accumulator keep its grain hashes where the
// run checks keys across partitions: where the grain leaves out the
// partition column.
func keepKeys(acc *verify.Accumulator, c *contract.Contract) {
	if len(c.Grain) > 0 && !c.Partition.InGrain(c.Grain) {
		acc.KeepGrainHashes()
	}
}

// stagedTwice names the keys a plan stages in two of its partitions: none
// when the kept grain hashes hold no hash twice (no file read), else as
// readStagedKeys finds them in the staged files.
func stagedTwice(ctx context.Context, fsys icebergio.IO, c *contract.Contract, plan *run) ([]verify.Finding, error) {
	if keptDistinct(plan) {
		return nil, nil
	}
	_, out, err := readStagedKeys(ctx, fsys, c, plan)
	return out, err
}

// keptDistinct reports whether every partition that stages files kept its
// grain hashes and no hash is kept twice.
func keptDistinct(plan *run) bool {
	_, ok := keptKeys(plan)
	return ok
}

// kept reports whether every partition that stages files kept its grain
// hashes while it was staged in this process, and how many they are.
func kept(plan *run) (int, bool) {
	n := 0
	for _, pp := range plan.Partitions {
		if len(pp.NewFiles) > 0 && pp.grainHashes == nil {
			return 0, false
		}
		n += len(pp.grainHashes)
	}
	return n, true
}

// keptKeys is the staged keys from the grain hashes kept as the partitions
// were staged, with no file read: it answers when every partition kept
// them and no hash is kept twice, in two partitions or in one (a key
// staged twice is named from the files, which tell it from two keys of
// one hash).
func keptKeys(plan *run) (*hashSet, bool) {
	if _, ok := kept(plan); !ok {
		return nil, false
	}
	parts := make([][]uint64, len(plan.Partitions))
	for i, pp := range plan.Partitions {
		parts[i] = pp.grainHashes
	}
	set, distinct := newHashSet(parts)
	return set, distinct
}
