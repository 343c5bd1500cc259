package verify

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"math/big"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/verify/internal/rowhash"
)

// The fingerprint's versions; the one a partition's is taken under is
// recorded beside it (runrecord's FingerprintVersion) so that a later
// algorithm never compares against another. v2 adds the types v1 lacks
// (uuid, fixed, nanosecond timestamps, struct, list, map) and is v1 byte
// for byte on a table that holds none of them, so that what was recorded
// under v1 still verifies.
const (
	V1 = "v1"
	V2 = "v2"
)

// VersionOf is the version a table of schema sc is fingerprinted under.
func VersionOf(sc *iceberg.Schema) string {
	for _, f := range sc.Fields() {
		if !v1Type(f.Type) {
			return V2
		}
	}
	return V1
}

// v1Type says whether fingerprint v1 encodes values of type t.
func v1Type(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type,
		iceberg.StringType, iceberg.BinaryType, iceberg.DateType, iceberg.TimeType, iceberg.TimestampType,
		iceberg.TimestampTzType, iceberg.DecimalType:
		return true
	}
	return false
}

// Fingerprint summarises a partition's content so that two stagings, or a
// staging and what was committed, can be compared without keeping either.
// Hash is order-independent: the same rows in any order and any split into
// files give the same hash.
type Fingerprint struct {
	Rows           int64                `json:"rows"`
	NullGrain      map[string]int64     `json:"null_grain,omitempty"`
	DuplicateGrain int64                `json:"duplicate_grain"`
	Sums           map[string]exact.Sum `json:"sums"`
	Hash           string               `json:"hash"`
}

// Accumulator validates and fingerprints the rows of one partition, batch by
// batch. It keeps the partition's grain keys (16 bytes a row) to find
// duplicates, and nothing else of the rows.
type Accumulator struct {
	c         *contract.Contract
	partition string // the partition value every row must map to
	key       string // the partition's display key
	// The raw values of the partition column that map to partition, when
	// they form a span: rows are checked against it, and only those
	// outside are formatted (to name where they belong).
	spanCol        int // the column spanLo and spanHi bound
	spanLo, spanHi int64
	spanOK         bool
	locate         func(row int64) string

	rows      int64
	acc       [4]uint64 // sum mod 2^256 of the row digests, little-endian limbs
	sums      []sum128
	nullGrain []int64
	dups      int64
	grains    grainSet // the grain of every row with no null in it
	// kept are the GrainSeed hashes of those grains, when keep is set
	// (KeepGrainHashes).
	kept     []uint64
	keep     bool
	finished bool
	// emptyReported keeps Findings from reporting an empty partition twice.
	emptyReported bool
	findings      Findings
	schemaBad     bool
	types         []iceberg.Type
	allCols       []int
	rowBuf        rowBuffer // the batch's rows, canonically encoded
	grainBuf      rowBuffer // the batch's grains, canonically encoded
	stray         []int     // scratch: the rows of a batch outside the span
	// only fingerprints: no ownership, checks or grain (NewFingerprinter).
	only bool
	// unnamed holds the rows of duplicate-grain findings whose message
	// does not name the grain.
	unnamed map[int64]bool
	// nulls counts the nulls of each column (index, rule) a
	// max-null-fraction check judges.
	nulls map[[2]int]int64
	// unique holds the values of each column (index, rule) a unique
	// check judges, hashed.
	unique map[[2]int]*grainSet
	// warnings are the findings of checks written warn:, which do not
	// refuse the run.
	warnings Findings
	// warn, while a warn: check runs, sends findings to warnings.
	warn bool
}

// NewFingerprinter fingerprints the rows of a partition whose value is
// partition, checking nothing: the rows, sums and content hash of rows
// validated when they were staged (a base, a commit read back), in one
// pass that holds no grain key.
func NewFingerprinter(c *contract.Contract, partition string) *Accumulator {
	a := NewAccumulator(c, partition, nil)
	a.only = true
	a.rowBuf.span = nil // no grain is read: the span would be marked for nothing
	return a
}

