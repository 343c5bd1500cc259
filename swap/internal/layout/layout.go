package layout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Staged files live at <data>/<column>=<value>/run-<run id>-<attempt>/, with
// the column and the value encoded as below.
//
// Why not Iceberg Java's URL encoding: iceberg-go reads every location as a
// URL, so a '%' in a path is decoded ('%2F' becomes '/'), and '#' and '?'
// cut the path short. A segment must therefore mean the same thing read as
// a URL and read as a plain path. lakeswap keeps the bytes A-Z a-z 0-9 '-'
// '_' '.' as they are and writes every other byte (of the UTF-8 value) as
// '~' and two upper-case hex digits: "C#" is "C~23", "a/b" is "a~2Fb", ""
// is "". A '.' that ends a value is escaped too ("a.." is "a.~2E"), since
// iceberg-go's S3 reader rewrites "../" in a key. '~' is unreserved in URLs
// and is itself escaped, so the encoding is one-to-one and decodes back.
// The '=' between the column and the value keeps a segment from ever being
// "." or "..".

// segmentSafe reports whether b is kept as is in a path segment.
func segmentSafe(b byte) bool {
	return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '-' || b == '_' || b == '.'
}

// EscapeSegment encodes a partition column name or value for a path.
func EscapeSegment(s string) string { return escape(s, true) }

// escape writes s as a segment; lastDot says whether a '.' that ends it is
// escaped, as it must be where it ends a folder's name.
func escape(s string, lastDot bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if segmentSafe(c) && !(lastDot && c == '.' && i == len(s)-1) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('~')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// UnescapeSegment decodes what EscapeSegment wrote.
func UnescapeSegment(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '~':
			if i+2 >= len(s) {
				return "", fmt.Errorf("path segment %q: '~' needs two hex digits", s)
			}
			v, err := hex.DecodeString(s[i+1 : i+3])
			if err != nil || strings.ToUpper(s[i+1:i+3]) != s[i+1:i+3] {
				return "", fmt.Errorf("path segment %q: '~%s' is not an escape", s, s[i+1:i+3])
			}
			b.WriteByte(v[0])
			i += 2
		case segmentSafe(c):
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("path segment %q: byte %q should have been escaped", s, c)
		}
	}
	// One segment per value: an escape of a byte kept as it is, or a
	// lower-case one, is another engine's folder, not lakeswap's.
	if EscapeSegment(b.String()) != s {
		return "", fmt.Errorf("path segment %q is not how lakeswap writes %q", s, b.String())
	}
	return b.String(), nil
}

// A run's attempt stages into run-<run>-<attempt>, and is held by
// <run>-<attempt>.json, where <run> is the run id escaped as a segment (an
// Airflow run id scheduled__2026-01-01T00:00:00+00:00 is
// scheduled__2026-01-01T00~3A00~3A00~2B00~3A00). A run id whose escape is
// longer than MaxRunSegment keeps a readable head and ends in "~~" and 16
// hex digits of its SHA-256: "~~" is never an escape, so the two forms
// never meet.
const MaxRunSegment = 120

// RunSegment is a run id as its folders and holds name it.
func RunSegment(runID string) string {
	seg := escape(runID, false)
	if strings.HasPrefix(seg, ".") {
		seg = "~2E" + seg[1:] // a name that starts with '.' is hidden
	}
	if len(seg) <= MaxRunSegment {
		return seg
	}
	head := seg[:MaxRunSegment-18]
	if i := strings.LastIndexByte(head, '~'); i >= len(head)-2 {
		head = head[:i] // never half an escape
	}
	sum := sha256.Sum256([]byte(runID))
	return head + "~~" + hex.EncodeToString(sum[:8])
}

// RunOf is the run id a run segment names, for a person: the segment
// itself where it was shortened.
func RunOf(seg string) string {
	if strings.Contains(seg, "~~") {
		return seg
	}
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		if seg[i] == '~' && i+2 < len(seg) {
			if v, err := hex.DecodeString(seg[i+1 : i+3]); err == nil {
				b.WriteByte(v[0])
				i += 2
				continue
			}
		}
		b.WriteByte(seg[i])
	}
	return b.String()
}

// RunPattern matches a run segment in a regular expression.
const RunPattern = `[A-Za-z0-9._~-]{1,120}` // {1,MaxRunSegment}

// RunFolder is the folder an attempt of a run stages a partition into.
func RunFolder(runID, attempt string) string {
	return "run-" + RunSegment(runID) + "-" + attempt
}
