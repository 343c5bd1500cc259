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
	if got := stagingParallelism(768<<20, 10_000_000, stagingWriterBytes); got != 1 {
		t.Errorf("10M-row partitions under 768 MiB: %d at once, want 1", got)
	}
	if got := stagingParallelism(8<<30, 100_000, stagingWriterBytes); got != runtime.NumCPU() {
		t.Errorf("small partitions under 8 GiB: %d at once, want %d", got, runtime.NumCPU())
	}
}

// TestWriterBytesCountsUploads: staging to S3 counts the upload's parts,
// as many as its settings hold, in what one partition needs.
func TestWriterBytesCountsUploads(t *testing.T) {
	if got := writerBytes(map[string]string{"warehouse": "file:///tmp/w"}); got != stagingWriterBytes {
		t.Errorf("local warehouse: %d, want %d", got, stagingWriterBytes)
	}
	s3 := map[string]string{"warehouse": "s3://b/w", "lakeswap.s3.part-size": "67108864", "lakeswap.s3.parts-in-flight": "3"}
	if got, want := writerBytes(s3), int64(stagingWriterBytes+4*64<<20); got != want {
		t.Errorf("S3 with 3 parts of 64 MiB in flight: %d, want %d", got, want)
	}
	if stagingParallelism(1<<30, 0, writerBytes(s3)) != 1 {
		t.Error("uploads of 256 MiB a partition under 1 GiB: want one partition at a time")
	}
}