// NewAccumulator starts a partition whose value is partition. locate, when not
// nil, names where a row came from (file and line) for findings.
func NewAccumulator(c *contract.Contract, partition string, locate func(row int64) string) *Accumulator {
	a := &Accumulator{
		c:         c,
		partition: partition,
		key:       c.Partition.Key(partition),
		locate:    locate,
		sums:      make([]sum128, len(c.Additive)),
		nullGrain: make([]int64, len(c.Grain)),
		types:     make([]iceberg.Type, len(c.Fields)),
		allCols:   make([]int, len(c.Fields)),
	}
	for i, f := range c.Fields {
		a.types[i], a.allCols[i] = f.Type, i
	}
	a.spanCol, a.spanLo, a.spanHi, a.spanOK = c.Partition.Span(c.Arrow, partition)
	a.rowBuf.blocks = rowhash.Accelerated
	if from, ok := neighbours(c.Grain); ok {
		// The grain's encoding is part of each row's: read it there.
		a.rowBuf.span = &columnSpan{from: from, to: from + len(c.Grain)}
	}
	return a
}

// neighbours says whether columns are neighbours in the table's order, as
// an identifier of the leading columns is, and where they start.
func neighbours(cols []int) (from int, ok bool) {
	if len(cols) == 0 {
		return 0, false
	}
	for i, c := range cols {
		if c != cols[0]+i {
			return 0, false
		}
	}
	return cols[0], true
}

// grainsEncoded gives the canonical encodings of a batch's grains, each
// row's read by grain(r): from the rows' encoding (rowBuf, filled for the
// batch) where the grain's columns are neighbours, else encoded here.
func (a *Accumulator) grainsEncoded(cols []arrow.Array, n int) (grain func(r int) []byte, err error) {
	if a.rowBuf.span != nil {
		return a.rowBuf.spanned, nil
	}
	if err := a.grainBuf.fill(a.types, cols, a.c.Grain, n); err != nil {
		return nil, a.named(err)
	}
	return a.grainBuf.row, nil
}

func (a *Accumulator) finding(kind Kind, row int64, col int, format string, args ...any) {
	f := Finding{Kind: kind, Partition: a.key, Row: row, Message: fmt.Sprintf(format, args...)}
	if col >= 0 {
		f.Column = a.c.Fields[col].Name
	}
	if row > 0 && a.locate != nil {
		f.Where = a.locate(row)
	}
	if a.warn {
		a.warnings.add(f)
		return
	}
	a.findings.add(f)
}

// Warnings are the findings of the checks written warn:, which the run
// prints and records without refusing.
func (a *Accumulator) Warnings() Findings {
	a.finish()
	return a.warnings
}

// CheckSchema compares a batch's schema with the contract's and returns false,
// with findings, when a column is missing, extra, or of another type.
func (a *Accumulator) CheckSchema(sc *arrow.Schema) bool {
	ok := true
	for i, want := range a.c.Arrow.Fields() {
		idx := sc.FieldIndices(want.Name)
		if len(idx) == 0 {
			a.finding(KindSchema, 0, i, "column missing from the input")
			ok = false
			continue
		}
		got := sc.Field(idx[0]).Type
		if !arrow.TypeEqual(got, want.Type) && !(got.ID() == arrow.LARGE_STRING && want.Type.ID() == arrow.STRING) {
			a.finding(KindSchema, 0, i, "input has type %s, the table wants %s", got, want.Type)
			ok = false
		}
	}
	for _, f := range sc.Fields() {
		if len(a.c.Arrow.FieldIndices(f.Name)) == 0 {
			a.findings.add(Finding{Kind: KindSchema, Partition: a.key, Column: f.Name, Message: "input column is not in the table schema"})
			ok = false
		}
	}
	return ok
}

// Conform returns rec with the contract's schema (column order and field ids),
// or false after recording schema findings. The result must be released.
func (a *Accumulator) Conform(rec arrow.RecordBatch) (arrow.RecordBatch, bool) {
	if a.schemaBad {
		return nil, false
	}
	if !a.CheckSchema(rec.Schema()) {
		a.schemaBad = true
		return nil, false
	}
	cols := make([]arrow.Array, len(a.c.Arrow.Fields()))
	for i, f := range a.c.Arrow.Fields() {
		cols[i] = rec.Column(rec.Schema().FieldIndices(f.Name)[0])
	}
	return array.NewRecordBatch(a.c.Arrow, cols, rec.NumRows()), true
}

