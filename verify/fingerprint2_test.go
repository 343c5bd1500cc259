package verify_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/verify"
)

// The v2 golden vectors of docs/fingerprint.md: the types v1 lacks.
var v2Schema = iceberg.NewSchemaWithIdentifiers(0, []int{1},
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
	iceberg.NestedField{ID: 3, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
	iceberg.NestedField{ID: 4, Name: "f", Type: iceberg.FixedTypeOf(3)},
	iceberg.NestedField{ID: 5, Name: "tn", Type: iceberg.PrimitiveTypes.TimestampNs},
	iceberg.NestedField{ID: 6, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: 10, Name: "a", Type: iceberg.PrimitiveTypes.Int32}, {ID: 11, Name: "b", Type: iceberg.PrimitiveTypes.String}}}},
	iceberg.NestedField{ID: 7, Name: "l", Type: &iceberg.ListType{ElementID: 12, Element: iceberg.PrimitiveTypes.Int64}},
	iceberg.NestedField{ID: 8, Name: "m", Type: &iceberg.MapType{KeyID: 13, KeyType: iceberg.PrimitiveTypes.String, ValueID: 14, ValueType: iceberg.PrimitiveTypes.Float64, ValueRequired: false}},
)

var (
	v2Rows = `[
{"id": 1, "day": "2026-01-01", "u": "f79c3e09-677c-4bbd-a479-3f349cb785e7", "f": "AAEC", "tn": 1, "s": {"a": 1, "b": "x"}, "l": [1, null], "m": [{"key": "z", "value": 1.5}, {"key": "a", "value": -0.0}]},
{"id": 2, "day": "2026-01-01", "u": null, "f": null, "tn": null, "s": null, "l": [], "m": null}
]`
	v2Encodings = []string{
		"0300000000000000010800004fe60df79c3e09677c4bbda4793f349cb785e70e0001020f0000000000000001110200000001060000000178120000000203000000000000000100130000000206000000016105800000000000000006000000017a053ff8000000000000",
		"0300000000000000020800004fe600000000120000000000",
	}
	v2Digests = []string{
		"3302b9fa3a0cd8e6ad42277e636fa98e816479d8032dfa7bf7bca52065b04358",
		"a7ee020abdf4b1d25aff10dc77bbd055c36f6b47a5b1f17da1ab5a6c996646be",
	}
	v2Hash = "ac4062a7cd589697e8f8f46de735d851001880e133b6186d9dfbe4a9aab92576"
)

func v2Contract(t *testing.T) *contract.Contract {
	t.Helper()
	part, err := contract.NewPartitioner(1, "day", iceberg.PrimitiveTypes.Date, "identity")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.NewContract(v2Schema, []string{"id"}, []string{"id"}, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func v2Record(t *testing.T, c *contract.Contract, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, c.Arrow, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestGoldenVectorsV2: each v2 type encodes as docs/fingerprint.md says,
// a map's entries in the order of their keys, and the partition hash is
// taken under v2's name.
func TestGoldenVectorsV2(t *testing.T) {
	c := v2Contract(t)
	if got := verify.VersionOf(c.Schema); got != verify.V2 {
		t.Fatalf("a table of nested columns is fingerprinted under %s, want v2", got)
	}
	if got := verify.VersionOf(goldenSchema); got != verify.V1 {
		t.Fatalf("a table of v1's types is fingerprinted under %s, want v1", got)
	}
	rec := v2Record(t, c, v2Rows)
	defer rec.Release()
	for i := range v2Encodings {
		enc, err := verify.CanonicalRow(c, rec, i)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(enc); got != v2Encodings[i] {
			t.Errorf("row %d encodes as\n%s\nwant\n%s", i+1, got, v2Encodings[i])
		}
		if sum := sha256.Sum256(enc); hex.EncodeToString(sum[:]) != v2Digests[i] {
			t.Errorf("row %d digest %x, want %s", i+1, sum, v2Digests[i])
		}
	}
	if fp := fingerprint(t, c, rec); fp.Hash != v2Hash || fp.Rows != 2 || !fp.Sums["id"].Equal(exact.Of(3)) {
		t.Errorf("fingerprint %+v, want hash %s, 2 rows, sum(id) 3", fp, v2Hash)
	}
}

// TestNestedValuesHashAsMeant: a map's entries in another order hash
// alike; what a reader tells apart (a list's order, an empty list and a
// null one, a null struct and a struct of nulls) hashes apart.
func TestNestedValuesHashAsMeant(t *testing.T) {
	c := v2Contract(t)
	row := func(s, l, m string) string {
		return `[{"id": 1, "day": "2026-01-01", "s": ` + s + `, "l": ` + l + `, "m": ` + m + `}]`
	}
	hash := func(rows string) string {
		rec := v2Record(t, c, rows)
		defer rec.Release()
		return fingerprint(t, c, rec).Hash
	}
	base := hash(row(`{"a": 1, "b": "x"}`, `[1, 2]`, `[{"key": "a", "value": 1}, {"key": "b", "value": 2}]`))
	if got := hash(row(`{"a": 1, "b": "x"}`, `[1, 2]`, `[{"key": "b", "value": 2}, {"key": "a", "value": 1}]`)); got != base {
		t.Error("a map's entries in another order hash apart")
	}
	for name, other := range map[string]string{
		"list reversed":             row(`{"a": 1, "b": "x"}`, `[2, 1]`, `[{"key": "a", "value": 1}, {"key": "b", "value": 2}]`),
		"map value changed":         row(`{"a": 1, "b": "x"}`, `[1, 2]`, `[{"key": "a", "value": 2}, {"key": "b", "value": 2}]`),
		"map key and value swapped": row(`{"a": 1, "b": "x"}`, `[1, 2]`, `[{"key": "a", "value": 2}, {"key": "b", "value": 1}]`),
		"struct field changed":      row(`{"a": 2, "b": "x"}`, `[1, 2]`, `[{"key": "a", "value": 1}, {"key": "b", "value": 2}]`),
	} {
		if hash(other) == base {
			t.Errorf("%s: hashes alike", name)
		}
	}
	pairs := [][2]string{
		{row(`null`, `[]`, `[]`), row(`null`, `null`, `[]`)},
		{row(`null`, `[]`, `[]`), row(`{"a": null, "b": null}`, `[]`, `[]`)},
		{row(`null`, `[null]`, `[]`), row(`null`, `[]`, `[]`)},
		{row(`null`, `[]`, `[]`), row(`null`, `[]`, `null`)},
	}
	for _, p := range pairs {
		if hash(p[0]) == hash(p[1]) {
			t.Errorf("%s and %s hash alike", p[0], p[1])
		}
	}
}

// TestMapKeyTwice: a map holding one key twice (as a Parquet file can)
// is refused, naming the key, never hashed as a map.
func TestMapKeyTwice(t *testing.T) {
	c := v2Contract(t)
	rec := v2Record(t, c, `[{"id": 1, "day": "2026-01-01", "m": [{"key": "a", "value": 1}, {"key": "b", "value": 2}, {"key": "a", "value": 1}]}]`)
	defer rec.Release()
	acc := verify.NewAccumulator(c, "2026-01-01", nil)
	if err := acc.Add(rec); err == nil || !strings.Contains(err.Error(), "key a twice") {
		t.Errorf("a map holding a twice: %v", err)
	}
}
