package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/lakeswap/lakeswap/backfill"
)

// orderLines are n rows of retail.daily_orders over days 1..days of
// January 2026, in order of channel.
func orderLines(n, days int) []string {
	lines := make([]string, n)
	for i := range n {
		lines[i] = fmt.Sprintf("2026-01-%02d,c%d,%d,%d", 1+i%days, i, 1+i%3, i%1000)
	}
	return lines
}

const ordersHeader = "order_date,channel,order_count,amount_cents"

func writeCSVLines(t testing.TB, path string, lines []string) string {
	t.Helper()
	writeCompressed(t, path, func(w io.Writer) {
		fmt.Fprintln(w, ordersHeader)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	})
	return path
}

func writeNDJSONLines(t testing.TB, path string, lines []string) string {
	t.Helper()
	writeCompressed(t, path, func(w io.Writer) {
		for _, l := range lines {
			f := strings.Split(l, ",")
			fmt.Fprintf(w, `{"order_date":%q,"channel":%q,"order_count":%s,"amount_cents":%s}`+"\n", f[0], f[1], f[2], f[3])
		}
	})
	return path
}

// writeCompressed writes a file, compressed as its name says.
func writeCompressed(t testing.TB, path string, fill func(io.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var w io.WriteCloser = nopCloser{f}
	switch filepath.Ext(path) {
	case ".gz":
		w = gzip.NewWriter(f)
	case ".zst":
		if w, err = zstd.NewWriter(f); err != nil {
			t.Fatal(err)
		}
	}
	bw := bufio.NewWriter(w)
	fill(bw)
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// publishedFingerprint creates retail.daily_orders in a fresh home,
// publishes the inputs to it and returns the run's fingerprint, checking
// that the table moved to a new version holding new files.
func publishedFingerprint(t *testing.T, partitions string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	schema := write(t, home, "daily_orders.yaml", schemaYAML)
	if code, _, errs := cli(t, home, "table", "create", "--schema", schema); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	before := metadataLocation(t, home)
	spill := t.TempDir()
	code, out, errs := cli(t, home, append([]string{"-o", "json", "publish", "--table", "retail.daily_orders", "--partitions", partitions, "--spill-dir", spill}, args...)...)
	if code != 0 {
		t.Fatalf("publish %v: exit %d: %s%s", args, code, out, errs)
	}
	var res struct {
		Status string `json:"status"`
		Plan   struct {
			Fingerprint struct {
				Rows int64  `json:"rows"`
				Hash string `json:"hash"`
			} `json:"fingerprint"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("publish -o json: %v\n%s", err, out)
	}
	if res.Status != "published" || metadataLocation(t, home) == before || parquetFiles(t, home) == 0 {
		t.Fatalf("publish %v: status %q, table moved %v, %d files", args, res.Status, metadataLocation(t, home) != before, parquetFiles(t, home))
	}
	if entries, _ := os.ReadDir(spill); len(entries) > 0 {
		t.Errorf("the spill folder holds %v after the publish", entries)
	}
	return fmt.Sprintf("%d rows, %s", res.Plan.Fingerprint.Rows, res.Plan.Fingerprint.Hash)
}

// TestInputShapes: the same rows as one CSV, a glob over parts, a folder
// of CSV and NDJSON parts beside an engine's _SUCCESS and hidden files,
// gzip CSV and zstd NDJSON, all publish the same content.
func TestInputShapes(t *testing.T) {
	dir := t.TempDir()
	lines := orderLines(30_000, 4)
	const days = "order_date=2026-01-01..2026-01-04"
	want := publishedFingerprint(t, days, writeCSVLines(t, filepath.Join(dir, "all.csv"), lines))

	parts := filepath.Join(dir, "parts")
	folder := filepath.Join(dir, "folder")
	for _, d := range []string{parts, folder} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeCSVLines(t, filepath.Join(parts, "part-0.csv"), lines[:10_000])
	writeCSVLines(t, filepath.Join(parts, "part-1.csv"), lines[10_000:])
	writeCSVLines(t, filepath.Join(folder, "part-0.csv"), lines[:10_000])
	if err := os.Mkdir(filepath.Join(folder, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeNDJSONLines(t, filepath.Join(folder, "sub", "part-1.ndjson"), lines[10_000:])
	write(t, folder, "_SUCCESS", "")
	write(t, folder, ".part-0.csv.crc", "not an input")

	for name, args := range map[string][]string{
		"glob":   {filepath.Join(parts, "part-*.csv")},
		"folder": {folder},
		"gzip":   {writeCSVLines(t, filepath.Join(dir, "all.csv.gz"), lines)},
		"zstd":   {writeNDJSONLines(t, filepath.Join(dir, "all.ndjson.zst"), lines)},
		// One file named in three spellings is read once.
		"twice": {filepath.Join(dir, "all.csv"), dir + "/./all.csv", link(t, filepath.Join(dir, "all.csv"), filepath.Join(dir, "link.csv")), hardLink(t, filepath.Join(dir, "all.csv"), filepath.Join(dir, "hard.csv"))},
	} {
		t.Run(name, func(t *testing.T) {
			if got := publishedFingerprint(t, days, args...); got != want {
				t.Errorf("fingerprint %s, want %s as from one CSV", got, want)
			}
		})
	}
}

func link(t *testing.T, target, name string) string {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
	return name
}

func hardLink(t *testing.T, target, name string) string {
	t.Helper()
	if err := os.Link(target, name); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestSpecialInputsRefused: a named pipe, or a link to a device, named as
// an input is refused at once (exit 2), before anything is read, and the
// table is unchanged; reading one would block for ever or never end.
func TestSpecialInputsRefused(t *testing.T) {
	home := newHome(t)
	before := metadataLocation(t, home)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for what, args := range map[string][]string{
		"fifo":           {fifo},
		"fifo in folder": {dir},
		"device":         {link(t, "/dev/zero", filepath.Join(t.TempDir(), "zero.csv"))},
	} {
		done := make(chan struct{})
		var code int
		var errs string
		go func() {
			defer close(done)
			code, _, errs = cli(t, home, append([]string{"publish", "--table", "retail.daily_orders", "--partitions", twoDays}, args...)...)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%s: still reading after a minute", what)
		}
		if code != exitUsage || !strings.Contains(errs, "lakeswap reads regular files") {
			t.Errorf("%s: exit %d: %s; want a usage error", what, code, errs)
		}
	}
	if after := metadataLocation(t, home); after != before {
		t.Errorf("the table moved: %s -> %s", before, after)
	}
}

// TestInputPastTheMemoryLimit publishes, under the least --memory-limit,
// an input larger than the quarter of it that rows may wait in, rows
// sorted and the same rows shuffled: both spill and succeed with one
// fingerprint. (make bench-scale measures the memory itself.)
func TestInputPastTheMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	// Wide rows, so that few are past the budget.
	lines := orderLines(320_000, 10)
	for i, l := range lines {
		date, rest, _ := strings.Cut(l, ",")
		lines[i] = date + "," + strings.Repeat("x", 200) + rest
	}
	sorted := writeCSVLines(t, filepath.Join(dir, "sorted.csv"), lines)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	shuffled := writeCSVLines(t, filepath.Join(dir, "shuffled.csv"), lines)
	info, err := os.Stat(sorted)
	if err != nil {
		t.Fatal(err)
	}
	limit := backfill.MemoryFloor(nil)
	if info.Size() <= limit/4 {
		t.Fatalf("input is %d bytes, not larger than the quarter of the limit rows wait in", info.Size())
	}
	const days = "order_date=2026-01-01..2026-01-10"
	a := publishedFingerprint(t, days, "--memory-limit", mib(limit), sorted)
	b := publishedFingerprint(t, days, "--memory-limit", mib(limit), shuffled)
	if a != b || !strings.HasPrefix(a, "320000 rows") {
		t.Errorf("sorted input gives %s, shuffled %s; want one fingerprint of 320000 rows", a, b)
	}
}

// TestCSVLinesThroughTheEngine: where a record spans lines or follows a
// blank line, findings and refusals still name the line it starts on.
func TestCSVLinesThroughTheEngine(t *testing.T) {
	home := newHome(t)
	before, files := metadataLocation(t, home), parquetFiles(t, home)
	stray := write(t, t.TempDir(), "stray.csv", ordersHeader+"\n2026-01-01,\"two\nlines\",1,5\n\n2026-01-09,c2,1,5\n")
	code, out, _ := cli(t, home, "-o", "json", "publish", "--table", "retail.daily_orders", "--partitions", twoDays, stray)
	if code != exitRefused || !strings.Contains(out, `"where": "`+stray+`:5"`) {
		t.Errorf("stray row: exit %d, want %d and where %s:5:\n%s", code, exitRefused, stray, out)
	}
	bad := write(t, t.TempDir(), "bad.csv", ordersHeader+"\n2026-01-01,\"two\nlines\",1,5\n\n2026-01-02,c2,x,5\n")
	code, out, _ = cli(t, home, "-o", "json", "publish", "--table", "retail.daily_orders", "--partitions", twoDays, bad)
	if code != exitRefused || !strings.Contains(out, `"where": "`+bad+`:5"`) || !strings.Contains(out, `"column": "order_count"`) {
		t.Errorf("bad value: exit %d, want %d naming %s:5 and order_count:\n%s", code, exitRefused, bad, out)
	}
	if metadataLocation(t, home) != before || parquetFiles(t, home) != files {
		t.Error("a refused publish changed the table or its files")
	}
}

// TestCtrlCDuringTheRead: SIGINT at 20 random moments of a publish reading
// a 3M-row CSV, from the process's start through the read, exits 130
// (a signal that lands before Go's handler is installed ends the process
// by SIGINT, which a shell reports as 130 too), names the cleanup, and
// leaves the table as it was. The input's last row is outside the run, so
// that a run a signal did not reach in time is refused, never committed,
// whatever the machine's speed; most signals must land in time.
func TestCtrlCDuringTheRead(t *testing.T) {
	t.Parallel() // sleeps before each signal: runs beside other tests
	home := newHome(t)
	before := metadataLocation(t, home)
	lines := append(orderLines(3_000_000, 2), "2026-01-05,stray,1,1")
	in := writeCSVLines(t, filepath.Join(t.TempDir(), "big.csv"), lines)
	r := rand.New(rand.NewPCG(7, 20))
	interrupted := 0
	for i := range 20 {
		at := time.Duration(r.IntN(2000)) * time.Millisecond
		cmd := exec.Command(lakeswapBinary(t), "--home", home, "--config", os.DevNull, "publish", "--allow-implausible",
			"--table", "retail.daily_orders", "--partitions", twoDays, "--run-id", fmt.Sprintf("ctrl-c-%d", i), in)
		cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(at)
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		byHandler := ws.Exited() && ws.ExitStatus() == exitCancelled
		bySignal := ws.Signaled() && ws.Signal() == syscall.SIGINT
		finished := ws.Exited() && ws.ExitStatus() == exitRefused && strings.Contains(errb.String(), "outside the partitions")
		switch {
		case byHandler || bySignal:
			interrupted++
		case !finished:
			t.Errorf("SIGINT %v after the start: %v, want exit 130 (or the refusal of a run it came too late for): %s", at, cmd.ProcessState, errb.String())
		}
		if byHandler && !strings.Contains(errb.String(), "nothing was committed") {
			t.Errorf("SIGINT %v after the start: exit 130 without saying what became of the run: %s", at, errb.String())
		}
		if strings.Contains(errb.String(), "context canceled") {
			t.Errorf("SIGINT %v after the start: Go's words for it, not a person's: %s", at, errb.String())
		}
	}
	t.Logf("%d of 20 signals landed before the run ended", interrupted)
	if interrupted < 10 {
		t.Errorf("%d of 20 signals landed before the run ended, want at least 10: the read is too short to test", interrupted)
	}
	if after := metadataLocation(t, home); after != before {
		t.Errorf("an interrupted publish moved the table: %s -> %s", before, after)
	}
}
