#!/usr/bin/env python3
"""Direct against pooled, and many sessions through a pooler (issue 57).

One managed instance (max_connections=100) with its managed pgbouncer in transaction mode in
front (a pool of 20 server sessions). The same select-only run goes at each client count
straight to the server and through the pooler, one after the other (never at once); one table
prints per count each path's tps, mean and p95 latency, the driver's CPU per transaction and,
pooled, the clients' mean wait for a server session (the pooler's own SHOW STATS). Past
max_connections the direct run is refused by the server, which is the point of a pooler.
Then a many-session run: --sessions client sessions (default 2,000) through the same pool of
20, with the driver's peak RSS and CPU per transaction.

Usage: python3 bench/pooler.py [--bin target/release/tidebench] [--clients 16,64,256,1000]
       [--duration 10] [--sessions 2000] [--scale 10]
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def run_measured(cmd, env):
    """Runs cmd; returns (stdout, stderr, cpu_s, maxrss_mb, returncode)."""
    out_f = tempfile.TemporaryFile(mode="w+")
    err_f = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out_f.seek(0)
    err_f.seek(0)
    return (out_f.read(), err_f.read(), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0,
            os.waitstatus_to_exitcode(status))


class Pooled:
    def __init__(self, args):
        self.bin = os.path.abspath(args.bin)
        self.args = args
        self.home = tempfile.mkdtemp(prefix="tidebench-pooler-")
        os.chmod(self.home, 0o755)
        self.env = dict(os.environ, TIDEBENCH_HOME=self.home)

    def tb(self, *a, check=True):
        res = run_measured([self.bin, *a], self.env)
        if check and res[4] != 0:
            sys.exit(f"pooler bench: tidebench {' '.join(a)} failed:\n{res[1]}")
        return res

    def setup(self):
        self.tb("instance", "start", "pw", "--set", "max_connections=100", "--set", "synchronous_commit=off",
                "--pooler", "transaction", "--pool-size", "20")
        self.tb("prepare", "-w", "tpcb", "--scale", str(self.args.scale), "--target", "instance:pw")
        self.pooled = self.tb("instance", "dsn", "pw", "--pooler")[0].strip()

    def teardown(self):
        self.tb("instance", "destroy", "pw", check=False)
        shutil.rmtree(self.home, ignore_errors=True)

    def run(self, target, clients, duration):
        """One select-only run; None when it failed (the server refused the sessions)."""
        out = os.path.join(self.home, f"r-{time.monotonic_ns()}")
        _, err, cpu, rss, rc = self.tb("run", "-S", "--target", target, "-c", str(clients), "-j", "2",
                                       "-T", str(duration), "-P", "0", "--sample", "1s", "--out", out,
                                       check=False)
        if rc != 0:
            return {"error": err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"}
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        t = s["totals"]
        got = {"tps": t["tps"], "mean_ms": t["latency_ms"].get("mean"), "p95_ms": t["latency_ms"].get("p95"),
               "cpu_us": cpu * 1e6 / max(t["committed"], 1), "rss_mb": rss, "committed": t["committed"],
               "wait_ms": pooler_wait_ms(out)}
        shutil.rmtree(out, ignore_errors=True)
        return got


def pooler_wait_ms(out):
    """The clients' mean wait for a server session per transaction, from the pooler's rows of
    system.csv (first and last sample); None for a direct run."""
    rows = {}
    with open(os.path.join(out, "system.csv")) as f:
        for r in csv.DictReader(f):
            if r["source"].startswith("pooler:") and r["metric"] in ("xact_count", "wait_time_s"):
                rows.setdefault(r["metric"], []).append(float(r["value"]))
    if len(rows.get("xact_count", [])) < 2 or len(rows.get("wait_time_s", [])) < 2:
        return None
    xacts = rows["xact_count"][-1] - rows["xact_count"][0]
    wait = rows["wait_time_s"][-1] - rows["wait_time_s"][0]
    return wait * 1e3 / xacts if xacts > 0 else None


def cell(v, fmt):
    return "-" if v is None else format(v, fmt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/tidebench")
    ap.add_argument("--clients", default="16,64,256,1000")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--scale", type=int, default=10)
    args = ap.parse_args()
    b = Pooled(args)
    try:
        b.setup()
        print("| clients | path | tps | mean ms | p95 ms | driver µs/txn | pooler wait ms/txn |")
        print("|---:|---|---:|---:|---:|---:|---:|")
        for c in [int(x) for x in args.clients.split(",")]:
            for path, target in (("direct", "instance:pw"), ("pooled", b.pooled)):
                r = b.run(target, c, args.duration)
                if "error" in r:
                    print(f"| {c} | {path} | refused: {r['error'][:80]} | | | | |", flush=True)
                    continue
                print(f"| {c} | {path} | {r['tps']:.0f} | {cell(r['mean_ms'], '.2f')} | "
                      f"{cell(r['p95_ms'], '.2f')} | {r['cpu_us']:.0f} | {cell(r['wait_ms'], '.3f')} |",
                      flush=True)
        r = b.run(b.pooled, args.sessions, args.duration * 2)
        if "error" in r:
            sys.exit(f"pooler bench: {args.sessions} sessions through the pooler failed: {r['error']}")
        print(f"\n{args.sessions} client sessions through a pool of 20: {r['tps']:.0f} tps, "
              f"{r['committed']} committed, driver peak RSS {r['rss_mb']:.0f} MiB "
              f"({r['rss_mb'] * 1024 / args.sessions:.0f} KiB per session), "
              f"driver CPU {r['cpu_us']:.0f} µs per transaction, "
              f"pooler wait {cell(r['wait_ms'], '.2f')} ms per transaction")
    finally:
        b.teardown()


if __name__ == "__main__":
    main()
