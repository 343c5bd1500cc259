package verify_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	mathbig "math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/verify"
)

// goldenSchema covers every type of fingerprint v1 that the vectors in
// docs/fingerprint.md use.
var goldenSchema = iceberg.NewSchemaWithIdentifiers(0, []int{1},
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
	iceberg.NestedField{ID: 3, Name: "name", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 4, Name: "qty", Type: iceberg.PrimitiveTypes.Int32},
	iceberg.NestedField{ID: 5, Name: "ratio", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 6, Name: "flag", Type: iceberg.PrimitiveTypes.Bool},
	iceberg.NestedField{ID: 7, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	iceberg.NestedField{ID: 8, Name: "price", Type: iceberg.DecimalTypeOf(9, 2)},
)

type goldenRow struct {
	id    int64
	name  *string
	qty   int32
	ratio float64
	flag  *bool
	ts    string
	price string
}

func ptr[T any](v T) *T { return &v }

var goldenRows = []goldenRow{
	{id: 1, name: ptr("a"), qty: 100, ratio: 1.5, flag: ptr(true), ts: "2026-01-01T10:00:00Z", price: "12.34"},
	{id: 2, name: nil, qty: -5, ratio: math.NaN(), flag: ptr(false), ts: "2026-01-01T23:59:59.999999Z", price: "-0.01"},
	{id: 3, name: ptr(""), qty: 0, ratio: 0, flag: nil, ts: "2026-01-01T00:00:00Z", price: "0"},
}

// The canonical encodings and digests of goldenRows, and the partition hash;
// docs/fingerprint.md lists the same vectors.
var (
	goldenEncodings = []string{
		"0300000000000000010800004fe60600000001610200000064053ff800000000000001010a00064750a7e4a8000b02000000000000000000000000000004d2",
		"0300000000000000020800004fe60002fffffffb057ff800000000000001000a0006475c63f79fff0b02ffffffffffffffffffffffffffffffff",
		"0300000000000000030800004fe606000000000200000000050000000000000000000a00064748462040000b0200000000000000000000000000000000",
	}
	goldenDigests = []string{
		"c4d907e9994313a2c06b7f5ad0ccbe26a018a9a6ac43a18d1f89b2278668b126",
		"128f891359599ab54c4dcd66ac162c70c382468e0207bdef7f4664616d8493e3",
		"30dbaae4d238af80be06b8c735ecf379e3abca01955eb54767acb290ff61ef72",
	}
	goldenHash = "849ebf652c33f49d6a3ef1cb2f0a4aa4c9aec9e3fe1aa33c12acad7e60153546"
)

func goldenContract(t *testing.T) *contract.Contract {
	t.Helper()
	part, err := contract.NewPartitioner(1, "day", iceberg.PrimitiveTypes.Date, "identity")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.NewContract(goldenSchema, []string{"id"}, []string{"id", "qty"}, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func goldenRecord(t *testing.T, c *contract.Contract, rows []goldenRow) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
	defer b.Release()
	day := arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		b.Field(1).(*array.Date32Builder).Append(day)
		if r.name == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(*r.name)
		}
		b.Field(3).(*array.Int32Builder).Append(r.qty)
		b.Field(4).(*array.Float64Builder).Append(r.ratio)
		if r.flag == nil {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.BooleanBuilder).Append(*r.flag)
		}
		ts, err := time.Parse(time.RFC3339Nano, r.ts)
		if err != nil {
			t.Fatal(err)
		}
		b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
		d, err := decimal128.FromString(r.price, 9, 2)
		if err != nil {
			t.Fatal(err)
		}
		b.Field(7).(*array.Decimal128Builder).Append(d)
	}
	return b.NewRecordBatch()
}

