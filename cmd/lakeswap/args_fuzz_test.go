package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// FuzzArgs: any command line, against an embedded catalog in a folder of
// its own, ends with one of lakeswap's exit codes and never a panic. The
// arguments are the input split at NUL bytes, run in that folder; the
// demo, which runs a whole story, is left out.
func FuzzArgs(f *testing.F) {
	for _, seed := range []string{
		"publish\x00--table\x00retail.daily_orders\x00--partitions\x00order_date=2026-01-01..2026-01-02\x00x.csv",
		"publish\x00--plausible-band\x00NaN:NaN\x00--table\x00a.b\x00--partitions\x00d=1\x00a.csv",
		"plan\x00--table\x00.\x00--partitions\x00=\x00--out\x00",
		"rollback\x00--table\x00a.b\x00--run\x00../../x\x00--scoped",
		"apply\x00/dev/null\x00--approve\x00",
		"-o\x00json\x00history\x00--table\x00a",
		"verify\x00--table\x00a.b\x00--run\x00r\x00--snapshot\x00-1",
		"gc\x00--table\x00a.b\x00--grace\x00-1h\x00--yes",
		"table\x00create\x00--schema\x00/dev/null",
		"--memory-limit\x001x\x00publish",
		"status\x00--table\x00a.b\x00--run\x00",
		"lag\x00--job\x00/nonexistent.yaml",
	} {
		f.Add(seed)
	}
	codes := []int{exitOK, exitError, exitUsage, exitRefused, exitConflict, exitUnknown, exitVerifyFailed, exitLandedUnverified, exitRollbackRefuse, exitCancelled}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		for _, a := range args {
			if strings.Contains(a, "demo") || strings.Contains(a, "--home") || strings.Contains(a, "--config") {
				return
			}
		}
		home := t.TempDir()
		t.Chdir(home) // whatever a command writes by a relative name lands here
		var out, errb bytes.Buffer
		code := mainWithEnv(context.Background(), append([]string{"--home", home, "--config", "/dev/null"}, args...), &out, &errb, noEnv)
		if !slices.Contains(codes, code) {
			t.Fatalf("%q: exit %d", args, code)
		}
	})
}
