#!/usr/bin/env python3
"""epoll vs io_uring for a one-thread PostgreSQL driver: client CPU per transaction (issue 16).

Builds bench/uring-proto (release), starts a scratch PostgreSQL 15 (initdb as the `postgres` user
under /tmp, Unix socket only, shared_buffers=1GB, synchronous_commit=off, max_connections=200),
loads `pgbench -i -s 10`, then per client count (1, 4, 16, 64) and round alternates: the prototype
in each I/O model and `pgbench -S -M prepared -j 1` (its CPU from os.wait4's rusage). Prints a
markdown table of medians over rounds and, per client count, each io_uring flavour's sys and
total µs/txn over epoll's. The scratch instance is stopped and removed at the end, on error and
on Ctrl-C. Never run it while another benchmark runs: client and server share 2 cores.

Usage: python3 bench/uring.py [--rounds 3] [--seconds 5] [--clients 1,4,16,64]
                              [--modes epoll,uring,uring-coop,uring-defer] [--port 5491]
"""

import argparse
import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "uring-proto")
PROTO_BIN = os.path.join(PROTO_DIR, "target", "release", "uring-proto")
SCALE = 10


def pg_bin(name):
    found = sorted(glob.glob(f"/usr/lib/postgresql/15/bin/{name}")) or sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        sys.exit(f"uring.py: {name} not found; install PostgreSQL 15 (`make setup`)")
    return found[-1]


def as_postgres(cmd, **kw):
    """Runs cmd as the unprivileged postgres user (PostgreSQL refuses to run as root)."""
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    return subprocess.run(cmd, check=True, **kw)


def run_measured(cmd):
    """Runs cmd; returns (stdout, stderr, rusage, returncode)."""
    out_f = tempfile.TemporaryFile(mode="w+")
    err_f = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out_f.seek(0)
    err_f.seek(0)
    return out_f.read(), err_f.read(), usage, os.waitstatus_to_exitcode(status)


