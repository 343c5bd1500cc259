package swap

import (
	"context"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// TableChecks judges, for lakeswap check, partitions values of a table as
// at holds them by the contract's checks that read more than a row at a
// time: relationships (the other tables as main holds them), unique-table
// (against the rest of the table) and assertions. It gives the findings
// of the checks that refuse, and the warnings of those written warn:.
// (audit.CheckRequest.TableChecks.)
func (p *Publisher) TableChecks(ctx context.Context, ident table.Identifier, at *snapshot.At, values []string) ([]verify.Finding, []string, error) {
	c := at.Contract
	if !hasRelationships(c) && len(c.Assertions) == 0 && !hasUniqueTable(c) {
		return nil, nil, nil
	}
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, nil, err
	}
	// The partitions as a run that stages their rows again would be:
	// their files replaced by themselves.
	plan := &run{Plan: &Plan{Table: strings.Join(ident, ".")}, contract: c}
	if s := at.Meta.CurrentSnapshot(); s != nil {
		plan.BaseSnapshotID = &s.SnapshotID
	}
	for _, v := range values {
		pp := PartitionPlan{Value: v, Key: c.Partition.Key(v), Decided: true} // Decided: not the base's, for unique-table
		for _, path := range snapshot.DataPaths(at.Live[v]) {
			pp.OldFiles = append(pp.OldFiles, parquetio.File{Path: path})
			pp.NewFiles = append(pp.NewFiles, parquetio.File{Path: path})
		}
		for _, path := range snapshot.Paths(at.Live[v]) {
			if !slices.ContainsFunc(pp.OldFiles, func(f parquetio.File) bool { return f.Path == path }) {
				pp.OldDeletes = append(pp.OldDeletes, parquetio.File{Path: path})
			}
		}
		plan.Partitions = append(plan.Partitions, pp)
	}
	j := &judging{load: p.Catalog.LoadTable, tbl: tbl, fsys: at.FS, plan: plan}
	v, err := judgeTableChecks(ctx, j)
	return v.Findings, v.Warnings, err
}

func hasUniqueTable(c *contract.Contract) bool {
	for _, rules := range c.Rules {
		for _, r := range rules {
			if r.TableWide {
				return true
			}
		}
	}
	return false
}

// readColumns reads columns of a data file: of a file deletes apply to
// (a merge-on-read table's, read through snapshot.WithDeletes), every
// column with the deletes applied.
func readColumns(ctx context.Context, fsys icebergio.IO, path string, cols []parquetio.Column) (array.RecordReader, error) {
	if _, ok := fsys.(*snapshot.DeletesIO); ok {
		return snapshot.Open(ctx, fsys, path)
	}
	return parquetio.OpenColumns(ctx, fsys, path, cols)
}
