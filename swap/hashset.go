package swap

import (
	"math/bits"
	"slices"
)

// hashSet holds grain hashes grouped by their top bits, each group sorted:
// a count and a scatter over the hashes, then sorts of groups of four to
// eight. Grain hashes are seeded (verify.GrainSeed), so the groups are
// even. A million hashes in 30 partitions: 41 to 46 ms, against 99 ms for
// one sort of them all (BenchmarkHashSet); it holds 9 to 10 bytes a hash,
// a map of them two to three times that. Groups of about two, or of 16 to
// 128, were slower.
type hashSet struct {
	shift  uint
	start  []int // group g holds hashes[start[g]:start[g+1]]
	hashes []uint64
}

// maxGroupBits bounds the groups at 2^20 (8 MiB of starts, twice that
// while the set is built).
const maxGroupBits = 20

// newHashSet gathers the hashes of every part, and reports whether no
// hash is in it twice.
func newHashSet(parts [][]uint64) (*hashSet, bool) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	// Four to eight hashes a group, more past 2^23 hashes.
	b := min(max(bits.Len(uint(n))-3, 1), maxGroupBits)
	s := &hashSet{shift: uint(64 - b), start: make([]int, 1<<b+1), hashes: make([]uint64, n)}
	for _, p := range parts {
		for _, h := range p {
			s.start[h>>s.shift+1]++
		}
	}
	for g := 1; g < len(s.start); g++ {
		s.start[g] += s.start[g-1]
	}
	next := slices.Clone(s.start[:len(s.start)-1])
	for _, p := range parts {
		for _, h := range p {
			g := h >> s.shift
			s.hashes[next[g]] = h
			next[g]++
		}
	}
	distinct := true
	for g := range len(s.start) - 1 {
		group := s.hashes[s.start[g]:s.start[g+1]]
		slices.Sort(group)
		for i := 1; distinct && i < len(group); i++ {
			distinct = group[i] != group[i-1]
		}
	}
	return s, distinct
}

// has reports whether h is in the set.
func (s *hashSet) has(h uint64) bool {
	g := h >> s.shift
	_, ok := slices.BinarySearch(s.hashes[s.start[g]:s.start[g+1]], h)
	return ok
}

// len is how many hashes the set holds.
func (s *hashSet) len() int { return len(s.hashes) }
