package swap

import (
	"context"
	"errors"
	"fmt"
	"github.com/apache/iceberg-go"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/runrecord"
	"maps"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
)

// TableSpec is a table as a schema file declares it: its columns, its
// partition column and lakeswap's contract.
type TableSpec = catalog.TableSpec

// ReadTableSpec reads and checks a schema file.
func ReadTableSpec(file string) (TableSpec, error) {
	spec, err := catalog.ReadTableSpec(file)
	if err != nil {
		return spec, InvalidRequest(err)
	}
	if _, _, _, err := spec.Build(); err != nil {
		return spec, InvalidRequest(fmt.Errorf("%s: %w", file, err))
	}
	return spec, nil
}

// CreateTable creates a table as its spec declares it, in the catalog
// given.
func CreateTable(ctx context.Context, cat *catalog.Catalog, ident table.Identifier, spec TableSpec) (*table.Table, error) {
	return catalog.CreateTable(ctx, cat, ident, spec)
}

// TableInfo is a table as `lakeswap table describe` shows it: its schema,
// partitioning, lakeswap's contract and properties, and its last runs.
type TableInfo struct {
	Table            string            `json:"table"`
	Location         string            `json:"location"`
	MetadataLocation string            `json:"metadata_location"`
	Columns          []ColumnInfo      `json:"columns"`
	Partition        []string          `json:"partition"` // each field as transform(column)
	Contract         *contract.Summary `json:"contract,omitempty"`
	// ContractError says why lakeswap cannot publish to the table, when
	// it cannot.
	ContractError string            `json:"contract_error,omitempty"`
	Properties    map[string]string `json:"lakeswap_properties"`
	// Runs are the last runs main holds, newest first.
	Runs []runrecord.Entry `json:"last_runs"`
}

// ColumnInfo is one column of a table's schema.
type ColumnInfo struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// describedRuns is how many of main's last runs Describe lists.
const describedRuns = 10

// Describe reads a table's schema, partitioning, contract, lakeswap
// properties and last runs.
func (p *Publisher) Describe(ctx context.Context, ident table.Identifier) (*TableInfo, error) {
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	meta := tbl.Metadata()
	info := &TableInfo{Table: strings.Join(ident, "."), Location: meta.Location(), MetadataLocation: tbl.MetadataLocation(),
		Properties: map[string]string{}, Columns: []ColumnInfo{}, Partition: []string{}, Runs: []runrecord.Entry{}}
	for _, f := range meta.CurrentSchema().Fields() {
		info.Columns = append(info.Columns, ColumnInfo{Name: f.Name, Type: f.Type.String(), Required: f.Required})
	}
	spec := meta.PartitionSpec()
	for _, f := range spec.Fields() {
		src, _ := meta.CurrentSchema().FindColumnName(f.SourceID())
		info.Partition = append(info.Partition, fmt.Sprintf("%s(%s)", f.Transform, src))
	}
	if c, err := contract.Of(meta); err != nil {
		info.ContractError = err.Error()
	} else {
		s := c.Summary()
		info.Contract = &s
	}
	for k, v := range meta.Properties() {
		if strings.HasPrefix(k, "lakeswap.") {
			info.Properties[k] = v
		}
	}
	main, _, err := p.History(ctx, ident)
	if err != nil {
		return nil, err
	}
	for _, e := range main {
		if e.RunID != "" && len(info.Runs) < describedRuns {
			info.Runs = append(info.Runs, e)
		}
	}
	return info, nil
}

// SetProperties changes lakeswap's table properties (lakeswap.*: the
// plausible band, checks, additive columns) in one commit, pinned to
// main's snapshot as loaded: a commit meanwhile is a conflict, and nothing
// changes. A value that would make every publish refuse the table is
// refused, naming it; an empty value removes the property.
func (p *Publisher) SetProperties(ctx context.Context, ident table.Identifier, set map[string]string) error {
	name := strings.Join(ident, ".")
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("load table %s: %w", name, err)
	}
	meta := tbl.Metadata()
	props := maps.Clone(meta.Properties())
	updates, removals := iceberg.Properties{}, []string{}
	for k, v := range set {
		if !strings.HasPrefix(k, "lakeswap.") {
			return InvalidRequest(fmt.Errorf("%s is not one of lakeswap's properties (lakeswap.*): set other properties with the engine that owns them", k))
		}
		if v == "" {
			delete(props, k)
			removals = append(removals, k)
			continue
		}
		props[k], updates[k] = v, v
	}
	// Judged as a publish would judge the table with them.
	spec := meta.PartitionSpec()
	check, err := table.NewMetadata(meta.CurrentSchema(), &spec, table.UnsortedSortOrder, meta.Location(), props)
	if err == nil {
		_, err = contract.Of(check)
	}
	if err != nil {
		return InvalidRequest(fmt.Errorf("table %s with %v: %w", name, set, err))
	}
	var ups []table.Update
	if len(updates) > 0 {
		ups = append(ups, table.NewSetPropertiesUpdate(updates))
	}
	if len(removals) > 0 {
		ups = append(ups, table.NewRemovePropertiesUpdate(removals))
	}
	if len(ups) == 0 {
		return nil
	}
	reqs := []table.Requirement{table.AssertTableUUID(meta.TableUUID()), table.AssertCurrentSchemaID(meta.CurrentSchema().ID)}
	var head *int64
	if s := meta.CurrentSnapshot(); s != nil {
		head = &s.SnapshotID
	}
	reqs = append(reqs, table.AssertRefSnapshotID(table.MainBranch, head))
	if _, _, err := p.Catalog.CommitTable(ctx, ident, reqs, ups); err != nil {
		if errors.Is(err, ErrConflict) || errors.Is(err, table.ErrCommitFailed) {
			return &OpError{Op: "table set", Table: name, Err: fmt.Errorf("%w: the table changed meanwhile: %w", ErrConflict, err), Hint: "nothing was changed; run it again"}
		}
		return fmt.Errorf("set properties of %s: %w", name, err)
	}
	return nil
}
