package backfill

import (
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/swap"
)

// The least memory limit is what the process needs whatever its input:
// the engine's quarter, one batch of rows being read and split, and one
// partition's writer (WriterBytes: with the S3 upload's parts for a
// warehouse on S3). Above it, peak RSS stays within the limit plus
// MemorySlack, which covers what no limit governs: the binary's pages,
// the runtime's and the engine's own, about 140 MiB for a publish of a
// few rows. Measured (make bench-scale, BENCH_MEMORY_LIMIT) on CSV,
// NDJSON, Parquet and the adopt path.
const (
	memoryFloorBase = 192 << 20
	MemorySlack     = 128 << 20
)

// MemoryFloor is the least memory limit for a catalog of props (nil: a
// local warehouse, as before the catalog is opened).
func MemoryFloor(props map[string]string) int64 {
	return memoryFloorBase + WriterBytes(props)
}

// DefaultMemoryLimit is half of the memory lakeswap may use: the
// machine's, or its container's (a cgroup limit) where that is less;
// 1 GiB where neither says.
func DefaultMemoryLimit() int64 {
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

// HoldRuntime gives the Go runtime its share of the process's memory
// limit, three quarters (the CSV engine's own memory, outside Go's heap,
// is given a quarter by package source), and returns how to give it back.
// Runs of one process that overlap (a Go program publishing two tables at
// once) each hold theirs: the runtime works to the smallest share held,
// and to the limit it had before once none is, whatever order they end in.
func HoldRuntime(limit int64) (restore func()) {
	share := limit / 4 * 3
	h := &runtimeHolds
	h.Lock()
	defer h.Unlock()
	if len(h.shares) == 0 {
		h.before = debug.SetMemoryLimit(-1) // -1 reads it
	}
	h.shares = append(h.shares, share)
	debug.SetMemoryLimit(slices.Min(h.shares))
	var once sync.Once
	return func() {
		once.Do(func() {
			h.Lock()
			defer h.Unlock()
			i := slices.Index(h.shares, share)
			h.shares = slices.Delete(h.shares, i, i+1)
			if len(h.shares) == 0 {
				debug.SetMemoryLimit(h.before)
			} else {
				debug.SetMemoryLimit(slices.Min(h.shares))
			}
		})
	}
}

// runtimeHolds are the shares of the runs holding the runtime, and the
// limit it had before the first.
var runtimeHolds struct {
	sync.Mutex
	shares []int64
	before int64
}

// Staging a partition holds, besides its Parquet writer's row group, the
// keys that prove its grain unique: about this many bytes a row, measured
// on the bench's rows.
const (
	stagingBytesPerRow = 48
	// LocalWriterBytes is what one partition's writer holds for a local
	// warehouse (WriterBytes).
	LocalWriterBytes = 64 << 20
)

// Parallelism is how many partitions are staged at once within half of
// the memory limit: one per core, fewer when partitions are large.
// writer is what one partition's writer holds (WriterBytes).
func Parallelism(limit, rowsInLargest, writer int64) int {
	each := rowsInLargest*stagingBytesPerRow + writer
	return int(max(1, min(int64(runtime.NumCPU()), limit/2/each)))
}

// UploadBudget is the memory one S3 upload may hold under limit: a
// quarter of what the limit gives above the floor a local warehouse
// needs, shared by the partitions staged at once (at most one a core). At
// the floor it holds what the floor counts, two parts of the default size.
func UploadBudget(limit int64) int64 {
	return max(limit-MemoryFloor(nil), 0) / 4 / int64(runtime.NumCPU())
}

// WriterBytes is what staging one partition holds besides its grain keys:
// the Parquet writer's, and, for a warehouse on S3, the upload's parts (in
// flight, and the one being filled).
func WriterBytes(props map[string]string) int64 {
	if !s3store.UsesS3(props) {
		return LocalWriterBytes
	}
	c := s3store.ConfigFromProps(props)
	return LocalWriterBytes + c.PartSize*int64(c.PartsInFlight+1)
}

// keysBytesPerRow is what holding a run's keys to check its grain across
// partitions costs a row: a map entry of a hash and a partition index.
const keysBytesPerRow = 40

// KeysMaxRows is how many rows' keys a run may hold to check its grain
// across partitions: half the memory limit.
func KeysMaxRows(limit int64) int64 {
	return max(1, limit/2/keysBytesPerRow)
}

// ChangesMemory is what each partition's comparison at the grain may
// hold of sorted keys before they wait on disk: the partitions compared at
// once (par, or one per core) share an eighth of the memory limit, since
// a comparison also holds the batches it reads and a buffer a sorted run
// it merges (BenchmarkDifferMemory: 16 MiB of keys peak at 47-55 MiB of
// heap).
func ChangesMemory(limit int64, par int) int64 {
	if par <= 0 {
		par = runtime.NumCPU()
	}
	return max(2<<20, limit/8/int64(par))
}

// Budget sets a request's limits by a memory limit: what a partition's
// comparison at the grain holds, and the keys a run may hold to check its
// grain across partitions.
func Budget(req *swap.Request, limit int64) {
	req.ChangesMemory = ChangesMemory(limit, req.Parallelism)
	req.KeysMaxRows = KeysMaxRows(limit)
}