// Add validates and fingerprints a batch already in the contract's schema.
func (a *Accumulator) Add(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	cols := rec.Columns()
	if err := a.rowBuf.fill(a.types, cols, a.allCols, n); err != nil {
		return a.named(err)
	}
	base := a.rows
	if !a.only {
		if err := a.checkOwnership(cols, n, base); err != nil {
			return err
		}
		a.checkColumns(cols, base)
	}
	a.sumColumns(cols, base)
	if !a.only {
		if err := a.addGrains(cols, n, base); err != nil {
			return err
		}
	} else {
		// Counted, not reported: a grain set on a table in place is
		// judged by what its rows hold.
		for gi, c := range a.c.Grain {
			a.nullGrain[gi] += int64(cols[c].NullN())
		}
	}
	if a.rowBuf.padded {
		rowhash.Add(&a.acc, a.rowBuf.buf[:n*rowhash.BlockSize])
	} else {
		for r := range n {
			a.addDigest(sha256.Sum256(a.rowBuf.row(r)))
		}
	}
	a.rows += int64(n)
	return nil
}

// checkOwnership records a finding for each row whose partition column puts
// it outside the partition this run owns.
func (a *Accumulator) checkOwnership(cols []arrow.Array, n int, base int64) error {
	partOf, err := a.c.Partition.ValueFunc(cols)
	if err != nil {
		return err
	}
	// Rows whose raw value is inside the partition's span belong to it;
	// the others, usually none, are judged by their formatted value.
	stray, spanned := a.stray[:0], a.spanOK
	if spanned {
		switch c := cols[a.spanCol].(type) {
		case *array.Date32:
			stray = outsideSpan(c, c.Date32Values(), a.spanLo, a.spanHi, stray)
		case *array.Timestamp:
			stray = outsideSpan(c, c.TimestampValues(), a.spanLo, a.spanHi, stray)
		case *array.Int32:
			stray = outsideSpan(c, c.Int32Values(), a.spanLo, a.spanHi, stray)
		case *array.Int64:
			stray = outsideSpan(c, c.Int64Values(), a.spanLo, a.spanHi, stray)
		default:
			spanned = false
		}
	}
	judge := func(r int) {
		if v, ok := partOf(r); !ok || v != a.partition {
			if !ok {
				v = "null"
			}
			a.finding(KindOutside, base+int64(r)+1, a.c.Partition.Fields[0].Column, "row belongs to %s, outside the partition %s this run owns", a.c.Partition.Key(v), a.key)
		}
	}
	if !spanned {
		for r := range n {
			judge(r)
		}
		return nil
	}
	for _, r := range stray {
		judge(r)
	}
	a.stray = stray
	return nil
}

// addGrains records each row's grain, and a finding for each null in it. A
// grain of one integer column is compared by value, with no encoding.
func (a *Accumulator) addGrains(cols []arrow.Array, n int, base int64) error {
	if len(a.c.Grain) == 0 {
		return nil
	}
	anyNull := false
	for gi, c := range a.c.Grain {
		if cols[c].NullN() == 0 {
			continue
		}
		anyNull = true
		for r := range n {
			if cols[c].IsNull(r) {
				a.nullGrain[gi]++
				a.finding(KindNullGrain, base+int64(r)+1, c, "grain column is null")
			}
		}
	}
	hasNull := func(r int) bool {
		if !anyNull {
			return false
		}
		for _, c := range a.c.Grain {
			if cols[c].IsNull(r) {
				return true
			}
		}
		return false
	}
	if v := a.intGrain(cols); v != nil {
		for r := range n {
			if !hasNull(r) {
				a.grains.addInt(v(r), base+int64(r)+1)
			}
		}
		if !a.keep {
			return nil
		}
		// Kept as a KeyHasher hashes them: of their canonical encoding.
		grain, err := a.grainsEncoded(cols, n)
		if err != nil {
			return err
		}
		for r := range n {
			if !hasNull(r) {
				a.kept = append(a.kept, maphash.Bytes(grainSeeds[0], grain(r)))
			}
		}
		return nil
	}
	grain, err := a.grainsEncoded(cols, n)
	if err != nil {
		return err
	}
	for r := range n {
		if !hasNull(r) {
			h := a.grains.add(grain(r), base+int64(r)+1)
			if a.keep {
				a.kept = append(a.kept, h)
			}
		}
	}
	return nil
}

