// Package words writes counts as a reader says them: 1 file, 2 files.
package words

import "strconv"

// Count writes n and the noun, plural unless n is one: the noun with an
// s, or many where the plural is not that.
func Count[N ~int | ~int64](n N, one string, many ...string) string {
	return strconv.FormatInt(int64(n), 10) + " " + Noun(n, one, many...)
}

// Noun is the noun alone, as Count writes it after n.
func Noun[N ~int | ~int64](n N, one string, many ...string) string {
	if n == 1 {
		return one
	}
	if len(many) > 0 {
		return many[0]
	}
	return one + "s"
}
