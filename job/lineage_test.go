package job_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/job"
)

// TestLineageRetail: the shipped retail folder's jobs (its table schemas
// are not jobs) say that daily_orders reads orders_fact, a day feeding
// the same day; below orders_fact is daily_orders, and nothing below it.
func TestLineageRetail(t *testing.T) {
	l, err := job.LoadLineage([]string{filepath.Join("..", "examples", "retail")})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) != 2 || l.Builder("retail.orders_fact") == nil || l.Builder("retail.daily_orders") == nil {
		t.Fatalf("read %d jobs from examples/retail; want orders_fact and daily_orders", len(l.Jobs))
	}
	below, err := l.Downstream("retail.orders_fact")
	if err != nil || len(below) != 1 || below[0].Table != "retail.daily_orders" {
		t.Fatalf("below orders_fact: %v %v; want daily_orders", below, err)
	}
	if m := below[0].Sources[below[0].Reads("retail.orders_fact")[0]].Partitions; m != job.MapSame {
		t.Errorf("daily_orders reads the facts with partitions %q; want same", m)
	}
	if below, _ := l.Downstream("retail.daily_orders"); len(below) != 0 {
		t.Errorf("below daily_orders: %v; want nothing", below)
	}
}

// TestMappingFollow: same keeps the values, month takes each day's month
// once, all names none of its own; a value that is not a day under month
// is refused naming it.
func TestMappingFollow(t *testing.T) {
	days := []string{"2026-01-31", "2026-02-01", "2026-01-15"}
	if got, _ := job.MapSame.Follow(days); !slices.Equal(got, []string{"2026-01-15", "2026-01-31", "2026-02-01"}) {
		t.Errorf("same: %v", got)
	}
	if got, _ := job.MapMonth.Follow(days); !slices.Equal(got, []string{"2026-01", "2026-02"}) {
		t.Errorf("month: %v", got)
	}
	if _, err := job.MapMonth.Follow([]string{"eu"}); err == nil || !strings.Contains(err.Error(), "eu") {
		t.Errorf("month of eu: %v; want refused naming it", err)
	}
	if _, err := job.Mapping("").Follow(days); err == nil {
		t.Error("all (the default) named partitions of its own")
	}
}

// TestLineageRefuses: jobs reading each other in a cycle, two jobs of one
// table, a file naming sources that is not a job, and a mapping that is
// not one, each refused naming what is wrong.
func TestLineageRefuses(t *testing.T) {
	jobOf := func(table, reads, mapping string) string {
		return "table: " + table + "\nsources:\n  src: {table: " + reads + ", partitions: " + mapping + "}\nsql: SELECT 1\n"
	}
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"cycle", map[string]string{"a.yaml": jobOf("n.a", "n.b", "same"), "b.yaml": jobOf("n.b", "n.a", "same")}, "cycle"},
		{"two builders", map[string]string{"a.yaml": jobOf("n.a", "n.b", "same"), "b.yaml": jobOf("n.a", "n.c", "same")}, "both build table n.a"},
		{"broken job", map[string]string{"a.yaml": "table: n.a\nsources: {}\nsql: ''\n"}, "a.yaml"},
		{"mapping", map[string]string{"a.yaml": jobOf("n.a", "n.b", "weekly")}, `partitions "weekly"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := job.LoadLineage([]string{dir})
			if err == nil {
				_, err = l.Downstream("n.b")
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v; want an error naming %q", err, c.want)
			}
		})
	}
}
