package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/job"
)

type testOptions struct {
	test     string // one test by name
	spillDir string
}

// testResults is test's -o json: every test run, and whether all passed.
type testResults struct {
	Passed bool              `json:"passed"`
	Tests  []*job.TestResult `json:"tests"`
}

func newTestCmd(g *globals) *cobra.Command {
	var o testOptions
	cmd := &cobra.Command{
		Use:   "test [JOB...]",
		Short: "Run jobs' SQL on fixture inputs and compare what they make with the rows expected",
		Long: `test runs each test of a job: a folder under tests/ beside the job file (tests/JOB/ where jobs share
a folder) holding a fixture for every source the job reads (SOURCE.csv, SOURCE.ndjson, SOURCE.parquet,
or a folder SOURCE/ of them; a table source's fixture is typed by the table's schema file) and
expected.csv (or expected.ndjson): the rows the job must make, in the table's columns. It runs the
job's reject rules, SQL and reconciliation on the fixtures alone, under the table's schema file (the
*.table.yaml that names the job's table), and compares exactly at the table's grain, printing each key
missing, unexpected or different, and how. An optional test.yaml names the partitions
(partitions: [COL=FROM..TO], default those expected holds) and the rows the reject rules must refuse
(rejected: {REASON: N}).

With no JOB it runs every job of lakeswap.yaml's jobs:, else of the working folder. It reads no catalog
and writes nothing. Exit 0 when every test passes, 1 when one fails.`,
		RunE: func(cmd *cobra.Command, args []string) error { return runTest(cmd.Context(), g, o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.test, "test", "", "run the test of this name alone")
	f.StringVar(&o.spillDir, "spill-dir", "", "where rows wait on local disk (default the system's temporary folder)")
	return cmd
}

func runTest(ctx context.Context, g *globals, o testOptions, args []string) error {
	jobs, err := testedJobs(g, args)
	if err != nil {
		return err
	}
	res := testResults{Passed: true, Tests: []*job.TestResult{}}
	var none []string
	for _, j := range jobs {
		names, err := j.Tests()
		if err != nil {
			return fmt.Errorf("job %s: %w", j.File, err)
		}
		if o.test != "" {
			if !slices.Contains(names, o.test) {
				continue
			}
			names = []string{o.test}
		}
		if len(names) == 0 {
			none = append(none, filepath.Base(j.File))
		}
		for _, name := range names {
			r := j.Test(ctx, name, job.TestOptions{SpillDir: o.spillDir, MemoryLimit: backfill.DefaultMemoryLimit()})
			res.Tests = append(res.Tests, r)
			res.Passed = res.Passed && r.Passed
		}
	}
	if len(res.Tests) == 0 {
		if o.test != "" {
			return requestError{fmt.Errorf("no job has a test %s (a folder under tests/ with expected.csv or expected.ndjson)", o.test)}
		}
		return requestError{fmt.Errorf("no test to run: no folder under tests/ beside %s holds expected.csv or expected.ndjson", strings.Join(none, ", "))}
	}
	var failed error
	if !res.Passed {
		n := 0
		for _, r := range res.Tests {
			if !r.Passed {
				n++
			}
		}
		failed = fmt.Errorf("%s of %s failed", words.Count(int64(n), "test"), words.Number(int64(len(res.Tests))))
	}
	return g.report(res, failed, func(w io.Writer) { printTests(w, res) })
}

// testedJobs are the jobs named, else those lakeswap.yaml lists, else the
// working folder's.
func testedJobs(g *globals, args []string) ([]*job.Job, error) {
	paths := args
	if len(paths) == 0 {
		paths = []string{"."}
		jobs, err := catalog.ConfiguredJobs(g.configFile, g.getenv)
		if err != nil {
			return nil, requestError{err}
		}
		if len(jobs) > 0 {
			paths = jobs
		}
	}
	l, err := job.LoadLineage(paths)
	if err != nil {
		return nil, requestError{err}
	}
	if len(l.Jobs) == 0 {
		return nil, requestError{fmt.Errorf("no job in %s", strings.Join(paths, ", "))}
	}
	return l.Jobs, nil
}

// printTests writes one line a test, then its problems, indented.
func printTests(w io.Writer, res testResults) {
	for _, r := range res.Tests {
		name := strings.TrimSuffix(filepath.Base(r.Job), filepath.Ext(r.Job)) + "/" + r.Test
		switch {
		case r.Error != "":
			fmt.Fprintf(w, "FAIL %s: %s\n", name, r.Error)
		case r.Passed:
			fmt.Fprintf(w, "ok   %s: %s in %s\n", name, words.Count(r.Rows, "row"), r.Partitions)
		default:
			fmt.Fprintf(w, "FAIL %s: %s made, %s expected, in %s\n", name, words.Number(r.Rows), words.Number(r.Expected), r.Partitions)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
		if len(r.NotJudged) > 0 {
			fmt.Fprintf(w, "  not judged on fixtures: %s\n", strings.Join(r.NotJudged, "; "))
		}
	}
}