// KeepGrainHashes makes the accumulator keep the hash of every grain it
// adds (GrainSeed's, as a KeyHasher's): a run checks its keys across
// partitions with them, rather than reading its staged files again. It
// costs 8 bytes a row.
func (a *Accumulator) KeepGrainHashes() { a.keep = true }

// GrainHashes are the kept hashes, of every row with no null in its grain.
func (a *Accumulator) GrainHashes() []uint64 { return a.kept }

// finish finds the duplicate grains, once, and puts the findings in row
// order.
func (a *Accumulator) finish() {
	if a.finished {
		return
	}
	a.finished = true
	a.checkNullShares()
	a.checkUnique()
	a.rowBuf.release()
	a.grainBuf.release()
	for _, d := range a.grains.duplicates() {
		a.dups++
		first := fmt.Sprintf("row %d", d.first)
		if a.locate != nil {
			if at := a.locate(d.first); at != "" {
				first += " (" + at + ")" // both places, to look at side by side
			}
		}
		if a.grains.ints {
			key := a.c.Fields[a.c.Grain[0]].Name + "=" + strconv.FormatInt(d.value, 10)
			a.finding(KindDuplicateGrain, d.row, -1, "grain %s repeats %s", key, first)
			continue
		}
		// The grain was kept hashed: NameKeys fills it in from a second
		// read of the rows, where the caller has one.
		if len(a.findings.List) < MaxFindings {
			if a.unnamed == nil {
				a.unnamed = map[int64]bool{}
			}
			a.unnamed[d.row] = true
		}
		a.finding(KindDuplicateGrain, d.row, -1, "grain repeats %s", first)
	}
	a.grains = grainSet{}
	slices.SortStableFunc(a.findings.List, func(x, y Finding) int { return cmp.Compare(x.Row, y.Row) })
}

// intGrain returns the value of a grain that is one integer column, which
// needs no encoding or hashing to be compared; nil for any other grain.
func (a *Accumulator) intGrain(cols []arrow.Array) func(row int) int64 {
	if len(a.c.Grain) != 1 {
		return nil
	}
	switch col := cols[a.c.Grain[0]].(type) {
	case *array.Int64:
		return col.Value
	case *array.Int32:
		return func(row int) int64 { return int64(col.Value(row)) }
	}
	return nil
}

// checkColumns applies required-ness and the declared checks column-wise.
func (a *Accumulator) checkColumns(cols []arrow.Array, base int64) {
	for i, col := range cols {
		if a.c.Fields[i].Required && col.NullN() > 0 && !slices.Contains(a.c.Grain, i) {
			for r := range col.Len() {
				if col.IsNull(r) {
					a.finding(KindNullRequired, base+int64(r)+1, i, "required column is null")
				}
			}
		}
		for k, r := range a.c.Rules[i] {
			a.checkRule(cols, i, k, r, base)
		}
	}
}

func (a *Accumulator) checkNonNegative(col arrow.Array, i int, base int64) {
	report := func(r int) {
		if col.IsValid(r) {
			a.finding(KindCheck, base+int64(r)+1, i, "value %s is negative (check non-negative)", col.ValueStr(r))
		}
	}
	switch c := col.(type) {
	case *array.Int32:
		for r, v := range c.Int32Values() {
			if v < 0 {
				report(r)
			}
		}
	case *array.Int64:
		for r, v := range c.Int64Values() {
			if v < 0 {
				report(r)
			}
		}
	case *array.Float32:
		for r, v := range c.Float32Values() {
			if v < 0 {
				report(r)
			}
		}
	case *array.Float64:
		for r, v := range c.Float64Values() {
			if v < 0 {
				report(r)
			}
		}
	case *array.Decimal128:
		for r := range c.Len() {
			if c.Value(r).Sign() < 0 {
				report(r)
			}
		}
	}
}

