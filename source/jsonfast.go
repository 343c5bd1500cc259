package source

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// NDJSON is read a line at a time; encoding/json's decoder, made twice
// for every value (to see its raw bytes), ran at about 110k rows a second.
// Most lines are flat objects of the schema's keys and plain strings,
// numbers, booleans and nulls: fastFields reads those in one pass,
// straight into the values of the row's fields, and leaves every other
// line (an escape in a string, a nested value, a key the schema lacks,
// anything malformed or refused) to decodeObject, so that what is
// accepted, and every refusal, stays decodeObject's.

// fastFields reads a flat JSON object whose strings hold no escape into
// vals, by the field index of each key (index holds the schema's plain
// names); vals is all nil when it is called. ok is false for any other
// line (a key not in index among them), which decodeObject reads; vals
// is then to be cleared.
func fastFields(text []byte, vals []any, index map[string]int) bool {
	i := skipSpace(text, 0)
	if i >= len(text) || text[i] != '{' {
		return false
	}
	i = skipSpace(text, i+1)
	if i < len(text) && text[i] == '}' {
		return skipSpace(text, i+1) == len(text)
	}
	for {
		f, next, ok := plainField(text, i, index)
		// A value of the field already read is a repeated key (nil, a
		// JSON null, is read as the absent sentinel below).
		if !ok || vals[f] != nil {
			return false
		}
		i = skipSpace(text, next)
		if i >= len(text) || text[i] != ':' {
			return false
		}
		i = skipSpace(text, i+1)
		var v any
		if v, i, ok = plainValue(text, i); !ok {
			return false
		}
		if v == nil {
			v = jsonNull{}
		}
		vals[f] = v
		i = skipSpace(text, i)
		if i >= len(text) {
			return false
		}
		switch text[i] {
		case ',':
			i = skipSpace(text, i+1)
		case '}':
			return skipSpace(text, i+1) == len(text)
		default:
			return false
		}
	}
}

// jsonNull marks, while fastFields reads a line, a field given as null,
// so that the key is known to be read; it is nil once the line is read.
type jsonNull struct{}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a string at b[i] that holds no escape and no control
// character, and is valid UTF-8.
func plainString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	start := i + 1
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s := b[start:j]
			if !utf8.Valid(s) {
				return "", j, false
			}
			return string(s), j + 1, true
		case c == '\\' || c < 0x20:
			return "", j, false
		}
	}
	return "", len(b), false
}

// plainIndex maps each of names that needs no escape in JSON (as a
// plain key is written) to its index.
func plainIndex(names []string) map[string]int {
	out := map[string]int{}
	for i, n := range names {
		plain := utf8.ValidString(n)
		for k := 0; k < len(n); k++ {
			if n[k] == '"' || n[k] == '\\' || n[k] < 0x20 {
				plain = false
			}
		}
		if plain {
			out[n] = i
		}
	}
	return out
}

// plainField reads a key at b[i] that is one of index's names, written
// plainly, giving its index.
func plainField(b []byte, i int, index map[string]int) (int, int, bool) {
	if i < len(b) && b[i] == '"' {
		if end := bytes.IndexByte(b[i+1:], '"'); end >= 0 {
			if f, ok := index[string(b[i+1:i+1+end])]; ok {
				return f, i + end + 2, true
			}
		}
	}
	return 0, i, false
}

// plainValue reads a plain string, a number, true, false or null at b[i],
// as decodeObject gives them.
func plainValue(b []byte, i int) (any, int, bool) {
	if i >= len(b) {
		return nil, i, false
	}
	switch c := b[i]; {
	case c == '"':
		s, next, ok := plainString(b, i)
		if !ok {
			return nil, next, false
		}
		if s == "" {
			return jsonEmpty{}, next, true // JSON has null for a missing value; "" is text
		}
		return s, next, true
	case c == '-' || c >= '0' && c <= '9':
		end, ok := number(b, i)
		return json.Number(b[i:end]), end, ok
	case c == 't' && hasWord(b, i, "true"):
		return true, i + 4, true
	case c == 'f' && hasWord(b, i, "false"):
		return false, i + 5, true
	case c == 'n' && hasWord(b, i, "null"):
		return nil, i + 4, true
	}
	return nil, i, false
}

func hasWord(b []byte, i int, w string) bool {
	return len(b)-i >= len(w) && string(b[i:i+len(w)]) == w
}

// number reads a JSON number at b[i]: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func number(b []byte, i int) (int, bool) {
	digits := func(j int) int {
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}
