package verify

import (
	"fmt"
	"slices"
	"testing"
)

func TestGrainSetFindsEveryRepeat(t *testing.T) {
	cases := []struct {
		name   string
		grains []string
		want   []dup
	}{
		{"none", []string{"a", "b", "c"}, nil},
		{"one repeat", []string{"a", "b", "a"}, []dup{{row: 3, first: 1}}},
		{"three copies", []string{"x", "a", "a", "a"}, []dup{{row: 3, first: 2}, {row: 4, first: 2}}},
		// Forty copies land in one bucket, which is then sorted.
		{"a large bucket", append([]string{"b"}, slices.Repeat([]string{"z"}, 40)...), func() []dup {
			var d []dup
			for r := int64(3); r <= 41; r++ {
				d = append(d, dup{row: r, first: 2})
			}
			return d
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var g grainSet
			for i, s := range tc.grains {
				g.add([]byte(s), int64(i+1))
			}
			got := g.duplicates()
			for i := range got {
				got[i].value = 0 // a hash, for keys that are not integers
			}
			slices.SortFunc(got, func(x, y dup) int { return int(x.row - y.row) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("duplicates %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGrainSetAtScale(t *testing.T) {
	var g grainSet
	const n = 300_000 // several chunks
	for i := range n {
		g.add([]byte(fmt.Sprint(i)), int64(i+1))
	}
	g.add([]byte("123"), n+1)
	got := g.duplicates()
	for i := range got {
		got[i].value = 0
	}
	if !slices.Equal(got, []dup{{row: n + 1, first: 124}}) {
		t.Errorf("duplicates %v, want row %d repeating row 124", got, n+1)
	}
}
