#!/usr/bin/env python3
"""Chaos run (issue 15's evidence, `make chaos`): faults in a live 4-target run.

Four managed instances in a temp TIDEBENCH_HOME, one tpcb scale-1 database each (groups A-D,
one per instance), one shared-mode run of 60 s with equal shares and a 2 s transaction timeout.
Its run file schedules the faults as `[[event]]`s (issue 53), played by the run on its own clock:

  1. `fail` at 4 s: SIGKILL of instance 1's postmaster and its processes, restarted 3 s later;
  2. `freeze` at 12 s: SIGSTOP of instance 2's postmaster and all its children for 15 s, then
     SIGCONT;
  3. `sql` at 30 s: an ACCESS EXCLUSIVE lock on instance 3's pgbench_branches held for 10 s;
  4. `sql` at 44 s: an OOM kill on instance 4 (memory-limited cgroup): one session sorts 30 M
     rows with a huge work_mem, and the kernel kills it.

Then it checks the run's own account of each event (its steps in summary.json's `events`, with
what each step did; the first commit after the fault came once it was over) and what the run
recorded besides: the run ended on time (from its "running" line to exit at most the duration
+ 2 s); totals obey total = committed + expected_rollback + failed (= sum of failed_by_class)
+ skipped, per group too; each database's server row agrees (0 <= xact_commit_delta -
client_committed - other sessions' commits <= cut_in_flight), is marked `restarted`, or is
missing with a warning in the output; the groups not under a fault kept their shares during
each fault (cards, failed ones included, from intervals.csv) and every group over the run;
every results file parses (events.csv too). The recovery the run measured around each event
(of the group under it, from the per-transaction log) is printed in the table.

One fault stays outside the run: a second run of 15 s is SIGKILLed 6.5 s into its window (an
event is played by the run it would kill) and `tidebench report DIR.partial` must rebuild it
(complete: false with a reason, totals = the sum of its intervals, at most the interval in
flight lost).

It prints a table of the faults, how each was scheduled and what the run recorded, and exits 1
if any check fails. Instances and the temp home are removed at the end, also on failure or
Ctrl-C.

Usage: python3 bench/chaos.py [--bin target/release/tidebench] [--keep]
"""

import argparse
import csv
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib

DURATION = 60
CLIENTS = 8
TXN_TIMEOUT = "2s"
GROUPS = ["A", "B", "C", "D"]
# When each event starts and how long it lasts, in seconds on the run's clock.
KILL_AT, RESTART_AFTER = 4, 3
FREEZE_AT, FREEZE_S = 12, 15
LOCK_AT, LOCK_S = 30, 10
OOM_AT = 44
KILL_DRIVER_AT = 6.5  # seconds into the second run's measured window
# Slack on "the run ended on time": results and report.html are written after the window.
ON_TIME_SLACK_S = 2.0
# Commits of the lock session itself on instance 3's database (as tests/integration/elastic.rs).
LOCK_SESSION_COMMITS = 2


