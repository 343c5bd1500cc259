package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/verify/internal/keysort"
)

// ExampleKeys is how many keys of each kind of change Changes names.
const ExampleKeys = 3

// Changes is what a partition's new rows change at the table's grain: keys
// only the new rows hold (added), keys only the old rows hold (removed),
// and keys both hold with other values (changed), with a few keys of each.
// Without a grain a row is its own key: rows are added or removed, never
// changed. Rows are compared by 64-bit hashes (without a grain, rows are
// keys by their hash): the counts are a summary for the person approving,
// not a check (the fingerprints are). The keys named are the first of
// each kind in grain order.
type Changes struct {
	Added       int64    `json:"added"`
	Removed     int64    `json:"removed"`
	Changed     int64    `json:"changed"`
	AddedKeys   []string `json:"added_keys,omitempty"`
	RemovedKeys []string `json:"removed_keys,omitempty"`
	ChangedKeys []string `json:"changed_keys,omitempty"`
	// Skipped says why the partition was not compared.
	Skipped string `json:"skipped,omitempty"`
	// Values are the example keys' values: for a key changed, the
	// columns that differ before and after; for one added or removed,
	// the row it holds.
	Values []KeyChange `json:"values,omitempty"`
}

// KeyChange is one grain key as the new rows change it.
type KeyChange struct {
	Kind    string        `json:"kind"` // added, removed or changed
	Key     string        `json:"key"`
	Columns []ValueChange `json:"columns"`
}

// ValueChange is one column of a key's change, each value as FormatValue
// shows it: old is absent for a key added, new for one removed.
type ValueChange struct {
	Column string `json:"column"`
	Old    string `json:"old,omitempty"`
	New    string `json:"new,omitempty"`
}

// KeyHasher hashes rows' grains by their canonical encoding, as the
// fingerprint encodes them, without formatting a value.
type KeyHasher struct {
	c     *contract.Contract
	seed  maphash.Seed
	types []iceberg.Type
	buf   rowBuffer
}

// NewKeyHasher hashes grains of the contract's rows with seed.
func NewKeyHasher(c *contract.Contract, seed maphash.Seed) *KeyHasher {
	k := &KeyHasher{c: c, seed: seed, types: make([]iceberg.Type, len(c.Fields))}
	for i, f := range c.Fields {
		k.types[i] = f.Type
	}
	return k
}

// Hashes appends to out the grain hash of each of n rows; cols holds the
// batch's columns by the contract's field index, of which only the
// grain's are read.
func (k *KeyHasher) Hashes(out []uint64, cols []arrow.Array, n int) ([]uint64, error) {
	if err := k.buf.fill(k.types, cols, k.c.Grain, n); err != nil {
		return out, named(k.c, err)
	}
	for r := range n {
		out = append(out, maphash.Bytes(k.seed, k.buf.row(r)))
	}
	return out, nil
}

// Release hands the hasher's buffers on.
func (k *KeyHasher) Release() { k.buf.release() }

// Differ compares a partition's old rows with its new ones at the grain,
// in bounded memory. Each side's keys, with a hash of each row, are
// sorted: in memory up to Memory, past it in runs on local disk under
// SpillDir. The two sides are then walked together in grain order, which
// counts every key added, removed or changed and picks the first Keys of
// each kind; a last read of each side, which stops once it has them,
// fetches those keys' values. Rows are compared by a 64-bit hash: the
// counts are a summary for the person approving, not a check (the
// fingerprints are).
type Differ struct {
	c     *contract.Contract
	seed  maphash.Seed
	types []iceberg.Type
	all   []int
	// keyCols are the grain's columns but the partition column, which the
	// partition already names; all of the grain if that is all it holds.
	keyCols []int
	// Keys is how many keys of each kind of change are named, with their
	// values; 0 is ExampleKeys.
	Keys int
	// Memory is what the two sides' sorted keys hold before they wait on
	// disk; 0 is DiffMemory.
	Memory int64
	// SpillDir is where they wait ("": the system's temporary folder).
	SpillDir string
	// Written is the bytes the comparison wrote to disk.
	Written int64

	rowBuf   rowBuffer
	sortKeys *sortKeys
	out      Changes
	examples []*example
	want     map[string]*example // the examples by sort key
	named    map[string]int      // examples by kind
}

