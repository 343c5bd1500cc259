// Package keysort sorts keyed entries in bounded memory. Entries are held
// until they pass a budget of bytes, then sorted and written to a file of
// their own on local disk (a run); reading merges the runs with what is
// still held. Two sides of a comparison sorted this way can be walked
// together in key order holding a budget's entries and a buffer a run,
// however many entries each side has.
package keysort

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// MinBudget is the least memory a Sorter holds before it writes a run: a
// smaller budget would write a file every few entries.
const MinBudget = 1 << 20

// maxFanIn is the most runs merged at once; past it runs are merged into
// longer runs first, so that the buffers open at once stay few.
const maxFanIn = 64

// Each run's read or write buffer is the budget shared by the runs merged
// at once, within these bounds: the buffers count against the budget.
const (
	minBuf = 4 << 10
	maxBuf = 64 << 10
)

// entryBytes is what an entry costs beside its key's bytes.
const entryBytes = 24

type entry struct {
	off, n int
	val    uint64
}

// Sorter holds entries (a key and a value) until Sorted returns them in
// order of key, then value. Close removes its files.
type Sorter struct {
	parent string // where the folder of runs is made
	dir    string // made at the first run
	budget int
	arena  []byte
	ents   []entry
	runs   []string
	made   int // runs ever made, which names the next
	// Written counts the bytes written to runs: what the sort spent on
	// disk.
	Written int64
}

// New returns a Sorter that holds up to budget bytes of entries (at least
// MinBudget) and writes runs under dir ("" is the system's temporary
// folder).
func New(dir string, budget int) *Sorter {
	return &Sorter{parent: dir, budget: max(budget, MinBudget)}
}

// bufSize is a run's buffer: the budget over the runs open at once.
func (s *Sorter) bufSize() int {
	return min(max(s.budget/(2*(maxFanIn+1)), minBuf), maxBuf)
}

// Add holds key (copied) and val.
func (s *Sorter) Add(key []byte, val uint64) error {
	s.ents = append(s.ents, entry{off: len(s.arena), n: len(key), val: val})
	s.arena = append(s.arena, key...)
	if len(s.arena)+entryBytes*len(s.ents) >= s.budget {
		return s.spill()
	}
	return nil
}

func (s *Sorter) key(e entry) []byte { return s.arena[e.off : e.off+e.n] }

func (s *Sorter) sort() {
	slices.SortFunc(s.ents, func(a, b entry) int {
		if c := bytes.Compare(s.key(a), s.key(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.val, b.val)
	})
}

// spill writes the entries held, sorted, as a run, and forgets them.
func (s *Sorter) spill() error {
	s.sort()
	path, w, err := s.create()
	if err != nil {
		return err
	}
	for _, e := range s.ents {
		if err := writeEntry(w, s.key(e), e.val); err != nil {
			w.f.Close()
			return s.failed(path, err)
		}
	}
	if err := s.finish(path, w); err != nil {
		return err
	}
	s.arena, s.ents = s.arena[:0], s.ents[:0]
	return nil
}

type runWriter struct {
	f *os.File
	*bufio.Writer
	n int64
}

func (w *runWriter) Write(p []byte) (int, error) {
	n, err := w.Writer.Write(p)
	w.n += int64(n)
	return n, err
}

// create opens the next run for writing.
func (s *Sorter) create() (string, *runWriter, error) {
	if s.dir == "" {
		dir, err := os.MkdirTemp(s.parent, "lakeswap-compare-")
		if err != nil {
			return "", nil, fmt.Errorf("make a folder for the comparison's sorted keys: %w", err)
		}
		s.dir = dir
	}
	// Runs merged are removed and others made: a run's name is never
	// one taken before.
	path := filepath.Join(s.dir, fmt.Sprintf("run%06d", s.made))
	s.made++
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("write the comparison's sorted keys: %w", err)
	}
	return path, &runWriter{f: f, Writer: bufio.NewWriterSize(f, s.bufSize())}, nil
}

func (s *Sorter) finish(path string, w *runWriter) error {
	if err := w.Flush(); err != nil {
		w.f.Close()
		return s.failed(path, err)
	}
	if err := w.f.Close(); err != nil {
		return s.failed(path, err)
	}
	s.runs = append(s.runs, path)
	s.Written += w.n
	return nil
}

func (s *Sorter) failed(path string, err error) error {
	return fmt.Errorf("write the comparison's sorted keys to %s: %w (they wait on local disk; free space there or choose another folder)", path, err)
}

func writeEntry(w *runWriter, key []byte, val uint64) error {
	var hdr [binary.MaxVarintLen64]byte
	if _, err := w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(key)))]); err != nil {
		return err
	}
	if _, err := w.Write(key); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(hdr[:8], val)
	_, err := w.Write(hdr[:8])
	return err
}

// Sorted returns the entries added, in order. Add must not be called
// after it. Merging runs into longer ones stops when ctx is done.
func (s *Sorter) Sorted(ctx context.Context) (*Iter, error) {
	s.sort()
	for len(s.runs) > maxFanIn {
		if err := s.mergeRuns(ctx); err != nil {
			return nil, err
		}
	}
	return s.merge(s.runs, true)
}

