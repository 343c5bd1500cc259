package catalog

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/contract"
)

// TestSelectorFormsDocumented: every selector of the table of forms in
// docs/runs.md parses on a column of the type and transform its row says,
// so the table a reader copies from stays true.
func TestSelectorFormsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../docs/runs.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([a-z]+(?:\\[[0-9]+\\])?)\\(([a-z_]+)\\)` \\| ([a-z0-9(),]+) \\| `([^`]+)` \\|")
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
		transform, column, typeName, sel := m[1], m[2], m[3], m[4]
		typ, err := parseType(typeName)
		if err != nil {
			t.Errorf("%s: type %s: %v", line, typeName, err)
			continue
		}
		p, err := contract.NewPartitioner(0, column, typ, transform)
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if vals, err := p.ParseSelector(sel); err != nil || len(vals) == 0 {
			t.Errorf("docs/runs.md's selector %s on %s(%s) of %s: %v, %v", sel, transform, column, typeName, vals, err)
		}
	}
	if n < 15 {
		t.Errorf("found %d rows of the selector table in docs/runs.md, want every transform's", n)
	}
}
