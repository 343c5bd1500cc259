// Command benchscale compares, in one run on one generated input, a
// lakeswap publish with embedded DuckDB turning the same CSV into
// partitioned Parquet (COPY ... PARTITION_BY), each as a process of its
// own so that each one's peak resident memory is its own. make bench-scale
// runs it; BENCH_ROWS sets the rows (default 30M, about 1 GB of CSV over
// 30 days in random order) and BENCH_GB a size in gigabytes instead.
package main