// mergeRuns merges the first maxFanIn runs into one.
func (s *Sorter) mergeRuns(ctx context.Context) error {
	first := s.runs[:maxFanIn]
	it, err := s.merge(first, false)
	if err != nil {
		return err
	}
	defer it.Close()
	path, w, err := s.create()
	if err != nil {
		return err
	}
	for n := 0; it.Next(); n++ {
		if n%(1<<16) == 0 && ctx.Err() != nil {
			w.f.Close()
			return ctx.Err()
		}
		if err := writeEntry(w, it.Key(), it.Val()); err != nil {
			w.f.Close()
			return s.failed(path, err)
		}
	}
	if err := it.Err(); err != nil {
		w.f.Close()
		return err
	}
	if err := s.finish(path, w); err != nil {
		return err
	}
	s.runs = s.runs[maxFanIn:]
	for _, p := range first {
		os.Remove(p)
	}
	return nil
}

// merge reads runs, and the entries held when held is set, as one stream.
func (s *Sorter) merge(runs []string, held bool) (*Iter, error) {
	it := &Iter{}
	if held && len(s.ents) > 0 {
		it.srcs = append(it.srcs, &memSource{s: s})
	}
	for _, p := range runs {
		f, err := os.Open(p)
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("read the comparison's sorted keys: %w", err)
		}
		it.srcs = append(it.srcs, &fileSource{f: f, r: bufio.NewReaderSize(f, s.bufSize()), path: p})
	}
	for _, src := range it.srcs {
		ok, err := src.next()
		if err != nil {
			it.Close()
			return nil, err
		}
		if ok {
			it.h = append(it.h, src)
		}
	}
	heap.Init(&it.h)
	return it, nil
}

// Close removes the Sorter's runs.
func (s *Sorter) Close() error {
	s.arena, s.ents = nil, nil
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	s.dir, s.runs = "", nil
	return err
}

type source interface {
	next() (bool, error)
	key() []byte
	val() uint64
}

type memSource struct {
	s *Sorter
	i int
	e entry
}

func (m *memSource) next() (bool, error) {
	if m.i >= len(m.s.ents) {
		return false, nil
	}
	m.e = m.s.ents[m.i]
	m.i++
	return true, nil
}
func (m *memSource) key() []byte { return m.s.key(m.e) }
func (m *memSource) val() uint64 { return m.e.val }

type fileSource struct {
	f    *os.File
	r    *bufio.Reader
	path string
	k    []byte
	v    uint64
}

func (f *fileSource) next() (bool, error) {
	n, err := binary.ReadUvarint(f.r)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, f.corrupt(err)
	}
	f.k = slices.Grow(f.k[:0], int(n))[:n]
	var v [8]byte
	if _, err := io.ReadFull(f.r, f.k); err != nil {
		return false, f.corrupt(err)
	}
	if _, err := io.ReadFull(f.r, v[:]); err != nil {
		return false, f.corrupt(err)
	}
	f.v = binary.LittleEndian.Uint64(v[:])
	return true, nil
}

func (f *fileSource) corrupt(err error) error {
	return fmt.Errorf("read the comparison's sorted keys from %s: %w (was the file changed or its disk filled meanwhile?)", f.path, err)
}
func (f *fileSource) key() []byte { return f.k }
func (f *fileSource) val() uint64 { return f.v }

type sources []source

func (h sources) Len() int { return len(h) }
func (h sources) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key(), h[j].key()); c != 0 {
		return c < 0
	}
	return h[i].val() < h[j].val()
}
func (h sources) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sources) Push(x any)   { *h = append(*h, x.(source)) }
func (h *sources) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Iter walks a Sorter's entries in order.
type Iter struct {
	srcs    []source
	h       sources
	started bool
	err     error
}

// Next moves to the next entry, reporting whether there is one.
func (it *Iter) Next() bool {
	if it.err != nil {
		return false
	}
	// The entry returned last is the heap's top until now: its source
	// moves on only here, so that its key stays valid until this call.
	if it.started && len(it.h) > 0 {
		ok, err := it.h[0].next()
		if err != nil {
			it.err = err
			return false
		}
		if ok {
			heap.Fix(&it.h, 0)
		} else {
			heap.Pop(&it.h)
		}
	}
	it.started = true
	return len(it.h) > 0
}

// Key is the entry's key, valid until Next; only after Next returned
// true.
func (it *Iter) Key() []byte { return it.h[0].key() }

// Val is the entry's value; only after Next returned true.
func (it *Iter) Val() uint64 { return it.h[0].val() }

// Err is what stopped Next early.
func (it *Iter) Err() error { return it.err }

// Close closes the runs' files.
func (it *Iter) Close() {
	for _, src := range it.srcs {
		if f, ok := src.(*fileSource); ok {
			f.f.Close()
		}
	}
	it.srcs, it.h = nil, nil
}
