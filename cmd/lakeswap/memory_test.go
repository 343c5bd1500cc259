package main

import (
	"runtime"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"512MiB": 512 << 20, "2GiB": 2 << 30, "1.5GB": 1_500_000_000, "1048576": 1 << 20, "64 MiB": 64 << 20, "1kib": 1 << 10} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "2 GiBs", "1e3", "lots", "1EiB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

// TestStagingParallelism: large partitions under a small limit are staged
// one at a time; small ones one per core.
func TestStagingParallelism(t *testing.T) {
	if got := stagingParallelism(768<<20, 10_000_000); got != 1 {
		t.Errorf("10M-row partitions under 768 MiB: %d at once, want 1", got)
	}
	if got := stagingParallelism(8<<30, 100_000); got != runtime.NumCPU() {
		t.Errorf("small partitions under 8 GiB: %d at once, want %d", got, runtime.NumCPU())
	}
}
