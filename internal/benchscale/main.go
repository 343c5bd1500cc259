//go:build !noduckdb

package main

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakeswap/lakeswap/internal/rawevents"
)

const schemaYAML = `table: bench.orders
columns:
  - {name: order_date, type: date, required: true}
  - {name: channel, type: string, required: true}
  - {name: order_count, type: long, required: true}
  - {name: amount_cents, type: long, required: true}
identifier: [order_date, channel]
partition: [{column: order_date, transform: identity}]
additive: [order_count, amount_cents]
`

func main() {
	if len(os.Args) == 4 && os.Args[1] == "duckdb-convert" {
		if err := duckdbConvert(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "duckdb-copy" {
		if err := duckdbCopy(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

func run() error {
	rows := int64(30_000_000)
	if v, err := strconv.ParseInt(os.Getenv("BENCH_ROWS"), 10, 64); err == nil && v > 0 {
		rows = v
	}
	if gb, err := strconv.ParseFloat(os.Getenv("BENCH_GB"), 64); err == nil && gb > 0 {
		rows = int64(gb * 1e9 / 29.5) // the generated rows are about 29.5 bytes
	}
	dir, err := os.MkdirTemp(os.Getenv("BENCH_DIR"), "lakeswap-bench-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "orders.csv")
	start := time.Now()
	size, err := generate(in, rows)
	if err != nil {
		return err
	}
	fmt.Printf("input: %d rows over 30 days in random order, %.2f GB of CSV (generated in %s)\n", rows, float64(size)/1e9, time.Since(start).Round(time.Millisecond))

	bin := filepath.Join(dir, "lakeswap")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/lakeswap").CombinedOutput(); err != nil {
		return fmt.Errorf("build lakeswap: %v\n%s", err, out)
	}
	home := filepath.Join(dir, "home")
	schema := filepath.Join(dir, "orders.yaml")
	if err := os.WriteFile(schema, []byte(schemaYAML), 0o644); err != nil {
		return err
	}
	if _, _, err := measure(bin, "--home", home, "table", "create", "--schema", schema); err != nil {
		return err
	}
	// Each format is published twice, with default settings and under
	// BENCH_MEMORY_LIMIT, for the default must never lose to a limit a
	// user could pass.
	memLimit := cmp.Or(os.Getenv("BENCH_MEMORY_LIMIT"), "1024MiB")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The same rows as NDJSON and Parquet, written by DuckDB; BENCH_FORMATS
	// (default csv,ndjson,parquet) picks those measured.
	formats := strings.Split(cmp.Or(os.Getenv("BENCH_FORMATS"), "csv,ndjson,parquet"), ",")
	inputs := map[string]string{"csv": in}
	for _, f := range formats[1:] {
		inputs[f] = filepath.Join(dir, "orders."+f)
		if _, _, err := measure(self, "duckdb-convert", in, inputs[f]); err != nil {
			return err
		}
	}
	schema2 := filepath.Join(dir, "adopted.yaml")
	if err := os.WriteFile(schema2, []byte(strings.Replace(schemaYAML, "bench.orders", "bench.adopted", 1)), 0o644); err != nil {
		return err
	}
	if _, _, err := measure(bin, "--home", home, "table", "create", "--schema", schema2); err != nil {
		return err
	}
	type result struct {
		format                  string
		lsWall, limWall, dkWall time.Duration
		lsRSS, limRSS, dkRSS    int64
	}
	var results []result
	for _, f := range formats {
		name := "bench.orders_" + f
		schemaF := filepath.Join(dir, f+".yaml")
		if err := os.WriteFile(schemaF, []byte(strings.Replace(schemaYAML, "bench.orders", name, 1)), 0o644); err != nil {
			return err
		}
		if _, _, err := measure(bin, "--home", home, "table", "create", "--schema", schemaF); err != nil {
			return err
		}
		args := []string{"--home", home, "publish", "--no-progress", "--table", name, "--partitions", "order_date=2026-01-01..2026-01-30", "--spill-dir", dir}
		lsWall, lsRSS, err := measure(bin, append(args, inputs[f])...)
		if err != nil {
			return err
		}
		// The same rows under the limit, into a table of their own, so
		// that both runs are a first load.
		limited := filepath.Join(dir, f+"-limited.yaml")
		if err := os.WriteFile(limited, []byte(strings.Replace(schemaYAML, "bench.orders", name+"_limited", 1)), 0o644); err != nil {
			return err
		}
		if _, _, err := measure(bin, "--home", home, "table", "create", "--schema", limited); err != nil {
			return err
		}
		limArgs := slices.Clone(args)
		limArgs[slices.Index(limArgs, name)] = name + "_limited"
		limWall, limRSS, err := measure(bin, append(limArgs, "--memory-limit", memLimit, inputs[f])...)
		if err != nil {
			return err
		}
		// DuckDB writes its partitioned Parquet under the adopted table's
		// location, which lakeswap then adopts as it is (from CSV).
		out := filepath.Join(home, "warehouse", "bench.db", "adopted", "data", "duckdb-"+f)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		dkWall, dkRSS, err := measure(self, "duckdb-copy", inputs[f], out)
		if err != nil {
			return err
		}
		results = append(results, result{f, lsWall, limWall, dkWall, lsRSS, limRSS, dkRSS})
		if f != "csv" {
			if err := os.RemoveAll(out); err != nil {
				return err
			}
		}
	}
	adArgs := []string{"--home", home, "publish", "--no-progress", "--adopt", "--table", "bench.adopted", "--partitions", "order_date=2026-01-01..2026-01-30", "--memory-limit", memLimit}
	adWall, adRSS, err := measure(bin, append(adArgs, filepath.Join(home, "warehouse", "bench.db", "adopted", "data", "duckdb-"+formats[0]))...)
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Printf("%-8s lakeswap publish %8.2f s  peak RSS %6.0f MiB  (%.2fM rows/s) | duckdb COPY to partitioned Parquet %8.2f s  peak RSS %6.0f MiB | lakeswap/duckdb-x %.2f\n",
			r.format, r.lsWall.Seconds(), float64(r.lsRSS)/(1<<20), float64(rows)/r.lsWall.Seconds()/1e6, r.dkWall.Seconds(), float64(r.dkRSS)/(1<<20), r.lsWall.Seconds()/r.dkWall.Seconds())
		won := "the default won"
		if r.limWall < r.lsWall {
			won = "the limit won"
		}
		fmt.Printf("%-8s under --memory-limit %s %8.2f s  peak RSS %6.0f MiB | lakeswap/duckdb-x %.2f | %s\n",
			r.format, memLimit, r.limWall.Seconds(), float64(r.limRSS)/(1<<20), r.limWall.Seconds()/r.dkWall.Seconds(), won)
	}
	lsWall := results[0].lsWall
	fmt.Printf("lakeswap publish --adopt of DuckDB's files (validate, fingerprint, commit, verify): %8.2f s  peak RSS %6.0f MiB  (%.2fM rows/s)\n", adWall.Seconds(), float64(adRSS)/(1<<20), float64(rows)/adWall.Seconds()/1e6)
	fmt.Printf("stage/adopt-x %.2f (%s)\n", lsWall.Seconds()/adWall.Seconds(), formats[0])
	if err := benchJob(bin, home, dir, memLimit); err != nil {
		return err
	}
	// lakeswap states that peak RSS stays within the limit plus 128 MiB.
	limit, err := strconv.ParseInt(strings.TrimSuffix(memLimit, "MiB"), 10, 64)
	if err != nil {
		return fmt.Errorf("BENCH_MEMORY_LIMIT %q: give it in MiB, as 1024MiB", memLimit)
	}
	bound := (limit + 128) << 20
	for _, r := range results {
		fmt.Printf("%-8s peak RSS %6.0f MiB under --memory-limit %s: within the limit plus 128 MiB: %v\n", r.format, float64(r.limRSS)/(1<<20), memLimit, r.limRSS <= bound)
	}
	fmt.Printf("adopt    peak RSS %6.0f MiB under --memory-limit %s: within the limit plus 128 MiB: %v\n", float64(adRSS)/(1<<20), memLimit, adRSS <= bound)
	return nil
}

// benchJob runs the shipped orders_fact job over BENCH_JOB_EVENTS raw
// events (default 10M, as Parquet; 0 skips it) under limit, and reports
// its wall time and peak RSS against the limit.
func benchJob(bin, home, dir, limit string) error {
	events := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("BENCH_JOB_EVENTS")); err == nil && v >= 0 {
		events = v
	}
	if events == 0 {
		return nil
	}
	if err := rawevents.Write(filepath.Join(dir, "raw", "events.parquet"), events); err != nil {
		return err
	}
	for _, f := range []string{"orders_fact.sql", "orders_fact.table.yaml"} {
		b, err := os.ReadFile(filepath.Join("examples", "retail", f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	job := filepath.Join(dir, "orders_fact.yaml")
	if err := os.WriteFile(job, []byte(`table: retail.orders_fact
sources:
  raw_events: {path: raw/events.parquet}
sql_file: orders_fact.sql
rejects:
  - {reason: order_id is null, when: "order_id IS NULL OR order_id = ''"}
  - {reason: channel is not valid, when: "channel NOT IN ('web', 'store', 'app')"}
`), 0o644); err != nil {
		return err
	}
	if _, _, err := measure(bin, "--home", home, "table", "create", "--schema", filepath.Join(dir, "orders_fact.table.yaml")); err != nil {
		return err
	}
	wall, rss, err := measure(bin, "--home", home, "publish", "--no-progress", "--memory-limit", limit, "--spill-dir", dir,
		"--rejects", filepath.Join(dir, "rejects.ndjson"), "--job", job, "--partitions", "order_date=2026-01-01..2026-01-30")
	if err != nil {
		return err
	}
	mib, err := strconv.ParseInt(strings.TrimSuffix(limit, "MiB"), 10, 64)
	if err != nil {
		return fmt.Errorf("BENCH_MEMORY_LIMIT %q: give it in MiB, as 1024MiB", limit)
	}
	fmt.Printf("job      orders_fact over %d raw events: %8.2f s  peak RSS %6.0f MiB under --memory-limit %s: within the limit: %v\n",
		events, wall.Seconds(), float64(rss)/(1<<20), limit, rss <= mib<<20)
	return nil
}

// measure runs a command and returns its wall time and peak resident memory.
func measure(name string, args ...string) (time.Duration, int64, error) {
	// What the runs before wrote (gigabytes of converted inputs, staged
	// files) goes to disk first, not during this run: unflushed, it made
	// whichever run came first lose by seconds.
	syscall.Sync()
	cmd := exec.Command(name, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var rss int64
	if ru != nil {
		rss = ru.Maxrss << 10 // kilobytes on Linux
	}
	return wall, rss, nil
}

// generate writes rows of 30 days in random order; every channel is unique,
// so the grain (order_date, channel) holds.
func generate(path string, rows int64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 4<<20)
	w.WriteString("order_date,channel,order_count,amount_cents\n")
	r := rand.New(rand.NewPCG(7, 11))
	var buf []byte
	for i := range rows {
		buf = append(buf[:0], "2026-01-"...)
		day := 1 + r.IntN(30)
		buf = append(buf, byte('0'+day/10), byte('0'+day%10), ',', 'c')
		buf = strconv.AppendInt(buf, i, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, 1+i%3, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Int64N(100000), 10)
		buf = append(buf, '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return info.Size(), f.Close()
}

// duckdbCopy is DuckDB's own way from an input to partitioned Parquet; the
// files keep the partition column, as a table's data files do.
func duckdbCopy(in, out string) error {
	return duckdbExec(fmt.Sprintf(`COPY (SELECT * FROM %s) TO '%s' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (order_date), WRITE_PARTITION_COLUMNS true)`, reader(in), out))
}

// reader is DuckDB's reader of an input by its name: CSV, NDJSON or
// Parquet.
func reader(in string) string {
	switch filepath.Ext(in) {
	case ".ndjson":
		return fmt.Sprintf("read_json('%s', format = 'newline_delimited')", in)
	case ".parquet":
		return fmt.Sprintf("read_parquet('%s')", in)
	}
	return fmt.Sprintf("read_csv('%s')", in)
}

// duckdbConvert writes the CSV input's rows as NDJSON or Parquet (by out's
// name), for the same rows in each format.
func duckdbConvert(in, out string) error {
	format := "json"
	if filepath.Ext(out) == ".parquet" {
		format = "parquet"
	}
	return duckdbExec(fmt.Sprintf(`COPY (SELECT * FROM read_csv('%s')) TO '%s' (FORMAT %s)`, in, out, format))
}

// duckdbExec runs one statement on an in-memory DuckDB.
func duckdbExec(q string) error {
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	_, err = db.ExecContext(context.Background(), q)
	return err
}
