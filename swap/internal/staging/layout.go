package staging

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/stats"
	"github.com/lakeswap/lakeswap/swap/internal/layout"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// The longest folder name local file systems and MinIO take, and the
// longest key S3 takes. The folder limit holds on every store, so that a
// backfill tried on local files or MinIO holds on S3 too.
const (
	maxSegment = 255
	maxKey     = 1024
)

// PartitionFolder is the folder of a partition: column=value, encoded.
func PartitionFolder(column, value string) string {
	return layout.EscapeSegment(column) + "=" + layout.EscapeSegment(value)
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

// NewAttempt names one attempt at a run: a run id may be given again (an
// orchestrator retrying its job), but no two attempts share a prefix.
func NewAttempt() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Prefix is where an attempt stages a partition: a fresh folder named
// after the run and the attempt, inside the table's data location, so that a
// staged file never shares a path with a live one or with another attempt's,
// and is found again by its run id. It refuses a prefix that would read, as
// a URL, as anything but itself or that leaves the data location.
func Prefix(meta table.Metadata, part contract.Partitioning, value, runID, attempt string) (string, error) {
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

// Describe reads a staged file's footer for its statistics and states
// its partition. iceberg-go infers the partition from the column's bounds,
// which cannot give a bucket (the hash keeps no order) nor say that every
// value is the empty string: there, and wherever the inference differs,
// the partition the file was staged for (and checked against every row
// of) is stated.
func Describe(ctx context.Context, fsys icebergio.IO, meta table.Metadata, c *contract.Contract, path string, schema *iceberg.Schema, props iceberg.Properties, value string) (iceberg.DataFile, error) {
	spec := meta.PartitionSpec()
	ordered := true
	for _, f := range spec.Fields() {
		ordered = ordered && f.Transform.PreservesOrder()
	}
	var df iceberg.DataFile
	var err error
	if ordered {
		df, err = table.FileToDataFile(ctx, fsys, path, schema, spec, 0, props)
		if err != nil || c.PartitionOf(df) != value {
			df = nil
		}
	}
	// A float column's zero bounds hold both zeros (stats.WidenZeros).
	var lower, upper map[int][]byte
	widened := false
	if df != nil {
		if lower, upper, widened = stats.WidenZeros(schema, df.LowerBoundValues(), df.UpperBoundValues()); !widened {
			return df, nil
		}
	} else {
		if df, err = table.FileToDataFile(ctx, fsys, path, schema, *iceberg.UnpartitionedSpec, 0, props); err != nil {
			return nil, err
		}
		lower, upper, _ = stats.WidenZeros(schema, df.LowerBoundValues(), df.UpperBoundValues())
	}
	raw, err := c.Partition.Raw(value)
	if err != nil {
		return nil, err
	}
	return withPartition(df, spec, raw, c.Partition.LogicalTypes(), lower, upper)
}

// withPartition copies a data file's description with the given partition
// value and bounds.
func withPartition(df iceberg.DataFile, spec iceberg.PartitionSpec, values map[int]any, logical map[int]string, lower, upper map[int][]byte) (iceberg.DataFile, error) {
	b, err := iceberg.NewDataFileBuilder(spec, df.ContentType(), df.FilePath(), df.FileFormat(),
		values, logical, nil, df.Count(), df.FileSizeBytes())
	if err != nil {
		return nil, err
	}
	return b.ColumnSizes(df.ColumnSizes()).ValueCounts(df.ValueCounts()).NullValueCounts(df.NullValueCounts()).
		NaNValueCounts(df.NaNValueCounts()).LowerBoundValues(lower).UpperBoundValues(upper).
		SplitOffsets(df.SplitOffsets()).Build(), nil
}
