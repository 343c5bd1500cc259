package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lakeswap/lakeswap/verify"
)

// displayKeys lists a run's partitions on one line, consecutive days,
// months or integers of one column as a range, and the count after them
// when there are several: event_date=2026-01-13..19 (7).
func displayKeys(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	var out []string
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && follows(keys[j-1], keys[j]) {
			j++
		}
		if j-i >= 2 {
			out = append(out, keyRange(keys[i], keys[j-1]))
		} else {
			for _, k := range keys[i:j] {
				out = append(out, verify.DisplayKey(k))
			}
		}
		i = j
	}
	if len(out) > 6 {
		out = append(append(out[:2:2], "..."), out[len(out)-2:]...)
	}
	s := strings.Join(out, ",")
	if len(keys) > 1 {
		s += fmt.Sprintf(" (%d)", len(keys))
	}
	return s
}

// splitKey splits a one-column key, col=value; ok is false for a key of
// several columns or one that needs quoting.
func splitKey(k string) (col, value string, ok bool) {
	if verify.DisplayKey(k) != k {
		return "", "", false
	}
	col, value, ok = strings.Cut(k, "=")
	return col, value, ok && !strings.Contains(value, "=")
}

// follows says whether key b is the day, month or integer after key a,
// of the same column.
func follows(a, b string) bool {
	ca, va, ok1 := splitKey(a)
	cb, vb, ok2 := splitKey(b)
	if !ok1 || !ok2 || ca != cb {
		return false
	}
	for _, layout := range []string{time.DateOnly, "2006-01"} {
		ta, err1 := time.Parse(layout, va)
		tb, err2 := time.Parse(layout, vb)
		if err1 != nil || err2 != nil || len(va) != len(layout) || len(vb) != len(layout) {
			continue
		}
		if layout == time.DateOnly {
			return tb.Equal(ta.AddDate(0, 0, 1))
		}
		return tb.Equal(ta.AddDate(0, 1, 0))
	}
	ia, err1 := strconv.ParseInt(va, 10, 64)
	ib, err2 := strconv.ParseInt(vb, 10, 64)
	return err1 == nil && err2 == nil && ia < ib && ib-ia == 1 && strconv.FormatInt(ia, 10) == va && strconv.FormatInt(ib, 10) == vb
}

// keyRange writes the keys from a to b as col=a..b, the end without what
// it shares with the start up to the last '-': 2026-01-13..19,
// 2026-01-28..02-03, 2025-12-30..2026-01-02.
func keyRange(a, b string) string {
	col, va, _ := splitKey(a)
	_, vb, _ := splitKey(b)
	end := vb
	for i := len(va) - 1; i > 0; i-- {
		if va[i] == '-' && len(vb) == len(va) && va[:i] == vb[:i] {
			end = vb[i+1:]
			break
		}
	}
	return col + "=" + va + ".." + end
}
