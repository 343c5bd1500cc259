package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/backfill"
	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/s3store"
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
	if got := backfill.Parallelism(768<<20, 10_000_000, backfill.LocalWriterBytes); got != 1 {
		t.Errorf("10M-row partitions under 768 MiB: %d at once, want 1", got)
	}
	if got := backfill.Parallelism(8<<30, 100_000, backfill.LocalWriterBytes); got != runtime.NumCPU() {
		t.Errorf("small partitions under 8 GiB: %d at once, want %d", got, runtime.NumCPU())
	}
}

// TestWriterBytesCountsUploads: staging to S3 counts the upload's parts,
// as many as its settings hold, in what one partition needs.
func TestWriterBytesCountsUploads(t *testing.T) {
	if got := backfill.WriterBytes(map[string]string{"warehouse": "file:///tmp/w"}); got != backfill.LocalWriterBytes {
		t.Errorf("local warehouse: %d, want %d", got, backfill.LocalWriterBytes)
	}
	s3 := map[string]string{"warehouse": "s3://b/w", "lakeswap.s3.part-size": "67108864", "lakeswap.s3.parts-in-flight": "3"}
	if got, want := backfill.WriterBytes(s3), int64(backfill.LocalWriterBytes+4*64<<20); got != want {
		t.Errorf("S3 with 3 parts of 64 MiB in flight: %d, want %d", got, want)
	}
	if backfill.Parallelism(1<<30, 0, backfill.WriterBytes(s3)) != 1 {
		t.Error("uploads of 256 MiB a partition under 1 GiB: want one partition at a time")
	}
}

// TestMemoryFloor: a --memory-limit below what the process needs is
// refused naming the floor and the slack, before anything is written; a
// warehouse on S3 needs its upload's parts besides. Routes: publish and
// plan (one flag parser), on a local warehouse and on MinIO.
func TestMemoryFloor(t *testing.T) {
	if backfill.MemoryFloor(nil) != 256<<20 {
		t.Errorf("local floor %s, want 256MiB", mib(backfill.MemoryFloor(nil)))
	}
	if got := backfill.MemoryFloor(map[string]string{"warehouse": "s3://b/w"}); got != 288<<20 {
		t.Errorf("S3 floor %s, want 288MiB (two parts of 16 MiB besides)", mib(got))
	}
	for _, name := range []string{"sqlite+local", "sqlite+minio"} {
		s := newSite(t, name)
		s.createDaily()
		meta, files := s.metadata("retail.daily_orders"), s.files()
		in := newHomeInput(t)
		floor := "256MiB"
		if name == "sqlite+minio" {
			// The sites upload in parts of 5 MiB, two at a time.
			floor = mib(backfill.MemoryFloor(map[string]string{"warehouse": "s3://b/w", s3store.PropPartSize: fmt.Sprint(s3store.MinPartSize)}))
			code, _, errs := s.cli("plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--memory-limit", "256MiB", in)
			if code != exitUsage || !strings.Contains(errs, "at least "+floor) || !strings.Contains(errs, "S3 parts in flight") {
				t.Errorf("%s: 256MiB: exit %d, want %d naming %s and the S3 parts: %s", name, code, exitUsage, floor, errs)
			}
		}
		code, _, errs := s.cli("publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--memory-limit", "200MiB", in)
		if code != exitUsage || !strings.Contains(errs, "at least "+floor) || !strings.Contains(errs, "plus 128MiB") {
			t.Errorf("%s: 200MiB: exit %d, want %d naming %s: %s", name, code, exitUsage, floor, errs)
		}
		if s.metadata("retail.daily_orders") != meta || !slices.Equal(s.files(), files) {
			t.Errorf("%s: a refused limit changed the table", name)
		}
		s.must("publish", "--table", "retail.daily_orders", "--partitions", twoDays, "--memory-limit", floor, in)
	}
}

// TestUploadsFollowTheMemoryLimit, on MinIO: a publish sends as many parts
// of an upload at once as its share of --memory-limit holds (the sites
// set the part size, 5 MiB, and leave the parts in flight to lakeswap),
// and a count the catalog's properties set is kept; either way the run
// lands.
func TestUploadsFollowTheMemoryLimit(t *testing.T) {
	s := newSite(t, "sqlite+minio")
	s.createDaily()
	// A limit that gives each upload 128 MiB, whatever the cores: four
	// parts of 5 MiB in flight, the most.
	limit := fmt.Sprintf("%dMiB", 256+128*4*runtime.NumCPU())
	if backfill.UploadBudget(int64(256+128*4*runtime.NumCPU())<<20) != 128<<20 {
		t.Fatalf("--memory-limit %s gives an upload %d MiB, want 128", limit, backfill.UploadBudget(int64(256+128*4*runtime.NumCPU())<<20)>>20)
	}
	set := s.via(s.props[s3store.PropEndpoint])
	set.props[s3store.PropPartsInFlight] = "1"
	set = set.via(s.props[s3store.PropEndpoint])
	for i, c := range []struct {
		site     *site
		inFlight string
	}{{s, "4"}, {set, "1"}} {
		meta, files := s.metadata("retail.daily_orders"), s.files()
		in := filepath.Join(t.TempDir(), "in.ndjson")
		if err := retail.WriteNDJSON(in, []retail.DailyOrder{
			{OrderDate: "2026-01-01", Channel: "web", OrderCount: 1, AmountCents: 1000},
			{OrderDate: "2026-01-02", Channel: "web", OrderCount: 1, AmountCents: 2000 + int64(i)},
		}); err != nil {
			t.Fatal(err)
		}
		code, _, errs := c.site.cli("publish", "-v", "--memory-limit", limit, "--allow-implausible", "--table", "retail.daily_orders", "--partitions", twoDays, in)
		if code != exitOK || !strings.Contains(errs, `msg="s3 uploads" part-size=5242880 parts-in-flight=`+c.inFlight+"\n") {
			t.Errorf("publish under %s: exit %d, want parts in flight %s: %s", limit, code, c.inFlight, errs)
		}
		if s.metadata("retail.daily_orders") == meta || slices.Equal(s.files(), files) {
			t.Errorf("parts in flight %s: the publish changed nothing: %s", c.inFlight, errs)
		}
	}
}
