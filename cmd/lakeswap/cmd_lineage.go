package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/job"
)

type lineageOptions struct {
	table      string
	jobs       []string
	partitions []string
}

// lineageEdge is one job reading one source into its table.
type lineageEdge struct {
	From string `json:"from"` // a table, or a source's files
	To   string `json:"to"`
	Job  string `json:"job"`
	// Source is the name the job reads From as.
	Source string `json:"source"`
	// Partitions is how To's partitions follow from From's, for a table
	// source: same, month or all.
	Partitions string `json:"partitions,omitempty"`
	// Stale are To's partitions that the change --partitions names makes
	// stale, followed through the jobs; "all" for every one.
	Stale []string `json:"stale,omitempty"`
}

// lineageResult is what lineage prints with -o json.
type lineageResult struct {
	Table      string        `json:"table"`
	Jobs       []string      `json:"jobs"` // where the jobs were read
	Upstream   []lineageEdge `json:"upstream"`
	Downstream []lineageEdge `json:"downstream"`
	// Chains are the paths through the table, from what the first jobs
	// read to the last tables built, each as its steps.
	Chains [][]string `json:"chains"`
}

func newLineageCmd(g *globals) *cobra.Command {
	var o lineageOptions
	cmd := &cobra.Command{
		Use:   "lineage --table NS.NAME [--jobs PATH]... [--partitions COL=FROM..TO]",
		Short: "Show what a table is built from and what reads it, as the jobs say",
		Long: `lineage reads every job (the jobs: list of lakeswap.yaml, or --jobs: job files and folders of them)
and prints, for the table, what it is built from, up to the files the first jobs read, and every table
built from it, further down too, with how each job's partitions follow from its source's (a table
source's partitions: same, month or all). With --partitions, it names the partitions of each table
below that a change to those partitions makes stale: what a release with --downstream rebuilds.
It reads job files only, and the catalog only to read --partitions.`,
		Args: tableNotArg,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLineage(cmd.Context(), g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "the table, NAMESPACE.NAME (required)")
	f.StringArrayVar(&o.jobs, "jobs", nil, "job files or folders of them (default: jobs: in lakeswap.yaml, else the current folder)")
	f.StringArrayVar(&o.partitions, "partitions", nil, "partitions of the table that change, COL=FROM..TO: name the partitions they make stale below")
	return cmd
}

func runLineage(ctx context.Context, g *globals, o lineageOptions) error {
	if _, err := tableFlag(o.table); err != nil {
		return err
	}
	paths := lineagePaths(g, o.jobs, "")
	l, err := loadLineage(g, o.jobs, "")
	if err != nil {
		return err
	}
	res := lineageResult{Table: o.table, Jobs: paths, Upstream: []lineageEdge{}, Downstream: []lineageEdge{}}
	res.Upstream = upstream(l, o.table, map[string]bool{})
	below, err := l.Downstream(o.table)
	if err != nil {
		return requestError{err}
	}
	var changed map[string][]string // table -> its stale partitions; nil: every one
	if len(o.partitions) > 0 {
		ctx, cat, pub, err := g.open(ctx)
		if err != nil {
			return err
		}
		defer cat.Close()
		ident, _ := tableFlag(o.table)
		t, err := pub.Open(ctx, ident)
		if err != nil {
			return err
		}
		sel, err := t.Partitions(o.partitions...)
		if err != nil {
			return err
		}
		if sel.Open() || !t.Contract.Partition.One() {
			return usagef("--partitions: lineage follows the partitions of a table of one partition field, named in full")
		}
		changed = map[string][]string{o.table: sel.Values}
	}
	for _, j := range below {
		for _, up := range append([]string{o.table}, tablesBuilt(below)...) {
			for _, src := range j.Reads(up) {
				m := j.Sources[src].Partitions.Of()
				e := lineageEdge{From: up, To: j.Table, Job: j.File, Source: src, Partitions: string(m)}
				if changed != nil {
					if from, ok := changed[up]; ok {
						e.Stale = staleOf(m, from)
						changed[j.Table] = mergeStale(changed[j.Table], e.Stale)
					}
				}
				res.Downstream = append(res.Downstream, e)
			}
		}
	}
	res.Chains = chains(res)
	return g.emit(res, func(w io.Writer) { printLineage(w, res) })
}

// chains are the paths through res.Table: each path up to it, from what
// the first jobs read, joined to each path down from it.
func chains(res lineageResult) [][]string {
	var up func(t string) [][]string
	up = func(t string) [][]string {
		var out [][]string
		for _, e := range res.Upstream {
			if e.To != t {
				continue
			}
			for _, p := range up(e.From) {
				out = append(out, append(p, t))
			}
		}
		if len(out) == 0 {
			return [][]string{{t}}
		}
		return out
	}
	var down func(t string) [][]string
	down = func(t string) [][]string {
		var out [][]string
		for _, e := range res.Downstream {
			if e.From != t {
				continue
			}
			for _, p := range down(e.To) {
				out = append(out, append([]string{t}, p...))
			}
		}
		if len(out) == 0 {
			return [][]string{{t}}
		}
		return out
	}
	var out [][]string
	for _, u := range up(res.Table) {
		for _, d := range down(res.Table) {
			out = append(out, append(slices.Clone(u), d[1:]...))
		}
	}
	return out
}

// upstream lists what builds table, and what builds that, up to files.
func upstream(l *job.Lineage, table string, seen map[string]bool) []lineageEdge {
	j := l.Builder(table)
	if j == nil || seen[table] {
		return nil
	}
	seen[table] = true
	var out []lineageEdge
	for _, src := range j.SourceNames() {
		s := j.Sources[src]
		if s.Table != "" {
			out = append(out, upstream(l, s.Table, seen)...)
			out = append(out, lineageEdge{From: s.Table, To: table, Job: j.File, Source: src, Partitions: string(s.Partitions.Of())})
			continue
		}
		out = append(out, lineageEdge{From: s.Path, To: table, Job: j.File, Source: src})
	}
	return out
}

func tablesBuilt(jobs []*job.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Table
	}
	return out
}

