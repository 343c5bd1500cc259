package source_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// nestedSchema is a table's schema of every type v1 of the fingerprint
// lacks, as the contract gives it (field ids on every field).
func nestedSchema(t *testing.T) *arrow.Schema {
	t.Helper()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 10, Name: "a", Type: iceberg.PrimitiveTypes.Int32}, {ID: 11, Name: "b", Type: iceberg.PrimitiveTypes.String}}}},
		iceberg.NestedField{ID: 3, Name: "l", Type: &iceberg.ListType{ElementID: 12, Element: iceberg.PrimitiveTypes.Int64}},
		iceberg.NestedField{ID: 4, Name: "m", Type: &iceberg.MapType{KeyID: 13, KeyType: iceberg.PrimitiveTypes.String, ValueID: 14, ValueType: iceberg.PrimitiveTypes.Float64}},
		iceberg.NestedField{ID: 5, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 6, Name: "f", Type: iceberg.FixedTypeOf(3)},
		iceberg.NestedField{ID: 7, Name: "t", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 8, Name: "b", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 9, Name: "lm", Type: &iceberg.MapType{KeyID: 15, KeyType: iceberg.PrimitiveTypes.Int64, ValueID: 16, ValueType: iceberg.PrimitiveTypes.String}},
	)
	out, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNestedInputs: the same rows as CSV, NDJSON and Parquet (written as
// another engine writes it: no field ids, a uuid as 16 fixed bytes) read
// alike, a map's entries in the order written.
func TestNestedInputs(t *testing.T) {
	sc := nestedSchema(t)
	dir := t.TempDir()
	ndjson := filepath.Join(dir, "in.ndjson")
	os.WriteFile(ndjson, []byte(`{"id":1,"s":{"b":"x","a":1},"l":[1,null,3],"m":{"z":1.5,"a":-2},"u":"f79c3e09-677c-4bbd-a479-3f349cb785e7","f":"AAEC","t":"23:59:59.999999","b":""}
{"id":2,"s":null,"l":[],"m":{},"u":null,"f":null,"t":"00:00:00","b":"eA=="}
{"id":3,"s":{"a":null},"l":null,"m":null}
`), 0o644)
	csvPath := filepath.Join(dir, "in.csv")
	os.WriteFile(csvPath, []byte(`id,s,l,m,u,f,t,b,lm
1,"{""b"":""x"",""a"":1}","[1,null,3]","{""z"":1.5,""a"":-2}",f79c3e09-677c-4bbd-a479-3f349cb785e7,AAEC,23:59:59.999999,,
2,,[],{},,,00:00:00,eA==,
3,"{""a"":null}",null,,,,,,
`), 0o644)
	want, err := readAll(ndjson, sc)
	if err != nil {
		t.Fatal(err)
	}
	got := want[0].Rec
	if s := got.Column(3).ValueStr(0); s != `[{"key":"z","value":1.5},{"key":"a","value":-2}]` {
		t.Errorf("the map reads as %s, want its entries in the order written", s)
	}
	if s := got.Column(1).ValueStr(2); s != `{"a":null,"b":null}` {
		t.Errorf("a struct with a field left out reads as %s", s)
	}
	if got.Column(7).IsNull(0) || got.Column(7).(*array.Binary).ValueLen(0) != 0 {
		t.Error(`NDJSON "" of a binary column is not the empty bytes`)
	}
	csvRows, err := readAll(csvPath, sc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sc.NumFields() {
		if i == 7 {
			continue // CSV's empty field is null
		}
		if !array.Equal(csvRows[0].Rec.Column(i), got.Column(i)) {
			t.Errorf("column %s: CSV reads %v, NDJSON %v", sc.Field(i).Name, csvRows[0].Rec.Column(i), got.Column(i))
		}
	}

	// As Spark or PyArrow write it: the same types without field ids, a
	// list's element named item, a uuid as 16 bytes.
	plain := make([]arrow.Field, sc.NumFields())
	cols := make([]arrow.Array, sc.NumFields())
	for i, f := range sc.Fields() {
		plain[i], cols[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}, got.Column(i)
	}
	plain[2].Type = arrow.ListOf(arrow.PrimitiveTypes.Int64)
	cols[2] = array.MakeFromData(array.NewData(plain[2].Type, got.Column(2).Len(), got.Column(2).Data().Buffers(), got.Column(2).Data().Children(), got.Column(2).NullN(), 0))
	plain[3].Type = arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64)
	cols[3] = array.MakeFromData(array.NewData(plain[3].Type, got.Column(3).Len(), got.Column(3).Data().Buffers(), got.Column(3).Data().Children(), got.Column(3).NullN(), 0))
	plain[4].Type = &arrow.FixedSizeBinaryType{ByteWidth: 16}
	cols[4] = got.Column(4).(array.ExtensionArray).Storage()
	written := arrow.NewSchema(plain, nil)
	rec := array.NewRecordBatch(written, cols, got.NumRows())
	path := filepath.Join(dir, "spark.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pqarrow.WriteTable(array.NewTableFromRecords(written, []arrow.RecordBatch{rec}), f, 1024, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	pq, err := readAll(path, sc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sc.NumFields() {
		if !arrow.TypeEqual(pq[0].Rec.Column(i).DataType(), sc.Field(i).Type) || pq[0].Rec.Column(i).String() != got.Column(i).String() {
			t.Errorf("column %s: Parquet reads %s %v, NDJSON %v", sc.Field(i).Name, pq[0].Rec.Column(i).DataType(), pq[0].Rec.Column(i), got.Column(i))
		}
	}
	_ = memory.DefaultAllocator
}

// TestNestedInputRefusals: what a nested or byte column cannot hold as
// given is refused naming the line, the column and what is wrong.
func TestNestedInputRefusals(t *testing.T) {
	sc := nestedSchema(t)
	for _, c := range []struct{ line, want string }{
		{`{"id":1,"m":{"a":1,"a":2}}`, `column m: key "a" is given twice`},
		{`{"id":1,"lm":{"1":"a","01":"b"}}`, `column lm: keys "1" and "01" are the same int64`},
		{`{"id":1,"l":[1],"s":{"b":"\ud800"}}`, `column s: value holds a \u escape that is not a character`},
		{`{"id":1,"s":{"a":1,"c":2}}`, "column s: field c is not in"},
		{`{"id":1,"s":{"a":1.5}}`, "column s: field a: value"},
		{`{"id":1,"s":[1]}`, "column s: value"},
		{`{"id":1,"l":{"a":1}}`, "column l: value"},
		{`{"id":1,"l":[1,"x"]}`, "column l: element 1: value"},
		{`{"id":1,"l":[1,""]}`, `column l: element 1: value "" is not a int64`},
		{`{"id":1,"m":{"a":"x"}}`, `column m: key "a": value`},
		{`{"id":1,"u":"f79c3e09677c4bbda4793f349cb785e7"}`, "column u: value"},
		{`{"id":1,"u":"not a uuid"}`, "is not a uuid"},
		{`{"id":1,"f":"AAECAw=="}`, "holds 4 bytes, the column holds exactly 3"},
		{`{"id":1,"f":"AAE"}`, "is not base64"},
		{`{"id":1,"b":"not base64!"}`, "column b: value"},
		{`{"id":1,"t":"24:00:00"}`, "is not a time of day"},
		{`{"id":1,"t":"10:00:00.0000001"}`, "finer than a microsecond"},
		{`{"id":1,"t":"10:00"}`, "is not a time of day"},
	} {
		path := filepath.Join(t.TempDir(), "in.ndjson")
		os.WriteFile(path, []byte("{\"id\":0}\n"+c.line+"\n"), 0o644)
		_, err := readAll(path, sc)
		if err == nil || !strings.Contains(err.Error(), "in.ndjson:2: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want line 2 and %q", c.line, err, c.want)
		}
	}
}
