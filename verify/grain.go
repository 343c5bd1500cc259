package verify

import (
	"cmp"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// grainSet finds rows whose grain repeats an earlier row's. It keeps each
// row's grain hashed to 128 bits with the row number (24 bytes a row), in
// chunks, and looks for repeats once at the end: for millions of rows that
// is several times faster than a map and half the memory.
type grainSet struct {
	chunks [][]grainKey
	n      int
	ints   bool // keys come from addInt: h2 is the grain's value
}

type grainKey struct {
	h1, h2 uint64
	row    int64
}

// dup is a row whose grain repeats the grain of row first; value is the
// grain itself where the set's keys come from addInt.
type dup struct {
	row, first int64
	value      int64
}

// grainSeeds are per process: keys are compared only within one set, never
// stored, so they need not be stable across runs.
var grainSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// grainChunk is how many keys a chunk holds: growing one large slice would
// copy it over and over.
const grainChunk = 64 << 10

// add records the canonical encoding of a row's grain, and returns its
// first hash (GrainSeed's).
func (g *grainSet) add(grain []byte, row int64) uint64 {
	h := maphash.Bytes(grainSeeds[0], grain)
	g.push(grainKey{h, maphash.Bytes(grainSeeds[1], grain), row})
	return h
}

// GrainSeed is the seed with which a KeyHasher hashes a grain as an
// Accumulator that keeps grain hashes does (KeepGrainHashes): the keys of
// files staged in this process can be compared with the keys of files read.
func GrainSeed() maphash.Seed { return grainSeeds[0] }

// addInt records a grain that is one integer: the value itself is the
// second key, so equal keys are equal grains with no hashing; the first is
// the value mixed, to spread the buckets. A set takes add or addInt, never
// both.
func (g *grainSet) addInt(v int64, row int64) {
	g.ints = true
	g.push(grainKey{uint64(v) * 0x9E3779B97F4A7C15, uint64(v), row})
}

// chunkPool recycles chunks between partitions: a backfill stages many, and
// fresh chunks cost zeroing and collection.
var chunkPool = sync.Pool{New: func() any { return make([]grainKey, 0, grainChunk) }}

// intsDistinct reports whether no integer grain repeats, found by marking
// each in a bitmap over their range when that range is dense enough (at most
// 64 values a row, so at most 8 bytes a row), as surrogate and order keys
// are: the bitmap stays in cache where scattering the keys would not. False
// means the grains repeat or the range is too sparse to tell this way.
func (g *grainSet) intsDistinct() bool {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, c := range g.chunks {
		for _, k := range c {
			lo, hi = min(lo, int64(k.h2)), max(hi, int64(k.h2))
		}
	}
	span := uint64(hi) - uint64(lo) // the range, without signed overflow
	if span/64 >= uint64(g.n) {
		return false
	}
	seen := make([]uint64, span/64+1)
	for _, c := range g.chunks {
		for _, k := range c {
			i := k.h2 - uint64(lo)
			w, bit := i/64, uint64(1)<<(i%64)
			if seen[w]&bit != 0 {
				return false
			}
			seen[w] |= bit
		}
	}
	return true
}

// release returns the set's chunks to the pool.
func (g *grainSet) release() {
	for _, c := range g.chunks {
		chunkPool.Put(c[:0])
	}
	g.chunks = nil
}

// keyPool and int32Pool recycle the scratch of duplicates, as chunkPool
// does the chunks.
var keyPool, int32Pool sync.Pool

// scratch returns a slice from pool, or nil when it is empty.
func scratch[T any](pool *sync.Pool) []T {
	if s, ok := pool.Get().(*[]T); ok {
		return *s
	}
	return nil
}

func (g *grainSet) push(k grainKey) {
	if n := len(g.chunks); n == 0 || len(g.chunks[n-1]) == cap(g.chunks[n-1]) {
		g.chunks = append(g.chunks, chunkPool.Get().([]grainKey)[:0])
	}
	last := &g.chunks[len(g.chunks)-1]
	*last = append(*last, k)
	g.n++
}

// duplicates returns every row whose grain an earlier row has, in no
// particular order. The keys are scattered by the top bits of h1 into about
// one bucket a key (one counting pass, one stable scatter); only keys in the
// same bucket can be equal, and buckets hold one or two keys but for real
// repeats, so a bucket is searched directly, or sorted when large.
func (g *grainSet) duplicates() []dup {
	if g.n < 2 || g.ints && g.intsDistinct() {
		g.release()
		return nil
	}
	width := bits.Len(uint(g.n - 1)) // 2^width >= n buckets
	shift := 64 - width
	start := grow(scratch[int32](&int32Pool), 1<<width+1)
	clear(start)
	defer int32Pool.Put(&start)
	for _, c := range g.chunks {
		for _, k := range c {
			start[k.h1>>shift+1]++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	keys := grow(scratch[grainKey](&keyPool), g.n)
	defer keyPool.Put(&keys)
	next := grow(scratch[int32](&int32Pool), len(start)-1)
	defer int32Pool.Put(&next)
	copy(next, start)
	for _, c := range g.chunks {
		for _, k := range c {
			b := k.h1 >> shift
			keys[next[b]] = k
			next[b]++
		}
	}
	g.release()
	var out []dup
	for b := 0; b+1 < len(start); b++ {
		bucket := keys[start[b]:start[b+1]]
		switch {
		case len(bucket) < 2:
		case len(bucket) <= 16:
			// Stable scatter keeps a bucket in row order: the first equal
			// key found before i is the earliest row.
			for i := 1; i < len(bucket); i++ {
				for j := 0; j < i; j++ {
					if bucket[j].h1 == bucket[i].h1 && bucket[j].h2 == bucket[i].h2 {
						out = append(out, dup{bucket[i].row, bucket[j].row, int64(bucket[i].h2)})
						break
					}
				}
			}
		default:
			slices.SortStableFunc(bucket, func(x, y grainKey) int {
				if c := cmp.Compare(x.h1, y.h1); c != 0 {
					return c
				}
				return cmp.Compare(x.h2, y.h2)
			})
			first := 0
			for i := 1; i < len(bucket); i++ {
				if bucket[i].h1 != bucket[first].h1 || bucket[i].h2 != bucket[first].h2 {
					first = i
					continue
				}
				out = append(out, dup{bucket[i].row, bucket[first].row, int64(bucket[i].h2)})
			}
		}
	}
	return out
}
