package history

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/lakeswap/lakeswap/runrecord"
)

// lister is a catalog that lists its namespaces and tables.
type lister interface {
	ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error)
	ListTables(ctx context.Context, namespace table.Identifier) iter.Seq2[table.Identifier, error]
}

// ReleaseTables finds the tables of a release from a table it left
// unchanged, which records no run of it (only the release's tag): the
// first table of the catalog that records the run names them all. It
// looks in near's namespace first. None found: nil.
func (r Reader) ReleaseTables(ctx context.Context, runID string, near table.Identifier) ([]string, error) {
	cat, ok := r.Catalog.(lister)
	if !ok {
		return nil, errors.New("this catalog cannot list its tables")
	}
	namespaces := []table.Identifier{near[:len(near)-1]}
	seen := map[string]bool{strings.Join(near, "."): true}
	for i := 0; i < len(namespaces); i++ {
		ns := namespaces[i]
		for ident, err := range cat.ListTables(ctx, ns) {
			if err != nil {
				return nil, fmt.Errorf("list the tables of %s: %w", strings.Join(ns, "."), err)
			}
			name := strings.Join(ident, ".")
			if seen[name] {
				continue
			}
			seen[name] = true
			tbl, err := r.Catalog.LoadTable(ctx, ident)
			if err != nil {
				continue // not a table this catalog can load: not the release's
			}
			s := runrecord.Find(tbl.Metadata(), runID)
			if s == nil || s.Summary == nil {
				continue
			}
			r, _ := runrecord.Read(s.Summary.Properties)
			if slices.Contains(r.Release, strings.Join(near, ".")) {
				return r.Release, nil
			}
		}
		if i == 0 {
			// Then every namespace, nested ones too.
			all, err := allNamespaces(ctx, cat, nil)
			if err != nil {
				return nil, err
			}
			listed := map[string]bool{strings.Join(ns, "\x00"): true}
			for _, other := range all {
				if key := strings.Join(other, "\x00"); !listed[key] {
					listed[key] = true
					namespaces = append(namespaces, other)
				}
			}
		}
	}
	return nil, nil
}

// allNamespaces lists the namespaces under parent, at every depth.
func allNamespaces(ctx context.Context, cat lister, parent table.Identifier) ([]table.Identifier, error) {
	nss, err := cat.ListNamespaces(ctx, parent)
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	// A catalog may list nested namespaces with their parents (the SQL
	// catalog does): each is asked for its own only once.
	var out []table.Identifier
	for _, ns := range nss {
		out = append(out, ns)
		if len(ns) == len(parent)+1 && len(ns) < 8 {
			nested, err := allNamespaces(ctx, cat, ns)
			if err != nil {
				return nil, err
			}
			out = append(out, nested...)
		}
	}
	return out, nil
}
