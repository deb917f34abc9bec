#!/usr/bin/env python3
"""TPC-H's load (issue 51): `tidebench prepare --workload tpch` against generating the files
first with `tpchgen-cli` (the tpchgen crate's own CLI) and loading them with `psql \\copy`, on
one managed instance (bench.py's), alternating, printing ratios.

Both loads do the same work with the same number of streams J (--jobs, default 2):
- tidebench: `prepare --workload tpch --sf SF --jobs J --force` into database `tpch`: the eight
  tables, J COPY sessions that generate and send the rows, the primary keys, ANALYZE (the
  command's wall time);
- the reference, into database `tpchref`: the same eight tables (the DDL and keys read from
  src/workload/tpch/schema.rs), `tpchgen-cli csv -s SF --parts J -n J` into a scratch dir
  (generation), J `psql \\copy ... CSV HEADER` processes taking the files largest first (copy),
  then the same primary keys and per-table ANALYZE over J psql sessions (keys). Its time is
  the sum of the three steps, each also printed.

Each round runs the two in an order rotated by round, and drops the tables of the load it
timed before the next one, so neither finds the other's data in the cache. Per round the ratio
tidebench/reference; the table has each side's median and the ratio's median with its
interquartile range (issue 51's goal: at most 1.1x the reference, generation included).

HammerDB's TPROC-H build is the issue's third column: it runs only where `hammerdbcli` is on
PATH, and this script does not drive it; without it the table says so.

Usage: python3 bench/tpch_load.py [--bin target/release/tidebench] [--sf 1] [--rounds 3] [--jobs 2]
       [--tpchgen tpchgen-cli]
"""

import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Bench, fmt_iqr, median_iqr, print_head, rotated, run_measured  # noqa: E402

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "workload", "tpch", "schema.rs")
TABLES = ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]


def schema_sql():
    """The CREATE TABLE statements and the primary keys tidebench's loader uses, from its source."""
    with open(SCHEMA) as f:
        text = f.read()
    creates = re.findall(r'"(CREATE TABLE \w+ \(.*?\))"', text, re.S)
    keys = re.findall(r'"(ALTER TABLE \w+ ADD PRIMARY KEY \([^)]*\))"', text)
    if len(creates) != len(TABLES) or len(keys) != len(TABLES):
        sys.exit(f"bench: {SCHEMA} no longer has 8 CREATE TABLE and 8 primary keys as string literals")
    return creates, keys


