# lakeswap: `make demo` runs the retail-orders story on an embedded catalog;
# `make test` runs every test; `make bench` measures staging throughput.
GO ?= go
DEMO_DIR ?= lakeswap-demo

.PHONY: build demo test bench vet clean

build:
	$(GO) build -o bin/lakeswap ./cmd/lakeswap

demo:
	$(GO) run ./cmd/lakeswap demo --dir $(DEMO_DIR)

test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# BENCH_ROWS sets the rows the publish benchmark generates (default 1M).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./swap/

clean:
	rm -rf bin $(DEMO_DIR) .lakeswap