// sumColumns adds the additive columns exactly, over 192 bits, whatever
// order rows arrive in (sum128).
func (a *Accumulator) sumColumns(cols []arrow.Array, _ int64) {
	for si, c := range a.c.Additive {
		sum := &a.sums[si]
		switch col := cols[c].(type) {
		case *array.Int64:
			for r, v := range col.Int64Values() {
				if col.IsValid(r) {
					sum.add(v)
				}
			}
		case *array.Int32:
			for r, v := range col.Int32Values() {
				if col.IsValid(r) {
					sum.add(int64(v))
				}
			}
		case *array.Decimal128:
			// Unscaled values at the column's scale: 12.34 in a
			// decimal(12,2) adds 1234.
			for r, v := range col.Values() {
				if col.IsValid(r) {
					sum.add128(v.LowBits(), v.HighBits())
				}
			}
		}
	}
}

// sum128 is an exact sum in 192-bit two's complement: of int64 values,
// and of decimals' 128-bit unscaled values, which three or more can carry
// past 128 bits. 192 bits hold any sum of fewer than 2^63 of them, so a
// total is never mistaken for a small one that it equals modulo 2^128.
type sum128 struct {
	lo, mid uint64
	hi      int64
}

func (s *sum128) add(v int64) { s.add128(uint64(v), v>>63) }

// add128 adds a 128-bit two's complement value (a decimal's unscaled value).
func (s *sum128) add128(lo uint64, hi int64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, lo, 0)
	s.mid, carry = bits.Add64(s.mid, uint64(hi), carry)
	s.hi += hi>>63 + int64(carry) // hi>>63 extends the value's sign to the top word
}

// value returns the sum, exact.
func (s sum128) value() exact.Sum {
	v := int64(s.lo)
	if s.mid == uint64(v>>63) && s.hi == v>>63 {
		return exact.Of(v)
	}
	var b [24]byte
	binary.BigEndian.PutUint64(b[0:], uint64(s.hi))
	binary.BigEndian.PutUint64(b[8:], s.mid)
	binary.BigEndian.PutUint64(b[16:], s.lo)
	n := new(big.Int).SetBytes(b[:])
	if s.hi < 0 { // two's complement over 192 bits
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), 192))
	}
	return exact.FromBig(n)
}

// addDigest adds a row digest to the accumulator modulo 2^256.
func (a *Accumulator) addDigest(d [32]byte) {
	var carry uint64
	for i := range 4 {
		limb := binary.BigEndian.Uint64(d[24-8*i:])
		a.acc[i], carry = bits.Add64(a.acc[i], limb, carry)
	}
}

// named says which column an encoding error is of, by name.
func (a *Accumulator) named(err error) error { return named(a.c, err) }

func named(c *contract.Contract, err error) error {
	var ce *ColumnError
	if errors.As(err, &ce) {
		return fmt.Errorf("column %s: %w", c.Fields[ce.Column].Name, ce.Err)
	}
	return err
}

// Findings returns what the partition violates; EmptyAllowed says whether a
// partition with no rows is acceptable.
func (a *Accumulator) Findings(emptyAllowed bool) Findings {
	a.finish()
	if a.rows == 0 && !emptyAllowed && !a.schemaBad && !a.emptyReported {
		a.emptyReported = true
		a.findings.add(Finding{Kind: KindEmpty, Partition: a.key,
			Message: "no rows for a declared partition; a publish would wipe it (pass --allow-empty if that is intended)"})
	}
	return a.findings
}

// Rows is how many rows were added.
func (a *Accumulator) Rows() int64 { return a.rows }

// Count is the number of findings so far.
func (a *Accumulator) Count() int64 { return a.findings.Len() }

// Result returns the partition's fingerprint.
func (a *Accumulator) Result() Fingerprint {
	a.finish()
	fp := Fingerprint{Rows: a.rows, DuplicateGrain: a.dups, Sums: map[string]exact.Sum{}}
	for i, c := range a.c.Additive {
		fp.Sums[a.c.Fields[c].Name] = a.sums[i].value()
	}
	for i, c := range a.c.Grain {
		if a.nullGrain[i] > 0 {
			if fp.NullGrain == nil {
				fp.NullGrain = map[string]int64{}
			}
			fp.NullGrain[a.c.Fields[c].Name] = a.nullGrain[i]
		}
	}
	fp.Hash = contentHash(VersionOf(a.c.Schema), a.rows, a.acc)
	return fp
}

