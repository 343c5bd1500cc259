package catalog

import (
	"testing"
)

// FuzzParseType: any type name is refused or gives a type whose own name
// reads back as the same type.
func FuzzParseType(f *testing.F) {
	for _, s := range []string{"long", "decimal(10,2)", " Decimal( 38 , 0 ) ", "timestamptz", "decimal(0,0)", "decimal(39,1)", "decimal(2,3)", "string"} {
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