// staleOf follows changed partitions through a mapping; ["all"] for
// every partition.
func staleOf(m job.Mapping, from []string) []string {
	if len(from) == 1 && from[0] == "all" {
		return from
	}
	got, err := m.Follow(from)
	if err != nil {
		return []string{"all"}
	}
	return got
}

func mergeStale(a, b []string) []string {
	if len(a) == 1 && a[0] == "all" || len(b) == 1 && b[0] == "all" {
		return []string{"all"}
	}
	out := append(a, b...)
	seen := map[string]bool{}
	uniq := out[:0]
	for _, v := range out {
		if !seen[v] {
			seen[v] = true
			uniq = append(uniq, v)
		}
	}
	return uniq
}

func printLineage(w io.Writer, res lineageResult) {
	fmt.Fprintf(w, "lineage of %s, from the jobs in %s\n", res.Table, strings.Join(res.Jobs, ", "))
	for _, c := range res.Chains {
		fmt.Fprintf(w, "  %s\n", strings.Join(c, " -> "))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	edge := func(e lineageEdge) {
		how := "files"
		if e.Partitions != "" {
			how = "partitions: " + e.Partitions + " (" + job.Mapping(e.Partitions).Describe() + ")"
		}
		fmt.Fprintf(tw, "  %s -> %s\tjob %s, source %s\t%s\n", e.From, e.To, filepath.Base(e.Job), e.Source, how)
		if e.Stale != nil {
			stale := strings.Join(e.Stale, ",")
			if stale == "all" {
				stale = "every partition"
			}
			fmt.Fprintf(tw, "  \tstale in %s:\t%s\n", e.To, stale)
		}
	}
	fmt.Fprintln(tw, "upstream:")
	if len(res.Upstream) == 0 {
		fmt.Fprintf(tw, "  no job builds %s\n", res.Table)
	}
	for _, e := range res.Upstream {
		edge(e)
	}
	fmt.Fprintln(tw, "downstream:")
	if len(res.Downstream) == 0 {
		fmt.Fprintf(tw, "  no job reads %s\n", res.Table)
	}
	for _, e := range res.Downstream {
		edge(e)
	}
	_ = tw.Flush()
	if n := len(res.Downstream); n > 0 {
		fmt.Fprintf(w, "a release of %s with --downstream rebuilds %s\n", res.Table, words.Count(countTables(res.Downstream), "table")+" below it")
	}
}

func countTables(edges []lineageEdge) int {
	seen := map[string]bool{}
	for _, e := range edges {
		seen[e.To] = true
	}
	return len(seen)
}