// RowsColumn names, in a changed key's columns, how many rows hold the key
// before and after, where a side holds it in more than one (a table that
// broke its grain).
const RowsColumn = "(rows with this key)"

// DiffMemory is what a comparison holds of each partition's keys by
// default, both sides together: about 700,000 keys of a long.
const DiffMemory = 64 << 20

// Rows reads one side of a comparison, batch by batch in the contract's
// schema, until fn says it is done.
type Rows func(fn func(arrow.RecordBatch) (bool, error)) error

// example is a key named with its values, old and new, and how many
// rows hold it on each side (one, but in a table that broke its grain).
type example struct {
	kind         string
	sortKey      string
	key          string
	old, new     []string
	inOld, inNew int64
}

// NewDiffer starts the comparison of one partition.
func NewDiffer(c *contract.Contract) *Differ {
	d := &Differ{c: c, seed: maphash.MakeSeed(), types: make([]iceberg.Type, len(c.Fields)), all: make([]int, len(c.Fields))}
	for i, f := range c.Fields {
		d.types[i], d.all[i] = f.Type, i
	}
	for _, g := range c.Grain {
		if !slices.Contains(c.Partition.Columns(), g) {
			d.keyCols = append(d.keyCols, g)
		}
	}
	if len(d.keyCols) == 0 {
		d.keyCols = c.Grain
	}
	d.sortKeys = newSortKeys(d.types, c.Grain)
	return d
}

// Compare reads the old rows and the new ones, and returns what the new
// change at the grain. It stops when ctx is done.
func (d *Differ) Compare(ctx context.Context, old, new Rows) (Changes, error) {
	defer d.rowBuf.release()
	defer d.sortKeys.release()
	budget := d.Memory
	if budget <= 0 {
		budget = DiffMemory
	}
	olds, news := keysort.New(d.SpillDir, int(budget/2)), keysort.New(d.SpillDir, int(budget/2))
	defer olds.Close()
	defer news.Close()
	if err := old(d.adder(olds)); err != nil {
		return Changes{}, err
	}
	if err := new(d.adder(news)); err != nil {
		return Changes{}, err
	}
	if err := d.merge(ctx, olds, news); err != nil {
		return Changes{}, err
	}
	d.Written = olds.Written + news.Written
	// The runs are read: free the disk before reading the rows again.
	if err := errors.Join(olds.Close(), news.Close()); err != nil {
		return Changes{}, err
	}
	if d.needs(false) {
		if err := old(d.namer(false)); err != nil {
			return Changes{}, err
		}
	}
	if d.needs(true) {
		if err := new(d.namer(true)); err != nil {
			return Changes{}, err
		}
	}
	return d.changes(), nil
}

// adder sorts each row's key with its row's hash; without a grain a row is
// its own key, its hash.
func (d *Differ) adder(s *keysort.Sorter) func(arrow.RecordBatch) (bool, error) {
	var key [8]byte
	return func(rec arrow.RecordBatch) (bool, error) {
		n := int(rec.NumRows())
		if err := d.rowBuf.fill(d.types, rec.Columns(), d.all, n); err != nil {
			return false, named(d.c, err)
		}
		grain := len(d.c.Grain) > 0
		if grain {
			if err := d.sortKeys.fill(rec.Columns(), n); err != nil {
				return false, named(d.c, err)
			}
		}
		for r := range n {
			h := maphash.Bytes(d.seed, d.rowBuf.row(r))
			var err error
			if grain {
				err = s.Add(d.sortKeys.row(r), h)
			} else {
				binary.BigEndian.PutUint64(key[:], h)
				err = s.Add(key[:], 0)
			}
			if err != nil {
				return false, err
			}
		}
		return false, nil
	}
}

