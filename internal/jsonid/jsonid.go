// Package jsonid holds ids as lakeswap's JSON writes them: a string of
// decimal digits. A snapshot id is a 64-bit number, past the 2^53 that
// JavaScript and jq hold exactly as a number, so every id lakeswap prints
// is a string, whatever its size, and one rule serves every script.
// Reading, an id may also be a number: files lakeswap wrote before it
// quoted every id still read.
package jsonid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Int is an id printed as a string.
type Int int64

// MarshalJSON prints the id as a string of digits.
func (i Int) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, strconv.FormatInt(int64(i), 10)), nil
}

// UnmarshalJSON reads a string of digits or a number.
func (i *Int) UnmarshalJSON(b []byte) error {
	v, err := parse(b)
	*i = Int(v)
	return err
}

// Ints is a list of ids, each printed as a string.
type Ints []int64

// MarshalJSON prints each id as a string of digits.
func (l Ints) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	out := []byte{'['}
	for n, v := range l {
		if n > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, strconv.FormatInt(v, 10))
	}
	return append(out, ']'), nil
}

// UnmarshalJSON reads a list of ids, strings or numbers.
func (l *Ints) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(Ints, 0, len(raw))
	for _, r := range raw {
		v, err := parse(r)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	*l = out
	return nil
}

func parse(b []byte) (int64, error) {
	s := string(bytes.TrimSpace(b))
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("an id is a string of digits, not %s", b)
	}
	return v, nil
}
