package swap

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/verify"
)

// layout is how a table is partitioned, as lakeswap needs it: the one
// partition field, its source column's type, and the contract's partitioner.
type layout struct {
	field   iceberg.PartitionField
	srcType iceberg.Type
}

// partitionValue gives the human-readable partition value of a data file, in
// the same form verify.Partitioner gives for a row.
func (l layout) partitionValue(df iceberg.DataFile) string {
	return l.field.Transform.ToHumanStrType(l.srcType, df.Partition()[l.field.FieldID])
}

// identityString reports whether the partition is a string column as is.
func (l layout) identityString() bool {
	_, isString := l.srcType.(iceberg.StringType)
	return isString && l.field.Transform.String() == "identity"
}

// ContractOf reads a table's lakeswap contract from its metadata: the grain is
// the schema's identifier fields, additive columns and checks are table
// properties. lakeswap publishes tables with exactly one partition field.
func ContractOf(meta table.Metadata) (*verify.Contract, error) {
	c, _, err := contractOf(meta)
	return c, err
}

func contractOf(meta table.Metadata) (*verify.Contract, layout, error) {
	sc := meta.CurrentSchema()
	spec := meta.PartitionSpec()
	if spec.NumFields() != 1 {
		return nil, layout{}, fmt.Errorf("table has %d partition fields; lakeswap publishes tables partitioned by exactly one field", spec.NumFields())
	}
	pf := spec.Field(0)
	src, ok := sc.FindFieldByID(pf.SourceID())
	if !ok {
		return nil, layout{}, fmt.Errorf("partition source column %d is not in the schema", pf.SourceID())
	}
	col := -1
	for i, f := range sc.Fields() {
		if f.ID == src.ID {
			col = i
		}
	}
	part, err := verify.NewPartitioner(col, src.Name, src.Type, pf.Transform.String())
	if err != nil {
		return nil, layout{}, err
	}

	var grain []string
	for _, id := range sc.IdentifierFieldIDs {
		f, ok := sc.FindFieldByID(id)
		if !ok {
			return nil, layout{}, fmt.Errorf("identifier field %d is not in the schema", id)
		}
		grain = append(grain, f.Name)
	}
	props := meta.Properties()
	var additive []string
	if v := props[catalog.PropAdditive]; v != "" {
		additive = splitList(v)
	}
	checks := map[string][]verify.Check{}
	for k, v := range props {
		if col, ok := strings.CutPrefix(k, catalog.PropCheckPrefix); ok {
			for _, c := range splitList(v) {
				checks[col] = append(checks[col], verify.Check(c))
			}
		}
	}
	c, err := verify.NewContract(sc, grain, additive, checks, part)
	if err != nil {
		return nil, layout{}, fmt.Errorf("table contract: %w", err)
	}
	return c, layout{field: pf, srcType: src.Type}, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