// merge walks both sides in grain order, counting each key's change and
// picking the first of each kind to name.
func (d *Differ) merge(ctx context.Context, olds, news *keysort.Sorter) error {
	oi, err := olds.Sorted(ctx)
	if err != nil {
		return err
	}
	defer oi.Close()
	ni, err := news.Sorted(ctx)
	if err != nil {
		return err
	}
	defer ni.Close()
	oOK, nOK := oi.Next(), ni.Next()
	var key []byte
	for n := 0; oOK || nOK; n++ {
		if n%(1<<16) == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		c := 1
		switch {
		case !nOK:
			c = -1
		case oOK:
			c = bytes.Compare(oi.Key(), ni.Key())
		}
		if c <= 0 {
			key = append(key[:0], oi.Key()...)
		} else {
			key = append(key[:0], ni.Key()...)
		}
		// Each side's entries of this key, in order of row hash.
		var inOld, inNew int64
		same := true
		for {
			o := oOK && bytes.Equal(oi.Key(), key)
			n := nOK && bytes.Equal(ni.Key(), key)
			if !o && !n {
				break
			}
			if o != n || oi.Val() != ni.Val() {
				same = false
			}
			if o {
				inOld++
				oOK = oi.Next()
			}
			if n {
				inNew++
				nOK = ni.Next()
			}
		}
		d.count(key, inOld, inNew, same)
	}
	return errors.Join(oi.Err(), ni.Err())
}

// count records one key's change: held by the old rows inOld times, by the
// new inNew times, with the same rows or not.
func (d *Differ) count(key []byte, inOld, inNew int64, same bool) {
	if len(d.c.Grain) == 0 {
		d.out.Added += max(0, inNew-inOld)
		d.out.Removed += max(0, inOld-inNew)
		return
	}
	switch {
	case inOld == 0:
		d.out.Added += inNew
		d.pick("added", key, inOld, inNew)
	case inNew == 0:
		d.out.Removed++
		d.pick("removed", key, inOld, inNew)
	case !same:
		d.out.Changed++
		d.pick("changed", key, inOld, inNew)
	}
}

// pick names key when it is among the first of its kind.
func (d *Differ) pick(kind string, key []byte, inOld, inNew int64) {
	if d.named[kind] >= d.perKind() {
		return
	}
	if d.want == nil {
		d.want, d.named = map[string]*example{}, map[string]int{}
	}
	d.named[kind]++
	e := &example{kind: kind, sortKey: string(key), inOld: inOld, inNew: inNew}
	d.want[e.sortKey] = e
	d.examples = append(d.examples, e)
}

// needs reports whether the examples lack values of the new side (or of
// the old).
func (d *Differ) needs(newSide bool) bool {
	for _, e := range d.examples {
		if newSide && e.kind != "removed" && e.new == nil || !newSide && e.kind != "added" && e.old == nil {
			return true
		}
	}
	return false
}

// namer fetches the examples' values from one side's rows, until it has
// them all.
func (d *Differ) namer(newSide bool) func(arrow.RecordBatch) (bool, error) {
	return func(rec arrow.RecordBatch) (bool, error) {
		n := int(rec.NumRows())
		if err := d.sortKeys.fill(rec.Columns(), n); err != nil {
			return false, named(d.c, err)
		}
		for r := range n {
			e := d.want[string(d.sortKeys.row(r))]
			if e == nil {
				continue
			}
			if e.key == "" {
				e.key = d.keyOf(rec, r)
			}
			if newSide && e.new == nil {
				e.new = d.values(rec, r)
			} else if !newSide && e.old == nil {
				e.old = d.values(rec, r)
			}
		}
		return !d.needs(newSide), nil
	}
}

