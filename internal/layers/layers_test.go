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
func imports(t *testing.T, tags string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-tags", tags, "-deps", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", module+"/...").Output()
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

// layer ranks every package of the module: a package imports only
// packages of a lower rank. A new package must be placed here; the test
// fails until it is.
var layer = map[string]int{
	// Leaves: a table's contract, Parquet files, run records.
	// Words of messages.
	"internal/words": 0, "internal/jsonid": 0, "internal/manifest": 0, "internal/exact": 0,
	"contract": 1, "parquetio": 1, "runrecord": 1, "verify/internal/rowhash": 1, "verify/internal/keysort": 1,
	"examples/retail": 1, "internal/devserver": 1,
	// Fingerprints and findings, S3, catalogs.
	"verify": 2, "s3store": 2, "catalog": 2,
	// What a run reads its rows through.
	"rows": 3,
	// What other engines prune on: bounds, counts, summaries.
	"stats": 3,
	// Reading inputs.
	"source": 4, "internal/retail": 3,
	// Generated inputs for the SQL jobs' tests and benchmarks.
	"internal/rawevents": 5,
	// The protocol's parts, below its front door: rollback and gc never
	// reach up into swap.
	"outcome": 3, "swap/internal/layout": 4, "swap/internal/snapshot": 5, "swap/internal/hold": 6,
	"swap/internal/staging": 7,
	"swap/rollback":         8, "swap/gc": 8, "swap/history": 8, "swap/audit": 8,
	// The protocol's front door.
	"swap": 9,
	// SQL jobs, which stage through swap.
	"job": 10,
	// The use cases, made ready for the engine.
	"backfill": 11,
	// The retail-orders story, told through the use cases.
	"internal/demo": 12, "internal/doctor": 12,
	// The binary and the servers tests start.
	"cmd/lakeswap": 13, "testenv": 13, "testenv/cmd/devenv": 14,
	"internal/layers": 15, "internal/benchscale": 15,
}

func TestLayers(t *testing.T) {
	// Every file of every package but tests': the SQL engine's too.
	m := imports(t, "")
	for pkg := range m {
		if !under(pkg, module) {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		rank, ok := layer[rel]
		if !ok {
			t.Errorf("package %s has no layer: place it in internal/layers' table", rel)
			continue
		}
		for _, d := range m[pkg] {
			if !under(d, module) {
				continue
			}
			drel := strings.TrimPrefix(d, module+"/")
			if layer[drel] >= rank {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only layers below its own", rel, rank, drel, layer[drel])
			}
		}
		for _, d := range deps(m, pkg) {
			if under(d, module+"/testenv") && !under(rel, "testenv") {
				t.Errorf("%s depends on %s; only tests and dev tooling may use testenv", rel, d)
			}
		}
	}
	// The shipped binary links no test code at all: not testing (thrift
	// linked it until v0.25.0), not testenv. arrow-go's pqarrow links
	// arrow/flight, which is not lakeswap's to drop; no package of
	// lakeswap's imports it.
	m = imports(t, "") // as shipped
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