class Scratch:
    """A throwaway PostgreSQL instance under /tmp, reachable on a Unix socket only."""

    def __init__(self, port):
        self.port = port
        self.home = tempfile.mkdtemp(prefix="uring-bench-")
        os.chmod(self.home, 0o755)
        self.data = os.path.join(self.home, "data")
        self.sock = os.path.join(self.home, "sock")
        self.started = False

    def start(self):
        os.mkdir(self.sock)
        shutil.chown(self.sock, "postgres", "postgres")
        shutil.chown(self.home, "postgres", "postgres")
        as_postgres([pg_bin("initdb"), "-D", self.data, "-U", "postgres", "--auth=trust", "--no-sync"],
                    stdout=subprocess.DEVNULL)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"\nport = {self.port}\nlisten_addresses = ''\nunix_socket_directories = '{self.sock}'\n"
                    "shared_buffers = 1GB\nsynchronous_commit = off\nmax_connections = 200\n")
        as_postgres([pg_bin("pg_ctl"), "-D", self.data, "-l", os.path.join(self.home, "log"), "-w", "start"],
                    stdout=subprocess.DEVNULL, start_new_session=True)
        self.started = True
        subprocess.run([pg_bin("pgbench"), "-i", "-q", "-s", str(SCALE), "-h", self.sock, "-p", str(self.port),
                        "-U", "postgres", "postgres"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        if self.started:
            subprocess.run(["runuser", "-u", "postgres", "--", pg_bin("pg_ctl"), "-D", self.data, "-m", "fast", "-w",
                            "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.started = False
        shutil.rmtree(self.home, ignore_errors=True)


def run_proto(db, mode, clients, seconds):
    out, err, _, rc = run_measured([PROTO_BIN, "--mode", mode, "--clients", str(clients), "--seconds", str(seconds),
                                    "--socket-dir", db.sock, "--port", str(db.port), "--db", "postgres",
                                    "--user", "postgres", "--scale", str(SCALE)])
    if rc != 0:
        raise RuntimeError(f"uring-proto --mode {mode} -c {clients} failed:\n{err}")
    j = json.loads(out.strip().splitlines()[-1])
    return {"tps": j["tps"], "user": j["user_us_per_txn"], "sys": j["sys_us_per_txn"],
            "total": j["total_us_per_txn"], "csw": j["vcsw_per_txn"] + j["ivcsw_per_txn"],
            "calls": j["syscalls_per_txn"]}


def run_pgbench(db, clients, seconds):
    out, err, ru, rc = run_measured([pg_bin("pgbench"), "-S", "-M", "prepared", "-j", "1", "-c", str(clients),
                                     "-T", str(seconds), "-h", db.sock, "-p", str(db.port), "-U", "postgres",
                                     "postgres"])
    if rc != 0:
        raise RuntimeError(f"pgbench -c {clients} failed:\n{err}")
    txns = max(int(re.search(r"number of transactions actually processed: (\d+)", out).group(1)), 1)
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    return {"tps": tps, "user": ru.ru_utime * 1e6 / txns, "sys": ru.ru_stime * 1e6 / txns,
            "total": (ru.ru_utime + ru.ru_stime) * 1e6 / txns, "csw": (ru.ru_nvcsw + ru.ru_nivcsw) / txns,
            "calls": None}


def on_sigterm(*_):
    """SIGTERM ends the run like Ctrl-C does, through main's finally (which removes the instance)."""
    raise KeyboardInterrupt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5, help="per run; whole seconds (pgbench -T)")
    ap.add_argument("--clients", default="1,4,16,64")
    ap.add_argument("--modes", default="epoll,uring,uring-coop,uring-defer",
                    help="prototype modes; epoll is the baseline of the ratios")
    ap.add_argument("--port", type=int, default=5491)
    args = ap.parse_args()
    clients_list = [int(c) for c in args.clients.split(",")]
    modes = args.modes.split(",")
    if "epoll" not in modes:
        sys.exit("uring.py: --modes must include epoll, the baseline")

    subprocess.run(["cargo", "build", "--release", "-j", "1", "--quiet", "--manifest-path",
                    os.path.join(PROTO_DIR, "Cargo.toml")], check=True)
    signal.signal(signal.SIGTERM, on_sigterm)
    db = Scratch(args.port)
    tools = [*modes, "pgbench"]
    med = {}
    try:
        db.start()
        for clients in clients_list:
            runs = {t: [] for t in tools}
            for r in range(args.rounds):
                # Rotate the order each round so warm caches and drift favour no tool.
                order = tools[r % len(tools):] + tools[:r % len(tools)]
                for t in order:
                    res = run_pgbench(db, clients, args.seconds) if t == "pgbench" else \
                        run_proto(db, t, clients, args.seconds)
                    runs[t].append(res)
            for t in tools:
                med[(clients, t)] = {k: (statistics.median(x[k] for x in runs[t]) if runs[t][0][k] is not None else None)
                                     for k in runs[t][0]}
            print(f"clients {clients}: done", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        sys.exit("uring.py: interrupted; scratch instance removed")
    except (RuntimeError, subprocess.CalledProcessError) as e:
        sys.exit(f"uring.py: {e}")
    finally:
        db.stop()

    print(f"\nmedians of {args.rounds} round(s) of {args.seconds:g} s, pgbench -s {SCALE} select-only prepared, "
          "one client thread\n")
    print("| clients | tool/mode | tps | user µs/txn | sys µs/txn | total µs/txn | ctx sw/txn | syscalls/txn |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|")
    for clients in clients_list:
        for t in tools:
            m = med[(clients, t)]
            name = t if t == "pgbench" else f"proto {t}"
            calls = "" if m["calls"] is None else f"{m['calls']:.2f}"
            print(f"| {clients} | {name} | {m['tps']:.0f} | {m['user']:.2f} | {m['sys']:.2f} | {m['total']:.2f} | "
                  f"{m['csw']:.3f} | {calls} |")
    print("\n| clients | mode | sys µs/txn vs epoll | total µs/txn vs epoll |")
    print("|--:|---|--:|--:|")
    for clients in clients_list:
        base = med[(clients, "epoll")]
        for t in modes:
            if t == "epoll":
                continue
            m = med[(clients, t)]
            print(f"| {clients} | {t} | {m['sys'] / base['sys']:.2f} | {m['total'] / base['total']:.2f} |")


if __name__ == "__main__":
    main()
