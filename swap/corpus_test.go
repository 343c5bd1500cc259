package swap_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// corpus is the bad-input corpus, which source's tests read case by case.
const corpus = "../source/testdata/bad-input"

// TestBadInputStagesNothing stages every case of the bad-input corpus
// through the protocol, as a publish does, on a table that holds a load:
// each is refused, by its reader or by a stage's validation, with its
// finding, and leaves the table's metadata location and every file of the
// warehouse as they were.
func TestBadInputStagesNothing(t *testing.T) {
	e := newEnvOn(t, backends[0])
	spec, err := catalog.ReadTableSpec(filepath.Join(corpus, "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	typed := table.Identifier{"shop", "typed"}
	if _, err := catalog.CreateTable(e.ctx, e.cat, typed, spec); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "good.csv")
	if err := os.WriteFile(good, []byte("day,id,qty,name,price,at,at_tz\n2026-01-01,1,1,a,1.25,2026-01-31T23:30:00,2026-01-31T23:30:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stage := func(file string) (*swap.Plan, error) {
		target, err := e.pub.Open(e.ctx, typed)
		if err != nil {
			return nil, err
		}
		values, err := target.Partitions("day=2026-01-01")
		if err != nil {
			return nil, err
		}
		src, err := source.ReadFiles(e.ctx, target.Contract, values, []string{file}, source.Options{})
		if err != nil {
			return nil, err
		}
		defer src.Release()
		return e.pub.Stage(e.ctx, swap.Request{Table: typed, Partitions: values.Values, Source: src, Target: target})
	}
	plan, err := stage(good)
	if err != nil || plan.Refused() {
		t.Fatalf("stage the good load: %v %v", err, plan)
	}
	if _, err := e.pub.Apply(e.ctx, swap.ApplyOptions{}, plan); err != nil {
		t.Fatal(err)
	}
	meta, files := e.tableNamed(typed).MetadataLocation(), withoutHolds(e.allFiles())
	cases, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		n++
		t.Run(c.Name(), func(t *testing.T) {
			var want struct{ Where, Column, Message string }
			raw, err := os.ReadFile(filepath.Join(corpus, c.Name(), "expect.json"))
			if err == nil {
				err = json.Unmarshal(raw, &want)
			}
			if err != nil {
				t.Fatalf("expect.json: %v", err)
			}
			inputs, _ := filepath.Glob(filepath.Join(corpus, c.Name(), "input.*"))
			plan, err := stage(inputs[0])
			var found []verify.Finding
			var input *source.InputError
			switch {
			case errors.As(err, &input):
				// As the command reports it: the file, and the line.
				f := verify.Finding{Column: input.Column, Message: input.Err.Error(), Where: input.File}
				if input.Line > 0 {
					f.Where = fmt.Sprintf("%s:%d", input.File, input.Line)
				}
				found = []verify.Finding{f}
			case err != nil:
				t.Fatalf("stage: %v", err)
			case !plan.Refused():
				t.Fatalf("staged without a finding: %+v", plan.Partitions)
			default:
				found = plan.Findings
			}
			if !slices.ContainsFunc(found, func(f verify.Finding) bool {
				return strings.HasSuffix(f.Where, want.Where) && f.Column == want.Column && strings.Contains(f.Message, want.Message)
			}) {
				t.Errorf("findings %+v lack %+v", found, want)
			}
			if after := e.tableNamed(typed).MetadataLocation(); after != meta {
				t.Errorf("table moved from %s to %s", meta, after)
			}
			if after := withoutHolds(e.allFiles()); !slices.Equal(after, files) {
				t.Errorf("files changed:\nbefore %v\nafter  %v", files, after)
			}
		})
	}
	if n < 20 {
		t.Errorf("the corpus holds %d cases; expected at least 20", n)
	}
}
