package swap

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"net/url"
	"path"
	"strings"

	"github.com/apache/iceberg-go/table"
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
func EscapeSegment(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if segmentSafe(c) && !(c == '.' && i == len(s)-1) {
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

// The longest folder name local file systems and MinIO take, and the
// longest key S3 takes. The folder limit holds on every store, so that a
// backfill tried on local files or MinIO holds on S3 too.
const (
	maxSegment = 255
	maxKey     = 1024
)

// PartitionFolder is the folder of a partition: column=value, encoded.
func PartitionFolder(column, value string) string {
	return EscapeSegment(column) + "=" + EscapeSegment(value)
}

// CheckPartitionValue says, before anything is read, whether a partition
// of the table can be staged: whether its folder, under the longest run
// id, fits what the table's storage takes.
func CheckPartitionValue(meta table.Metadata, column, value string) error {
	_, err := stagingPrefix(meta, column, value, strings.Repeat("x", maxRunID), newAttempt())
	return err
}

// checkLength refuses a staging prefix a store cannot hold: a folder name
// over 255 bytes, or on an object store a key over 1024 bytes (with room
// for the file name).
func checkLength(prefix, seg, value string) error {
	u, err := url.Parse(prefix)
	if err != nil {
		return err
	}
	const file = "/part-00000.parquet"
	switch {
	case len(seg) > maxSegment:
		return fmt.Errorf("partition value %q makes a folder name of %d bytes, over the %d that file systems and MinIO take (bytes other than A-Z a-z 0-9 - _ . take three each)",
			short(value), len(seg), maxSegment)
	case u.Scheme != "" && u.Scheme != "file" && len(strings.TrimPrefix(u.Path, "/"))+len(file) > maxKey:
		return fmt.Errorf("partition value %q makes an object key of %d bytes, over the %d an object store takes (bytes other than A-Z a-z 0-9 - _ . take three each)",
			short(value), len(strings.TrimPrefix(u.Path, "/"))+len(file), maxKey)
	}
	return nil
}

// newAttempt names one attempt at a run: a run id may be given again (an
// orchestrator retrying its job), but no two attempts share a prefix.
func newAttempt() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stagingPrefix is where an attempt stages a partition: a fresh folder named
// after the run and the attempt, inside the table's data location, so that a
// staged file never shares a path with a live one or with another attempt's,
// and is found again by its run id. It refuses a prefix that would read, as
// a URL, as anything but itself or that leaves the data location.
func stagingPrefix(meta table.Metadata, column, value, runID, attempt string) (string, error) {
	base := snapshot.DataLocation(meta)
	seg := PartitionFolder(column, value)
	p := base + "/" + seg + "/run-" + runID + "-" + attempt
	if err := checkInside(base, p); err != nil {
		return "", fmt.Errorf("partition %s=%q: %w", column, value, err)
	}
	if err := checkLength(p, seg, value); err != nil {
		return "", err
	}
	return p, nil
}

// checkInside checks that location p names a path below base both as plain
// text and as iceberg-go will parse it.
func checkInside(base, p string) error {
	bu, err1 := url.Parse(base)
	pu, err2 := url.Parse(p)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("staging location %q is not a valid URL", p)
	}
	if pu.RawQuery != "" || pu.Fragment != "" || pu.Scheme != bu.Scheme || pu.Host != bu.Host {
		return fmt.Errorf("staging location %q would not read back as written", p)
	}
	clean := path.Clean(pu.Path)
	if !strings.HasPrefix(clean, strings.TrimSuffix(path.Clean(bu.Path), "/")+"/") || clean != pu.Path {
		return fmt.Errorf("staging location %q leaves the table's data location %s", p, base)
	}
	return nil
}
