#!/usr/bin/env bash
# `make stress`: the suite's race check (issue 42). Clones HEAD into a temp dir, runs `make test`
# there CLEAN times in a row, then BUSY times in a row beside a CPU hog (one busy process per
# core: stress-ng when installed, else a shell loop), and prints one line per round and a tally.
# Exits 1 if any round failed; each round's log stays in the temp dir, named on the way.
set -uo pipefail
CLEAN=${CLEAN:-5}
BUSY=${BUSY:-3}
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/tidebench-stress.XXXXXX)
git clone -q "$repo" "$work/clone"
# The clone builds once and keeps its target dir between rounds, as CI keeps nothing else.
cores=$(nproc)
hog_pids=()
stop_hog() { for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null; done; hog_pids=(); }
trap stop_hog EXIT INT TERM
start_hog() {
    if command -v stress-ng >/dev/null; then
        stress-ng --cpu "$cores" --quiet & hog_pids+=($!)
    else
        for _ in $(seq "$cores"); do (while :; do :; done) & hog_pids+=($!); done
    fi
}
fails=0
round() { # round NAME N
    local log="$work/$1-$2.log" t0=$SECONDS
    if (cd "$work/clone" && CI=true make test </dev/null >"$log" 2>&1); then
        echo "stress: $1 round $2 passed in $((SECONDS - t0)) s"
    else
        fails=$((fails + 1))
        echo "stress: $1 round $2 FAILED in $((SECONDS - t0)) s: $log"
        grep -E "^(\[[a-z]+\] )?(failures:|    [a-z_]+::)|test result: FAILED" "$log" | head -20
    fi
}
echo "stress: $CLEAN clean and $BUSY busy rounds of make test in $work/clone ($cores cores)"
for i in $(seq "$CLEAN"); do round clean "$i"; done
start_hog
for i in $(seq "$BUSY"); do round busy "$i"; done
stop_hog
echo "stress: $((CLEAN + BUSY - fails)) of $((CLEAN + BUSY)) rounds passed"
[ "$fails" -eq 0 ]
