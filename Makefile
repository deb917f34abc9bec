# tidebench: `make demo` runs the main job on a fresh machine, `make test` runs every check.
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
CARGO ?= cargo
BIN := target/release/tidebench

.PHONY: setup build demo test bench clean

setup:
	@./scripts/setup.sh

build: setup
	$(CARGO) build --release --locked

# Start the managed `default` instance, load pgbench's tables at scale 10, run 20 s of TPC-B-like.
demo: build
	$(BIN) instance start default
	$(BIN) prepare --workload tpcb --scale 10 --force
	$(BIN) run --workload tpcb --clients 4 --duration 20s --progress 5s

# Formatting, lints and all tests (unit + integration against real PostgreSQL).
test: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings
	$(CARGO) test --locked --workspace -- --test-threads=2

# tidebench vs pgbench on the same instance, alternating, printing ratios (not part of `test`).
bench: build
	python3 bench/bench.py --bin $(BIN)

clean:
	$(CARGO) clean
