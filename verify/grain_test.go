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
		{"one repeat", []string{"a", "b", "a"}, []dup{{3, 1}}},
		{"three copies", []string{"x", "a", "a", "a"}, []dup{{3, 2}, {4, 2}}},
		// Forty copies land in one bucket, which is then sorted.
		{"a large bucket", append([]string{"b"}, slices.Repeat([]string{"z"}, 40)...), func() []dup {
			var d []dup
			for r := int64(3); r <= 41; r++ {
				d = append(d, dup{r, 2})
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
	if got := g.duplicates(); !slices.Equal(got, []dup{{n + 1, 124}}) {
		t.Errorf("duplicates %v, want row %d repeating row 124", got, n+1)
	}
}
