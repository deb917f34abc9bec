#!/usr/bin/env bash
# Each integration test's wall time (issue 49): runs the integration tests as `make test` runs
# them (scripts/integration.sh's two lanes side by side) with libtest's own per-test timer,
# then prints a table, slowest first, with each test's lane and the total. RUSTC_BOOTSTRAP=1
# lets the stable test harness take its `--report-time` option; the tests themselves are built
# as usual. With arguments, only the tests they name (libtest filters) run, one at a time:
# `scripts/test-times.sh vm::` times one module's tests (`make test-times ONLY=vm::`).
# TEST_TIMES_OUT names the table's file.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${TEST_TIMES_OUT:-target/test-times.txt}
mkdir -p "$(dirname "$out")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export RUSTC_BOOTSTRAP=1
start=$(date +%s)
if [ $# -eq 0 ]; then
  ./scripts/integration.sh -Z unstable-options --report-time 2>&1 | tee -a "$log" |
    grep -E 'test result:' || true
else
  cargo test --locked --test integration -- --test-threads=1 "$@" \
    -Z unstable-options --report-time 2>&1 | tee -a "$log" | grep -E '^test result:' || true
fi
end=$(date +%s)
{
  echo "| test | lane | seconds |"
  echo "|---|---|---:|"
  sed -nE 's/^(\[([a-z]+)\] )?test ([^ ]+) \.\.\. (ok|FAILED|ignored) <([0-9.]+)s>$/\5 \3 \2/p' "$log" |
    sort -rn | awk '{printf "| %s | %s | %.1f |\n", $2, ($3 == "" ? "-" : $3), $1}'
  echo
  echo "wall time: $((end - start)) s"
} > "$out"
cat "$out"
