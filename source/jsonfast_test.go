package source

import (
	"reflect"
	"testing"
)

// FuzzFastObject: whatever line fastObject reads, decodeObject reads as
// the same row; fastObject leaving a line is always allowed.
func FuzzFastObject(f *testing.F) {
	for _, s := range []string{
		`{"order_date":"2026-01-01","channel":"web","order_count":1,"amount_cents":-1.5e+3}`,
		`{}`, ` { "a" : null , "b":true,"c":false,"d":""} `, `{"a":1,"a":2}`, `{"a":"\u00e9"}`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":[1]}`, `{"a":{"b":1}}`, `{"a":1}x`, `{"a":1,}`,
		"{\"a\":\"\xff\"}", "{\"\xff\":1}", `{"a":"x` + "\t" + `"}`, `{"a":1e5,"b":-0.0}`, `{"a":tru}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		// Names as a schema's, one that a plain key could never be.
		names := plainNames([]string{"a", "b", "order_date", `a\`, "\x01"})
		fast, ok := fastObject(line, map[string]any{"stale": 1}, names)
		if !ok {
			return
		}
		slow, err := decodeObject(line)
		if err != nil {
			t.Fatalf("fastObject reads %q, decodeObject refuses it: %v", line, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fastObject reads %#v, decodeObject %#v", line, fast, slow)
		}
	})
}
