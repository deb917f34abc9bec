# tidebench: `make demo` runs the main job on a fresh machine, `make test` runs every check.
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
CARGO ?= cargo
BIN := target/release/tidebench

# `setup` installs what a build and the demo need; `setup-test` adds the test-only tools.
.PHONY: setup setup-test build demo test test-tpch test-versions test-times stress docs bench bench-tls bench-scripts bench-shards bench-retail bench-waits bench-tpch bench-pooler bench-pooler-small chaos sensitivity clean

setup:
	@./scripts/setup.sh

setup-test:
	@./scripts/setup.sh --test

build: setup
	$(CARGO) build --release --locked

# Start the managed `default` instance, load 4 databases (one per group) and run the `demo`
# preset: 4 groups whose shares of one constant load shift every 10 s, polled as TPC-V does.
demo: build
	$(BIN) instance start default
	$(BIN) prepare --preset demo --force
	$(BIN) run --preset demo

# Formatting, lints and all tests (unit + integration against real PostgreSQL). The
# integration tests run in two lanes side by side (scripts/integration.sh): the tests that
# boot QEMU guests one at a time, then the conformance tests (pgbench and psql as referees)
# three at a time and uncaptured, so their counts of cases and agreements show; beside them
# every other test three at a time (the longest modules in a sub-lane that starts them
# first). The book's chapter on reliability has the times and each test's budget.
# First, the structure check: imports point down the rooms of docs/DESIGN.md (issue 48).
# Tests whose prerequisite is missing (QEMU, cgroups, root, Chromium, Slurm) fail under CI=true
# and are skipped elsewhere; the last line counts the skips from the ledger they write.
SKIP_LEDGER = $${CARGO_TARGET_DIR:-target}/tmp/skipped.txt
# Every test target but the integration binary (which scripts/integration.sh runs in lanes);
# all of them are built first in one cargo call, so the builds overlap.
OTHER_TESTS = $(foreach t,$(filter-out integration,$(basename $(notdir $(wildcard tests/*.rs))) $(notdir $(patsubst %/main.rs,%,$(wildcard tests/*/main.rs)))),--test $(t))
test: setup-test
	@rm -f $(SKIP_LEDGER)
	python3 scripts/rooms.py
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings
	$(CARGO) test --locked --workspace --no-run
	$(CARGO) test --locked --workspace --lib --bins $(OTHER_TESTS) -- --test-threads=2
	$(CARGO) test --locked --workspace --doc
	CARGO=$(CARGO) ./scripts/integration.sh
	@./scripts/skips.sh $(SKIP_LEDGER)

# TPC-H's referee (issue 50): SF 1 loaded (with its indexes), the 22 queries with the
# qualification parameters, each answer held to the specification's SF 1 answer set within its
# tolerances; prints `tpch answers (SF 1, qualification): 22 queries, N agree`. Minutes long and
# about 2 GB of disk, not part of `test`.
test-tpch: setup
	$(CARGO) test --locked --test integration tpch_sf1_qualification_answers_match_the_spec -- --ignored --nocapture

# The supported PostgreSQL versions (issue 55): the server packages of 14 to 18 unpacked into
# .tools/pg/ (scripts/pg-versions.sh, from the npm registry), then per version over TLS: every
# registered workload loaded and run briefly with the server agreeing, tpcc's and tpce's checks,
# the samplers' series, the wait sampler's top statement; prints the book's table (docs/src/guide/
# versions.md). Minutes long, not part of `test`, which runs the newest version's tpcb only.
test-versions: setup
	./scripts/pg-versions.sh >/dev/null
	$(CARGO) test --locked --test integration versions::every_supported_version -- --ignored --nocapture

# Each integration test's wall time, slowest first, into target/test-times.txt (issue 49; the
# book's table in docs/src/guide/reliability.md comes from it). Not part of `test`. ONLY=vm::
# times the tests whose names contain `vm::`, one at a time.
test-times: setup-test
	./scripts/test-times.sh $(ONLY)

# The race check (issue 42): `make test` 5 times in a row on a clean clone of HEAD, then 3 times
# beside a CPU hog (one busy process per core). Prints a line per round and a tally; hours long,
# not part of `test`. CLEAN=n BUSY=m change the counts.
stress: setup
	./scripts/stress.sh

