#!/usr/bin/env python3
"""tidebench vs pgbench on one managed instance, alternating tools, printing ratios.

Both tools run against the same data on the same server in the same round, one after the
other (never at once: on 2 cores they would compete). Per point it prints the median over
rounds of: tps of each tool, the ratio tidebench/pgbench, and client CPU per transaction
(user+sys of the client process / transactions) of each. Also: driver RSS at 16 and 1,000
clients, `prepare --scale N` against `pgbench -i -s N` at 10, 50 and 200, the TPC-C load of 16
warehouses, TPC-C (the load of 4 warehouses,
NOTPM and client CPU at 4 and 16 clients, client-side SQL against --procedures), and tpce (the
load of 1 and 4 load units at 10 trade days, tps and client CPU at 4 and 16 clients, client-side
SQL against --procedures).

Usage: python3 bench/bench.py [--bin target/release/tidebench] [--duration 8] [--rounds 3] [--quick]
"""

import argparse
import csv
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def find_pgbench():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pgbench"), key=lambda p: int(p.split("/")[4]))
    return found[-1] if found else shutil.which("pgbench")


def run_measured(cmd, env=None):
    """Runs cmd and returns (stdout, stderr, cpu_s, maxrss_mb, wall_s, returncode)."""
    start = time.monotonic()
    out_f = tempfile.TemporaryFile(mode="w+")
    err_f = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    out_f.seek(0)
    err_f.seek(0)
    cpu = usage.ru_utime + usage.ru_stime
    return out_f.read(), err_f.read(), cpu, usage.ru_maxrss / 1024.0, wall, proc.returncode


