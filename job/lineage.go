package job

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Mapping is how a job's partitions follow from a table source's.
type Mapping string

const (
	MapSame  Mapping = "same"  // the same value: a day feeds its day
	MapMonth Mapping = "month" // a day feeds its month
	MapAll   Mapping = "all"   // any partition feeds every one
)

// Of is the mapping as declared, all where it is not.
func (m Mapping) Of() Mapping {
	if m == "" {
		return MapAll
	}
	return m
}

// Describe says in words which of the job's partitions a change to the
// source's partitions makes stale.
func (m Mapping) Describe() string {
	switch m.Of() {
	case MapSame:
		return "a partition feeds the same partition"
	case MapMonth:
		return "a day feeds its month"
	}
	return "any partition feeds every partition"
}

// Follow maps values of a source table's partitions to the values of the
// job's partitions they feed, in order, once each. All has no values of
// its own: the caller names them.
func (m Mapping) Follow(values []string) ([]string, error) {
	var out []string
	switch m.Of() {
	case MapSame:
		out = slices.Clone(values)
	case MapMonth:
		for _, v := range values {
			if len(v) != len("2006-01-02") || v[4] != '-' || v[7] != '-' {
				return nil, fmt.Errorf("partition %s is not a day (YYYY-MM-DD): month follows days", v)
			}
			out = append(out, v[:7])
		}
	default:
		return nil, errors.New("the job reads every partition of the table (partitions: all): name the partitions it rebuilds")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Lineage is what a set of jobs says of the tables they build and read.
type Lineage struct {
	Jobs []*Job // in the order of their files
}

// LoadLineage reads every job among paths: job files, and folders whose
// YAML files are read, except table schemas (*.table.yaml) and files that
// are not jobs (no sources). A file that names sources and is not a valid
// job is an error: lineage read past it would miss what it reads.
func LoadLineage(paths []string) (*Lineage, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".table.yaml") || strings.HasSuffix(n, ".table.yml") ||
				!strings.HasSuffix(n, ".yaml") && !strings.HasSuffix(n, ".yml") || n == "lakeswap.yaml" {
				continue
			}
			if isJob(filepath.Join(p, n)) {
				files = append(files, filepath.Join(p, n))
			}
		}
	}
	l := &Lineage{}
	seen := map[string]bool{}
	built := map[string]string{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		j, err := Load(abs)
		if err != nil {
			return nil, err
		}
		if other, ok := built[j.Table]; ok {
			return nil, fmt.Errorf("jobs %s and %s both build table %s: lineage needs one job a table", other, abs, j.Table)
		}
		built[j.Table] = abs
		l.Jobs = append(l.Jobs, j)
	}
	return l, nil
}

// isJob says whether a YAML file names sources, as a job does.
func isJob(path string) bool {
	raw, err := os.ReadFile(path)
	if err != nil {
		return true // Load says why
	}
	var doc map[string]any
	if yaml.Unmarshal(raw, &doc) != nil {
		return true
	}
	_, ok := doc["sources"]
	return ok
}

// Builder is the job that builds table, or nil.
func (l *Lineage) Builder(table string) *Job {
	for _, j := range l.Jobs {
		if j.Table == table {
			return j
		}
	}
	return nil
}

// Readers are the jobs with table among their sources, by the table they
// build.
func (l *Lineage) Readers(table string) []*Job {
	var out []*Job
	for _, j := range l.Jobs {
		if len(j.Reads(table)) > 0 {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Table < out[b].Table })
	return out
}

// Downstream lists the jobs below table, transitively, each after every
// job of the list it reads: the order a release stages them in. A cycle
// is an error.
func (l *Lineage) Downstream(table string) ([]*Job, error) {
	var order []*Job
	state := map[string]int{} // 1: visiting, 2: done
	var visit func(t string, path []string) error
	visit = func(t string, path []string) error {
		for _, j := range l.Readers(t) {
			switch state[j.Table] {
			case 1:
				return fmt.Errorf("jobs read each other in a cycle: %s -> %s", strings.Join(path, " -> "), j.Table)
			case 2:
				continue
			}
			state[j.Table] = 1
			if err := visit(j.Table, append(path, j.Table)); err != nil {
				return err
			}
			state[j.Table] = 2
			order = append(order, j)
		}
		return nil
	}
	state[table] = 1
	if err := visit(table, []string{table}); err != nil {
		return nil, err
	}
	slices.Reverse(order) // each job before what reads it
	return order, nil
}

// Reads names the job's sources that read table.
func (j *Job) Reads(table string) []string {
	var out []string
	for _, name := range j.SourceNames() {
		if j.Sources[name].Table == table {
			out = append(out, name)
		}
	}
	return out
}
