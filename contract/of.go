package contract

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/jsonid"
)

// Table properties that hold the parts of the contract the schema cannot.
const (
	PropAdditive    = "lakeswap.additive-columns" // comma-separated column names
	PropCheckPrefix = "lakeswap.check."           // lakeswap.check.<column> = non-negative,...
	// PropDeltaIntegers = "true" stores near-unique integer, date and time
	// columns as DELTA_BINARY_PACKED: set it when every reader of the table
	// decodes that (Iceberg's Java vectorized reader does from 1.10).
	PropDeltaIntegers = "lakeswap.parquet.delta-integers"
)

// Of reads a table's contract from its metadata: the grain is the schema's
// identifier fields, additive columns and checks are table properties, and
// the partitioning is the spec's fields, each by its source column.
func Of(meta table.Metadata) (*Contract, error) {
	return ofSchema(meta, meta.CurrentSchema())
}

// AtSnapshot is the contract a snapshot was written under: the table's,
// over the schema the snapshot records (its fingerprint is defined over
// that schema, so a run recorded before a column was added still
// verifies).
func AtSnapshot(meta table.Metadata, s *table.Snapshot) (*Contract, error) {
	if s != nil && s.SchemaID != nil {
		for _, sc := range meta.Schemas() {
			if sc.ID == *s.SchemaID {
				return ofSchema(meta, sc)
			}
		}
	}
	return Of(meta)
}

func ofSchema(meta table.Metadata, sc *iceberg.Schema) (*Contract, error) {
	spec := meta.PartitionSpec()
	if spec.NumFields() == 0 {
		return nil, fmt.Errorf("table is not partitioned; lakeswap replaces partitions of a partitioned table")
	}
	var fields []Partitioner
	var ids, void []int
	for _, pf := range spec.Fields() {
		if _, ok := pf.Transform.(iceberg.VoidTransform); ok {
			// A field a format-v1 table dropped from its spec: it stays,
			// always null, and partitions nothing.
			void = append(void, pf.FieldID)
			continue
		}
		src, ok := sc.FindFieldByID(pf.SourceID())
		if !ok {
			return nil, fmt.Errorf("partition source column %d is not in the schema", pf.SourceID())
		}
		col := slices.IndexFunc(sc.Fields(), func(f iceberg.NestedField) bool { return f.ID == src.ID })
		if col < 0 {
			return nil, fmt.Errorf("partition source column %s is not a top-level column", src.Name)
		}
		part, err := NewPartitioner(col, src.Name, src.Type, pf.Transform.String())
		if err != nil {
			return nil, err
		}
		part.Field = pf.Name
		if slices.ContainsFunc(fields, func(f Partitioner) bool { return f.Name == src.Name }) {
			return nil, fmt.Errorf("table has two partition fields of column %s; lakeswap names a field by its column", src.Name)
		}
		fields, ids = append(fields, part), append(ids, pf.FieldID)
	}

	var grain []string
	for _, id := range sc.IdentifierFieldIDs {
		f, ok := sc.FindFieldByID(id)
		if !ok {
			return nil, fmt.Errorf("identifier field %d is not in the schema", id)
		}
		grain = append(grain, f.Name)
	}
	props := meta.Properties()
	additive := splitList(props[PropAdditive])
	checks := map[string][]Check{}
	for k, v := range props {
		if col, ok := strings.CutPrefix(k, PropCheckPrefix); ok {
			checks[col] = append(checks[col], SplitChecks(v)...)
		}
	}
	parts := NewPartitioning(fields, ids)
	parts.void = void
	c, err := newContract(sc, grain, additive, checks, parts)
	if err != nil {
		return nil, fmt.Errorf("table contract: %w", err)
	}
	c.SpecID = spec.ID()
	if c.Assertions, err = assertions(props); err != nil {
		return nil, fmt.Errorf("table contract: %w", err)
	}
	c.DeltaIntegers = props[PropDeltaIntegers] == "true"
	c.Band = DefaultBand
	if v, ok := props[PropPlausibleBand]; ok {
		if c.Band, err = ParseBand(v); err != nil {
			return nil, fmt.Errorf("table property %s: %w", PropPlausibleBand, err)
		}
	}
	if v, ok := props[PropFreezeAfter]; ok {
		if c.Freeze, err = ParseFreeze(v); err != nil {
			return nil, fmt.Errorf("table property %s: %w", PropFreezeAfter, err)
		}
		// A freeze that could judge no partition is refused, never
		// silently skipped.
		if _, ok := c.PeriodField(); !ok {
			return nil, fmt.Errorf("table property %s=%s: the table has no partition field of a date or time (a date, or a year, month, day or hour) to freeze by", PropFreezeAfter, v)
		}
	}
	return c, nil
}

// NullPartition is what PartitionOf gives for a file of the null partition:
// not valid UTF-8, so no declared value (which ParseValue checks) can ever
// match it, as the text "null" would.
const NullPartition = "\xffnull"

// PartitionOf gives the partition value of a data file, in the form the
// Partitioner gives for a row; a field with no value is NullPartition.
func (c *Contract) PartitionOf(df iceberg.DataFile) string {
	return c.Partition.Of(df)
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

// Summary is a contract as a plan records it: enough to check, when the
// plan is committed, perhaps by another process, that the table still
// holds the contract the plan was staged under.
type Summary struct {
	SchemaID jsonid.Int `json:"schema_id"`
	SpecID   jsonid.Int `json:"spec_id"`
	Grain    []string   `json:"grain"`
	Additive []string   `json:"additive,omitempty"`
	// Scales are the decimal additive columns' scales: their sums are
	// unscaled values, 1234 at scale 2 being 12.34.
	Scales map[string]int     `json:"scales,omitempty"`
	Checks map[string][]Check `json:"checks,omitempty"`
	// Assertions are the table's SQL assertions, by name.
	Assertions map[string]string `json:"assertions,omitempty"`
	Partition  string            `json:"partition"` // the source columns, joined with ','
	Transform  string            `json:"transform"` // their transforms, joined with ','

}

// Summary summarises the contract.
func (c *Contract) Summary() Summary {
	s := Summary{SchemaID: jsonid.Int(c.Schema.ID), SpecID: jsonid.Int(c.SpecID), Partition: c.Partition.Name, Transform: c.Partition.Transforms()}
	for _, i := range c.Grain {
		s.Grain = append(s.Grain, c.ColumnName(i))
	}
	for _, i := range c.Additive {
		s.Additive = append(s.Additive, c.ColumnName(i))
		if d, ok := c.Fields[i].Type.(iceberg.DecimalType); ok {
			if s.Scales == nil {
				s.Scales = map[string]int{}
			}
			s.Scales[c.ColumnName(i)] = d.Scale()
		}
	}
	for i, checks := range c.Checks {
		if s.Checks == nil {
			s.Checks = map[string][]Check{}
		}
		s.Checks[c.ColumnName(i)] = append([]Check(nil), checks...)
	}
	for _, a := range c.Assertions {
		if s.Assertions == nil {
			s.Assertions = map[string]string{}
		}
		s.Assertions[a.Name] = a.SQL
		if a.Warn {
			s.Assertions[a.Name] = "warn:" + a.SQL
		}
	}
	return s
}
