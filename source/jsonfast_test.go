package source

import (
	"reflect"
	"testing"
)

// FuzzFastFields: whatever line fastFields reads, decodeObject reads as
// the same row, of the schema's keys alone; fastFields leaving a line is
// always allowed.
func FuzzFastFields(f *testing.F) {
	for _, s := range []string{
		`{"order_date":"2026-01-01","a":"web","b":1,"c":-1.5e+3}`,
		`{}`, ` { "a" : null , "b":true,"c":false,"order_date":""} `, `{"a":1,"a":2}`, `{"a":null,"a":2}`, `{"a":"\u00e9"}`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":[1]}`, `{"a":{"b":1}}`, `{"a":1}x`, `{"a":1,}`, `{"z":1}`,
		"{\"a\":\"\xff\"}", "{\"\xff\":1}", `{"a":"x` + "\t" + `"}`, `{"a":1e5,"b":-0.0}`, `{"a":tru}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		// Names as a schema's, one that a plain key could never be.
		names := []string{"a", "b", "c", "order_date", `a\`, "\x01"}
		fast := make([]any, len(names))
		if !fastFields(line, fast, plainIndex(names)) {
			return
		}
		for i, v := range fast {
			if v == (jsonNull{}) {
				fast[i] = nil
			}
		}
		slow, err := decodeObject(line)
		if err != nil {
			t.Fatalf("fastFields reads %q, decodeObject refuses it: %v", line, err)
		}
		want := make([]any, len(names))
		index := map[string]int{}
		for i, n := range names {
			index[n] = i
		}
		if err := fieldValues(slow, index, want); err != nil {
			t.Fatalf("fastFields reads %q, whose key the schema lacks: %v", line, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("%q: fastFields reads %#v, decodeObject %#v", line, fast, want)
		}
	})
}