func fingerprint(t *testing.T, c *contract.Contract, batches ...arrow.RecordBatch) verify.Fingerprint {
	t.Helper()
	acc := verify.NewAccumulator(c, "2026-01-01", nil)
	for _, rec := range batches {
		if err := acc.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	if f := acc.Findings(false); f.Len() != 0 {
		t.Fatalf("findings: %v", f.List)
	}
	return acc.Result()
}

func TestGoldenVectors(t *testing.T) {
	c := goldenContract(t)
	rec := goldenRecord(t, c, goldenRows)
	defer rec.Release()
	for i := range goldenRows {
		enc, err := verify.CanonicalRow(c, rec, i)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(enc); got != goldenEncodings[i] {
			t.Errorf("row %d encodes as\n%s\nwant\n%s", i+1, got, goldenEncodings[i])
		}
		if sum := sha256.Sum256(enc); hex.EncodeToString(sum[:]) != goldenDigests[i] {
			t.Errorf("row %d digest %x, want %s", i+1, sum, goldenDigests[i])
		}
	}
	fp := fingerprint(t, c, rec)
	if fp.Hash != goldenHash {
		t.Errorf("partition hash %s, want %s", fp.Hash, goldenHash)
	}
	if fp.Rows != 3 || !fp.Sums["id"].Equal(exact.Of(6)) || !fp.Sums["qty"].Equal(exact.Of(95)) {
		t.Errorf("fingerprint %+v, want 3 rows, sum(id)=6, sum(qty)=95", fp)
	}
}

// TestHashIgnoresOrderAndFiles: any permutation of rows, split into any
// batches (as files are), gives the same hash; so do slices of one batch
// (as a reader hands out), whose values sit at an offset in their buffers.
func TestHashIgnoresOrderAndFiles(t *testing.T) {
	c := goldenContract(t)
	var many []goldenRow
	for i := range 50 {
		r := goldenRows[i%3]
		r.id = int64(i + 1)
		if r.name != nil && *r.name != "" {
			r.name = ptr(strconv.Itoa(i)) // distinct values, so that misplaced bytes show
		}
		many = append(many, r)
	}
	whole := goldenRecord(t, c, many)
	defer whole.Release()
	want := fingerprint(t, c, whole).Hash
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		perm := append([]goldenRow(nil), many...)
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		cut := rng.IntN(len(perm))
		a, b := goldenRecord(t, c, perm[:cut]), goldenRecord(t, c, perm[cut:])
		if got := fingerprint(t, c, b, a).Hash; got != want {
			t.Errorf("trial %d: permuted and split rows hash %s, want %s", trial, got, want)
		}
		a.Release()
		b.Release()
	}
	for _, cut := range []int64{1, 2, 17, 49} {
		a, b := whole.NewSlice(0, cut), whole.NewSlice(cut, whole.NumRows())
		if got := fingerprint(t, c, b, a).Hash; got != want {
			t.Errorf("rows sliced at %d hash %s, want %s", cut, got, want)
		}
		a.Release()
		b.Release()
	}
}

func TestHashSeesChanges(t *testing.T) {
	c := goldenContract(t)
	base := goldenRecord(t, c, goldenRows)
	want := fingerprint(t, c, base).Hash
	base.Release()
	changes := map[string]func([]goldenRow){
		"one value":           func(r []goldenRow) { r[0].qty++ },
		"a null":              func(r []goldenRow) { r[2].name = nil },
		"null to empty":       func(r []goldenRow) { r[1].name = ptr("") },
		"a microsecond":       func(r []goldenRow) { r[0].ts = "2026-01-01T10:00:00.000001Z" },
		"decimal unscaled":    func(r []goldenRow) { r[0].price = "12.35" },
		"a float's last bit":  func(r []goldenRow) { r[0].ratio = math.Nextafter(1.5, 2) },
		"a row removed":       func(r []goldenRow) { r[2] = r[1]; r[2].id = 4 },
		"string moved across": func(r []goldenRow) { r[0].name = ptr(""); r[2].name = ptr("a") },
	}
	for name, change := range changes {
		rows := append([]goldenRow(nil), goldenRows...)
		change(rows)
		rec := goldenRecord(t, c, rows)
		if got := fingerprint(t, c, rec).Hash; got == want {
			t.Errorf("%s: hash unchanged", name)
		}
		rec.Release()
	}
}

