package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/verify"
)

// corpus is the bad-input corpus, which source's tests read case by case.
const corpus = "../../source/testdata/bad-input"

// TestBadInputRefused publishes two cases of the bad-input corpus to a
// table that already holds a load, one refused by an input reader and one
// by validation, and checks the exit code, the finding in the JSON error
// object, and that the table and every file of its warehouse are as they
// were.
func TestBadInputRefused(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", filepath.Join(corpus, "schema.yaml")); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	good := write(t, t.TempDir(), "good.csv", "day,id,qty,name,price,at,at_tz\n2026-01-01,1,1,a,1.25,2026-01-31T23:30:00,2026-01-31T23:30:00Z\n")
	if code, _, errs := cli(t, home, "publish", "--table", "shop.typed", "--partitions", "day=2026-01-01", good); code != 0 {
		t.Fatalf("first load: exit %d: %s", code, errs)
	}
	meta, files := typedMetadata(t, home), warehouseFiles(t, home)
	for _, name := range []string{"csv-int-out-of-range", "parquet-decimal-beyond-precision"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(corpus, name)
			var want struct{ Where, Column, Message string }
			raw, err := os.ReadFile(filepath.Join(dir, "expect.json"))
			if err == nil {
				err = json.Unmarshal(raw, &want)
			}
			if err != nil {
				t.Fatalf("expect.json: %v", err)
			}
			inputs, _ := filepath.Glob(filepath.Join(dir, "input.*"))
			code, out, errs := cli(t, home, "-o", "json", "publish", "--table", "shop.typed", "--partitions", "day=2026-01-01", inputs[0])
			if code != exitRefused {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitRefused, errs)
			}
			var got jsonError
			dec := json.NewDecoder(strings.NewReader(out))
			if err := dec.Decode(&got); err != nil || dec.More() {
				t.Fatalf("stdout is not one JSON error object (%v):\n%s", err, out)
			}
			if got.Code != exitRefused || got.Kind != "refused" {
				t.Errorf("error object code %d kind %q, want %d refused", got.Code, got.Kind, exitRefused)
			}
			if !slices.ContainsFunc(got.Findings, func(f verify.Finding) bool {
				return strings.HasSuffix(f.Where, want.Where) && f.Column == want.Column && strings.Contains(f.Message, want.Message)
			}) {
				t.Errorf("findings %+v lack %+v", got.Findings, want)
			}
			if after := typedMetadata(t, home); after != meta {
				t.Errorf("table moved from %s to %s", meta, after)
			}
			if after := warehouseFiles(t, home); !slices.Equal(after, files) {
				t.Errorf("files changed:\nbefore %v\nafter  %v", files, after)
			}
		})
	}
}

func typedMetadata(t *testing.T, home string) string {
	t.Helper()
	tbl, err := openHome(t, home).LoadTable(t.Context(), []string{"shop", "typed"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl.MetadataLocation()
}

// warehouseFiles lists every file under the home's warehouse.
// dataOnly keeps the data files of a listing: what a refused apply, whose
// plan's branch goes with its metadata, leaves as it was.
func dataOnly(files []string) []string {
	return slices.DeleteFunc(files, func(f string) bool { return !strings.Contains(f, "/data/") })
}

func warehouseFiles(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(home, "warehouse"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
