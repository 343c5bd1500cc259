# lakeswap: `make demo` runs the retail-orders story on an embedded catalog;
# `make test` runs every test; `make bench` measures staging throughput.
GO ?= go
DEMO_DIR ?= lakeswap-demo
# lakeswap embeds DuckDB (cgo: needs gcc) for SQL jobs and as its CSV
# reader; TAGS=noduckdb builds without it (no SQL jobs; CSV read by
# lakeswap's own, slower reader).
TAGS ?=
GOTAGS = $(if $(TAGS),-tags $(TAGS))
# The tests' temporary folders go in one folder of the run's, removed when
# the run ends, Ctrl-C included; testenv stops its servers on the signal.
# (Readable by all: PostgreSQL runs as its own user under it.)
TESTTMP = start=$$(date +%s); tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/lakeswap-test-XXXXXX") && chmod 755 "$$tmp" && \
	trap 'rm -rf "$$tmp"' EXIT && trap 'exit 130' INT TERM && echo "temporary folders in $$tmp" && TMPDIR=$$tmp

.PHONY: build demo demo-minio test test-fast test-short bench bench-scale reliability minio dev-up dev-down clean

build:
	$(GO) build $(GOTAGS) -o bin/lakeswap ./cmd/lakeswap

demo:
	$(GO) run $(GOTAGS) ./cmd/lakeswap demo --dir $(DEMO_DIR)

# The same story with the warehouse on a MinIO server started for it.
demo-minio:
	$(GO) run $(GOTAGS) ./cmd/lakeswap demo --s3 --dir $(DEMO_DIR)-minio

# Tests run against real servers (MinIO, PostgreSQL) that testenv starts;
# `make minio` builds the MinIO server once so no test waits for it.
test:
	@echo "make test: every test, against real MinIO and PostgreSQL servers: about 14 to 16 minutes on 2 cores (831 s here, the machine 87% busy, PostgreSQL and MinIO included); make test-fast runs the short tier"
	$(GO) vet $(GOTAGS) ./...
	$(GO) vet -tags noduckdb ./...
	@$(TESTTMP) LAKESWAP_WANT_ENGINE=$(if $(findstring noduckdb,$(TAGS)),lakeswap,duckdb) $(GO) test $(GOTAGS) -count=1 -timeout 45m ./...; rc=$$?; \
	echo "make test: exit $$rc after $$(( $$(date +%s) - start )) s"; exit $$rc

# The fast tier, what a developer runs between changes: the guard-by-route
# scenarios and the tests on the embedded catalog and local files, no
# server. test-short is its older name.
test-fast: test-short

test-short:
	$(GO) vet $(GOTAGS) ./...
	@$(TESTTMP) $(GO) test $(GOTAGS) -short -count=1 ./...

minio:
	$(GO) run ./testenv/cmd/devenv minio

# MinIO and PostgreSQL for trying lakeswap by hand; prints what to export.
dev-up:
	$(GO) run ./testenv/cmd/devenv up

dev-down:
	$(GO) run ./testenv/cmd/devenv down

# BENCH_ROWS sets the rows the publish benchmark generates (default 1M);
# BENCH_INPUT_ROWS the rows of the CLI's sorted-versus-alternating input
# benchmark (default 2M); figures are averages over three runs.
# BENCH_JOB_EVENTS the raw events the orders_fact job runs over (default 10M).
bench:
	$(GO) test $(GOTAGS) -run '^$$' -bench . -benchtime 3x -timeout 30m ./swap/
	$(GO) test $(GOTAGS) -run '^$$' -bench BenchmarkInputRowOrder -benchtime 3x -timeout 30m ./cmd/lakeswap/
	$(GO) test -run '^$$' -bench 'BenchmarkDifferMemory|BenchmarkNestedFingerprint' -benchtime 3x ./verify/
	$(GO) test -run '^$$' -bench BenchmarkRead -benchtime 3x ./stats/
	$(GO) test $(GOTAGS) -run '^$$' -bench BenchmarkSplit -benchtime 10x ./source/
	$(GO) test $(GOTAGS) -run '^$$' -bench BenchmarkRetailJob -benchtime 1x -timeout 30m ./cmd/lakeswap/

# A generated CSV of BENCH_ROWS rows (default 30M, about 0.9 GB) over 30 days in
# random order, and the same rows as NDJSON and Parquet (BENCH_FORMATS, default
# csv,ndjson,parquet): each published by lakeswap with default settings and again
# under BENCH_MEMORY_LIMIT (in MiB, default 1024MiB), saying which won and whether
# the limited peak stayed within the limit plus 128 MiB, and turned into
# partitioned Parquet by DuckDB's COPY, each timed with its peak memory; then
# DuckDB's files adopted under the limit; BENCH_GB=10 for 10 GB. Then the
# shipped orders_fact job over BENCH_JOB_EVENTS raw events (default 10M; 0 skips
# it) under BENCH_MEMORY_LIMIT (default 1024MiB), with whether its peak stayed
# within the limit.
# Needs free disk of about three times the input (BENCH_DIR to choose where).
# The crash and fault drill: SIGKILL, and each fault of the S3 proxy, from
# each step of a publish, LAKESWAP_DRILL_TRIALS times a cell on SQLite and on
# PostgreSQL with MinIO; prints the table of outcomes (make test runs one
# trial a cell on PostgreSQL).
reliability:
	LAKESWAP_DRILL_TRIALS=$${LAKESWAP_DRILL_TRIALS:-10} $(GO) test $(GOTAGS) -count=1 -timeout 60m -run '^TestReliabilityDrill$$' -v ./cmd/lakeswap/ | grep -v '^SDK'

bench-scale:
	$(GO) run ./internal/benchscale

clean:
	rm -rf bin $(DEMO_DIR) .lakeswap