// changes is the comparison, its keys named in grain order within each
// kind, the kinds in the order they are counted: added, removed, changed.
func (d *Differ) changes() Changes {
	for _, kind := range []string{"added", "removed", "changed"} {
		for _, e := range d.examples {
			if e.kind != kind || e.key == "" || kind != "added" && e.old == nil || kind != "removed" && e.new == nil {
				continue // a key the second read did not find is not named
			}
			switch kind {
			case "added":
				d.out.AddedKeys = append(d.out.AddedKeys, e.key)
				d.out.Values = append(d.out.Values, d.row(kind, e.key, e.new))
			case "removed":
				d.out.RemovedKeys = append(d.out.RemovedKeys, e.key)
				d.out.Values = append(d.out.Values, d.row(kind, e.key, e.old))
			default:
				d.out.ChangedKeys = append(d.out.ChangedKeys, e.key)
				d.out.Values = append(d.out.Values, d.changed(e))
			}
		}
	}
	return d.out
}

func (d *Differ) perKind() int {
	if d.Keys > 0 {
		return d.Keys
	}
	return ExampleKeys
}

// values formats every column of row r.
func (d *Differ) values(rec arrow.RecordBatch, r int) []string {
	out := make([]string, len(d.c.Fields))
	for i := range d.c.Fields {
		out[i] = FormatValue(rec.Column(i), r)
	}
	return out
}

// shown are the columns a key's values show: those outside the grain.
func (d *Differ) shown() []int {
	var out []int
	for i := range d.c.Fields {
		if !slices.Contains(d.c.Grain, i) {
			out = append(out, i)
		}
	}
	return out
}

// row is a key added or removed with the values its row holds.
func (d *Differ) row(kind, key string, vals []string) KeyChange {
	kc := KeyChange{Kind: kind, Key: key, Columns: []ValueChange{}}
	for _, i := range d.shown() {
		vc := ValueChange{Column: d.c.Fields[i].Name}
		if kind == "added" {
			vc.New = shorten(vals[i])
		} else {
			vc.Old = shorten(vals[i])
		}
		kc.Columns = append(kc.Columns, vc)
	}
	return kc
}

// changed is a changed key's columns that differ, old and new.
func (d *Differ) changed(e *example) KeyChange {
	kc := KeyChange{Kind: "changed", Key: e.key, Columns: []ValueChange{}}
	for _, i := range d.shown() {
		if e.old[i] != e.new[i] {
			kc.Columns = append(kc.Columns, ValueChange{Column: d.c.Fields[i].Name, Old: shorten(e.old[i]), New: shorten(e.new[i])})
		}
	}
	if e.inOld != e.inNew {
		// A table that broke its grain holds the key in several rows.
		kc.Columns = append(kc.Columns, ValueChange{Column: RowsColumn, Old: strconv.FormatInt(e.inOld, 10), New: strconv.FormatInt(e.inNew, 10)})
	}
	return kc
}

// keyOf shows row r's key: its grain columns, but the partition's.
func (d *Differ) keyOf(rec arrow.RecordBatch, r int) string {
	var b strings.Builder
	for i, c := range d.keyCols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.c.Fields[c].Name)
		b.WriteByte('=')
		b.WriteString(keyValue(rec.Column(c), r))
	}
	return b.String()
}

// keyValue shows a grain key's value as a partition value shows: quoted
// as in CSV when it is empty, holds a comma, a quote, or the ; and | that
// part a list of keys, or starts or ends with a space, so that one key
// never reads as two; Go-quoted when it holds what no line should.
func keyValue(col arrow.Array, r int) string {
	if col.IsNull(r) {
		return "null"
	}
	v := col.ValueStr(r)
	for _, c := range v {
		if c == utf8.RuneError || !unicode.IsPrint(c) {
			return strconv.Quote(v)
		}
	}
	if _, text := col.(*array.String); text && (v == "" || strings.ContainsAny(v, `,";|`) || strings.TrimSpace(v) != v || v == "null") {
		return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
	}
	return v
}
