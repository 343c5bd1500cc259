package words

import (
	"strconv"
	"strings"
	"unicode"
)

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

// Printable is s with each character that would not print as itself (a
// control character such as a newline, a tab or a terminal escape, a line
// or paragraph separator, a direction override) written as Go escapes it
// (\n, \t, \x1b, \u202e), so that text a person gave prints on one line
// and cannot pass for lakeswap's own output.
func Printable(s string) string {
	if !strings.ContainsFunc(s, Unprintable) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if Unprintable(r) {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Unprintable says whether r is a character Printable escapes.
func Unprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Bidi_Control)
}
