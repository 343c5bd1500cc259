package exact_test

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/lakeswap/lakeswap/internal/exact"
)

// TestSum: sums past int64 stay exact, and JSON carries a number only
// where every reader holds it exactly.
func TestSum(t *testing.T) {
	max := exact.Of(math.MaxInt64)
	over := max.Add(exact.Of(1))
	if _, ok := over.Int64(); ok || over.String() != "9223372036854775808" {
		t.Fatalf("MaxInt64+1 = %s", over)
	}
	if back := over.Sub(exact.Of(1)); !back.Equal(max) {
		t.Errorf("MaxInt64+1-1 = %s", back)
	}
	if n := exact.Of(math.MinInt64).Neg(); n.String() != "9223372036854775808" {
		t.Errorf("-MinInt64 = %s", n)
	}
	if exact.Of(math.MinInt64).Add(exact.Of(-1)).String() != "-9223372036854775809" {
		t.Error("MinInt64-1 wrapped")
	}
	huge, _ := new(big.Int).SetString("99999999999999999999999999999999999999", 10)
	ten := exact.Sum{}
	for range 10 {
		ten = ten.Add(exact.FromBig(huge))
	}
	if ten.String() != "999999999999999999999999999999999999990" || ten.Cmp(max) != 1 || ten.Neg().Cmp(max.Neg()) != -1 {
		t.Errorf("ten times 10^38-1 = %s", ten)
	}
	for _, c := range []struct {
		s    exact.Sum
		json string
	}{
		{exact.Of(1 << 53), "9007199254740992"},
		{exact.Of(1<<53 + 1), `"9007199254740993"`},
		{exact.Of(-1 << 53), "-9007199254740992"},
		{exact.Of(-1<<53 - 1), `"-9007199254740993"`},
		{ten, `"999999999999999999999999999999999999990"`},
	} {
		b, err := json.Marshal(c.s)
		if err != nil || string(b) != c.json {
			t.Errorf("%s marshals as %s, want %s", c.s, b, c.json)
		}
		var back exact.Sum
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(c.s) {
			t.Errorf("%s reads back as %s: %v", b, back, err)
		}
	}
	for _, bad := range []string{`"1.5"`, `""`, `"+1"`, `1e3`, `true`} {
		var s exact.Sum
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s read as %s", bad, s)
		}
	}
}
