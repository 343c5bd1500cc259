package verify

import (
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
)

// ExampleKeys is how many keys of each kind of change Changes names.
const ExampleKeys = 3

// Changes is what a partition's new rows change at the table's grain: keys
// only the new rows hold (added), keys only the old rows hold (removed),
// and keys both hold with other values (changed), with a few keys of each.
// Without a grain a row is its own key: rows are added or removed, never
// changed. Keys and rows are compared by 64-bit hashes: the counts are a
// summary for the person approving, not a check (the fingerprints are).
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

// Differ compares a partition's old rows with its new ones at the grain. It
// holds 16 bytes a key of the old rows (plus the map's overhead), and
// reads the rows in three passes: AddOld over the old rows, AddNew over the
// new, then NameRemoved over the old again until it says it is done.
type Differ struct {
	c     *contract.Contract
	seed  maphash.Seed
	types []iceberg.Type
	all   []int
	// keyCols are the grain's columns but the partition column, which the
	// partition already names; all of the grain if that is all it holds.
	keyCols []int
	old     map[uint64]uint64 // key hash -> row hash; without a grain, row hash -> count
	out     Changes
	// Keys is how many keys of each kind of change are named, with their
	// values; 0 is ExampleKeys.
	Keys int
	// changedNew holds, by key hash, the new values of the changed keys
	// named, until the old rows are read again for theirs.
	changedNew map[uint64]pendingKey
	counted    bool
	rowBuf     rowBuffer
	keys       *KeyHasher
}

// NewDiffer starts the comparison of one partition.
func NewDiffer(c *contract.Contract) *Differ {
	d := &Differ{c: c, seed: maphash.MakeSeed(), old: map[uint64]uint64{},
		types: make([]iceberg.Type, len(c.Fields)), all: make([]int, len(c.Fields))}
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
	d.keys = NewKeyHasher(c, d.seed)
	return d
}

type pendingKey struct {
	key    string
	values []string
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

// hashes returns each row's key hash and row hash.
func (d *Differ) hashes(rec arrow.RecordBatch) (keys, rows []uint64, err error) {
	n := int(rec.NumRows())
	cols := rec.Columns()
	if err := d.rowBuf.fill(d.types, cols, d.all, n); err != nil {
		return nil, nil, named(d.c, err)
	}
	rows = make([]uint64, n)
	for r := range n {
		rows[r] = maphash.Bytes(d.seed, d.rowBuf.row(r))
	}
	if len(d.c.Grain) == 0 {
		return rows, rows, nil
	}
	keys, err = d.keys.Hashes(make([]uint64, 0, n), cols, n)
	return keys, rows, err
}

// AddOld takes a batch of the rows the partition holds now, in the
// contract's schema.
func (d *Differ) AddOld(rec arrow.RecordBatch) error {
	keys, rows, err := d.hashes(rec)
	if err != nil {
		return err
	}
	for r, k := range keys {
		if len(d.c.Grain) == 0 {
			d.old[k]++
			continue
		}
		d.old[k] = rows[r]
	}
	return nil
}

// AddNew takes a batch of the rows that replace them.
func (d *Differ) AddNew(rec arrow.RecordBatch) error {
	keys, rows, err := d.hashes(rec)
	if err != nil {
		return err
	}
	for r, k := range keys {
		if len(d.c.Grain) == 0 {
			if d.old[k] > 0 {
				d.old[k]--
				continue
			}
			d.out.Added++
			continue
		}
		was, ok := d.old[k]
		switch {
		case !ok:
			d.out.Added++
			if len(d.out.AddedKeys) < d.perKind() {
				d.out.AddedKeys = d.example(d.out.AddedKeys, rec, r)
				d.out.Values = append(d.out.Values, d.row("added", d.out.AddedKeys[len(d.out.AddedKeys)-1], d.values(rec, r)))
			}
		case was != rows[r]:
			d.out.Changed++
			if len(d.out.ChangedKeys) < d.perKind() {
				d.out.ChangedKeys = d.example(d.out.ChangedKeys, rec, r)
				if d.changedNew == nil {
					d.changedNew = map[uint64]pendingKey{}
				}
				d.changedNew[k] = pendingKey{key: d.out.ChangedKeys[len(d.out.ChangedKeys)-1], values: d.values(rec, r)}
			}
		}
		delete(d.old, k)
	}
	return nil
}

// NameRemoved takes a batch of the old rows again, to name removed keys;
// it reports whether it has named enough, so the caller can stop reading.
func (d *Differ) NameRemoved(rec arrow.RecordBatch) (bool, error) {
	d.count()
	if d.done() {
		return true, nil
	}
	keys, _, err := d.hashes(rec)
	if err != nil {
		return false, err
	}
	for r, k := range keys {
		if p, ok := d.changedNew[k]; ok {
			d.out.Values = append(d.out.Values, d.changed(p, d.values(rec, r)))
			delete(d.changedNew, k)
		}
		if _, ok := d.old[k]; ok && len(d.out.RemovedKeys) < d.perKind() {
			d.out.RemovedKeys = d.example(d.out.RemovedKeys, rec, r)
			d.out.Values = append(d.out.Values, d.row("removed", d.out.RemovedKeys[len(d.out.RemovedKeys)-1], d.values(rec, r)))
			delete(d.old, k) // a key repeated in old rows is named once
		}
		if d.done() {
			break
		}
	}
	return d.done(), nil
}

// changed is a changed key's columns that differ, old and new.
func (d *Differ) changed(p pendingKey, old []string) KeyChange {
	kc := KeyChange{Kind: "changed", Key: p.key, Columns: []ValueChange{}}
	for _, i := range d.shown() {
		if old[i] != p.values[i] {
			kc.Columns = append(kc.Columns, ValueChange{Column: d.c.Fields[i].Name, Old: shorten(old[i]), New: shorten(p.values[i])})
		}
	}
	return kc
}

func (d *Differ) done() bool {
	return len(d.c.Grain) == 0 || (len(d.out.RemovedKeys) >= d.perKind() || len(d.old) == 0) && len(d.changedNew) == 0
}

// NeedsRemovedNames reports whether NameRemoved has keys left to name,
// once AddNew has seen every new row.
func (d *Differ) NeedsRemovedNames() bool {
	d.count()
	return !d.done()
}

// count counts the removed rows, once, after the last AddNew.
func (d *Differ) count() {
	if d.counted {
		return
	}
	d.counted = true
	if len(d.c.Grain) == 0 {
		for _, n := range d.old {
			d.out.Removed += int64(n)
		}
		return
	}
	d.out.Removed = int64(len(d.old))
}

// Changes returns the comparison, its keys' values in the order the
// kinds are counted: added, removed, changed.
func (d *Differ) Changes() Changes {
	d.count()
	rank := map[string]int{"added": 0, "removed": 1, "changed": 2}
	slices.SortStableFunc(d.out.Values, func(a, b KeyChange) int { return rank[a.Kind] - rank[b.Kind] })
	d.rowBuf.release()
	d.keys.Release()
	return d.out
}

// example appends the key of row r to keys.
func (d *Differ) example(keys []string, rec arrow.RecordBatch, r int) []string {
	var b strings.Builder
	for i, c := range d.keyCols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.c.Fields[c].Name)
		b.WriteByte('=')
		b.WriteString(keyValue(rec.Column(c), r))
	}
	return append(keys, b.String())
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
