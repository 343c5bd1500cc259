package keysort_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/lakeswap/lakeswap/verify/internal/keysort"
)

type kv struct {
	key string
	val uint64
}

// sorted adds entries to s and returns what it reads back.
func sorted(t *testing.T, s *keysort.Sorter, in []kv) []kv {
	t.Helper()
	for _, e := range in {
		if err := s.Add([]byte(e.key), e.val); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Sorted(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []kv
	for it.Next() {
		out = append(out, kv{string(it.Key()), it.Val()})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func want(in []kv) []kv {
	w := slices.Clone(in)
	slices.SortFunc(w, func(a, b kv) int {
		if c := bytes.Compare([]byte(a.key), []byte(b.key)); c != 0 {
			return c
		}
		return cmp.Compare(a.val, b.val)
	})
	return w
}

// Entries past the budget are written as runs, more runs than are merged
// at once, and read back in the order an in-memory sort gives, duplicates
// and empty keys included; Close leaves no file behind.
func TestSortPastMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var in []kv
	for i := range 100_000 {
		key := fmt.Sprintf("k%d", r.IntN(50_000))
		switch i % 1000 {
		case 0:
			key = ""
		case 1:
			key = "\x00\xff"
		}
		in = append(in, kv{key, r.Uint64() % 3})
	}
	dir := t.TempDir()
	s := keysort.NewSmall(dir, 32<<10)
	got := sorted(t, s, in)
	if !slices.Equal(got, want(in)) {
		t.Fatalf("sorted past memory: %d entries read back differ from an in-memory sort of %d", len(got), len(in))
	}
	if s.Written == 0 {
		t.Fatal("no run was written: the test does not reach the merge")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Fatalf("Close left %d entries in the folder", len(left))
	}
}

// Past several rounds of merging runs into longer ones (hundreds of
// runs), the entries still read back in order, and the disk written stays
// a few times the entries' size: a merge never reads back what it writes.
func TestSortPastManyMerges(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var in []kv
	for range 60_000 {
		in = append(in, kv{fmt.Sprintf("%08x", r.Uint32()), r.Uint64()})
	}
	s := keysort.NewSmall(t.TempDir(), 4<<10) // a run every 100 entries or so
	defer s.Close()
	got := sorted(t, s, in)
	if !slices.Equal(got, want(in)) {
		t.Fatalf("%d entries read back differ from an in-memory sort of %d", len(got), len(in))
	}
	// Each entry is 17 bytes on disk; the runs are written once, and most
	// of them once more as they are merged into longer ones.
	if size := int64(len(in) * 17); s.Written < size*3/2 || s.Written > 3*size {
		t.Errorf("wrote %d bytes for %d bytes of entries: want one round of writing and one of merging", s.Written, size)
	}
}

// Entries within the budget never touch the disk.
func TestSortInMemory(t *testing.T) {
	in := []kv{{"b", 1}, {"a", 2}, {"b", 0}, {"", 5}}
	dir := t.TempDir()
	s := keysort.New(dir, 0)
	defer s.Close()
	if got := sorted(t, s, in); !slices.Equal(got, want(in)) {
		t.Fatalf("got %v, want %v", got, want(in))
	}
	if s.Written != 0 {
		t.Fatalf("wrote %d bytes for four entries", s.Written)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("made %d entries on disk", len(left))
	}
	empty := keysort.New(dir, 0)
	if got := sorted(t, empty, nil); len(got) != 0 {
		t.Fatalf("an empty sorter read %v", got)
	}
}

// A folder that cannot be written is an error naming it, not a panic or
// a silent loss of entries.
func TestSortUnwritableFolder(t *testing.T) {
	dir := t.TempDir() + "/missing/deeper"
	s := keysort.NewSmall(dir, 1)
	err := s.Add([]byte("a"), 1)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("missing")) {
		t.Fatalf("got %v, want an error naming the folder", err)
	}
}