class Bench:
    def __init__(self, args):
        self.bin = os.path.abspath(args.bin)
        self.pgbench = find_pgbench()
        if not self.pgbench:
            sys.exit("bench: pgbench not found; run `make setup`")
        self.home = tempfile.mkdtemp(prefix="tidebench-bench-")
        os.chmod(self.home, 0o755)
        self.env = dict(os.environ, TIDEBENCH_HOME=self.home)
        self.args = args
        self.results_dir = os.path.join(self.home, "results")

    def tb(self, *a, check=True):
        cmd = [self.bin, *a]
        res = run_measured(cmd, self.env)
        if check and res[5] != 0:
            sys.exit(f"bench: {' '.join(cmd)} failed:\n{res[1]}")
        return res

    def setup(self):
        self.tb("instance", "start", "bench", "--set", "shared_buffers=1GB", "--set", "max_connections=1100",
                "--set", "synchronous_commit=off")
        out = self.tb("instance", "dsn", "bench")[0].strip()
        self.dsn = out
        self.target = "instance:bench"

    def teardown(self):
        self.tb("instance", "destroy", "bench", check=False)
        shutil.rmtree(self.home, ignore_errors=True)

    def run_tidebench(self, workload, clients, duration, tag):
        out_dir = os.path.join(self.results_dir, f"{tag}-{time.monotonic_ns()}")
        jobs = str(min(os.cpu_count() or 1, clients))
        # No sampling: pgbench samples nothing, and the comparison is of the drivers alone.
        _, err, cpu, rss, wall, rc = self.tb("run", "--workload", workload, "--target", self.target, "-c", str(clients),
                                             "-j", jobs, "-T", str(duration), "-P", "0", "--sample", "0",
                                             "--out", out_dir, check=False)
        if rc != 0:
            sys.exit(f"bench: tidebench run failed:\n{err}")
        with open(os.path.join(out_dir, "summary.json")) as f:
            s = json.load(f)
        txns = s["totals"]["committed"]
        return {"tps": s["totals"]["tps"], "cpu_us": cpu * 1e6 / max(txns, 1), "rss_mb": rss}

    def run_pgbench(self, workload, clients, duration):
        flags = {"select-only": ["-S"], "tpcb": [], "simple-update": ["-N"]}[workload]
        jobs = str(min(os.cpu_count() or 1, clients))
        out, err, cpu, rss, wall, rc = run_measured(
            [self.pgbench, *flags, "-M", "prepared", "-c", str(clients), "-j", jobs, "-T", str(duration), self.dsn])
        if rc != 0:
            sys.exit(f"bench: pgbench failed:\n{err}")
        txns = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))
        tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
        return {"tps": tps, "cpu_us": cpu * 1e6 / max(txns, 1), "rss_mb": rss}

    def compare(self, workload, clients):
        tb, pg = [], []
        for r in range(self.args.rounds):
            # Alternate which tool goes first so warm caches favour neither.
            if r % 2 == 0:
                pg.append(self.run_pgbench(workload, clients, self.args.duration))
                tb.append(self.run_tidebench(workload, clients, self.args.duration, workload))
            else:
                tb.append(self.run_tidebench(workload, clients, self.args.duration, workload))
                pg.append(self.run_pgbench(workload, clients, self.args.duration))
        med = lambda rows, k: statistics.median(x[k] for x in rows)
        row = (workload, clients, med(pg, "tps"), med(tb, "tps"), med(tb, "tps") / med(pg, "tps"),
               med(pg, "cpu_us"), med(tb, "cpu_us"), med(tb, "rss_mb"))
        print("| {:<13} | {:>7} | {:>10.0f} | {:>10.0f} | {:>5.2f} | {:>10.1f} | {:>10.1f} | {:>7.1f} |".format(*row),
              flush=True)
        return row

    def default_run_ratio(self, clients):
        """A default run (sampling every 1 s into system.csv, report.html at the end) against
        pgbench, select-only: what a user gets without turning sampling off (issue 16). A run
        with `--sample 0` joins the rotation, so the sampler's own cost reads apart from the
        driver's; at least 5 rounds, as single runs on this VM swing by up to 1.6x."""
        tps, pg, quiet, rounds, cpus = [], [], [], [], []
        for r in range(max(self.args.rounds, 5)):
            out_dir = os.path.join(self.results_dir, f"default-{time.monotonic_ns()}")
            args = ["run", "-S", "--target", self.target, "-c", str(clients), "-j", str(min(os.cpu_count() or 1, clients)),
                    "-T", str(self.args.duration), "-P", "0", "--out", out_dir]
            steps = [
                lambda: pg.append(self.run_pgbench("select-only", clients, self.args.duration)["tps"]),
                lambda: self.tb(*args),
                lambda: quiet.append(self.run_tidebench("select-only", clients, self.args.duration, "nosample")["tps"]),
            ]
            for i in range(3):
                steps[(r + i) % 3]()
            with open(os.path.join(out_dir, "summary.json")) as f:
                tps.append(json.load(f)["totals"]["tps"])
            r_ms, c_ms = sampler_cost(out_dir)
            rounds += r_ms
            cpus += c_ms
        med, pgm, qm = statistics.median(tps), statistics.median(pg), statistics.median(quiet)
        print(f"default run (sampling 1 s, report), select-only, {clients} clients: tidebench {med:.0f} tps, "
              f"pgbench {pgm:.0f} tps, ratio {med / pgm:.2f} (target >= 0.98); against tidebench --sample 0 "
              f"({qm:.0f} tps) {med / qm:.2f}; sampler round {statistics.mean(rounds):.1f} ms wall, "
              f"{statistics.mean(cpus):.2f} ms CPU on average (target < 5 ms wall)", flush=True)

    def elastic_ratio(self, clients, groups=4, scale=10, mix_log=True):
        """`groups` groups on as many databases of the instance, shared pool, against the same
        clients on one of those databases; with --mix-log too when asked."""
        names = [f"G{i}" for i in range(1, groups + 1)]
        tables = "".join(
            f'[[group]]\nname = "{n}"\nworkload = "select-only"\nscale = {scale}\ninstance = "bench"\n' for n in names)
        shares = ", ".join(f"{n} = {100 / groups:g}" for n in names)
        cfg = os.path.join(self.home, f"elastic-{groups}.toml")
        with open(cfg, "w") as f:
            f.write(f'clients = {clients}\npoll = "0"\nprogress = "0"\n{tables}'
                    f'[[phase]]\nduration = "{self.args.duration}s"\nshares = {{ {shares} }}\n')
        self.tb("prepare", cfg, "--force")
        kinds = [
            ("one", ["-S", "--target", "instance:bench/g1_1", "-c", str(clients), "-T", str(self.args.duration), "-P", "0"]),
            ("many", [cfg]),
        ]
        if mix_log:
            kinds.append(("many-log", [cfg, "--mix-log"]))
        runs = {k: [] for k, _ in kinds}
        for r in range(self.args.rounds):
            for name, args in kinds:
                out = os.path.join(self.results_dir, f"{name}-{groups}-{r}")
                cpu = self.tb("run", *args, "--sample", "0", "--out", out)[2]
                runs[name].append(self.summary_tps(out, cpu))
        med = {k: (statistics.median(t for t, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
        (one, one_cpu), (many, many_cpu) = med["one"], med["many"]
        target = "0.95" if groups <= 4 else "none set; compare with the 4-group ratio"
        print(f"{groups} groups shared vs 1 target, select-only scale {scale}, {clients} clients: {many:.0f} vs {one:.0f} tps, "
              f"ratio {many / one:.2f} (target >= {target}); client CPU {many_cpu:.1f} vs {one_cpu:.1f} µs/txn")
        if groups >= 40:
            # The same run sampled every 1 s: the sampler's cost with many targets.
            out = os.path.join(self.results_dir, f"sampled-{groups}")
            self.tb("run", cfg, "--sample", "1s", "--out", out)
            r_ms, c_ms = sampler_cost(out)
            print(f"  sampled every 1 s: sampler round {statistics.mean(r_ms):.1f} ms wall (median "
                  f"{statistics.median(r_ms):.1f}, the longest {max(r_ms):.0f} ms), {statistics.mean(c_ms):.2f} ms CPU "
                  f"on average over {groups} targets (target < 5 ms wall)")
        if mix_log:
            log, log_cpu = med["many-log"]
            print(f"  with --mix-log: {log:.0f} tps, ratio {log / one:.2f} (target >= 0.93); client CPU {log_cpu:.1f} µs/txn")

    def tpcc(self, warehouses, clients_list):
        """TPC-C: the load of `warehouses` (wall and client CPU), then per client count the
        client-side and the --procedures variant, alternating, zero think time, read committed:
        NOTPM, total TPM and client CPU per transaction (user+sys of the process / transactions)."""
        target = "instance:bench/tpcc"
        _, _, cpu, _, wall, _ = self.tb("prepare", "--workload", "tpcc", "--warehouses", str(warehouses),
                                        "--target", target, "--force")
        print(f"\nTPC-C load of {warehouses} warehouses: {wall:.1f} s wall, {cpu:.2f} s client CPU "
              f"(BenchBase on this machine kind: about 32 s wall, 12 s client CPU; targets < 16 s, < 3 s)", flush=True)
        print(f"TPC-C, {warehouses} warehouses, read committed, zero think time; {self.args.rounds} rounds of "
              f"{self.args.duration} s, medians")
        print("| clients | variant | NOTPM | total TPM | client µs/txn | rollbacks % | failed |")
        print("|---|---|---|---|---|---|---|")
        for clients in clients_list:
            runs = {"client-side SQL": [], "--procedures": []}
            for r in range(self.args.rounds):
                order = list(runs) if r % 2 == 0 else list(reversed(runs))
                for variant in order:
                    extra = ["--procedures"] if variant == "--procedures" else []
                    out = os.path.join(self.results_dir, f"tpcc-{clients}-{r}-{len(extra)}")
                    cpu = self.tb("run", "--workload", "tpcc", "--target", target, "-c", str(clients),
                                  "-T", str(self.args.duration), "-P", "0", "--sample", "0", "--max-tries", "5",
                                  *extra, "--out", out)[2]
                    with open(os.path.join(out, "summary.json")) as f:
                        s = json.load(f)
                    t = s["totals"]
                    runs[variant].append((s["tpm"].get("new_order", 0.0), sum(s["tpm"].values()),
                                          cpu * 1e6 / max(t["total"], 1), 100.0 * t["expected_rollback"] / max(t["total"], 1),
                                          t["failed"]))
            for variant, rows in runs.items():
                med = [statistics.median(x[i] for x in rows) for i in range(5)]
                print(f"| {clients} | {variant} | {med[0]:.0f} | {med[1]:.0f} | {med[2]:.1f} | {med[3]:.2f} | {med[4]:.0f} |",
                      flush=True)

    def tpce(self, load_units, clients_list, trade_days=10):
        """tpce: per load-unit count the load (wall, client CPU, rows from the summary line), then
        per client count the client-side and the --procedures variant, alternating: tps of the
        customer types, client CPU per transaction, Trade-Order rollbacks and failures."""
        print(f"\ntpce, {trade_days} trade days, read committed reads (per-type isolation), "
              f"{self.args.rounds} rounds of {self.args.duration} s, medians")
        print("| LUs | load s wall | load client CPU s | clients | variant | tps | client µs/txn | rollbacks % | failed |")
        print("|---|---|---|---|---|---|---|---|---|")
        for lus in load_units:
            target = f"instance:bench/tpce{lus}"
            _, _, cpu, _, wall, _ = self.tb("prepare", "--workload", "tpce", "--customers", str(lus * 1000),
                                            "--trade-days", str(trade_days), "--target", target, "--force")
            for clients in clients_list:
                runs = {"client-side SQL": [], "--procedures": []}
                for r in range(self.args.rounds):
                    order = list(runs) if r % 2 == 0 else list(reversed(runs))
                    for variant in order:
                        extra = ["--procedures"] if variant == "--procedures" else []
                        out = os.path.join(self.results_dir, f"tpce-{lus}-{clients}-{r}-{len(extra)}")
                        run_cpu = self.tb("run", "--workload", "tpce", "--target", target, "-c", str(clients),
                                          "-T", str(self.args.duration), "-P", "0", "--sample", "0",
                                          "--max-tries", "5", *extra, "--out", out)[2]
                        with open(os.path.join(out, "summary.json")) as f:
                            t = json.load(f)["totals"]
                        runs[variant].append((t["tps"], run_cpu * 1e6 / max(t["total"], 1),
                                              100.0 * t["expected_rollback"] / max(t["total"], 1), t["failed"]))
                for variant, rows in runs.items():
                    med = [statistics.median(x[i] for x in rows) for i in range(4)]
                    print(f"| {lus} | {wall:.1f} | {cpu:.2f} | {clients} | {variant} | {med[0]:.0f} | {med[1]:.1f} "
                          f"| {med[2]:.2f} | {med[3]:.0f} |", flush=True)

    def summary_tps(self, out, cpu_s):
        """(tps, client CPU µs per transaction) of a finished run."""
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        return s["totals"]["tps"], cpu_s * 1e6 / max(s["totals"]["total"], 1)

    def prepare_ratio(self, scale):
        """`prepare --scale N` against `pgbench -i -s N` into the same database, alternating which
        goes first, medians over the rounds (each drops the other's tables, as `-i` does)."""
        walls = {"pgbench": [], "tidebench": []}
        cpus = {"pgbench": [], "tidebench": []}
        for r in range(self.args.rounds):
            order = ["pgbench", "tidebench"] if r % 2 == 0 else ["tidebench", "pgbench"]
            for tool in order:
                if tool == "pgbench":
                    _, err, cpu, _, wall, rc = run_measured([self.pgbench, "-i", "-q", "-s", str(scale), self.dsn])
                    if rc != 0:
                        sys.exit(f"bench: pgbench -i failed:\n{err}")
                else:
                    _, _, cpu, _, wall, _ = self.tb("prepare", "--workload", "tpcb", "--scale", str(scale),
                                                    "--target", self.target, "--force")
                walls[tool].append(wall)
                cpus[tool].append(cpu)
        pg, tb = statistics.median(walls["pgbench"]), statistics.median(walls["tidebench"])
        print(f"prepare scale {scale}: pgbench -i {pg:.1f} s wall ({statistics.median(cpus['pgbench']):.2f} s client CPU), "
              f"tidebench {tb:.1f} s wall ({statistics.median(cpus['tidebench']):.2f} s client CPU), "
              f"ratio tidebench/pgbench {tb / pg:.2f} (target <= 1.00, aim 0.67; "
              f"{self.args.rounds} rounds, medians)", flush=True)

    def tpcc_load(self, warehouses):
        """The TPC-C load alone: wall and client CPU."""
        _, _, cpu, _, wall, _ = self.tb("prepare", "--workload", "tpcc", "--warehouses", str(warehouses),
                                        "--target", "instance:bench/tpcc", "--force")
        print(f"TPC-C load of {warehouses} warehouses: {wall:.1f} s wall, {cpu:.2f} s client CPU", flush=True)


def sampler_cost(out_dir):
    """The sampler's wall and CPU ms per round in a run's system.csv."""
    rounds, cpus = [], []
    with open(os.path.join(out_dir, "system.csv")) as f:
        for row in csv.DictReader(f):
            if row["source"] == "sampler" and row["metric"] == "round_ms":
                rounds.append(float(row["value"]))
            if row["source"] == "sampler" and row["metric"] == "cpu_ms":
                cpus.append(float(row["value"]))
    return rounds, cpus


def report_bench(bin_path):
    """Times `tidebench report` on a generated 2-hour, 40-target, 10-type results dir
    (`report --synthetic`, a hidden flag): targets under 5 s and under 500 MB."""
    work = tempfile.mkdtemp(prefix="tidebench-report-bench-")
    try:
        big = os.path.join(work, "large")
        _, err, _, _, gen_wall, rc = run_measured([bin_path, "report", "--synthetic", big])
        if rc != 0:
            sys.exit(f"bench: generating the large results dir failed:\n{err}")
        _, err, cpu, rss, wall, rc = run_measured([bin_path, "report", big])
        if rc != 0:
            sys.exit(f"bench: tidebench report failed:\n{err}")
        rows = sum(1 for _ in open(os.path.join(big, "intervals.csv"))) - 1
        print(f"report of a 2 h, 40-target run ({rows} interval rows, generated in {gen_wall:.1f} s): "
              f"{wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {rss:.0f} MB (targets < 5 s, < 500 MB)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def many_groups(b):
    """The shared-mode cost of many targets (issue 16): 4 groups at scale 10 with and without
    the mix log, then 8 and 40 groups at scale 1 (40 databases of scale 10 would take minutes
    to load), all with 4 clients."""
    b.elastic_ratio(4)
    b.elastic_ratio(4, groups=8, scale=1, mix_log=False)
    b.elastic_ratio(4, groups=40, scale=1, mix_log=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/tidebench")
    ap.add_argument("--duration", type=int, default=8, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", default="1,4,16,64")
    ap.add_argument("--workloads", default="select-only,tpcb")
    ap.add_argument("--skip-prepare", action="store_true")
    ap.add_argument("--prepare-scales", default="10,50,200", help="tpcb loads against pgbench -i")
    ap.add_argument("--prepare-only", action="store_true", help="only the loads (tpcb against pgbench -i, TPC-C 16 warehouses)")
    ap.add_argument("--skip-1000", action="store_true")
    ap.add_argument("--skip-elastic", action="store_true")
    ap.add_argument("--skip-tpcc", action="store_true")
    ap.add_argument("--tpcc-only", action="store_true", help="only the TPC-C load and runs")
    ap.add_argument("--skip-tpce", action="store_true")
    ap.add_argument("--tpce-only", action="store_true", help="only the tpce loads and runs")
    ap.add_argument("--default-only", action="store_true", help="only the default run (sampling on) against pgbench")
    ap.add_argument("--report-only", action="store_true", help="only time the reporter on a large generated run")
    ap.add_argument("--elastic-only", action="store_true", help="only the many-groups points (4, 8 and 40 groups)")
    args = ap.parse_args()
    report_bench(os.path.abspath(args.bin))
    if args.report_only:
        return
    b = Bench(args)
    try:
        b.setup()
        if args.tpcc_only:
            b.tpcc(4, [4, 16])
            return
        if args.tpce_only:
            b.tpce([1, 4], [4, 16])
            return
        if args.elastic_only:
            many_groups(b)
            return
        if args.prepare_only:
            for scale in [int(x) for x in args.prepare_scales.split(",")]:
                b.prepare_ratio(scale)
            b.tpcc_load(16)
            return
        if args.default_only:
            b.tb("prepare", "--workload", "tpcb", "--scale", "10", "--target", b.target, "--force")
            b.default_run_ratio(4)
            return
        if not args.skip_prepare:
            for scale in [int(x) for x in args.prepare_scales.split(",")]:
                b.prepare_ratio(scale)
            b.tpcc_load(16)
        b.tb("prepare", "--workload", "tpcb", "--scale", "10", "--target", b.target, "--force")
        print(f"\n{args.rounds} rounds of {args.duration} s, medians; client CPU = user+sys of the client process / transactions")
        print("| workload | clients | pgbench tps | tidebench tps | ratio | pgbench µs/txn | tidebench µs/txn | tidebench RSS MB |")
        print("|---|---|---|---|---|---|---|---|")
        for w in args.workloads.split(","):
            for c in [int(x) for x in args.clients.split(",")]:
                b.compare(w, c)
        print()
        b.default_run_ratio(4)
        if not args.skip_elastic:
            print()
            many_groups(b)
        if not args.skip_1000:
            r = b.run_tidebench("select-only", 1000, args.duration, "c1000")
            print(f"\n1,000 clients select-only: tidebench {r['tps']:.0f} tps, driver RSS {r['rss_mb']:.1f} MB (target <= 300 MB)")
        if not args.skip_tpcc:
            b.tpcc(4, [4, 16])
        if not args.skip_tpce:
            b.tpce([1, 4], [4, 16])
    finally:
        b.teardown()


if __name__ == "__main__":
    main()