class Chaos:
    def __init__(self, args):
        self.bin = os.path.abspath(args.bin)
        # Directly under /tmp: socket paths must stay short; traversable by the postgres user.
        self.home = tempfile.mkdtemp(prefix="tbchaos", dir="/tmp")
        os.chmod(self.home, 0o755)
        self.env = dict(os.environ, TIDEBENCH_HOME=self.home)
        # Cgroups are per host: names of this process's own.
        self.names = [f"chaos{i}_{os.getpid()}" for i in range(1, 5)]
        self.children = []   # processes this script started, ended on cleanup
        self.rows = []       # (fault, scheduled, when, recorded, recovery, verdict)
        self.failed = False

    # -- plumbing ----------------------------------------------------------------------------

    def tb(self, *a, check=True, timeout=300):
        res = subprocess.run([self.bin, *a], env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and res.returncode != 0:
            raise RuntimeError(f"tidebench {' '.join(a)} failed (exit {res.returncode}):\n{res.stdout}{res.stderr}")
        return res

    def row(self, fault, when, recorded, ok, scheduled="-", recovery="-"):
        self.rows.append((fault, scheduled, when, recorded, recovery, "PASS" if ok else "FAIL"))
        self.failed |= not ok

    def instance_dir(self, i):
        return os.path.join(self.home, "instances", self.names[i])

    def postmaster(self, i):
        with open(os.path.join(self.instance_dir(i), "data", "postmaster.pid")) as f:
            return int(f.readline())

    def spawn(self, cmd, **kw):
        p = subprocess.Popen(cmd, env=self.env, **kw)
        self.children.append(p)
        return p

    def cleanup(self, keep):
        for p in self.children:
            if p.poll() is None:
                # A run told to stop ends its events: a frozen server is thawed.
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        # Should the run have died with instance 2 frozen, it goes on here.
        try:
            pm = self.postmaster(1)
            for pid in [pm, *self.descendants(pm)]:
                os.kill(pid, signal.SIGCONT)
        except (OSError, ValueError):
            pass
        if keep:
            print(f"kept: {self.home}")
            return
        for name in self.names:
            self.tb("instance", "destroy", name, check=False)
        shutil.rmtree(self.home, ignore_errors=True)

    # -- setup -------------------------------------------------------------------------------

    def setup(self):
        base = ["--set", "fsync=off", "--set", "synchronous_commit=off", "--set", "full_page_writes=off",
                "--set", "autovacuum=off", "--set", "max_connections=100"]
        for i, name in enumerate(self.names):
            # Instance 4's cgroup holds 300 MB: a sort with a 2 GB work_mem gets OOM-killed.
            extra = ["--memory", "300MB", "--set", "shared_buffers=64MB"] if i == 3 else ["--set", "shared_buffers=128MB"]
            self.tb("instance", "start", name, *base, *extra)
        groups = "".join(f'[[group]]\nname = "{g}"\nworkload = "tpcb"\nscale = 1\ninstance = "{n}"\n'
                         for g, n in zip(GROUPS, self.names))
        shares = ", ".join(f"{g} = 25" for g in GROUPS)
        common = (f'mode = "shared"\nclients = {CLIENTS}\nseed = 15\nprogress = "5s"\npoll = "0"\n'
                  f'interval = "1s"\ntxn_timeout = "{TXN_TIMEOUT}"\n{groups}'
                  f'[[phase]]\nduration = "{DURATION}s"\nshares = {{ {shares} }}\n')
        # The second run (its driver killed from outside) has no events: they would lie past
        # its shortened end.
        self.cfg_plain = os.path.join(self.home, "plain.toml")
        with open(self.cfg_plain, "w") as f:
            f.write(common)
        self.cfg = os.path.join(self.home, "chaos.toml")
        with open(self.cfg, "w") as f:
            f.write(common + self.events())
        self.tb("prepare", self.cfg, "--force")
        self.dbs = [f"{g.lower()}_1" for g in GROUPS]

    def events(self):
        """The faults as the run file's events."""
        lock = (f"BEGIN; LOCK TABLE pgbench_branches IN ACCESS EXCLUSIVE MODE; "
                f"SELECT pg_sleep({LOCK_S}); COMMIT")
        oom = ("SET work_mem = '2GB'; SELECT count(*) FROM (SELECT g FROM generate_series(1, 30000000) g "
               "ORDER BY g DESC) s")
        return (f'[[event]]\nat = "{KILL_AT}s"\naction = "fail"\ntarget = "{self.names[0]}"\n'
                f'restart_after = "{RESTART_AFTER}s"\n'
                f'[[event]]\nat = "{FREEZE_AT}s"\naction = "freeze"\ntarget = "{self.names[1]}"\n'
                f'for = "{FREEZE_S}s"\n'
                f'[[event]]\nat = "{LOCK_AT}s"\naction = "sql"\ntarget = "{self.names[2]}"\n'
                f'dbname = "c_1"\nsql = "{lock}"\n'
                f'[[event]]\nat = "{OOM_AT}s"\naction = "sql"\ntarget = "{self.names[3]}"\n'
                f'dbname = "tidebench"\nsql = "{oom}"\n')

    # -- the run with its faults ---------------------------------------------------------------

    def start_run(self, cfg, out, extra=()):
        """Starts the run; returns (process, lines, started) where `lines` fills with
        (monotonic time, line) and `started` is set at the "running" line."""
        p = self.spawn([self.bin, "run", cfg, "--out", out, *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines, started = [], threading.Event()

        def read():
            for line in p.stdout:
                lines.append((time.monotonic(), line.rstrip("\n")))
                print(f"  | {line}", end="", flush=True)
                if line.startswith("running "):
                    started.set()
        threading.Thread(target=read, daemon=True).start()
        return p, lines, started

    def descendants(self, pid):
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            return []
        return kids + [d for k in kids for d in self.descendants(k)]

    def main_run(self):
        """The run with its events; they are the run's to play, this only waits for its end."""
        out = os.path.join(self.home, "results", "chaos")
        p, lines, started = self.start_run(self.cfg, out)
        if not started.wait(120):
            raise RuntimeError("the run never printed its 'running' line")
        t0 = time.monotonic()
        # When the results dir is complete (summary.json appears with it, before report.html):
        # splits the time after the window between writing the results and the rest.
        written = {}

        def watch():
            while p.poll() is None and "at" not in written:
                if os.path.exists(os.path.join(out, "summary.json")):
                    written["at"] = time.monotonic()
                time.sleep(0.02)
        threading.Thread(target=watch, daemon=True).start()
        rc = p.wait(timeout=DURATION + 120)
        exit_t = time.monotonic()
        time.sleep(0.2)  # the reader thread takes the last lines
        return out, {"rc": rc, "wall_s": exit_t - t0, "written_s": written.get("at", exit_t) - t0,
                     "lines": [l for _, l in lines]}

    # -- checks --------------------------------------------------------------------------------

    def check_main(self, out, log):
        s = self.read_json(os.path.join(out, "summary.json"))
        if s is None:
            self.row("main run", "0-60 s", f"exit {log['rc']}, no summary.json", False)
            return
        intervals = self.read_csv(os.path.join(out, "intervals.csv"))
        server = {r["dbname"]: r for r in s.get("server", [])}
        incidents = s.get("incidents", [])
        by_group = {g["group"]: g for g in s["groups"]}

        def failures(g):
            f = {k: v for k, v in by_group[g]["failed_by_class"].items() if v}
            return ", ".join(f"{k} {v}" for k, v in f.items()) or "no failures"

        def incident_text(i):
            mine = [x for x in incidents if x.get("instance") == self.names[i]]
            kinds = {}
            for x in mine:
                kinds[x["kind"]] = kinds.get(x["kind"], 0) + x.get("count", 1)
            return ", ".join(f"{k} x{v}" for k, v in kinds.items())

        def server_verdict(i, may_restart, extra=0):
            db = self.dbs[i]
            r = server.get(db)
            if r is None:
                warned = [l for l in log["lines"] if "warning" in l.lower() and (db in l or self.names[i] in l)]
                if warned and may_restart:
                    return True, f"server row missing, warned: \"{warned[0].strip()[:90]}\""
                return False, "server row missing" + (" (warned)" if warned else " and no warning said")
            if r.get("restarted"):
                return may_restart, f"server row restarted (delta {r['xact_commit_delta']}, not compared)"
            over = r["xact_commit_delta"] - r["client_committed"]
            cut = r.get("cut_in_flight", 0)
            ok = 0 <= over <= cut + extra
            said = [l.strip() for l in log["lines"] if l.startswith(f"server: {db} ")]
            return ok, (f"server {r['xact_commit_delta']} vs client {r['client_committed']} "
                        f"(+{over}, cut {cut}{f', lock session {extra}' if extra else ''})"
                        + ("" if ok or not said else f", console: \"{said[0]}\""))

        def window_shares(lo, hi):
            """Cards per group in the intervals overlapping [lo, hi) s, as percentages."""
            cards = {g: 0 for g in GROUPS}
            for r in intervals:
                start, length = float(r["interval_start_s"]), float(r["interval_length_s"])
                if r["measured"] == "true" and start < hi and start + length > lo:
                    cards[r["group"]] += int(r["count"])
            total = sum(cards.values())
            return {g: 100.0 * c / max(total, 1) for g, c in cards.items()}, total

        def healthy_shares(faulty, lo, hi):
            """The other groups' shares during a fault, and whether each is within tolerance: a
            client's 4-card deck can be 1 card per group off at each end of the window."""
            shares, total = window_shares(lo, hi)
            tol = max(1.0, 100.0 * 2 * CLIENTS / max(total, 1))
            others = {g: v for g, v in shares.items() if g != faulty}
            ok = total > 0 and all(abs(v - 25.0) <= tol for v in others.values())
            lo_s, hi_s = min(others.values()), max(others.values())
            return ok, f"others {lo_s:.1f}-{hi_s:.1f} % (tol {tol:.1f}, {total} cards); {faulty} {shares[faulty]:.1f} %"

        events = s.get("events", [])

        def event(k):
            """Event k's steps by name, and the recovery of group `g` and of all around it."""
            e = events[k] if k < len(events) else {"steps": [], "recovery": []}
            return {st["step"]: st for st in e["steps"]}, {r["scope"]: r for r in e.get("recovery", [])}

        def step_ok(steps, name, outcome="ok"):
            return name in steps and steps[name]["outcome"] == outcome

        def recovery(rec, g):
            """The run's own recovery account of group g (and of all), as the table shows it."""
            out = []
            for scope in (g, "all"):
                r = rec.get(scope)
                if r is None:
                    out.append(f"{scope}: not measured")
                    continue
                first = r.get("first_commit_s")
                back = r.get("recovered_s")
                out.append(f"{scope}: " + (f"back to 90% of {r['rate_before']:.1f}/s in {back:.1f} s" if back is not None
                                           else f"not back to 90% of {r['rate_before']:.1f}/s by the end")
                           + (f" (first commit after {first:.1f} s)" if first is not None else " (no commit after it)")
                           + f", {r['failed']} failed, {r['reconnects']} reconnects"
                           + (f", down {r['down_s']:.1f} s" if r.get("down_s") else ""))
            return "; ".join(out)

        def first_after(t, rec, g, steps, step):
            """Group g's first commit after the event (begun at t) came once `step` (the
            restart, the thaw) began: the run's account says the fault lasted as long as it
            was made to."""
            first = rec.get(g, {}).get("first_commit_s")
            return first is not None and step in steps and t + first >= steps[step]["started_s"] - 0.05

        # 1. fail + restart.
        steps, rec = event(0)
        fail, restart = steps.get("fail", {}), steps.get("restart", {})
        t, back_at = fail.get("started_s", float("nan")), restart.get("ended_s") or float("nan")
        sv_ok, sv = server_verdict(0, may_restart=True)
        sh_ok, sh = healthy_shares("A", t, back_at + 2)
        conn = by_group["A"]["failed_by_class"]["connection"] + by_group["A"]["failed_by_class"]["timeout"]
        resumed = any(float(r["interval_start_s"]) >= back_at + 2 and r["group"] == "A" and int(r["committed"]) > 0
                      for r in intervals)
        said = f"fail {fail.get('outcome', 'missing')} ({fail.get('detail', '')}), restart {restart.get('outcome', 'missing')}"
        rec_text = f"{said}; A: {failures('A')}; {incident_text(0) or 'no incidents'}; {sv}; {sh}; " + \
            ("traffic resumed" if resumed else "NO traffic after the restart")
        self.row(f"SIGKILL postmaster of instance 1, restart {RESTART_AFTER} s later",
                 f"{t:.1f} s / {restart.get('started_s', float('nan')):.1f} s", rec_text,
                 step_ok(steps, "fail") and step_ok(steps, "restart") and first_after(t, rec, "A", steps, "restart")
                 and sv_ok and sh_ok and conn > 0 and resumed,
                 scheduled="event 1 (fail)", recovery=recovery(rec, "A"))

        # 2. freeze + thaw.
        steps, rec = event(1)
        freeze, thaw = steps.get("freeze", {}), steps.get("thaw", {})
        t, thawed = freeze.get("started_s", float("nan")), thaw.get("started_s", float("nan"))
        sv_ok, sv = server_verdict(1, may_restart=False)
        sh_ok, sh = healthy_shares("B", t, thawed)
        timeouts = by_group["B"]["failed_by_class"]["timeout"]
        self.row(f"freeze of instance 2 for {FREEZE_S} s", f"{t:.1f} s / {thawed:.1f} s",
                 f"freeze {freeze.get('outcome', 'missing')} ({freeze.get('detail', '')}), thaw "
                 f"{thaw.get('outcome', 'missing')}; B: {failures('B')}; {sv}; {sh}",
                 step_ok(steps, "freeze") and step_ok(steps, "thaw") and first_after(t, rec, "B", steps, "thaw")
                 and sv_ok and sh_ok and timeouts > 0,
                 scheduled="event 2 (freeze)", recovery=recovery(rec, "B"))

        # 3. The lock: the statement held it for LOCK_S seconds.
        steps, rec = event(2)
        sql = steps.get("sql", {})
        t = sql.get("started_s", float("nan"))
        held = (sql.get("ended_s") or t) - t
        sv_ok, sv = server_verdict(2, may_restart=False, extra=LOCK_SESSION_COMMITS)
        sh_ok, sh = healthy_shares("C", t, t + LOCK_S)
        timeouts = by_group["C"]["failed_by_class"]["timeout"]
        self.row(f"ACCESS EXCLUSIVE lock on instance 3's pgbench_branches for {LOCK_S} s", f"{t:.1f} s",
                 f"sql {sql.get('outcome', 'missing')} in {held:.1f} s; C: {failures('C')}; {sv}; {sh}",
                 step_ok(steps, "sql") and held >= LOCK_S - 0.05 and sv_ok and sh_ok and timeouts > 0,
                 scheduled="event 3 (sql)", recovery=recovery(rec, "C"))

        # 4. OOM kill: the statement's session is the one killed.
        steps, rec = event(3)
        sql = steps.get("sql", {})
        t = sql.get("started_s", float("nan"))
        sv_ok, sv = server_verdict(3, may_restart=True)
        sh_ok, sh = healthy_shares("D", t, t + 3)
        oom_incidents = [x for x in incidents if x.get("instance") == self.names[3] and x["kind"] == "oom_kill"]
        warned = any("warning" in l and self.names[3] in l for l in log["lines"])
        self.row("OOM kill on instance 4 (300 MB cgroup, a 2 GB work_mem sort)", f"{t:.1f} s",
                 f"sql {sql.get('outcome', 'missing')}: {' '.join(sql.get('detail', '').split())[:80]}; D: {failures('D')}; "
                 f"{incident_text(3) or 'no incidents'}{'' if warned else ' (NOT said on the console)'}; {sv}; {sh}",
                 step_ok(steps, "sql", "error") and bool(oom_incidents) and warned and sv_ok and sh_ok,
                 scheduled="event 4 (sql)", recovery=recovery(rec, "D"))

        # On time, honest window.
        limit = DURATION + ON_TIME_SLACK_S
        overrun = s.get("overrun_s")
        on_time = log["wall_s"] <= limit and s["duration_s"] <= DURATION + 0.01 and s.get("complete") is True
        self.row("the run ends on time", f"0-{DURATION} s",
                 f"'running' line to exit {log['wall_s']:.1f} s (limit {limit:.0f}; results written at "
                 f"{log['written_s']:.1f} s, report.html and exit after), exit {log['rc']}, "
                 f"duration_s {s['duration_s']}, complete {s.get('complete')}"
                 + (f", overrun_s {overrun}" if overrun else "") + f", cut_in_flight {s.get('cut_in_flight', 0)}, "
                 f"committed_after_end {s.get('committed_after_end', 0)}",
                 on_time and log["rc"] == 0)

        # Accounting invariant, whole run and per group; intervals add up to the totals.
        bad = []
        for name, t in [("totals", s["totals"])] + [(g["group"], g) for g in s["groups"]]:
            failed = sum(t["failed_by_class"].values())
            if t["failed"] != failed or t["total"] != t["committed"] + t["expected_rollback"] + failed + t.get("skipped", 0):
                bad.append(f"{name}: {t}")
        t = s["totals"]
        ivl = {k: sum(int(r[k]) for r in intervals if r["measured"] == "true") for k in ("count", "committed", "failed")}
        if (ivl["count"], ivl["committed"], ivl["failed"]) != (t["total"], t["committed"], t["failed"]):
            bad.append(f"intervals.csv sums {ivl} differ from the totals")
        fails = ", ".join(f"{k} {v}" for k, v in t["failed_by_class"].items() if v)
        self.row("accounting invariant", "whole run",
                 f"{t['total']} = {t['committed']} committed + {t['expected_rollback']} rollbacks + {t['failed']} failed "
                 f"({fails}){' + ' + str(t['skipped']) + ' skipped' if t.get('skipped') else ''}; intervals agree"
                 + ("" if not bad else "; BROKEN: " + "; ".join(bad)), not bad)

        # Shares over the whole run.
        tol = 1.0
        worst = max(abs(g["achieved_share"] - g["configured_share"]) for g in s["groups"])
        self.row("shares over the run (cards, failed ones included)", "whole run",
                 ", ".join(f"{g['group']} {g['achieved_share']:.2f} %" for g in s["groups"]) + f" (tol {tol})",
                 worst <= tol)

        # Every results file parses.
        self.row("results files parse", "after the run", *self.files_parse(out))

    def files_parse(self, out):
        problems = []
        for name, read in [("summary.json", self.read_json), ("run-start.json", self.read_json),
                           ("intervals.csv", self.read_csv), ("system.csv", self.read_csv),
                           ("events.csv", self.read_csv)]:
            try:
                if not read(os.path.join(out, name), strict=True):
                    problems.append(f"{name} empty")
            except Exception as e:  # any parse error is the finding
                problems.append(f"{name}: {e}")
        try:
            with open(os.path.join(out, "runtime.toml"), "rb") as f:
                tomllib.load(f)
        except Exception as e:
            problems.append(f"runtime.toml: {e}")
        try:
            with open(os.path.join(out, "report.html")) as f:
                if "</html>" not in f.read():
                    problems.append("report.html truncated")
        except OSError as e:
            problems.append(f"report.html: {e}")
        names = "summary.json, runtime.toml, intervals.csv, system.csv, run-start.json, events.csv, report.html"
        return (names + (" ok" if not problems else "; " + "; ".join(problems))), not problems

    @staticmethod
    def read_json(path, strict=False):
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError):
            if strict:
                raise
            return None

    @staticmethod
    def read_csv(path, strict=False):
        """Rows of a CSV file; a row with a missing or extra field raises (strict or not)."""
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            if None in r or None in r.values():
                raise ValueError(f"a row of {os.path.basename(path)} has the wrong number of fields: {r}")
        return rows

    # -- the killed driver ---------------------------------------------------------------------

    def killed_run(self):
        out = os.path.join(self.home, "results", "killed")
        staging = out + ".partial"
        p, lines, started = self.start_run(self.cfg_plain, out, ["--phase-duration", "15s"])
        if not started.wait(120):
            raise RuntimeError("the second run never printed its 'running' line")
        # Killed mid-interval, 6.5 s into the measured window (run-start.json holds its start).
        start_file = os.path.join(staging, "run-start.json")
        while not os.path.exists(start_file) and p.poll() is None:
            time.sleep(0.05)
        time.sleep(0.2)  # written whole (temp file + rename), but let it settle
        start = self.read_json(start_file)["started_at_unix_ns"] / 1e9
        time.sleep(max(0.0, start + KILL_DRIVER_AT - time.time()))
        p.kill()  # SIGKILL
        killed_at = time.time() - start
        p.wait()
        r = self.tb("report", staging, check=False)
        print("".join(f"  | {l}\n" for l in (r.stdout + r.stderr).splitlines()), end="")
        s = self.read_json(os.path.join(staging, "summary.json"))
        if r.returncode != 0 or s is None:
            self.row("SIGKILL of the driver (15 s run)", f"{killed_at:.1f} s", f"report exit {r.returncode}, no summary", False)
            return
        intervals = self.read_csv(os.path.join(staging, "intervals.csv"))
        measured = [x for x in intervals if x["measured"] == "true"]
        sums = {k: sum(int(x[k]) for x in measured) for k in ("count", "committed", "failed")}
        t = s["totals"]
        same = (sums["count"], sums["committed"], sums["failed"]) == (t["total"], t["committed"], t["failed"])
        # Issue 15 (and DESIGN): everything up to the last finished interval is recoverable, so
        # a kill loses at most the interval in flight. Intervals are 1 s: the last finished one
        # ended at the whole second before the kill, half a second earlier.
        last_finished = math.floor(killed_at)
        ok = s.get("complete") is False and bool(s.get("failure")) and same and t["committed"] > 0 \
            and os.path.exists(os.path.join(staging, "report.html")) and not os.path.exists(out) \
            and s["duration_s"] >= last_finished - 0.001
        reason = s.get("failure", "").split(";")[0]
        rec = (f"`report DIR.partial` exit {r.returncode}: complete {str(s.get('complete')).lower()}, "
               f"reason \"{reason}; ...\", {t['committed']} committed in {s['duration_s']} s = "
               f"sum of {len(measured)} interval rows" + ("" if same else f" (NOT: intervals {sums})")
               + f"; the last interval finished before the kill ended at {last_finished} s"
               + ("" if s["duration_s"] >= last_finished - 0.001 else " and is NOT on disk"))
        self.row("SIGKILL of the driver (15 s run)", f"{killed_at:.1f} s", rec, ok,
                 scheduled="outside: the run it kills cannot play it")

    def table(self):
        print("\n| fault | scheduled | when | what the run recorded | recovery the run measured | verdict |\n"
              "|---|---|---|---|---|---|")
        for r in self.rows:
            print("| " + " | ".join(str(x).replace("|", "/") for x in r) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/tidebench")
    ap.add_argument("--keep", action="store_true", help="keep the instances and the temp home (to look at them)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("chaos: needs root (cgroups for the memory-limited instance, signals to the postgres user's processes)")
    # SIGTERM cleans up as Ctrl-C does.
    def interrupted(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, interrupted)
    c = Chaos(args)
    try:
        print(f"chaos: setting up 4 instances in {c.home}", flush=True)
        c.setup()
        print(f"chaos: {DURATION} s shared-mode run, {CLIENTS} clients, txn_timeout {TXN_TIMEOUT}", flush=True)
        out, log = c.main_run()
        c.check_main(out, log)
        print(f"chaos: a 15 s run, its driver SIGKILLed {KILL_DRIVER_AT} s into it", flush=True)
        c.killed_run()
    except KeyboardInterrupt:
        print("chaos: interrupted; cleaning up", file=sys.stderr)
        c.failed = True
    except Exception as e:  # a broken step is a failed chaos run, with the table so far
        print(f"chaos: {e}", file=sys.stderr)
        c.failed = True
    finally:
        c.table()
        c.cleanup(args.keep)
    print("\nchaos: " + ("FAIL" if c.failed else "all checks PASS"))
    sys.exit(1 if c.failed else 0)


if __name__ == "__main__":
    main()
