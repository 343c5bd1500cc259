package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

// TestEveryPrintedValueDeclarable: for a table identity-partitioned on
// each type, the partition value history prints is one --partitions takes
// back: publishing the same row under it commits nothing. The empty
// string and the empty bytes, commas, quotes and outer spaces included.
func TestEveryPrintedValueDeclarable(t *testing.T) {
	s := newSite(t, "sqlite+local")
	for i, c := range []struct {
		typ  iceberg.Type
		json string
		decl string
	}{
		{iceberg.PrimitiveTypes.String, `""`, `k=""`},
		{iceberg.PrimitiveTypes.String, `"a,\"b"`, `k="a,""b"`},
		{iceberg.PrimitiveTypes.String, `" x "`, `k=" x "`},
		{iceberg.PrimitiveTypes.String, `"a..b"`, `k=a..b`},
		{iceberg.PrimitiveTypes.Binary, `""`, `k=""`},
		{iceberg.PrimitiveTypes.Binary, `"//8="`, `k=//8=`},
		{iceberg.PrimitiveTypes.Float64, `-0.0`, `k=-0`},
		{iceberg.PrimitiveTypes.Float64, `"NaN"`, `k=NaN`},
		{iceberg.PrimitiveTypes.Float64, `1e300`, `k=1e+300`},
		{iceberg.PrimitiveTypes.TimestampTz, `"2026-01-01T10:00:00.25Z"`, `k=2026-01-01T10:00:00.25+00:00`},
		{iceberg.PrimitiveTypes.Timestamp, `"2026-01-01T10:00:00"`, `k=2026-01-01T10:00:00`},
		{iceberg.DecimalTypeOf(9, 2), `"-0.50"`, `k=-0.50`},
		{iceberg.PrimitiveTypes.Bool, `false`, `k=false`},
		{iceberg.PrimitiveTypes.UUID, `"f79c3e09-677c-4bbd-a479-3f349cb785e7"`, `k=f79c3e09-677c-4bbd-a479-3f349cb785e7`},
		{iceberg.FixedTypeOf(2), `"AAE="`, `k=AAE=`},
		{iceberg.PrimitiveTypes.Time, `"10:00:00.5"`, `k=10:00:00.5`},
		{iceberg.PrimitiveTypes.Int32, `-7`, `k=-7`},
	} {
		sc := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "k", Type: c.typ},
			iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "k", Transform: iceberg.IdentityTransform{}})
		name := "p" + string(rune('a'+i))
		createEngineTable(t, s, name, sc, spec)
		in := write(t, t.TempDir(), "in.ndjson", `{"k":`+c.json+`,"id":1}`+"\n")
		s.must("publish", "--table", "eng."+name, "--partitions", c.decl, in)
		printed := printedKey.FindString(s.must("history", "--table", "eng."+name))
		if printed != c.decl {
			t.Errorf("%s %s: history prints %s, want %s", c.typ, c.json, printed, c.decl)
		}
		meta := s.metadata("eng." + name)
		if code, out, errs := s.cli("publish", "--table", "eng."+name, "--partitions", printed, in); code != 0 || !strings.Contains(out, "unchanged") || s.metadata("eng."+name) != meta {
			t.Errorf("%s %s: the same row under --partitions %s as history prints it: exit %d: %s%s", c.typ, c.json, printed, code, out, errs)
		}
	}
}

// printedKey is a partition key of field k as history prints it.
var printedKey = regexp.MustCompile(`k=("(?:[^"]|"")*"|\S*)`)
