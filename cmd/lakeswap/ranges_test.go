package main

import (
	"testing"
	"time"
)

// TestDisplayKeys: history names a run's partitions as ranges where they
// follow one another, so that a run of a year fits a terminal's line.
func TestDisplayKeys(t *testing.T) {
	days := func(col string, from, n int) []string {
		var out []string
		for i := range n {
			out = append(out, col+"="+dayOf(from+i))
		}
		return out
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{nil, ""},
		{[]string{"d=2026-01-13"}, "d=2026-01-13"},
		{[]string{"d=2026-01-13", "d=2026-01-14"}, "d=2026-01-13..14 (2)"},
		{[]string{"d=2026-01-13", "d=2026-01-15"}, "d=2026-01-13,d=2026-01-15 (2)"},
		{days("event_date", 12, 7), "event_date=2026-01-13..19 (7)"},
		{days("d", 27, 7), "d=2026-01-28..02-03 (7)"},
		{days("d", 0, 365), "d=2026-01-01..12-31 (365)"},
		{append(days("d", 0, 3), days("d", 10, 3)...), "d=2026-01-01..03,d=2026-01-11..13 (6)"},
		{[]string{"m=2025-11", "m=2025-12", "m=2026-01"}, "m=2025-11..2026-01 (3)"},
		{[]string{"n=9", "n=10", "n=11", "n=13"}, "n=9..11,n=13 (4)"},
		{[]string{"n=01", "n=02", "n=03"}, "n=01,n=02,n=03 (3)"},
		{[]string{"s=a", "s=b", "s=c"}, "s=a,s=b,s=c (3)"},
		{[]string{"a=1,b=2", "a=1,b=3", "a=1,b=4"}, `a="1,b=2",a="1,b=3",a="1,b=4" (3)`},
		{[]string{"s=a", "s=b", "s=c", "s=d", "s=e", "s=f", "s=g"}, "s=a,s=b,...,s=f,s=g (7)"},
	} {
		if got := displayKeys(c.keys); got != c.want {
			t.Errorf("displayKeys(%q) = %q, want %q", c.keys, got, c.want)
		}
	}
}

func dayOf(i int) string {
	return time2026.AddDate(0, 0, i).Format("2006-01-02")
}

var time2026 = mustDate("2026-01-01")

func mustDate(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}
