package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lakeswap/lakeswap/backfill"
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

// checkMemoryLimit refuses a --memory-limit below the floor, naming it.
func checkMemoryLimit(flag string, limit int64, props map[string]string) error {
	floor := backfill.MemoryFloor(props)
	if limit >= floor {
		return nil
	}
	needs := "the engine, a batch of rows and a partition's writer"
	if floor > backfill.MemoryFloor(nil) {
		needs += " with its S3 parts in flight"
	}
	return usagef("--memory-limit %s: lakeswap needs at least %s here (%s); peak memory stays within the limit plus %s",
		flag, mib(floor), needs, mib(backfill.MemorySlack))
}

// mib writes a size in whole MiB, as --memory-limit takes it.
func mib(n int64) string { return fmt.Sprintf("%dMiB", (n+1<<20-1)>>20) }
