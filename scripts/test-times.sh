#!/usr/bin/env bash
# Each integration test's wall time (issue 49): runs the integration tests as `make test` runs
# them (two at a time, the conformance tests three at a time) with libtest's own per-test
# timer, then prints a table, slowest first, with the total. RUSTC_BOOTSTRAP=1 lets the stable
# test harness take its `--report-time` option; the tests themselves are built as usual.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/test-times.txt}
mkdir -p "$(dirname "$out")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
RUSTC_BOOTSTRAP=1 cargo test --locked --test integration -- --test-threads=2 --skip _conformance:: \
  -Z unstable-options --report-time 2>&1 | tee -a "$log" | grep -E '^test result:' || true
RUSTC_BOOTSTRAP=1 cargo test --locked --test integration _conformance:: -- --test-threads=3 \
  -Z unstable-options --report-time 2>&1 | tee -a "$log" | grep -E '^test result:' || true
end=$(date +%s)
{
  echo "| test | seconds |"
  echo "|---|---:|"
  sed -nE 's/^test ([^ ]+) \.\.\. (ok|FAILED|ignored) <([0-9.]+)s>$/\3 \1/p' "$log" |
    sort -rn | awk '{printf "| %s | %.1f |\n", $2, $1}'
  echo
  echo "wall time of the two runs: $((end - start)) s"
} > "$out"
cat "$out"
