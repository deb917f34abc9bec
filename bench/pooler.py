#!/usr/bin/env python3
"""Direct against pooled, clients against pool size, and many sessions through a pooler
(issue 57).

One managed instance (max_connections=100) with its managed pgbouncer in transaction mode in
front. The same select-only run goes at each client count straight to the server and through
the pooler at each pool size (--pool-sizes; the size is changed on the pooler's console, `SET
default_pool_size`), one run after the other (never at once). One table prints per count each
path's tps, mean and p95 latency, the driver's CPU per transaction and, pooled, the clients'
mean wait for a server session (the pooler's own SHOW STATS); past max_connections the direct
run is refused by the server, which is the point of a pooler. With --out the table is also
written as pooler.csv and drawn as pooler.svg: tps, p95 latency and the pooler wait against
clients, one line per path. Each pooled run's server count is checked too (the run compares
it behind the managed pooler): a row whose server disagrees is marked.
Then a many-session run: --sessions client sessions (default 2,000; 0 skips it) through the
largest pool, with the driver's peak RSS and CPU per transaction.

--small is the sweep at a small size (scale 1, 4/16/64/128 clients, pools of 2 and 8, 3 s a
point, 200 sessions), a check that ends with its chart in a few minutes.

Usage: python3 bench/pooler.py [--bin target/release/tidebench] [--clients 16,64,256,1000]
       [--pool-sizes 20] [--duration 10] [--sessions 2000] [--scale 10] [--out DIR] [--small]
"""

import argparse
import csv
import json
import math
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
        # autovacuum off: a worker visiting the database commits there too, which the server's
        # check would count beside tidebench's (the tests run with it off as well).
        self.tb("instance", "start", "pw", "--set", "max_connections=100", "--set", "synchronous_commit=off",
                "--set", "autovacuum=off", "--pooler", "transaction", "--pool-size", str(self.args.pool_sizes[0]))
        self.tb("prepare", "-w", "tpcb", "--scale", str(self.args.scale), "--target", "instance:pw")
        self.pooled = self.tb("instance", "dsn", "pw", "--pooler")[0].strip()
        self.console = self.pooled.replace("dbname=tidebench", "dbname=pgbouncer")

    def pool_size(self, n):
        """Sets the pooler's pool size on its console (it applies to the pools at once)."""
        subprocess.run(["psql", "-XAtq", self.console, "-c", f"SET default_pool_size = {n}"], check=True,
                       stdout=subprocess.DEVNULL)

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
        server = s.get("server") or [{}]
        agrees = None
        if "client_committed" in server[0]:
            over = server[0]["xact_commit_delta"] - server[0]["client_committed"]
            agrees = 0 <= over <= server[0].get("cut_in_flight", 0)
        got = {"tps": t["tps"], "mean_ms": t["latency_ms"].get("mean"), "p95_ms": t["latency_ms"].get("p95"),
               "cpu_us": cpu * 1e6 / max(t["committed"], 1), "rss_mb": rss, "committed": t["committed"],
               "wait_ms": pooler_wait_ms(out), "server_agrees": agrees}
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