// TestHashSeesColumnType: the same numbers in a column of another type hash
// differently, through the type tags.
func TestHashSeesColumnType(t *testing.T) {
	mk := func(typ iceberg.Type) string {
		sc := iceberg.NewSchemaWithIdentifiers(0, []int{1},
			iceberg.NestedField{ID: 1, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
			iceberg.NestedField{ID: 2, Name: "v", Type: typ, Required: true})
		part, _ := contract.NewPartitioner(0, "day", iceberg.PrimitiveTypes.Date, "identity")
		c, err := contract.NewContract(sc, []string{"day"}, nil, nil, part)
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
		defer b.Release()
		b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		switch fb := b.Field(1).(type) {
		case *array.Int32Builder:
			fb.Append(7)
		case *array.Int64Builder:
			fb.Append(7)
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		return fingerprint(t, c, rec).Hash
	}
	if mk(iceberg.PrimitiveTypes.Int32) == mk(iceberg.PrimitiveTypes.Int64) {
		t.Error("int 7 and long 7 hash alike")
	}
}

// TestSumsPastInt64AreExact: a total past 64 bits is that total, never a
// wrapped one nor a finding.
func TestSumsPastInt64AreExact(t *testing.T) {
	c := goldenContract(t)
	rows := []goldenRow{goldenRows[0], goldenRows[1]}
	rows[0].id, rows[1].id = math.MaxInt64, 1
	rec := goldenRecord(t, c, rows)
	defer rec.Release()
	acc := verify.NewAccumulator(c, "2026-01-01", nil)
	if err := acc.Add(rec); err != nil {
		t.Fatal(err)
	}
	if f := acc.Findings(false); f.Len() != 0 || acc.Result().Sums["id"].String() != "9223372036854775808" {
		t.Errorf("findings %v, sum %s; want none and 2^63", f.List, acc.Result().Sums["id"])
	}
}

// TestSumsIndependentOfOrder: a total that fits is accepted whatever order
// its values come in, within a partition and across partitions; one that
// does not is refused in every order.
func TestSumsIndependentOfOrder(t *testing.T) {
	c := goldenContract(t)
	for _, ids := range [][]int64{{math.MaxInt64, 1, -1}, {-1, 1, math.MaxInt64}, {1, math.MaxInt64, -1}} {
		rows := []goldenRow{goldenRows[0], goldenRows[1], goldenRows[0]}
		for i := range rows {
			rows[i].id = ids[i]
		}
		rec := goldenRecord(t, c, rows)
		acc := verify.NewAccumulator(c, "2026-01-01", nil)
		if err := acc.Add(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		if f := acc.Findings(false); f.Len() != 0 || !acc.Result().Sums["id"].Equal(exact.Of(math.MaxInt64)) {
			t.Errorf("ids %v: findings %v, sum %s; want none and MaxInt64", ids, f.List, acc.Result().Sums["id"])
		}
	}
	parts := map[string]verify.Fingerprint{"b=1": {Sums: map[string]exact.Sum{"x": exact.Of(math.MaxInt64)}}, "b=2": {Sums: map[string]exact.Sum{"x": exact.Of(1)}}, "b=3": {Sums: map[string]exact.Sum{"x": exact.Of(-1)}}}
	if fp := verify.Combine(parts); !fp.Sums["x"].Equal(exact.Of(math.MaxInt64)) {
		t.Errorf("run total of MaxInt64, 1, -1: %v; want MaxInt64", fp.Sums)
	}
	parts["b=3"] = verify.Fingerprint{Sums: map[string]exact.Sum{"x": exact.Of(1)}}
	if fp := verify.Combine(parts); fp.Sums["x"].String() != "9223372036854775809" {
		t.Errorf("run total over MaxInt64: %v; want MaxInt64+2", fp.Sums)
	}
}

// TestIntegerGrainRepeats: a grain of one integer column takes the path
// that compares values without hashing; repeats are still found.
func TestIntegerGrainRepeats(t *testing.T) {
	c := goldenContract(t) // grain: id long
	rows := []goldenRow{goldenRows[0], goldenRows[1], goldenRows[2], goldenRows[0]}
	rows[2].id = 1
	rec := goldenRecord(t, c, rows)
	defer rec.Release()
	acc := verify.NewAccumulator(c, "2026-01-01", nil)
	if err := acc.Add(rec); err != nil {
		t.Fatal(err)
	}
	f := acc.Findings(false)
	if f.Len() != 2 || f.List[0].Row != 3 || f.List[1].Row != 4 || f.List[0].Kind != verify.KindDuplicateGrain ||
		!strings.Contains(f.List[0].Message, "grain id=1 repeats row 1") {
		t.Errorf("findings %v, want rows 3 and 4 repeating row 1, naming id=1", f.List)
	}
	if fp := acc.Result(); fp.DuplicateGrain != 2 {
		t.Errorf("duplicate_grain %d, want 2", fp.DuplicateGrain)
	}
}

// TestIntegerGrainRanges: integer grains over a dense range are checked
// with a bitmap, over a sparse one by the general search; both find every
// repeat, across batches, at the extremes of int64 too.
func TestIntegerGrainRanges(t *testing.T) {
	c := goldenContract(t) // grain: id long
	for _, tc := range []struct {
		ids  []int64
		want []int64 // rows that repeat an earlier grain
	}{
		{ids: []int64{1, 2, 3, 10, 11}},
		{ids: []int64{1, 2, 3, 3}, want: []int64{4}},
		{ids: []int64{5, 6, 7, 1, 6}, want: []int64{5}},
		{ids: []int64{-3, -2, -1, -3, -1}, want: []int64{4, 5}},
		{ids: []int64{1, 1 << 40, 5, 1 << 40}, want: []int64{4}},
		{ids: []int64{math.MinInt64, math.MaxInt64, 0, -1}},
		{ids: []int64{math.MinInt64, math.MaxInt64, 0, math.MaxInt64, math.MinInt64}, want: []int64{4, 5}},
	} {
		rows := make([]goldenRow, len(tc.ids))
		for i, id := range tc.ids {
			rows[i] = goldenRows[0]
			rows[i].id = id
		}
		// Two batches: the order is followed across them.
		half := len(rows) / 2
		a, b := goldenRecord(t, c, rows[:half]), goldenRecord(t, c, rows[half:])
		acc := verify.NewAccumulator(c, "2026-01-01", nil)
		for _, rec := range []arrow.RecordBatch{a, b} {
			if err := acc.Add(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		var got []int64
		for _, f := range acc.Findings(false).List {
			if f.Kind == verify.KindDuplicateGrain {
				got = append(got, f.Row)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ids %v: repeats found at rows %v, want %v", tc.ids, got, tc.want)
		}
	}
}

// TestShortAndLongRowsHashAlike: rows short enough to be hashed a padded
// block at a time (under 56 encoded bytes) give the same hash as when a long
// row in their batch sends the whole batch through crypto/sha256.
func TestShortAndLongRowsHashAlike(t *testing.T) {
	schema := iceberg.NewSchemaWithIdentifiers(0, []int{1},
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 3, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "qty", Type: iceberg.PrimitiveTypes.Int32},
	)
	part, err := contract.NewPartitioner(1, "day", iceberg.PrimitiveTypes.Date, "identity")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.NewContract(schema, []string{"id"}, nil, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	day := arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	// Encoded, a row is 9 + 5 + 5 + len(name) + 5 bytes (a null name or qty
	// takes 1): names up to 31 bytes fit one block, 37 and longer never do.
	name := func(id int) string { return strings.Repeat("x", id%40) }
	batch := func(ids ...int) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
		defer b.Release()
		for _, id := range ids {
			b.Field(0).(*array.Int64Builder).Append(int64(id))
			b.Field(1).(*array.Date32Builder).Append(day)
			if id%7 == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(name(id))
			}
			if id%5 == 0 {
				b.Field(3).AppendNull()
			} else {
				b.Field(3).(*array.Int32Builder).Append(int32(id))
			}
		}
		return b.NewRecordBatch()
	}
	var all, short, long []int
	for id := 1; id <= 400; id++ {
		all = append(all, id)
		if len(name(id)) <= 31 {
			short = append(short, id)
		} else {
			long = append(long, id)
		}
	}
	mixed := batch(all...) // holds long rows: hashed row by row
	shortOnly, longOnly := batch(short...), batch(long...)
	defer mixed.Release()
	defer shortOnly.Release()
	defer longOnly.Release()
	want := fingerprint(t, c, mixed)
	got := fingerprint(t, c, shortOnly, longOnly)
	if got.Hash != want.Hash || got.Rows != 400 {
		t.Errorf("short rows apart from long ones hash %s (%d rows), all together %s", got.Hash, got.Rows, want.Hash)
	}
	// The digests of the short rows alone, summed independently.
	var sum [32]byte
	for r := range int(shortOnly.NumRows()) {
		enc, err := verify.CanonicalRow(c, shortOnly, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(enc) > 55 {
			t.Fatalf("row %d encodes in %d bytes; the test needs short rows", r, len(enc))
		}
		d := sha256.Sum256(enc)
		carry := 0
		for i := 31; i >= 0; i-- {
			s := int(sum[i]) + int(d[i]) + carry
			sum[i], carry = byte(s), s>>8
		}
	}
	if got, want := fingerprint(t, c, shortOnly).Hash, verify.ContentHash(int64(shortOnly.NumRows()), sum); got != want {
		t.Errorf("short rows hash %s, their digests summed give %s", got, want)
	}
}

// TestDecimalSums: a decimal column sums exactly as unscaled values at its
// scale, negative values and values beyond 64 bits included (a
// decimal(38,2) whose parts do not fit but whose total does); a total that
// does not fit 64 bits is that total, exact.
func TestDecimalSums(t *testing.T) {
	sc := iceberg.NewSchemaWithIdentifiers(0, []int{1},
		iceberg.NestedField{ID: 1, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "amount", Type: iceberg.DecimalTypeOf(38, 2)})
	part, _ := contract.NewPartitioner(0, "day", iceberg.PrimitiveTypes.Date, "identity")
	c, err := contract.NewContract(sc, nil, []string{"amount"}, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	big := decimal128.FromI64(math.MaxInt64).Mul(decimal128.FromI64(4))
	sum := func(values ...decimal128.Num) (exact.Sum, int64) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, c.Arrow)
		defer b.Release()
		for _, v := range values {
			b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
			b.Field(1).(*array.Decimal128Builder).Append(v)
		}
		b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		b.Field(1).AppendNull() // a null adds nothing
		rec := b.NewRecordBatch()
		defer rec.Release()
		acc := verify.NewAccumulator(c, "2026-01-01", nil)
		if err := acc.Add(rec); err != nil {
			t.Fatal(err)
		}
		f := acc.Findings(false)
		return acc.Result().Sums["amount"], f.Len()
	}
	if got, findings := sum(decimal128.FromI64(1234), decimal128.FromI64(-34), decimal128.FromI64(66)); !got.Equal(exact.Of(1266)) || findings != 0 {
		t.Errorf("12.34 - 0.34 + 0.66: sum %s with %d findings, want 1266 (12.66 unscaled)", got, findings)
	}
	if got, findings := sum(big, big.Negate(), decimal128.FromI64(5)); !got.Equal(exact.Of(5)) || findings != 0 {
		t.Errorf("beyond 64 bits and back: sum %s with %d findings, want 5", got, findings)
	}
	if got, findings := sum(big, decimal128.FromI64(5)); findings != 0 || got.String() != "36893488147419103233" {
		t.Errorf("a total beyond 64 bits: sum %s with %d findings, want 4*(2^63-1)+5 exact", got, findings)
	}
	// Three decimal(38) maxima and the rest to 2^128 + 5: 5 modulo 2^128,
	// but not a sum that fits.
	max38, _ := new(mathbig.Int).SetString(strings.Repeat("9", 38), 10)
	rest := new(mathbig.Int).Lsh(mathbig.NewInt(1), 128)
	rest.Add(rest, mathbig.NewInt(5)).Sub(rest, new(mathbig.Int).Mul(max38, mathbig.NewInt(3)))
	m := decimal128.FromBigInt(max38)
	want := new(mathbig.Int).Lsh(mathbig.NewInt(1), 128)
	if got, findings := sum(m, m, m, decimal128.FromBigInt(rest)); findings != 0 || got.String() != want.Add(want, mathbig.NewInt(5)).String() {
		t.Errorf("a total of 2^128 + 5: sum %s with %d findings, want it exact", got, findings)
	}
}

// TestColumnChecks: each kind of column check refuses exactly the values
// that break it, naming the row and the check, and typed as the column:
// a decimal's range at its scale, a timestamp's in time, a share of nulls
// over the whole partition.
func TestColumnChecks(t *testing.T) {
	checks := map[string][]contract.Check{
		"name":  {"not-null", "accepted:a|"},
		"qty":   {"range:0..100"},
		"price": {"range:-0.01..12.33"},
		"ts":    {"range:..2026-01-01T23:00:00Z"},
		"flag":  {"max-null-fraction:0.2"},
		"id":    {"warn:range:2..3"}, // a warning, not a refusal
	}
	got, acc := checkFindings(t, checks, goldenRows)
	want := []string{
		"0 flag: 1 of 3 values are null (33.3%), more than check max-null-fraction:0.2 allows",
		"1 price: value 12.34 is outside the range (check range:-0.01..12.33)",
		"2 name: value is null (check not-null)",
		"2 qty: value -5 is outside the range (check range:0..100)",
		"2 ts: value 2026-01-01T23:59:59.999999+00:00 is outside the range (check range:..2026-01-01T23:00:00Z)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if w := acc.Warnings(); w.Len() != 1 || w.List[0].Row != 1 || !strings.Contains(w.List[0].Message, "value 1 is outside the range (check warn:range:2..3)") {
		t.Errorf("warnings %+v, want row 1's id outside warn:range:2..3", w.List)
	}
	part, err := contract.NewPartitioner(1, "day", iceberg.PrimitiveTypes.Date, "identity")
	if err != nil {
		t.Fatal(err)
	}
	for col, bad := range map[string]contract.Check{"name": "range:0..1", "qty": "accepted:x", "flag": "max-null-fraction:2", "price": "range:5..1", "id": "unique-ish"} {
		if _, err := contract.NewContract(goldenSchema, []string{"id"}, nil, map[string][]contract.Check{col: {bad}}, part); err == nil {
			t.Errorf("check %s on %s was taken", bad, col)
		}
	}
}

// TestUniqueCheck: a value a partition holds twice in a column checked
// unique is refused at the row that repeats it, naming the first; nulls
// never repeat.
func TestUniqueCheck(t *testing.T) {
	again := goldenRows[0]
	again.id, again.flag = 9, nil
	got, _ := checkFindings(t, map[string][]contract.Check{"name": {"unique"}, "qty": {"unique"}, "flag": {"unique"}}, []goldenRow{goldenRows[0], goldenRows[1], again})
	want := []string{"3 name: value repeats row 1 (check unique)", "3 qty: value 100 repeats row 1 (check unique)"}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// checkFindings accumulates rows under a contract with checks, and gives
// its findings as "ROW COLUMN: MESSAGE", sorted, and the accumulator.
func checkFindings(t *testing.T, checks map[string][]contract.Check, rows []goldenRow) ([]string, *verify.Accumulator) {
	t.Helper()
	part, err := contract.NewPartitioner(1, "day", iceberg.PrimitiveTypes.Date, "identity")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.NewContract(goldenSchema, []string{"id"}, nil, checks, part)
	if err != nil {
		t.Fatal(err)
	}
	rec := goldenRecord(t, c, rows)
	defer rec.Release()
	acc := verify.NewAccumulator(c, "2026-01-01", nil)
	if err := acc.Add(rec); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range acc.Findings(false).List {
		got = append(got, fmt.Sprintf("%d %s: %s", f.Row, f.Column, f.Message))
	}
	slices.Sort(got)
	return got, acc
}

// TestKeptGrainHashesAreKeyHashes: the grain hashes an accumulator keeps
// are the hashes a KeyHasher takes of the same rows with GrainSeed, for a
// grain of one integer (checked without hashing) and of text, so that keys
// kept while staging compare with keys read from files.
func TestKeptGrainHashesAreKeyHashes(t *testing.T) {
	// One column; neighbouring columns, read from each row's encoding
	// (leading, and not); columns out of the table's order, encoded alone.
	for _, grain := range []string{"order_id", "channel", "order_date,order_id", "order_id,channel", "channel,order_id", "order_date,channel"} {
		c := keptContract(t, grain)
		rec := keptRows(t, c)
		defer rec.Release()
		acc := verify.NewAccumulator(c, "2026-01-01", nil)
		acc.KeepGrainHashes()
		if err := acc.Add(rec); err != nil {
			t.Fatal(err)
		}
		h := verify.NewKeyHasher(c, verify.GrainSeed())
		want, err := h.Hashes(nil, rec.Columns(), int(rec.NumRows()))
		h.Release()
		if err != nil {
			t.Fatal(err)
		}
		got := acc.GrainHashes()
		if len(got) != 3 || !slices.Equal(got, want) {
			t.Errorf("grain %s: kept %v, a KeyHasher takes %v", grain, got, want)
		}
		plain := verify.NewAccumulator(c, "2026-01-01", nil)
		if err := plain.Add(rec); err != nil {
			t.Fatal(err)
		}
		if len(plain.GrainHashes()) != 0 {
			t.Errorf("an accumulator not asked to keep hashes kept %d", len(plain.GrainHashes()))
		}
	}
}

// keptContract is a table of orders by day whose grain is the columns
// named, joined by commas.
func keptContract(t *testing.T, grain string) *contract.Contract {
	t.Helper()
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "channel", Type: iceberg.PrimitiveTypes.String, Required: true})
	part, err := contract.NewPartitioner(1, "order_date", iceberg.PrimitiveTypes.Date, "identity")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.NewContract(schema, strings.Split(grain, ","), nil, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func keptRows(t *testing.T, c *contract.Contract) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, c.Arrow, strings.NewReader(`[
		{"order_date": "2026-01-01", "order_id": 7, "channel": "web"},
		{"order_date": "2026-01-01", "order_id": -3, "channel": "a channel longer than twelve"},
		{"order_date": "2026-01-01", "order_id": 1000000007, "channel": "store"}]`))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