# The book (docs/src, mdBook) as static HTML in docs/book/ (open docs/book/index.html): table of
# contents and search. mdBook, pinned, is installed from crates.io into .tools/ on first use
# (a few minutes of compiling); `make test` does not build the book, tests/docs.rs checks it.
MDBOOK_VERSION := 0.4.40
MDBOOK := .tools/bin/mdbook

docs: $(MDBOOK)
	$(MDBOOK) build docs
	@echo "the book: docs/book/index.html"

$(MDBOOK):
	$(CARGO) install mdbook --locked --version $(MDBOOK_VERSION) --root .tools

# tidebench vs pgbench on the same instance, alternating, printing ratios (not part of `test`).
bench: build
	python3 bench/bench.py --bin $(BIN)

# The compare table over TLS (issue 28): select-only and tpcb at 1, 4 and 16 clients, both tools
# with sslmode=verify-full against an instance started with --ssl.
bench-tls: build
	python3 bench/bench.py --bin $(BIN) --tls --compare-only --clients 1,4,16 --rounds 5

# The compare table through the script interpreter (issue 27): pgbench's select-only and
# tpcb-like scripts as files, `tidebench run -f` against `pgbench -f` on the same file.
bench-scripts: build
	python3 bench/bench.py --bin $(BIN) --scripts --compare-only --clients 1,4,16,64 --rounds 5

# One process against the same run in 2 shards on this host (issue 26): select-only at 16
# clients, `run --shard i/2` on one start instant and `tidebench merge`, tps ratio per round.
bench-shards: build
	python3 bench/bench.py --bin $(BIN) --shards-only

# The cost of wait sampling (issue 41): tpcb at 4 and 64 clients with --sample-waits 0 and with
# the default (10 reads a second), alternating, tps ratio per client count (target >= 0.98).
bench-waits: build
	python3 bench/bench.py --bin $(BIN) --waits-cost --rounds 6

# retail's references (issue 30): the load rate against one `psql \copy` of the same rows,
# --jobs 2 against --jobs 1, and full_scan beside a count(*) scan, at scale 20.
bench-retail: build
	python3 bench/bench.py --bin $(BIN) --retail-only

# TPC-H's load (issue 51) at SF 1: `prepare` against tpchgen-cli's CSV files loaded with
# `psql \copy` and against HammerDB's TPROC-H build (where HAMMERDB_HOME or hammerdbcli on
# PATH finds it; else the table says how to install it), all in 2 streams, alternating, ratios
# and row counts printed, then both power runs per query; installs tpchgen-cli from PyPI first
# when missing.
bench-tpch: build
	@command -v tpchgen-cli >/dev/null || [ -x "$$HOME/.local/bin/tpchgen-cli" ] || \
	  python3 -m pip install --quiet tpchgen-cli 2>/dev/null || \
	  python3 -m pip install --quiet --break-system-packages tpchgen-cli
	python3 bench/tpch_load.py --bin $(BIN) --power

# Through a connection pooler (issue 57): select-only at 16 to 1,000 clients straight to an
# instance (max_connections=100) and through its managed pgbouncer (transaction mode, pools of
# 5, 20 and 50), one table and results/pooler/pooler.svg (tps, p95 and the pooler's wait against
# clients); then 2,000 sessions through the pool with the driver's RSS and CPU/txn.
bench-pooler: build
	python3 bench/pooler.py --bin $(BIN) --pool-sizes 5,20,50 --out results/pooler

# The same at a small size (issue 57's check, a few minutes): scale 1, 4 to 128 clients, pools
# of 2 and 8, 3 s a point, 200 sessions; ends with results/pooler-small/pooler.svg.
bench-pooler-small: build
	python3 bench/pooler.py --bin $(BIN) --small --out results/pooler-small

# Faults injected into a live 4-target run (issue 15): kill, freeze, lock, OOM, killed driver;
# prints a table and fails if any check does (not part of `test`; about 3 minutes, needs root).
chaos: build
	python3 bench/chaos.py --bin $(BIN)

# The verdict's sensitivity and false alarms on real runs (issue 55), through `tidebench ab` on
# one build, 5 runs a side: select-only at a fixed rate R against R five times (each must be
# within noise) and against 0.95 R (must be regressed at tps:-3%); about 7 minutes (not part
# of `test`).
sensitivity: build
	./scripts/sensitivity.sh $(BIN)

clean:
	$(CARGO) clean
