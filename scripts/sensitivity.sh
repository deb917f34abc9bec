#!/usr/bin/env bash
# The verdict's sensitivity and its false alarms on real runs (issue 55's check), through
# `tidebench ab` on one build: select-only at a fixed rate R (below what the server can do, so
# the achieved rate follows the schedule), 5 runs a side (A B B A A B B A A B), --fail-on
# tps:-3%.
#   - R against R, REPEATS times: each must be "within noise" (exit 0);
#   - R against 0.95 R: must be "regressed" (exit 1).
# Prints one line per comparison (ratio of medians, its 95 % interval, the verdict) and exits
# 1 when any verdict is not the expected one. About 80 s per comparison at the defaults.
#   scripts/sensitivity.sh [BIN]     BIN defaults to target/release/tidebench
# Environment: RATE (default 1000), DURATION (each run, default 5s), REPEATS (default 5),
# CLIENTS (default 2), RUNS (a side, default 5).
set -uo pipefail

bin=${1:-target/release/tidebench}
rate=${RATE:-1000}
duration=${DURATION:-5s}
repeats=${REPEATS:-5}
clients=${CLIENTS:-2}
runs=${RUNS:-5}
slower=$(python3 -c "print(round($rate * 0.95))")

if [ ! -x "$bin" ]; then
  echo "sensitivity: no tidebench binary at $bin: build it (make build) or name it" >&2
  exit 2
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d /tmp/tidebench-sensitivity.XXXXXX)
chmod 755 "$work"
# A home of its own, so the sweep's instances meet no others; removed at the end.
export TIDEBENCH_HOME=$work/home
cleanup() {
  for side in a b; do "$bin" instance destroy "ab-$side" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT

settings=(--set fsync=off --set synchronous_commit=off --set autovacuum=off)
# The rate is each side's own (a flag given twice is refused by `run`).
run=(-S -c "$clients" -T "$duration" -P 0)

# One comparison: its name, the expected exit status, then ab's extra arguments.
failures=0
judge() {
  local name=$1 expect=$2
  shift 2
  local out=$work/$name
  "$bin" ab -s 1 "${settings[@]}" --runs "$runs" --fail-on tps:-3% --format json \
    --out "$out" "$@" -- "${run[@]}" >"$out.json" 2>"$out.log"
  local code=$?
  local line
  line=$(python3 - "$out.json" <<'EOF'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("no verdict")
    sys.exit()
m = next((m for m in v["metrics"] if m["metric"] == "tps"), None)
if m is None or m["interval"] is None:
    print("tps not judged")
else:
    lo, hi = m["interval"]
    print(f'tps {m["baseline_median"]:.1f} -> {m["median"]:.1f}  ratio {m["ratio"]:.4f} [{lo:.4f}-{hi:.4f}]  {m["verdict"]}')
EOF
)
  local mark=ok
  if [ "$code" != "$expect" ]; then
    mark="UNEXPECTED (exit $code, expected $expect; log: $out.log)"
    failures=$((failures + 1))
    cp "$out.log" "/tmp/tidebench-sensitivity-$name.log"
  fi
  printf '%-14s %s  exit %s  %s\n' "$name" "$line" "$code" "$mark"
}

echo "select-only, $clients clients, ${duration} runs at R = $rate/s; $runs runs a side (A B B A ...); --fail-on tps:-3%"
for i in $(seq 1 "$repeats"); do
  judge "R-vs-R-$i" 0 "--a-arg=--rate=$rate" "--b-arg=--rate=$rate"
done
judge "R-vs-0.95R" 1 "--a-arg=--rate=$rate" "--b-arg=--rate=$slower"

if [ "$failures" -gt 0 ]; then
  echo "sensitivity: $failures verdict(s) not as expected (logs kept as /tmp/tidebench-sensitivity-*.log)" >&2
  exit 1
fi
echo "sensitivity: every verdict as expected"
