package source

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// parseFloat reads a decimal float for a column of bits (32 or 64) and
// keeps the no-silent-change rule: the text is taken only when the value
// stored is exactly what it says, that is when the shortest decimal that
// reads back as the stored value (what strconv.FormatFloat writes with
// precision -1) has the text's value. 0.1 and 1.10 pass, as does 1e300;
// 9007199254740993 into a double (stored as ...992) and 0.1000000001 into
// a float are refused. Hexadecimal floats are refused: write the number
// in decimal. NaN and infinities pass as their names.
func parseFloat(text string, bits int) (float64, error) {
	if strings.ContainsAny(text, "xX") {
		return 0, errors.New("hexadecimal floats are not read; write the number in decimal")
	}
	if strings.Contains(text, "_") {
		return 0, &strconv.NumError{Func: "ParseFloat", Num: text, Err: strconv.ErrSyntax} // as an integer column refuses it
	}
	v, err := strconv.ParseFloat(text, bits)
	if err != nil {
		var num *strconv.NumError
		if errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange) {
			return 0, fmt.Errorf("%s is out of range for a %d-bit float", text, bits)
		}
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v, nil // spelled as a name, since a finite text out of range errs above
	}
	shortest := strconv.FormatFloat(v, 'g', -1, bits)
	if shortest == text {
		return v, nil
	}
	if !sameDecimal(text, shortest) {
		if v == 0 {
			return 0, fmt.Errorf("%s is too small for a %d-bit float: it would be stored as zero", text, bits)
		}
		wider := "a double or a decimal"
		if bits == 64 {
			wider = "a decimal"
		}
		return 0, fmt.Errorf("%s cannot be stored exactly as a %d-bit float: it would be stored as %s; write a value the type holds, or make the column %s", text, bits, shortest, wider)
	}
	return v, nil
}

// sameDecimal reports whether two decimal texts that strconv reads as
// floats have the same value, by their digits and exponents.
func sameDecimal(a, b string) bool {
	return canonicalDecimal(a) == canonicalDecimal(b)
}

// canonicalDecimal writes a decimal text as sign, significant digits and
// the exponent of the last one: "-1.10e2" is "-11e1", "0.000" is "0". The
// text is one strconv.ParseFloat took, so only its decimal form remains
// (names and hexadecimal are handled before).
func canonicalDecimal(s string) string {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	mant, expText := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expText = s[:i], s[i+1:]
	}
	exp := 0
	if expText != "" {
		e, err := strconv.Atoi(strings.ReplaceAll(expText, "_", ""))
		if err != nil {
			return "?" + s // not decimal: never equal to a canonical form
		}
		exp = e
	}
	mant = strings.ReplaceAll(mant, "_", "")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	if trimmed == "" {
		return "0"
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + strconv.Itoa(exp)
}
