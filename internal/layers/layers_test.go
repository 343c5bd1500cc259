package layers

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/lakeswap/lakeswap"

// imports maps every package the module's packages depend on, theirs
// included, to the packages it imports (tests left out).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imps, _ := strings.Cut(line, "|")
		m[pkg] = nil
		if imps != "" {
			m[pkg] = strings.Split(imps, ",")
		}
	}
	return m
}

// deps returns pkg's transitive imports.
func deps(m map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, i := range m[p] {
			if !seen[i] {
				seen[i] = true
				walk(i)
			}
		}
	}
	walk(pkg)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func under(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

func TestLayers(t *testing.T) {
	m := imports(t)
	lower := []string{"contract", "verify", "parquetio", "s3store", "runrecord", "source"}
	upper := []string{"swap", "catalog", "cmd", "testenv"}
	for pkg := range m {
		if !under(pkg, module) {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		for _, d := range deps(m, pkg) {
			if !under(d, module) {
				continue
			}
			drel := strings.TrimPrefix(d, module+"/")
			for _, l := range lower {
				for _, u := range upper {
					if under(rel, l) && under(drel, u) {
						t.Errorf("%s reaches up into %s: %s stays below the protocol", rel, drel, l)
					}
				}
			}
			if under(drel, "testenv") && !under(rel, "testenv") {
				t.Errorf("%s depends on %s; only tests and dev tooling may use testenv", rel, drel)
			}
		}
	}
	// The shipped binary links no test code at all: not testing (thrift
	// linked it until v0.25.0), not testenv. arrow-go's pqarrow links
	// arrow/flight, which is not lakeswap's to drop; no package of
	// lakeswap's imports it.
	binary := append(deps(m, module+"/cmd/lakeswap"), module+"/cmd/lakeswap")
	if slices.Contains(binary, "testing") {
		t.Errorf("the binary links testing, through %v", importersOf(m, binary, "testing"))
	}
	for _, d := range binary {
		if !under(d, module) {
			continue
		}
		for _, i := range m[d] {
			if under(i, "github.com/apache/arrow-go/v18/arrow/flight") {
				t.Errorf("the binary links %s, which imports %s", d, i)
			}
		}
	}
}

// importersOf lists the packages among pkgs that import target.
func importersOf(m map[string][]string, pkgs []string, target string) []string {
	var out []string
	for _, p := range pkgs {
		if slices.Contains(m[p], target) {
			out = append(out, p)
		}
	}
	return out
}
