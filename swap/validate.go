package swap

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/source"
)

// checkContract refuses, when a contract is set (table create, table
// set), the checks no run could judge: a relationship to a table or
// column that is not there, or of another type, and an assertion that is
// no query over the rows and the tables it names. name is the table's
// own, whose columns are c's.
func checkContract(ctx context.Context, load loader, name string, c *contract.Contract) error {
	for _, i := range slices.Sorted(maps.Keys(c.Rules)) {
		for _, r := range c.Rules[i] {
			if r.Kind != contract.CheckRelationship {
				continue
			}
			var fields []iceberg.NestedField
			if r.Table == name {
				fields = c.Fields
			} else {
				tbl, err := load(ctx, table.Identifier(strings.Split(r.Table, ".")))
				if err != nil {
					return fmt.Errorf("column %s: check %s: table %s cannot be read: %w", c.Fields[i].Name, r.Check, r.Table, err)
				}
				fields = tbl.Schema().Fields()
			}
			k := slices.IndexFunc(fields, func(f iceberg.NestedField) bool { return f.Name == r.Column })
			switch {
			case k < 0:
				return fmt.Errorf("column %s: check %s: table %s has no column %s", c.Fields[i].Name, r.Check, r.Table, r.Column)
			case !comparable(c.Fields[i].Type, fields[k].Type):
				return fmt.Errorf("column %s: check %s: %s.%s is %s, %s is %s: a relationship compares values of one type", c.Fields[i].Name, r.Check, r.Table, r.Column, fields[k].Type, c.Fields[i].Name, c.Fields[i].Type)
			}
		}
	}
	if len(c.Assertions) == 0 {
		return nil
	}
	tmp, err := os.MkdirTemp("", "lakeswap-assert-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	eng, err := source.OpenSQLEngine(tmp, assertionMemory)
	if err != nil {
		return fmt.Errorf("assertions: %w", err)
	}
	defer eng.Close()
	named, err := namedTables(ctx, load, c.Assertions, tmp, false)
	if err != nil {
		return err
	}
	if err := eng.Confine(ctx, nil); err != nil {
		return err
	}
	rows := &namedTable{name: "rows", sc: c.Schema}
	for _, t := range append(named, rows) {
		if err := t.view(ctx, eng); err != nil {
			return fmt.Errorf("assertions: %w", err)
		}
	}
	for _, a := range c.Assertions {
		if _, err := eng.Columns(a.SQL); err != nil {
			return fmt.Errorf("assertion %s is no query over the view rows (and the tables it names) the engine can run: %w", a.Name, err)
		}
	}
	return nil
}
