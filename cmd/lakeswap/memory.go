package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/lakeswap/lakeswap/s3store"
)

// parseSize reads a size such as 512MiB, 2GiB, 1.5GB or 1073741824 (bytes).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.ToLower(t[i:])
	}
	mult, ok := map[string]float64{
		"": 1, "b": 1,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || v <= 0 || v*mult >= 1<<62 {
		return 0, fmt.Errorf("size %q: write bytes or a number with KiB, MiB, GiB, TiB (or KB, MB, GB, TB), for example 2GiB", s)
	}
	return int64(v * mult), nil
}

// The least --memory-limit is what the process needs whatever its input:
// the engine's quarter, one batch of rows being read and split, and one
// partition's writer (writerBytes: with the S3 upload's parts for a
// warehouse on S3). Above it, peak RSS stays within the limit plus
// memorySlack, which covers what no limit governs: the binary's pages,
// the runtime's and the engine's own, about 140 MiB for a publish of a
// few rows. Measured (make bench-scale, BENCH_MEMORY_LIMIT) on CSV, NDJSON,
// Parquet and the adopt path.
const (
	memoryFloorBase = 192 << 20
	memorySlack     = 128 << 20
)

// memoryFloor is the least --memory-limit for a catalog of props (nil: a
// local warehouse, as before the catalog is opened).
func memoryFloor(props map[string]string) int64 {
	return memoryFloorBase + writerBytes(props)
}

// checkMemoryLimit refuses a --memory-limit below the floor, naming it.
func checkMemoryLimit(flag string, limit int64, props map[string]string) error {
	floor := memoryFloor(props)
	if limit >= floor {
		return nil
	}
	needs := "the engine, a batch of rows and a partition's writer"
	if floor > memoryFloor(nil) {
		needs += " with its S3 parts in flight"
	}
	return usagef("--memory-limit %s: lakeswap needs at least %s here (%s); peak memory stays within the limit plus %s",
		flag, mib(floor), needs, mib(memorySlack))
}

// mib writes a size in whole MiB, as --memory-limit takes it.
func mib(n int64) string { return fmt.Sprintf("%dMiB", (n+1<<20-1)>>20) }

// defaultMemoryLimit is half of the memory lakeswap may use: the machine's,
// or its container's (a cgroup limit) where that is less; 1 GiB where
// neither says.
func defaultMemoryLimit() int64 {
	var total int64
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err == nil {
		total = int64(info.Totalram) * int64(info.Unit)
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		raw, err := os.ReadFile(f)
		if v, perr := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil && perr == nil && v > 0 && (total == 0 || v < total) {
			total = v // "max" or a huge number mean none
		}
	}
	if total == 0 {
		return 1 << 30
	}
	return total / 2
}

// applyMemoryLimit gives the Go runtime its share of the process's limit,
// three quarters (the CSV engine's own memory, outside Go's heap, is given
// a quarter by the source package), and returns how to restore the old one.
func applyMemoryLimit(limit int64) (restore func()) {
	old := debug.SetMemoryLimit(limit / 4 * 3)
	return func() { debug.SetMemoryLimit(old) }
}

// Staging a partition holds, besides its Parquet writer's row group, the
// keys that prove its grain unique: about this many bytes a row, measured
// on the bench's rows.
const (
	stagingBytesPerRow = 48
	stagingWriterBytes = 64 << 20
)

// stagingParallelism is how many partitions are staged at once within half
// of the memory limit: one per core, fewer when partitions are large.
// writer is what one partition's writer holds (writerBytes).
func stagingParallelism(limit, rowsInLargest, writer int64) int {
	each := rowsInLargest*stagingBytesPerRow + writer
	return int(max(1, min(int64(runtime.NumCPU()), limit/2/each)))
}

// uploadBudget is the memory one S3 upload may hold under limit: a quarter
// of what the limit gives above the floor a local warehouse needs, shared
// by the partitions staged at once (at most one a core). At the floor it
// holds what the floor counts, two parts of the default size.
func uploadBudget(limit int64) int64 {
	return max(limit-memoryFloor(nil), 0) / 4 / int64(runtime.NumCPU())
}

// writerBytes is what staging one partition holds besides its grain keys:
// the Parquet writer's, and, for a warehouse on S3, the upload's parts (in
// flight, and the one being filled).
func writerBytes(props map[string]string) int64 {
	if !s3store.UsesS3(props) {
		return stagingWriterBytes
	}
	c := s3store.ConfigFromProps(props)
	return stagingWriterBytes + c.PartSize*int64(c.PartsInFlight+1)
}

// changesBytesPerRow is what comparing a partition at the grain holds per
// row it had: a 16-byte map entry, the map's slack and its growth.
const changesBytesPerRow = 64

// changesMaxRows is the most rows a partition may hold for the plan to
// compare it at the grain, the partitions compared at once (par, or one
// per core) sharing half of the memory limit.
// keysBytesPerRow is what holding a run's keys to check its grain across
// partitions costs a row: a map entry of a hash and a partition index.
const keysBytesPerRow = 40

// keysMaxRows is how many rows' keys a run may hold to check its grain
// across partitions: half the memory limit.
func keysMaxRows(limit int64) int64 {
	return max(1, limit/2/keysBytesPerRow)
}

func changesMaxRows(limit int64, par int) int64 {
	if par <= 0 {
		par = runtime.NumCPU()
	}
	return max(1, limit/2/changesBytesPerRow/int64(par))
}
