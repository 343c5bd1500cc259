package verify_test

import (
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/verify"
)

// TestDisplayKey: a key that could read as two, or break a line, is quoted
// wherever a finding is printed: as --partitions takes it back where a
// selector can hold the value.
func TestDisplayKey(t *testing.T) {
	for key, want := range map[string]string{
		"order_date=2026-01-01": "order_date=2026-01-01", "region=München": "region=München", "region=": `region=""`,
		"region=a,b": `region="a,b"`, "region=a\nb": `"region=a\nb"`, "region=\xff": `"region=\xff"`, `region=say "hi"`: `region="say ""hi"""`,
		"region= x ": `region=" x "`, "d=2026-01-01/region=": `d=2026-01-01/region=""`,
		"b=//8=": "b=//8=", "path=/a": "path=/a", "region=a/b,c": `region="a/b,c"`, "region=a /b": "region=a /b",
	} {
		if got := verify.DisplayKey(key); got != want {
			t.Errorf("DisplayKey(%q) = %s, want %s", key, got, want)
		}
	}
	f := verify.Finding{Kind: verify.KindDuplicateGrain, Partition: "region=a\nb", Row: 2, Message: "grain repeats row 1"}
	if s := f.String(); strings.Contains(s, "\n") {
		t.Errorf("finding prints on two lines: %q", s)
	}
}
