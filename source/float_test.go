package source

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestFloatKeepsTheText: a float or double column takes a text only when
// the value stored is the text's value.
func TestFloatKeepsTheText(t *testing.T) {
	for _, c := range []struct {
		text string
		bits int
		ok   bool
	}{
		{"0.1", 64, true}, {"1.10", 64, true}, {"1e300", 64, true}, {"-0", 64, true}, {"0.000", 32, true},
		{"9007199254740992", 64, true}, {"9007199254740993", 64, false},
		{"16777216", 32, true}, {"16777217", 32, false},
		{"0.1", 32, true}, {"0.1000000001", 32, false}, {"0.10000000000000001", 64, false},
		{"1e-400", 64, false}, {"1e400", 64, false}, {"3.4e39", 32, false},
		{"NaN", 64, true}, {"-Inf", 32, true}, {"0x10", 64, false}, {"1_0", 64, false},
	} {
		_, err := parseFloat(c.text, c.bits)
		if (err == nil) != c.ok {
			t.Errorf("parseFloat(%q, %d): %v, want ok=%v", c.text, c.bits, err, c.ok)
		}
	}
	_, err := parseFloat("9007199254740993", 64)
	if err == nil || !strings.Contains(err.Error(), "stored as 9.007199254740992e+15") {
		t.Errorf("the refusal names the value it would store: %v", err)
	}
}

// TestFloatRuleAgainstStrconv property-tests the rule: for random texts
// (digits, a point, an exponent), parseFloat takes one exactly when its
// value, as an exact rational, equals that of the shortest decimal strconv
// writes for the float it reads as.
func TestFloatRuleAgainstStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for i := range n {
		bits := 64
		if i%2 == 1 {
			bits = 32
		}
		text := randomDecimal(r)
		v, perr := strconv.ParseFloat(text, bits)
		_, err := parseFloat(text, bits)
		if perr != nil {
			if err == nil {
				t.Fatalf("parseFloat(%q, %d) took what strconv refuses: %v", text, bits, perr)
			}
			continue
		}
		want := exact(text).Cmp(exact(strconv.FormatFloat(v, 'g', -1, bits))) == 0
		if (err == nil) != want {
			t.Fatalf("parseFloat(%q, %d): %v, want ok=%v (stored %s)", text, bits, err, want, strconv.FormatFloat(v, 'g', -1, bits))
		}
	}
	// Every float's shortest text, and its shortest in other spellings,
	// passes.
	for range 100000 {
		v := math.Float64frombits(r.Uint64())
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		for _, s := range []string{strconv.FormatFloat(v, 'g', -1, 64), strconv.FormatFloat(v, 'e', -1, 64), strconv.FormatFloat(v, 'f', -1, 64)} {
			if _, err := parseFloat(s, 64); err != nil {
				t.Fatalf("parseFloat(%q): %v", s, err)
			}
		}
		f := math.Float32frombits(r.Uint32())
		if s := strconv.FormatFloat(float64(f), 'g', -1, 32); !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
			if _, err := parseFloat(s, 32); err != nil {
				t.Fatalf("parseFloat(%q, 32): %v", s, err)
			}
		}
	}
}

func exact(s string) *big.Rat {
	q, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return q
}

func randomDecimal(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteByte('-')
	}
	digits := 1 + r.IntN(25)
	point := r.IntN(digits + 1)
	for i := range digits {
		if i == point && i > 0 {
			b.WriteByte('.')
		}
		if r.IntN(3) == 0 {
			b.WriteByte('0')
		} else {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(3) == 0 {
		b.WriteString("e" + strconv.Itoa(r.IntN(700)-350))
	}
	return b.String()
}
