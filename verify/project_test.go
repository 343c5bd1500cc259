package verify_test

import (
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

// TestProjectEvolvedFile: a file written under an earlier schema is read
// as the table's: by field id (a column renamed since is found), an int
// widened since to a long, a column added since as nulls; a required
// column the file lacks is an error.
func TestProjectEvolvedFile(t *testing.T) {
	sc := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "qty", Type: iceberg.PrimitiveTypes.Int64, Required: true}, // renamed from n, widened
		iceberg.NestedField{ID: 3, Name: "note", Type: iceberg.PrimitiveTypes.String})               // added
	part, _ := contract.NewPartitioner(0, "day", iceberg.PrimitiveTypes.Date, "identity")
	c, err := contract.NewContract(sc, nil, []string{"qty"}, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	id := func(n string) arrow.Metadata { return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{n}) }
	old := arrow.NewSchema([]arrow.Field{
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Metadata: id("1")},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Metadata: id("2")},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, old)
	defer b.Release()
	b.Field(0).(*array.Date32Builder).AppendValues([]arrow.Date32{20454, 20454}, nil)
	b.Field(1).(*array.Int32Builder).AppendValues([]int32{7, -2}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	acc := verify.NewAccumulator(c, "2026-01-01", nil)
	got, err := acc.Project(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	qty, ok := got.Column(1).(*array.Int64)
	if !ok || qty.Value(0) != 7 || qty.Value(1) != -2 || got.Column(2).NullN() != 2 {
		t.Fatalf("projected %v", got)
	}
	if err := acc.Add(got); err != nil || !acc.Result().Sums["qty"].Equal(exact.Of(5)) {
		t.Errorf("the projected rows: %v, sums %v", err, acc.Result().Sums)
	}

	// A required column the file does not have.
	lacking := arrow.NewSchema([]arrow.Field{{Name: "day", Type: arrow.FixedWidthTypes.Date32, Metadata: id("1")}}, nil)
	lb := array.NewRecordBuilder(memory.DefaultAllocator, lacking)
	defer lb.Release()
	lb.Field(0).(*array.Date32Builder).Append(20454)
	lrec := lb.NewRecordBatch()
	defer lrec.Release()
	if _, err := verify.NewAccumulator(c, "2026-01-01", nil).Project(lrec); err == nil || !strings.Contains(err.Error(), "qty") {
		t.Errorf("a file without a required column: %v", err)
	}
}

// TestProjectEvolvedStruct: a struct, a list of structs and a map written
// before another engine renamed a struct's field, widened one, added one
// and dropped one are read as the table's: fields by id.
func TestProjectEvolvedStruct(t *testing.T) {
	id := func(n string) arrow.Metadata { return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{n}) }
	sc := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 11, Name: "bee", Type: iceberg.PrimitiveTypes.String}, // renamed from b
			{ID: 10, Name: "a", Type: iceberg.PrimitiveTypes.Int64},    // widened from int, now second
			{ID: 13, Name: "c", Type: iceberg.PrimitiveTypes.Int32}}}}, // added; 12 (x) dropped
		iceberg.NestedField{ID: 3, Name: "l", Type: &iceberg.ListType{ElementID: 20, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 21, Name: "v", Type: iceberg.PrimitiveTypes.Int64}}}}},
	)
	part, _ := contract.NewPartitioner(0, "day", iceberg.PrimitiveTypes.Date, "identity")
	c, err := contract.NewContract(sc, nil, nil, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	oldStruct := arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: id("10")},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: id("11")},
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: id("12")})
	oldElem := arrow.StructOf(arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: id("21")})
	old := arrow.NewSchema([]arrow.Field{
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Metadata: id("1")},
		{Name: "s", Type: oldStruct, Nullable: true, Metadata: id("2")},
		{Name: "l", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: oldElem, Nullable: true, Metadata: id("20")}), Nullable: true, Metadata: id("3")},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, old, strings.NewReader(`[
{"day": "2026-01-01", "s": {"a": 1, "b": "x", "x": 9}, "l": [{"v": 5}, null]},
{"day": "2026-01-01", "s": null, "l": null}
]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	acc := verify.NewAccumulator(c, "2026-01-01", nil)
	got, err := acc.Project(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if s := got.Column(1).ValueStr(0); s != `{"a":1,"bee":"x","c":null}` {
		t.Errorf("the struct reads as %s", s)
	}
	if !got.Column(1).IsNull(1) || got.Column(2).ValueStr(0) != `[{"v":5},(null)]` && got.Column(2).ValueStr(0) != `[{"v":5},null]` {
		t.Errorf("read %v and %v", got.Column(1), got.Column(2))
	}
	// The projected rows hash as the same rows written under the table's
	// schema do.
	want, _, err := array.RecordFromJSON(memory.DefaultAllocator, c.Arrow, strings.NewReader(`[
{"day": "2026-01-01", "s": {"bee": "x", "a": 1, "c": null}, "l": [{"v": 5}, null]},
{"day": "2026-01-01", "s": null, "l": null}
]`))
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	if err := acc.Add(got); err != nil {
		t.Fatal(err)
	}
	if h := fingerprint(t, c, want).Hash; acc.Result().Hash != h {
		t.Errorf("projected rows hash %s, the same rows written now %s", acc.Result().Hash, h)
	}
}

// TestProjectSlicedStruct: a struct column read at an offset (a slice of a
// batch, whose null count is not yet known) keeps its nulls when its
// fields are projected, and a uuid written as plain 16 bytes reads as the
// table's uuid.
func TestProjectSlicedStruct(t *testing.T) {
	id := func(n string) arrow.Metadata { return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{n}) }
	sc := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 10, Name: "a", Type: iceberg.PrimitiveTypes.Int64}}}},
		iceberg.NestedField{ID: 3, Name: "u", Type: iceberg.PrimitiveTypes.UUID})
	part, _ := contract.NewPartitioner(0, "day", iceberg.PrimitiveTypes.Date, "identity")
	c, err := contract.NewContract(sc, nil, nil, nil, part)
	if err != nil {
		t.Fatal(err)
	}
	old := arrow.NewSchema([]arrow.Field{
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Metadata: id("1")},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: id("10")}), Nullable: true, Metadata: id("2")},
		{Name: "u", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}, Nullable: true, Metadata: id("3")},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, old, strings.NewReader(`[
{"day": "2026-01-01", "s": {"a": 1}, "u": null},
{"day": "2026-01-01", "s": null, "u": "95w+CWd8S72keT80nLeF5w=="},
{"day": "2026-01-01", "s": {"a": 2}, "u": null},
{"day": "2026-01-01", "s": null, "u": null}
]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	sliced := rec.NewSlice(1, 4)
	defer sliced.Release()
	acc := verify.NewAccumulator(c, "2026-01-01", nil)
	got, err := acc.Project(sliced)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if err := acc.Add(got); err != nil {
		t.Fatal(err)
	}
	want, _, err := array.RecordFromJSON(memory.DefaultAllocator, c.Arrow, strings.NewReader(`[
{"day": "2026-01-01", "s": null, "u": "f79c3e09-677c-4bbd-a479-3f349cb785e7"},
{"day": "2026-01-01", "s": {"a": 2}, "u": null},
{"day": "2026-01-01", "s": null, "u": null}
]`))
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	if h := fingerprint(t, c, want).Hash; acc.Result().Hash != h {
		t.Errorf("the sliced rows projected read as %v, hash %s; the same rows written now hash %s", got, acc.Result().Hash, h)
	}
}

// TestProjectLargeTypes: a file written with pyarrow's large types (64-bit
// offsets) reads as the table's strings, bytes and lists, the same values.
func TestProjectLargeTypes(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "l", Type: arrow.LargeListOf(arrow.BinaryTypes.LargeString), Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.LargeBinary, Nullable: true}}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(`[{"s":"x","l":["a",null],"b":"AAE="},{"s":null,"l":null,"b":null}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	for i, want := range []arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true}} {
		got, err := verify.ProjectColumn(rec.Column(i), want)
		if err != nil {
			t.Fatalf("%s: %v", want.Name, err)
		}
		if !arrow.TypeEqual(got.DataType(), want.Type) || got.String() != rec.Column(i).String() {
			t.Errorf("%s reads as %s %v, want %s %v", want.Name, got.DataType(), got, want.Type, rec.Column(i))
		}
		got.Release()
	}
}