def chart(rows, path):
    """pooler.svg: tps, p95 latency and the pooler wait per transaction against clients (log
    scale), one line per path."""
    panels = (("tps", "tps"), ("p95_ms", "p95 latency (ms)"), ("wait_ms", "pooler wait (ms/txn)"))
    paths = sorted({r["path"] for r in rows}, key=lambda p: (p != "direct", p))
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    clients = sorted({r["clients"] for r in rows})
    lo, hi = math.log(clients[0]), math.log(max(clients[-1], clients[0] + 1))
    w, h, left, top = 300, 200, 50, 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{3 * (w + left) + 20}" height="{h + top + 80}" '
           'font-family="sans-serif" font-size="11">']
    for i, (key, title) in enumerate(panels):
        x0 = 10 + i * (w + left) + left
        ys = [r[key] for r in rows if r.get(key) is not None]
        top_y = max(ys) * 1.1 if ys and max(ys) > 0 else 1.0
        out.append(f'<text x="{x0 + w / 2}" y="18" text-anchor="middle">{title}</text>')
        out.append(f'<rect x="{x0}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#999"/>')
        out.append(f'<text x="{x0 - 4}" y="{top + 4}" text-anchor="end">{top_y:.3g}</text>')
        out.append(f'<text x="{x0 - 4}" y="{top + h}" text-anchor="end">0</text>')

        def px(c):
            return x0 + (math.log(c) - lo) / (hi - lo) * w

        for c in clients:
            out.append(f'<text x="{px(c):.1f}" y="{top + h + 14}" text-anchor="middle">{c}</text>')
        for j, p in enumerate(paths):
            pts = [(px(r["clients"]), top + h - r[key] / top_y * h) for r in rows
                   if r["path"] == p and r.get(key) is not None]
            colour = colours[j % len(colours)]
            if len(pts) > 1:
                line = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
                out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
            for x, y in pts:
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>')
    out.append(f'<text x="{10 + left}" y="{top + h + 32}">clients (log scale); a direct point is missing '
               'where the server refused the sessions (max_connections)</text>')
    for j, p in enumerate(paths):
        x = 10 + left + j * 140
        out.append(f'<rect x="{x}" y="{top + h + 48}" width="12" height="12" fill="{colours[j % len(colours)]}"/>')
        out.append(f'<text x="{x + 16}" y="{top + h + 58}">{p}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_csv(rows, path):
    keys = ["clients", "path", "tps", "mean_ms", "p95_ms", "cpu_us", "wait_ms", "server_agrees", "error"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/tidebench")
    ap.add_argument("--clients", default="16,64,256,1000")
    ap.add_argument("--pool-sizes", default="20", help="pool sizes to sweep, e.g. 5,20,50")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--out", help="directory for pooler.csv and pooler.svg")
    ap.add_argument("--small", action="store_true", help="the sweep at a small size (see the header)")
    args = ap.parse_args()
    if args.small:
        args.clients, args.pool_sizes, args.duration, args.sessions, args.scale = "4,16,64,128", "2,8", 3, 200, 1
    args.pool_sizes = [int(x) for x in str(args.pool_sizes).split(",")]
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    b = Pooled(args)
    rows = []
    try:
        b.setup()
        print("| clients | path | tps | mean ms | p95 ms | driver µs/txn | pooler wait ms/txn | server |")
        print("|---:|---|---:|---:|---:|---:|---:|---|")
        paths = [("direct", "instance:pw", None)] + [(f"pooled, pool {n}", b.pooled, n) for n in args.pool_sizes]
        for c in [int(x) for x in args.clients.split(",")]:
            for path, target, size in paths:
                if size is not None:
                    b.pool_size(size)
                r = b.run(target, c, args.duration)
                r.update(clients=c, path=path)
                rows.append(r)
                if "error" in r:
                    print(f"| {c} | {path} | refused: {r['error'][:80]} | | | | | |", flush=True)
                    continue
                server = {True: "agrees", False: "DISAGREES", None: "-"}[r["server_agrees"]]
                print(f"| {c} | {path} | {r['tps']:.0f} | {cell(r['mean_ms'], '.2f')} | "
                      f"{cell(r['p95_ms'], '.2f')} | {r['cpu_us']:.0f} | {cell(r['wait_ms'], '.3f')} | {server} |",
                      flush=True)
        if args.out:
            write_csv(rows, os.path.join(args.out, "pooler.csv"))
            chart([r for r in rows if "error" not in r], os.path.join(args.out, "pooler.svg"))
            print(f"\nchart: {os.path.join(args.out, 'pooler.svg')}  table: {os.path.join(args.out, 'pooler.csv')}")
        if args.sessions > 0:
            biggest = max(args.pool_sizes)
            b.pool_size(biggest)
            r = b.run(b.pooled, args.sessions, args.duration * 2)
            if "error" in r:
                sys.exit(f"pooler bench: {args.sessions} sessions through the pooler failed: {r['error']}")
            print(f"\n{args.sessions} client sessions through a pool of {biggest}: {r['tps']:.0f} tps, "
                  f"{r['committed']} committed, driver peak RSS {r['rss_mb']:.0f} MiB "
                  f"({r['rss_mb'] * 1024 / args.sessions:.0f} KiB per session), "
                  f"driver CPU {r['cpu_us']:.0f} µs per transaction, "
                  f"pooler wait {cell(r['wait_ms'], '.2f')} ms per transaction")
    finally:
        b.teardown()


if __name__ == "__main__":
    main()
