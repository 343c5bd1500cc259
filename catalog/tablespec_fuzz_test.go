package catalog

import (
	"testing"
)

// FuzzParseType: any type name is refused or gives a type whose own name
// reads back as the same type.
func FuzzParseType(f *testing.F) {
	for _, s := range []string{"long", "decimal(10,2)", " Decimal( 38 , 0 ) ", "timestamptz", "decimal(0,0)", "decimal(39,1)", "decimal(2,3)", "string",
		"uuid", "fixed(16)", "fixed[3]", "struct<a: int, b: list<long>>", "map<string, struct<x: uuid, y: required fixed(2)>>",
		"struct<1: a: optional int, 2: b: required string>", "list<map<date, decimal(9,2)>>", "struct<a: int", "map<string>", "list<geo>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		typ, err := parseType(name)
		if err != nil {
			return
		}
		again, err := parseType(typ.String())
		if err != nil || !again.Equals(typ) {
			t.Fatalf("%q is %s, which reads back as %v, %v", name, typ, again, err)
		}
	})
}
