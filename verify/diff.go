package verify

import (
	"hash/maphash"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
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
	counted bool
	rowBuf  rowBuffer
	keys    *KeyHasher
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
			d.out.AddedKeys = d.example(d.out.AddedKeys, rec, r)
		case was != rows[r]:
			d.out.Changed++
			d.out.ChangedKeys = d.example(d.out.ChangedKeys, rec, r)
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
		if _, ok := d.old[k]; ok {
			d.out.RemovedKeys = d.example(d.out.RemovedKeys, rec, r)
			delete(d.old, k) // a key repeated in old rows is named once
			if d.done() {
				break
			}
		}
	}
	return d.done(), nil
}

func (d *Differ) done() bool {
	return len(d.c.Grain) == 0 || len(d.out.RemovedKeys) >= ExampleKeys || len(d.old) == 0
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

// Changes returns the comparison.
func (d *Differ) Changes() Changes {
	d.count()
	d.rowBuf.release()
	d.keys.Release()
	return d.out
}

// example appends the key of row r to keys, up to ExampleKeys.
func (d *Differ) example(keys []string, rec arrow.RecordBatch, r int) []string {
	if len(keys) >= ExampleKeys {
		return keys
	}
	var b strings.Builder
	for i, c := range d.keyCols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.c.Fields[c].Name)
		b.WriteByte('=')
		b.WriteString(rec.Column(c).ValueStr(r))
	}
	return append(keys, b.String())
}
