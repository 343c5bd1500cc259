package swap

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// A table whose partition spec changed (months, then days) keeps the files
// written under the earlier spec: a month's file holds rows of thirty
// days. Replacing a day around such a file would leave the file's rows of
// that day beside the new ones. A run finds the earlier files that hold
// rows of what it declares and is refused, naming them; or, asked to
// rewrite them (Request.RewriteOverlapping), takes them out in its commit
// and stages their rows of every partition it does not declare again,
// from the table, as carried partitions: what those partitions hold is
// then in their new files, validated and fingerprinted like the rest.

// overlapping finds the earlier spec's files (earlier) that hold rows of
// the declared partitions (values) and refuses the run, or plans their
// rewrite: each partition they hold rows of is the run's (carried from the
// table when not declared) and names them as shares of its rows at the
// base. It returns the earlier files the run leaves as they are.
func (plan *run) overlapping(ctx context.Context, meta table.Metadata, req Request, all map[string][]iceberg.DataFile, earlier []iceberg.DataFile, values []string) ([]iceberg.DataFile, error) {
	c := plan.contract
	overlaps, err := snapshot.Overlaps(ctx, plan.baseIO, c, earlier, values, req.RewriteOverlapping)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", plan.Table, err)
	}
	if len(overlaps) == 0 {
		return earlier, nil
	}
	if !req.RewriteOverlapping || len(req.Adopt) > 0 {
		return nil, refuseOverlaps(plan.Table, c, overlaps, values, len(req.Adopt) > 0)
	}
	var findings []verify.Finding
	for _, o := range overlaps {
		switch {
		case o.File.ContentType() != iceberg.EntryContentData:
			findings = append(findings, earlierFinding(c, o, values, "is a delete file of an earlier partition spec that may apply to rows of the run's partitions; lakeswap does not rewrite deletes of an earlier spec: rewrite the table's files to its current spec first (Spark's rewrite_data_files does)"))
		case snapshot.Deleted(plan.baseIO, o.File.FilePath()):
			findings = append(findings, earlierFinding(c, o, values, "has deletes applying to it; lakeswap rewrites only files of an earlier spec that no delete applies to: rewrite the table's files to its current spec first (Spark's rewrite_data_files does)"))
		case o.Unplaced > 0:
			findings = append(findings, earlierFinding(c, o, values, fmt.Sprintf("holds %s with no value of the partition columns %s (a null): no partition of the run can carry them, and rewriting the file would lose them; rewrite the table's files to its current spec first (Spark's rewrite_data_files does)", words.Count(o.Unplaced, "row"), c.Partition.Name)))
		}
	}
	if len(findings) > 0 {
		return nil, &outcome.RefusedError{Table: plan.Table, Findings: findings, Cleanup: "nothing was staged"}
	}
	// Every partition the rewritten files hold rows of is the run's.
	declared := map[string]bool{}
	for _, v := range values {
		declared[v] = true
	}
	shares := map[string][]string{}
	plan.rewritten = map[string]iceberg.DataFile{}
	for _, o := range overlaps {
		path := o.File.FilePath()
		plan.rewritten[path] = o.File
		plan.Rewritten = append(plan.Rewritten, parquetio.File{Path: path, Rows: o.File.Count(), Bytes: o.File.FileSizeBytes()})
		for _, v := range o.Values {
			shares[v] = append(shares[v], path)
			if declared[v] {
				continue
			}
			declared[v] = true
			if err := CheckPartitionValue(meta, c.Partition, v); err != nil {
				return nil, fmt.Errorf("table %s: %s, written under an earlier partition spec, holds rows of partition %s: %w", plan.Table, path, c.Partition.Key(v), err)
			}
			if err := plan.addPartition(meta, v, all[v], true); err != nil {
				return nil, fmt.Errorf("table %s: %w", plan.Table, err)
			}
		}
	}
	slices.SortFunc(plan.Partitions, func(a, b PartitionPlan) int { return strings.Compare(a.Value, b.Value) })
	for i := range plan.Partitions {
		plan.Partitions[i].OldShares = shares[plan.Partitions[i].Value]
	}
	return slices.DeleteFunc(slices.Clone(earlier), func(df iceberg.DataFile) bool {
		_, ok := plan.rewritten[df.FilePath()]
		return ok
	}), nil
}

// refuseOverlaps is the refusal of a run that declares partitions an
// earlier spec's files hold rows of.
func refuseOverlaps(table string, c *contract.Contract, overlaps []snapshot.Overlap, declared []string, adopting bool) error {
	how := "; rewrite the table's files to its current spec first (Spark's rewrite_data_files does), pass --rewrite-overlapping to carry their other rows into the run's new files, or declare only partitions such files hold no rows of"
	if adopting {
		how = "; files adopted as they are cannot carry their rows: rewrite the table's files to its current spec first (Spark's rewrite_data_files does), or publish the rows with --rewrite-overlapping"
	}
	var findings []verify.Finding
	for _, o := range overlaps {
		what := "holds rows of "
		if o.Values == nil {
			what = "is a delete file that may apply to rows of "
		}
		findings = append(findings, earlierFinding(c, o, declared, what+displayKeys(keysAmong(c, o, declared))+"; replacing around it would leave them beside the new rows"+how))
	}
	return &outcome.RefusedError{Table: table, Findings: findings, Cleanup: "nothing was staged"}
}

// earlierFinding is a finding on a file of an earlier spec.
func earlierFinding(c *contract.Contract, o snapshot.Overlap, declared []string, why string) verify.Finding {
	return verify.Finding{Kind: verify.KindEarlierSpec, Partition: keysAmong(c, o, declared)[0],
		Message: fmt.Sprintf("%s, written under an earlier partition spec, %s", o.File.FilePath(), why)}
}

// keysAmong names the declared partitions an overlapping file holds rows
// of, or may hold (a delete file), as keys (verify.DisplayKey shows them).
func keysAmong(c *contract.Contract, o snapshot.Overlap, declared []string) []string {
	var out []string
	for _, v := range declared {
		if o.Values == nil || slices.Contains(o.Values, v) {
			out = append(out, c.Partition.Key(v))
		}
	}
	if len(out) == 0 {
		out = []string{"(a delete file)"}
	}
	return out
}

// earlierSpec groups the earlier spec's files among files by partition.
const earlierSpec = contract.EarlierSpec

// displayKeys shows keys as DisplayKey does, joined by ", ".
func displayKeys(keys []string) string {
	shown := make([]string, len(keys))
	for i, k := range keys {
		shown[i] = verify.DisplayKey(k)
	}
	return strings.Join(shown, ", ")
}
