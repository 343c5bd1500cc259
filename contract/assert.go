package contract

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// PropAssertPrefix names a table's SQL assertions: lakeswap.assert.<name>
// holds a query over the rows a run stages, read as the view rows, that
// must return no row (written warn:SQL, a row it returns is a warning).
const PropAssertPrefix = "lakeswap.assert."

// Assertion is one of a table's SQL assertions.
type Assertion struct {
	Name string
	SQL  string
	Warn bool
}

// assertionName is what an assertion may be called.
var assertionName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// assertions reads a table's assertions from its properties, by name.
func assertions(props map[string]string) ([]Assertion, error) {
	var out []Assertion
	for k, v := range props {
		name, ok := strings.CutPrefix(k, PropAssertPrefix)
		if !ok {
			continue
		}
		if !assertionName.MatchString(name) {
			return nil, fmt.Errorf("assertion %q: a name of letters, digits, _ and - (lakeswap.assert.NAME)", name)
		}
		sql, warn := strings.CutPrefix(strings.TrimSpace(v), "warn:")
		if sql = strings.TrimSpace(sql); sql == "" {
			return nil, fmt.Errorf("assertion %s is empty: give a query over the view rows that must return no row", name)
		}
		out = append(out, Assertion{Name: name, SQL: sql, Warn: warn})
	}
	slices.SortFunc(out, func(a, b Assertion) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
