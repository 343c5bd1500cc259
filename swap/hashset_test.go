package swap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHashSet: the set holds exactly the hashes it was given, across
// parts, and tells a repeated hash (in one part or two) from none, for
// sizes that make one group and for many groups, hashes at both ends of
// the range included.
func TestHashSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 17, 1000, 100_000} {
		all := make([]uint64, n)
		for i := range all {
			all[i] = rng.Uint64()
		}
		if n > 2 {
			all[0], all[1] = 0, ^uint64(0)
		}
		parts := [][]uint64{all[:n/3], nil, all[n/3:]}
		set, distinct := newHashSet(parts)
		if !distinct || set.len() != n {
			t.Fatalf("%d distinct hashes: distinct %v, len %d", n, distinct, set.len())
		}
		for _, h := range all {
			if !set.has(h) {
				t.Fatalf("%d hashes: %x given but not held", n, h)
			}
		}
		for range 1000 {
			if h := rng.Uint64(); set.has(h) != slices.Contains(all, h) {
				t.Fatalf("%d hashes: has(%x) is %v", n, h, !slices.Contains(all, h))
			}
		}
		if n < 2 {
			continue
		}
		// A hash again, in another part, then in the same one: one from
		// the middle, and the smallest and largest there are (each the
		// first of its group).
		for _, dup := range []uint64{all[n/2], all[0], all[1]} {
			if _, distinct := newHashSet(append(slices.Clone(parts), []uint64{dup})); distinct {
				t.Errorf("%d hashes and %x again in another part: taken for distinct", n, dup)
			}
			again := append(slices.Clone(all), dup)
			if _, distinct := newHashSet([][]uint64{again}); distinct {
				t.Errorf("%d hashes and %x again in the same part: taken for distinct", n, dup)
			}
		}
	}
}

// BenchmarkHashSet gathers a million grain hashes from 30 partitions and
// says whether one repeats, as the check of keys staged in two partitions
// does, against one sort of them all (what it did before).
func BenchmarkHashSet(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := make([][]uint64, 30)
	for i := range parts {
		parts[i] = make([]uint64, 1_000_000/len(parts))
		for j := range parts[i] {
			parts[i][j] = rng.Uint64()
		}
	}
	b.Run("set", func(b *testing.B) {
		for range b.N {
			if _, distinct := newHashSet(parts); !distinct {
				b.Fatal("not distinct")
			}
		}
	})
	b.Run("sort", func(b *testing.B) {
		for range b.N {
			all := slices.Concat(parts...)
			slices.Sort(all)
			for i := 1; i < len(all); i++ {
				if all[i] == all[i-1] {
					b.Fatal("not distinct")
				}
			}
		}
	})
}
