package catalog

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSchemaFileErrorsInPlainWords: a schema file the YAML decoder refuses
// is refused with the line and what was wrong there, never Go's type names.
func TestSchemaFileErrorsInPlainWords(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"table: a.b\ncolumns:\n  - {name: price, type: decimal(12,2)}\n", `line 3: unknown key "2)" (inside {...} a comma ends a value: quote a type such as "decimal(12,2)")`},
		{"table: a.b\ncolums: []\n", `line 2: unknown key "colums"`},
		{"table: [a, b]\n", "line 1: a list where text belongs"},
		{"table: a.b\ncolumns: x\n", "line 2: text (x) where a list belongs"},
		{"table: a.b\ncolumns:\n  - {name: x, required: maybe}\n", "line 3: text (maybe) where true or false belongs"},
	} {
		path := filepath.Join(t.TempDir(), "s.yaml")
		if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadTableSpec(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
		if err != nil && regexp.MustCompile(`!!|catalog\.|in type|into `).MatchString(err.Error()) {
			t.Errorf("%q: the error names Go's types: %v", c.yaml, err)
		}
	}
}
