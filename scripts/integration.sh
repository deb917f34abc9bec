#!/usr/bin/env bash
# The integration tests in two lanes side by side (issue 49), as `make test` runs them:
#
# - the guest lane: the tests that boot QEMU guests (`vm*::`), one at a time. Under TCG a guest
#   takes the host's cores for minutes, and these were the suite's longest tests, run last
#   (libtest goes in name order) and two at a time beside each other;
# - the main lane: every other integration test, three at a time (since 2026-11-29 as two
#   sub-lanes, `heavy` one at a time and `main` two at a time, see HEAVY below) (two until 2026-11-28, when
#   the main lane took 912 s against the guest lane's 649 s plus the conformance tests). These
#   mostly wait on a server, a fixed-length run or a process start; each already shared the
#   machine with neighbours and, in `make stress`, with a CPU hog.
# - after the guests, in the guest lane, the conformance tests (`_conformance::`: pgbench and
#   psql as referees), three at a time and uncaptured, so their counts of cases and agreements
#   show; their cases mostly wait on process starts. The main lane is the longer one (887 s
#   against the guests' 755 s in a clean-clone run, and the new workloads' tests land in it),
#   so they ran after it on the run's critical path; after the guests they fill its shadow.
#
# So two guests never boot at once, and the guests run from the start beside the short tests
# instead of at the end beside each other. A test is in exactly one lane: the guest lane takes
# the names that contain one of GUEST_LANE's patterns and the main lane skips those same
# patterns (libtest matches both by substring). Each lane's lines start with its name; the
# runners' own summary lines are kept whole after it. Extra arguments go to every runner
# (`-Z unstable-options --report-time`, `--list`). The exit status is the first failure's.
set -euo pipefail
cd "$(dirname "$0")/.."

# The modules whose tests boot QEMU guests.
GUEST_LANE=(vm:: vm_shared:: vm_consolidate:: vm_experiments::)

# The main lane's longest tests (a minute or more each on a busy run, shared loads included),
# in a sub-lane of their own that starts them at once, one at a time, beside the rest of the
# lane two at a time: libtest starts tests in name order, and `tpcv::` (the longest, 150 s
# and more) came last, so the lane ended a whole test after its other threads were idle.
# The two sub-lanes keep the main lane's three threads. `consolidate::` is a substring of
# `vm_consolidate::`, which the guest skips below keep out.
HEAVY=(tpcv:: consolidate:: retail:: tpch_refresh:: tpch:: slurm::)

skips=(--skip _conformance::)
for p in "${GUEST_LANE[@]}"; do
  skips+=(--skip "$p")
done
main_skips=("${skips[@]}")
for p in "${HEAVY[@]}"; do
  main_skips+=(--skip "$p")
done

# One build first, so the lanes do not wait on each other's cargo lock.
"${CARGO:-cargo}" test --locked --test integration --no-run

lane() {
  local name=$1
  shift
  # `sed -u`: each line as soon as it is whole, so a lane's progress shows while it runs.
  "${CARGO:-cargo}" test --locked --test integration -- "$@" 2>&1 | sed -u "s/^/[$name] /"
  return "${PIPESTATUS[0]}"
}

guest_lane() {
  local status=0
  lane guests --test-threads=1 "${GUEST_LANE[@]}" "$@" || status=$?
  lane conformance --test-threads=3 --nocapture _conformance:: "$@" || status=$?
  return "$status"
}

guest_lane "$@" &
guests=$!
lane heavy --test-threads=1 "${HEAVY[@]}" "${skips[@]}" "$@" &
heavy=$!
lane main --test-threads=2 "${main_skips[@]}" "$@" &
main=$!

status=0
wait "$heavy" || status=$?
wait "$main" || status=$?
wait "$guests" || status=$?
exit "$status"
