package swap_test

import (
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/swap"
)

// FuzzEscapeSegment: every partition value makes one path segment that
// decodes back to it, never "." or "..", never a '/', and no two values
// share one.
func FuzzEscapeSegment(f *testing.F) {
	for _, s := range []string{"", ".", "..", "a/b", "C#", "a..", "~41", "é", "\x00", "%2F"} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		seg := swap.EscapeSegment(a)
		if strings.ContainsAny(seg, "/\\%") || seg == "." || seg == ".." || strings.HasSuffix(seg, ".") {
			t.Fatalf("value %q escapes to %q", a, seg)
		}
		back, err := swap.UnescapeSegment(seg)
		if err != nil || back != a {
			t.Fatalf("value %q escapes to %q, which decodes to %q (%v)", a, seg, back, err)
		}
		if a != b && swap.EscapeSegment(b) == seg {
			t.Fatalf("values %q and %q share segment %q", a, b, seg)
		}
		if _, err := swap.UnescapeSegment(b); err == nil && swap.EscapeSegment(mustUnescape(t, b)) != b {
			t.Fatalf("segment %q decodes, but is not how its value escapes", b)
		}
	})
}

func mustUnescape(t *testing.T, s string) string {
	v, err := swap.UnescapeSegment(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
