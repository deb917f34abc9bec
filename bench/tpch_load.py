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

HammerDB's TPROC-H build (bench/hammerdb.py) is the third load of each round where HammerDB is
found (--hammerdb DIR, $HAMMERDB_HOME, or `hammerdbcli` on PATH) and the SF is one it builds
(1, 10, 30, ...): J virtual users plus its monitor, into database `hammerdb`. Where it is
missing the table says how to install it. After the rounds, each load's row count per table
(the last round's), side by side: tidebench's must equal tpchgen-cli's (both are DBGEN's rows);
HammerDB generates its own rows, so its counts are a referee for the fixed-size tables and
its LINEITEM differs by its own draws.

--power: the last round's HammerDB data stays, tidebench's is loaded again with --indexes
(HammerDB's build indexes the foreign-key columns; without such indexes Q17 and Q20 rescan
LINEITEM per part), and each side's power run follows, one query set by one client with the
same max_parallel_workers_per_gather (--parallel, HammerDB's default 2): tidebench
`run -w tpch -c 1 --qualification`, HammerDB one virtual user with its own random parameters
(it has no qualification set); per query the two times and their ratio. Without HammerDB the
tidebench column stands alone and the HammerDB one says why, with the fix.

Usage: python3 bench/tpch_load.py [--bin target/release/tidebench] [--sf 1] [--rounds 3] [--jobs 2]
       [--tpchgen tpchgen-cli] [--hammerdb DIR] [--power] [--parallel 2]
"""

import argparse
import concurrent.futures
import csv
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
import hammerdb  # noqa: E402

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


def counts(ref, dbname):
    """Rows per table of database `dbname`, in TABLES' order."""
    dsn = ref.dsn.replace("dbname=tpchref", f"dbname={dbname}")
    text = " UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in TABLES)
    res = subprocess.run([ref.psql, "-X", "-q", "-A", "-t", "-F", " ", "-c", text, dsn], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"bench: counting the rows of {dbname} failed:\n{res.stderr}")
    got = dict(line.split() for line in res.stdout.split("\n") if line.strip())
    return [int(got[t]) for t in TABLES]


def print_counts(sf, loads):
    """The last round's rows per table of each load, and whether tidebench's equal the others'."""
    print(f"\nRows per table at SF {sf} (the last round):")
    print_head(["table", *[name for name, _ in loads], "agree"])
    for i, t in enumerate(TABLES):
        row = [c[i] for _, c in loads]
        agree = ", ".join(f"{'=' if c == row[0] else '≠'} {name}" for (name, _), c in list(zip(loads, row))[1:])
        print(f"| {t} | " + " | ".join(f"{c:,}" for c in row) + f" | {agree} |")


def power(b, hdb, args, target, skipped):
    """Each side's power run: per query the seconds and the ratio. tidebench's data is loaded
    again with --indexes first (timed and printed: the load that does the work HammerDB's build
    does), since without indexes on LINEITEM's keys Q17 and Q20 rescan it per part."""
    _, _, _, _, wall, _ = b.tb("prepare", "--workload", "tpch", "--sf", args.sf, "--jobs", str(args.jobs),
                               "--indexes", "--target", target, "--force")
    print(f"\ntidebench prepare --indexes (keys, the foreign-key columns' indexes, l_shipdate and o_orderdate, "
          f"ANALYZE; the power run's data): {wall:.1f} s", flush=True)
    out = os.path.join(b.home, "power")
    b.tb("run", "--workload", "tpch", "--clients", "1", "--qualification", "--target", target, "--out", out,
         "--session-set", f"max_parallel_workers_per_gather={args.parallel}")
    tb = {}
    with open(os.path.join(out, "tpch", "times.csv")) as f:
        for row in csv.DictReader(f):
            tb[int(row["query"].lstrip("Qq"))] = float(row["seconds"])
    hd, hd_wall = hdb.power(args.sf, args.parallel) if hdb else ({}, float("nan"))
    name = f"HammerDB {hdb.version}" if hdb else "HammerDB"
    print(f"\nPower run at SF {args.sf}, one stream, max_parallel_workers_per_gather={args.parallel} "
          f"(stream 0's order; tidebench with the qualification parameters, {name} with its own):")
    if not hdb:
        print(f"{name}: {skipped}")
    print_head(["query", "tidebench s", f"{name} s", "tidebench/HammerDB"])
    for q in sorted(tb, key=STREAM0.index):
        cells = f"{hd[q]:.2f} | {tb[q] / hd[q]:.2f}" if hd.get(q) else "– | –"
        print(f"| Q{q} | {tb[q]:.2f} | {cells} |")
    total = f"{sum(hd.values()):.1f} (its wall {hd_wall:.0f}) | {sum(tb.values()) / sum(hd.values()):.2f}" \
        if hd else "– | –"
    print(f"| all 22 | {sum(tb.values()):.1f} | {total} |", flush=True)


# Stream 0's query order (the specification's Appendix A), which both power runs follow.
STREAM0 = (14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/tidebench")
    ap.add_argument("--sf", default="1", help="TPC-H scale factor of every load")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2,
                    help="streams of every load (COPY sessions, psql processes, HammerDB's virtual users)")
    local = os.path.expanduser("~/.local/bin/tpchgen-cli")
    ap.add_argument("--tpchgen", default=shutil.which("tpchgen-cli") or local,
                    help="the tpchgen-cli binary (`pip install tpchgen-cli` or `cargo install tpchgen-cli`)")
    ap.add_argument("--hammerdb", help="HammerDB's directory, holding hammerdbcli "
                    "(default: $HAMMERDB_HOME, else where hammerdbcli on PATH is)")
    ap.add_argument("--power", action="store_true",
                    help="after the rounds, both power runs "
                    "(tidebench's on an --indexes load, HammerDB's on its last build)")
    ap.add_argument("--parallel", type=int, default=2, help="max_parallel_workers_per_gather of both power runs")
    args = ap.parse_args()
    if not shutil.which(args.tpchgen) and not os.access(args.tpchgen, os.X_OK):
        sys.exit(f"bench: {args.tpchgen} not found; `pip install tpchgen-cli` installs it, or give --tpchgen PATH")
    if args.hammerdb and not hammerdb.find_home(args.hammerdb):
        print(f"bench: --hammerdb {args.hammerdb} holds no executable hammerdbcli; {hammerdb.INSTALL}", file=sys.stderr)
        sys.exit(2)
    home = hammerdb.find_home(args.hammerdb)
    skipped = hammerdb.not_run(home, args.sf)
    # bench.py's Bench: one managed instance, its settings and teardown.
    b = Bench(argparse.Namespace(bin=args.bin, bin_before=None, scripts=False, tls=False, threads=None))
    try:
        b.setup()
        ref = Reference(b, args.tpchgen, args.sf, args.jobs)
        hdb = None if skipped else hammerdb.HammerDB(home, b.dsn, os.path.join(b.home, "hammerdb"))
        target = "instance:bench/tpch"
        tb_walls, tb_steps, ref_steps, hdb_steps, rows = [], [], [], [], {}
        tpch_dsn = ref.dsn.replace("dbname=tpchref", "dbname=tpch")
        postgres_dsn = ref.dsn.replace("dbname=tpchref", "dbname=postgres")

        def tidebench(_last):
            _, err, _, _, wall, _ = b.tb("prepare", "--workload", "tpch", "--sf", args.sf, "--jobs", str(args.jobs),
                                         "--target", target, "--force")
            # Its own steps: the copy (rows generated as they are sent), the keys and ANALYZE.
            m = re.search(r"\(copy ([\d.]+) s, keys and analyze ([\d.]+) s\)", err)
            tb_walls.append(wall)
            tb_steps.append((float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan")))
            rows["tidebench prepare"] = counts(ref, "tpch")
            ref.sql(tpch_dsn, "DROP TABLE IF EXISTS tpch_meta, tpch_refresh, " + ", ".join(reversed(TABLES)))

        def reference(_last):
            ref_steps.append(ref.load())
            rows["tpchgen-cli + \\copy"] = counts(ref, "tpchref")
            ref.drop()

        def hammer(last):
            hdb_steps.append(hdb.build(args.sf, args.jobs))
            rows[f"HammerDB {hdb.version}"] = counts(ref, hammerdb.DATABASE)
            if not (last and args.power):
                ref.sql(postgres_dsn, f"DROP DATABASE {hammerdb.DATABASE}")

        loads = [tidebench, reference] + ([hammer] if hdb else [])
        for r in range(args.rounds):
            for step in rotated(loads, r):
                step(r == args.rounds - 1)
        print_table(args, tb_walls, tb_steps, ref_steps, hdb_steps, hdb, skipped)
        print_counts(args.sf, list(rows.items()))
        if args.power:
            power(b, hdb, args, target, skipped)
    finally:
        b.teardown()


def print_table(args, tb_walls, tb_steps, ref_steps, hdb_steps, hdb, skipped):
    """Each load's median wall time and steps, and tidebench's time over each (median, IQR)."""
    med = statistics.median
    ref_walls = [sum(s) for s in ref_steps]
    print(f"TPC-H load at SF {args.sf}, {args.jobs} streams, {args.rounds} rounds (medians):")
    print_head(["load", "wall s", "generation s", "copy s", "keys and analyze s", "tidebench ÷ this (IQR)"])
    print(f"| tidebench prepare | {med(tb_walls):.1f} | (in copy) | {med(s[0] for s in tb_steps):.1f} | "
          f"{med(s[1] for s in tb_steps):.1f} | 1.00 |")
    print(f"| tpchgen-cli csv + psql \\copy | {med(ref_walls):.1f} | {med(s[0] for s in ref_steps):.1f} | "
          f"{med(s[1] for s in ref_steps):.1f} | {med(s[2] for s in ref_steps):.1f} | "
          f"{fmt_iqr(*median_iqr([t / r for t, r in zip(tb_walls, ref_walls)]))} |")
    if hdb:
        print(f"| HammerDB {hdb.version} TPROC-H build | {med(s[0] for s in hdb_steps):.1f} | (in copy) | "
              f"{med(s[1] for s in hdb_steps):.1f} | {med(s[2] for s in hdb_steps):.1f} | "
              f"{fmt_iqr(*median_iqr([t / h[0] for t, h in zip(tb_walls, hdb_steps)]))} |", flush=True)
    else:
        print(f"| HammerDB TPROC-H build | {skipped} | | | | |", flush=True)


if __name__ == "__main__":
    main()
