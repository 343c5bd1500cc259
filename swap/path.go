package swap

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/swap/internal/layout"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// EscapeSegment encodes a partition column name or value for a path, as
// docs/layout.md says.
func EscapeSegment(s string) string { return layout.EscapeSegment(s) }

// UnescapeSegment decodes what EscapeSegment wrote.
func UnescapeSegment(s string) (string, error) { return layout.UnescapeSegment(s) }

// The longest folder name local file systems and MinIO take, and the
// longest key S3 takes. The folder limit holds on every store, so that a
// backfill tried on local files or MinIO holds on S3 too.
const (
	maxSegment = 255
	maxKey     = 1024
)

// RunSegment is a run id as the names of its files hold it (escaped as a
// partition value is, and shortened past 120 bytes): plan-<segment>.json.
func RunSegment(runID string) string { return layout.RunSegment(runID) }

// PartitionFolder is the folder of a partition: column=value, encoded.
func PartitionFolder(column, value string) string {
	return EscapeSegment(column) + "=" + EscapeSegment(value)
}

// CheckPartitionValue says, before anything is read, whether a partition
// of the table can be staged: whether its folder, under the longest run
// id, fits what the table's storage takes.
func CheckPartitionValue(meta table.Metadata, part contract.Partitioning, value string) error {
	_, err := stagingPrefix(meta, part, value, strings.Repeat("x", layout.MaxRunSegment), newAttempt())
	return err
}

// partitionFolders are a partition's folders: column=value, encoded, one
// per field.
func partitionFolders(part contract.Partitioning, value string) []string {
	var out []string
	for _, s := range part.Segments(value) {
		out = append(out, PartitionFolder(s[0], s[1]))
	}
	return out
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
			verify.Short(value), len(seg), maxSegment)
	case u.Scheme != "" && u.Scheme != "file" && len(strings.TrimPrefix(u.Path, "/"))+len(file) > maxKey:
		return fmt.Errorf("partition value %q makes an object key of %d bytes, over the %d an object store takes (bytes other than A-Z a-z 0-9 - _ . take three each)",
			verify.Short(value), len(strings.TrimPrefix(u.Path, "/"))+len(file), maxKey)
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
func stagingPrefix(meta table.Metadata, part contract.Partitioning, value, runID, attempt string) (string, error) {
	base := snapshot.DataLocation(meta)
	folders := partitionFolders(part, value)
	p := base + "/" + strings.Join(folders, "/") + "/" + layout.RunFolder(runID, attempt)
	if err := checkInside(base, p); err != nil {
		return "", fmt.Errorf("partition %s: %w", part.Key(value), err)
	}
	for _, seg := range folders {
		if err := checkLength(p, seg, value); err != nil {
			return "", err
		}
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
