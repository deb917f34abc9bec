#!/usr/bin/env bash
# Counts the integration tests skipped for a missing prerequisite, from the ledger that
# tests/integration/support.rs `skip` appends to (issue 49), so a green run says what it left out.
set -euo pipefail
ledger=${1:?usage: skips.sh LEDGER}
if [ ! -s "$ledger" ]; then
  echo "tests skipped for a missing prerequisite: none"
  exit 0
fi
n=$(wc -l < "$ledger")
echo "tests skipped for a missing prerequisite: $n (CI=true makes each a failure)"
awk -F'\t' '{printf "  %s: needs %s (%s)\n", $1, $2, $3}' "$ledger"
