package layout

import (
	"regexp"
	"strings"
	"testing"
)

// TestRunSegment: a run id's segment reads back as the id, uses only the
// bytes a segment keeps, and fits its bound; two long ids that share a
// head still get two segments.
func TestRunSegment(t *testing.T) {
	match := regexp.MustCompile(`^` + RunPattern + `$`)
	long := strings.Repeat("ä/", 66)
	for _, id := range []string{"b2", "a.", "scheduled__2026-01-01T00:00:00+00:00", "x~7E", "März #1 ?&", ".hidden", "..", long + "a", long + "b"} {
		seg := RunSegment(id)
		if !match.MatchString(seg) || len(seg) > MaxRunSegment || strings.HasPrefix(seg, ".") {
			t.Errorf("run %q: segment %q is not a run segment", id, seg)
		}
		if back := RunOf(seg); !strings.Contains(seg, "~~") && back != id {
			t.Errorf("run %q: segment %q reads back as %q", id, seg, back)
		}
	}
	if RunSegment(long+"a") == RunSegment(long+"b") {
		t.Error("two long run ids share a segment")
	}
	if got := RunSegment("scheduled__2026-01-01T00:00:00+00:00"); got != "scheduled__2026-01-01T00~3A00~3A00~2B00~3A00" {
		t.Errorf("Airflow's run id as a segment: %s", got)
	}
}