class Reference:
    """tpchgen-cli's files loaded with psql \\copy into `tpchref`, the keys and ANALYZE alike."""

    def __init__(self, b, tpchgen, sf, jobs):
        self.psql = os.path.join(os.path.dirname(b.pgbench), "psql")
        base = re.sub(r"dbname=\S+", "", b.dsn).strip()
        self.dsn = f"{base} dbname=tpchref"
        self.tpchgen, self.sf, self.jobs = tpchgen, sf, jobs
        self.files = os.path.join(b.home, "tpchgen")
        self.creates, self.keys = schema_sql()
        self.sql(f"{base} dbname=postgres", "CREATE DATABASE tpchref")

    def sql(self, dsn, text):
        res = subprocess.run([self.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", text, dsn],
                             capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"bench: psql failed on {text[:60]!r}:\n{res.stderr}")

    def parallel(self, statements):
        """`statements` over J psql sessions, as tidebench's loader runs its steps."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            list(pool.map(lambda s: self.sql(self.dsn, s), statements))

    def drop(self):
        self.sql(self.dsn, "DROP TABLE IF EXISTS " + ", ".join(reversed(TABLES)))

    def load(self):
        """(generation, copy, keys) seconds."""
        self.drop()
        self.sql(self.dsn, ";\n".join(self.creates))
        shutil.rmtree(self.files, ignore_errors=True)
        start = time.monotonic()
        _, err, _, _, _, rc = run_measured([self.tpchgen, "csv", "-s", str(self.sf), "--parts", str(self.jobs),
                                            "-n", str(self.jobs), "-o", self.files, "-q"])
        if rc != 0:
            sys.exit(f"bench: {self.tpchgen} failed:\n{err}")
        generation = time.monotonic() - start
        files = sorted(glob.glob(os.path.join(self.files, "**", "*.csv"), recursive=True),
                       key=os.path.getsize, reverse=True)
        start = time.monotonic()
        self.parallel([f"\\copy {os.path.basename(f).split('.')[0]} FROM '{f}' CSV HEADER" for f in files])
        copy = time.monotonic() - start
        start = time.monotonic()
        self.parallel(self.keys)
        self.parallel([f"ANALYZE {t}" for t in TABLES])
        keys = time.monotonic() - start
        shutil.rmtree(self.files, ignore_errors=True)
        return generation, copy, keys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/tidebench")
    ap.add_argument("--sf", default="1", help="TPC-H scale factor of both loads")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2, help="streams of both loads (COPY sessions, psql processes)")
    local = os.path.expanduser("~/.local/bin/tpchgen-cli")
    ap.add_argument("--tpchgen", default=shutil.which("tpchgen-cli") or local,
                    help="the tpchgen-cli binary (`pip install tpchgen-cli` or `cargo install tpchgen-cli`)")
    args = ap.parse_args()
    if not shutil.which(args.tpchgen) and not os.access(args.tpchgen, os.X_OK):
        sys.exit(f"bench: {args.tpchgen} not found; `pip install tpchgen-cli` installs it, or give --tpchgen PATH")
    # bench.py's Bench: one managed instance, its settings and teardown.
    b = Bench(argparse.Namespace(bin=args.bin, bin_before=None, scripts=False, tls=False, threads=None))
    try:
        b.setup()
        ref = Reference(b, args.tpchgen, args.sf, args.jobs)
        target = "instance:bench/tpch"
        tb_walls, tb_steps, ref_steps = [], [], []

        def tidebench():
            _, err, _, _, wall, _ = b.tb("prepare", "--workload", "tpch", "--sf", args.sf, "--jobs", str(args.jobs),
                                         "--target", target, "--force")
            # Its own steps: the copy (rows generated as they are sent), the keys and ANALYZE.
            m = re.search(r"\(copy ([\d.]+) s, keys and analyze ([\d.]+) s\)", err)
            tb_walls.append(wall)
            tb_steps.append((float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan")))
            ref.sql(ref.dsn.replace("dbname=tpchref", "dbname=tpch"),
                    "DROP TABLE IF EXISTS tpch_meta, tpch_refresh, " + ", ".join(reversed(TABLES)))

        def reference():
            ref_steps.append(ref.load())
            ref.drop()

        for r in range(args.rounds):
            for step in rotated([tidebench, reference], r):
                step()
        ref_walls = [sum(s) for s in ref_steps]
        med = statistics.median
        hammerdb = "not run: hammerdbcli is not on PATH" if not shutil.which("hammerdbcli") else \
            "not run: this script does not drive HammerDB yet"
        print(f"TPC-H load at SF {args.sf}, {args.jobs} streams, {args.rounds} rounds (medians):")
        print_head(["load", "wall s", "generation s", "copy s", "keys and analyze s", "vs reference (IQR)"])
        print(f"| tidebench prepare | {med(tb_walls):.1f} | (in copy) | {med(s[0] for s in tb_steps):.1f} | "
              f"{med(s[1] for s in tb_steps):.1f} | "
              f"{fmt_iqr(*median_iqr([t / r for t, r in zip(tb_walls, ref_walls)]))} |")
        print(f"| tpchgen-cli csv + psql \\copy | {med(ref_walls):.1f} | {med(s[0] for s in ref_steps):.1f} | "
              f"{med(s[1] for s in ref_steps):.1f} | {med(s[2] for s in ref_steps):.1f} | 1.00 |")
        print(f"| HammerDB TPROC-H build | {hammerdb} | | | | |", flush=True)
    finally:
        b.teardown()


if __name__ == "__main__":
    main()
