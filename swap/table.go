package swap

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/audit"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"

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
		return spec, outcome.Invalid(err)
	}
	if _, _, _, err := spec.Build(); err != nil {
		return spec, outcome.Invalid(fmt.Errorf("%s: %w", file, err))
	}
	return spec, nil
}

// CreateTable creates a table as its spec declares it, in the catalog
// given.
func CreateTable(ctx context.Context, cat *catalog.Catalog, ident table.Identifier, spec TableSpec) (*table.Table, error) {
	// The checks that read other tables, or run SQL, are judged now as
	// a run would need them.
	// (A spec that does not build is refused by catalog.CreateTable.)
	if sc, part, props, err := spec.Build(); err == nil {
		meta, err := table.NewMetadata(sc, part, table.UnsortedSortOrder, "file:///lakeswap-new", props)
		var c *contract.Contract
		if err == nil {
			c, err = contract.Of(meta)
		}
		if err == nil {
			if err := checkContract(ctx, cat.LoadTable, strings.Join(ident, "."), c); err != nil {
				return nil, outcome.Invalid(fmt.Errorf("table %s: %w", strings.Join(ident, "."), err))
			}
		}
	}
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

// Contract reads a table's contract as its current schema and properties
// make it.
func (p *Publisher) Contract(ctx context.Context, ident table.Identifier) (*contract.Contract, error) {
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	return contract.Of(tbl.Metadata())
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
	main, _, err := history.Of(p.Catalog).History(ctx, ident)
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

// contractKeys are table set's short names for a contract's parts.
var contractKeys = map[string]string{"additive": contract.PropAdditive, "band": contract.PropPlausibleBand, "freeze-after": contract.PropFreezeAfter}

// SetProperties sets a table's contract in place, in one commit pinned to
// main's snapshot as loaded (a commit meanwhile is a conflict, and nothing
// changes): lakeswap's properties (lakeswap.*, or additive=, band=,
// check.<column>=), and grain=, the schema's identifier fields, which
// Iceberg keeps as a schema update (the grain's columns become required,
// as identifier fields must be). No data file is rewritten. A contract
// that every publish would refuse is refused, naming it, and so is a grain
// the table's data breaks, naming the records; an empty value removes a
// property.
func (p *Publisher) SetProperties(ctx context.Context, ident table.Identifier, set map[string]string) error {
	name := strings.Join(ident, ".")
	tbl, err := p.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("load table %s: %w", name, err)
	}
	meta := tbl.Metadata()
	updates, removals := iceberg.Properties{}, []string{}
	sc := meta.CurrentSchema()
	for k, v := range set {
		if k == "grain" {
			if sc, err = withGrain(sc, splitNames(v), nextSchemaID(meta)); err != nil {
				return outcome.Invalid(fmt.Errorf("table %s: grain=%s: %w", name, v, err))
			}
			continue
		}
		if full, ok := contractKeys[k]; ok {
			k = full
		} else if col, ok := strings.CutPrefix(k, "check."); ok {
			k = contract.PropCheckPrefix + col
		} else if name, ok := strings.CutPrefix(k, "assert."); ok {
			k = contract.PropAssertPrefix + name
		}
		if !strings.HasPrefix(k, "lakeswap.") {
			return outcome.Invalid(fmt.Errorf("%s is not one of lakeswap's properties (lakeswap.*, grain, additive, band, check.<column>, assert.<name>): set other properties with the engine that owns them", k))
		}
		if v == "" {
			removals = append(removals, k)
			continue
		}
		updates[k] = v
	}
	// Judged as a publish would judge the table with them.
	check, err := withSettings(meta, sc, updates, removals)
	var c *contract.Contract
	if err == nil {
		c, err = contract.Of(check)
	}
	if err == nil {
		err = checkContract(ctx, p.Catalog.LoadTable, name, c)
	}
	if err != nil {
		return outcome.Invalid(fmt.Errorf("table %s with %s: %w", name, settings(set), err))
	}
	var ups []table.Update
	if !sc.Equals(meta.CurrentSchema()) {
		// The data must already hold the new grain: no key twice, none null.
		res, err := audit.Of(p.Catalog).CheckContract(ctx, ident, c)
		if err != nil {
			return err
		}
		if !res.OK {
			return &outcome.RefusedError{Op: "table set", Table: name, Findings: res.Findings,
				Cleanup: "nothing was changed; the grain holds once the table's data does (fix it, then set it again)"}
		}
		ups = append(ups, table.NewAddSchemaUpdate(sc), table.NewSetCurrentSchemaUpdate(-1))
	}
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
	schemaChanged := !sc.Equals(meta.CurrentSchema())
	landed := func(m table.Metadata) bool {
		for k, v := range updates {
			if m.Properties()[k] != v {
				return false
			}
		}
		for _, k := range removals {
			if _, ok := m.Properties()[k]; ok {
				return false
			}
		}
		return !schemaChanged || m.CurrentSchema().Equals(sc)
	}
	change := &snapshot.Change{Table: tbl, Commit: table.TableCommit{Identifier: ident, Requirements: reqs, Updates: ups}, Landed: landed}
	if err := snapshot.Send(ctx, p.Catalog, p.log(), "table-set", []*snapshot.Change{change}); err != nil {
		if refused := (*snapshot.Refused)(nil); errors.As(err, &refused) && errors.Is(err, table.ErrCommitFailed) {
			return &outcome.OpError{Op: "table set", Table: name, Err: fmt.Errorf("%w: the table changed meanwhile: %w", outcome.ErrConflict, err), Hint: "nothing was changed; run it again"}
		}
		return fmt.Errorf("set properties of %s: %w", name, err)
	}
	return nil
}

// withGrain is sc with the named columns as its identifier fields, each
// made required: Iceberg's identifier fields must be, and a grain key is
// never null. The schema's id is the next one.
func withGrain(sc *iceberg.Schema, grain []string, id int) (*iceberg.Schema, error) {
	if len(grain) == 0 {
		return nil, errors.New("name the grain's columns, comma-separated")
	}
	fields := slices.Clone(sc.Fields())
	var ids []int
	for _, g := range grain {
		i := slices.IndexFunc(fields, func(f iceberg.NestedField) bool { return f.Name == g })
		if i < 0 {
			return nil, fmt.Errorf("the table has no column %q", g)
		}
		if _, ok := fields[i].Type.(iceberg.PrimitiveType); !ok {
			return nil, fmt.Errorf("column %q is %s; a grain column is a primitive", g, fields[i].Type)
		}
		fields[i].Required = true
		ids = append(ids, fields[i].ID)
	}
	slices.Sort(ids)
	return iceberg.NewSchemaWithIdentifiers(id, ids, fields...), nil
}

// withSettings is the table's metadata as it would be with schema sc and
// the properties set and removed: built on the table's own, so that every
// field keeps its id (metadata made anew numbers the fields again, and a
// table whose columns another engine dropped or re-added would be read by
// the wrong ids).
func withSettings(meta table.Metadata, sc *iceberg.Schema, set iceberg.Properties, removed []string) (table.Metadata, error) {
	b, err := table.MetadataBuilderFromBase(meta, "")
	if err != nil {
		return nil, err
	}
	if !sc.Equals(meta.CurrentSchema()) {
		if err := b.AddSchema(sc); err != nil {
			return nil, err
		}
		if err := b.SetCurrentSchemaID(-1); err != nil {
			return nil, err
		}
	}
	if len(set) > 0 {
		if err := b.SetProperties(set); err != nil {
			return nil, err
		}
	}
	if len(removed) > 0 {
		if err := b.RemoveProperties(removed); err != nil {
			return nil, err
		}
	}
	return b.Build()
}

// nextSchemaID is the id a new schema of the table takes.
func nextSchemaID(meta table.Metadata) int {
	id := 0
	for _, s := range meta.Schemas() {
		id = max(id, s.ID+1)
	}
	return id
}

func splitNames(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// settings lists KEY=VALUE settings as a person wrote them, by key.
func settings(set map[string]string) string {
	keys := slices.Sorted(maps.Keys(set))
	for i, k := range keys {
		keys[i] = k + "=" + set[k]
	}
	return strings.Join(keys, " ")
}
