package words

import (
	"strconv"
	"strings"
	"unicode"
)

// Count writes n and the noun, plural unless n is one: the noun with an
// s, or many where the plural is not that.
func Count[N ~int | ~int64](n N, one string, many ...string) string {
	return Number(n) + " " + Noun(n, one, many...)
}

// Number writes a count as text shows every count and sum: with a comma
// between thousands (2,930). JSON holds them as plain numbers.
func Number[N ~int | ~int64](n N) string {
	return Grouped(strconv.FormatInt(int64(n), 10))
}

// Grouped puts a comma between the thousands of a decimal number's
// integer part: -122056.47 is -122,056.47.
func Grouped(s string) string {
	end := strings.IndexByte(s, '.')
	if end < 0 {
		end = len(s)
	}
	for i := end - 3; i > 0 && s[i-1] >= '0' && s[i-1] <= '9'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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
