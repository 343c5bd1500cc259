package contract

import "testing"

func TestParseBand(t *testing.T) {
	for in, want := range map[string]Band{"0.5:2": {0.5, 2}, "0:10": {0, 10}, " 1:1 ": {1, 1}} {
		if got, err := ParseBand(in); err != nil || got != want {
			t.Errorf("ParseBand(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "2:1", "-1:2", "0:0", "a:b"} {
		if _, err := ParseBand(in); err == nil {
			t.Errorf("ParseBand(%q) took it", in)
		}
	}
	if _, ok := (Band{0.5, 2}).Holds(1000, 300); ok {
		t.Error("0.3x held in 0.5x-2x")
	}
	if _, ok := (Band{0.5, 2}).Holds(0, 300); !ok {
		t.Error("a partition that held nothing has no band")
	}
}