func contentHash(version string, rows int64, acc [4]uint64) string {
	h := sha256.New()
	h.Write([]byte("lakeswap-fingerprint-" + version + "\x00"))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(rows))
	h.Write(b[:])
	for i := 3; i >= 0; i-- {
		binary.BigEndian.PutUint64(b[:], acc[i])
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Combine gives a run's fingerprint from its partitions' fingerprints, keyed
// by partition value; partitions are taken in sorted order so the result does
// not depend on the order they were staged in.
func Combine(parts map[string]Fingerprint) Fingerprint {
	keys := make([]string, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := Fingerprint{Sums: map[string]exact.Sum{}}
	h := sha256.New()
	h.Write([]byte("lakeswap-run-fingerprint-v1\x00")) // v2 combines as v1 does
	var b [4]byte
	for _, k := range keys {
		fp := parts[k]
		binary.BigEndian.PutUint32(b[:], uint32(len(k)))
		h.Write(b[:])
		h.Write([]byte(k))
		raw, _ := hex.DecodeString(fp.Hash)
		h.Write(raw)
		out.Rows += fp.Rows
		out.DuplicateGrain += fp.DuplicateGrain
		for c, s := range fp.Sums {
			out.Sums[c] = out.Sums[c].Add(s)
		}
		for c, n := range fp.NullGrain {
			if out.NullGrain == nil {
				out.NullGrain = map[string]int64{}
			}
			out.NullGrain[c] += n
		}
	}
	out.Hash = hex.EncodeToString(h.Sum(nil))
	return out
}

// CanonicalRow returns the canonical encoding of one row of a batch in the
// contract's schema (docs/fingerprint.md); its SHA-256 is the row's digest.
func CanonicalRow(c *contract.Contract, rec arrow.RecordBatch, row int) ([]byte, error) {
	a := NewAccumulator(c, "", nil)
	if err := a.rowBuf.fill(a.types, rec.Columns(), a.allCols, int(rec.NumRows())); err != nil {
		return nil, err
	}
	return append([]byte(nil), a.rowBuf.row(row)...), nil
}

// outsideSpan appends to stray the rows of col, whose raw values are vals,
// that are null or fall outside [lo, hi).
func outsideSpan[T int32 | int64 | arrow.Date32 | arrow.Timestamp](col arrow.Array, vals []T, lo, hi int64, stray []int) []int {
	nulls := col.NullN() > 0
	for r, v := range vals {
		if int64(v) < lo || int64(v) >= hi || nulls && col.IsNull(r) {
			stray = append(stray, r)
		}
	}
	return stray
}

// Short is a hash's first 12 characters, as messages show it.
func Short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// KeysToName is how many duplicate-grain findings do not yet name their
// grain, and the last row among them: the rows a second read must reach.
func (a *Accumulator) KeysToName() (n int, last int64) {
	a.finish()
	for r := range a.unnamed {
		last = max(last, r)
	}
	return len(a.unnamed), last
}

// NameKeys reads rec, the partition's rows from row first on, as the
// contract's schema orders its columns, and puts the grain of each row a
// duplicate-grain finding names into its message: "grain
// event_id=17, region="eu" repeats row 98".
func (a *Accumulator) NameKeys(rec arrow.RecordBatch, first int64) {
	n := rec.NumRows()
	for row := range a.unnamed {
		i := row - first
		if i < 0 || i >= n {
			continue
		}
		parts := make([]string, len(a.c.Grain))
		for k, c := range a.c.Grain {
			parts[k] = a.c.Fields[c].Name + "=" + FormatValue(rec.Column(c), int(i))
		}
		for j := range a.findings.List {
			f := &a.findings.List[j]
			if f.Kind == KindDuplicateGrain && f.Row == row {
				f.Message = strings.Replace(f.Message, "grain repeats", "grain "+strings.Join(parts, ", ")+" repeats", 1)
			}
		}
		delete(a.unnamed, row)
	}
}
