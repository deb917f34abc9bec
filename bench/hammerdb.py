"""HammerDB's TPROC-H for bench/tpch_load.py (issue 51): its schema build and its power run,
driven through `hammerdbcli auto SCRIPT` on the bench's managed instance.

Where HammerDB is: `--hammerdb DIR`, else $HAMMERDB_HOME, else the directory of a `hammerdbcli`
on PATH. The directory is a HammerDB install (the release tarball unpacked, or a source checkout
with `bin/tclsh8.6` and the Pgtcl it loads, as the TPC-H guide says); hammerdbcli runs from it, as it
starts `./bin/tclsh8.6`. HammerDB keeps its jobs database and logs under $TMP, which is pointed
at a scratch dir of the bench so nothing is left behind.

The build: `buildschema` with the bench's SF and streams as `pg_num_tpch_threads` (HammerDB adds
one monitor virtual user), as the instance's superuser, into database `hammerdb` owned by role
`hammerdb`, over the instance's unix socket as the other loads use. Its time is from the first
line a virtual user prints to `SCHEMA COMPLETE`, read line by line as HammerDB writes them; the
steps are the data (to `CREATING TPCH INDEXES`) and the keys, indexes and statistics. The power
run: one virtual user running one query set (`pg_total_querysets 1`, no refresh), the 22
queries' seconds as HammerDB prints them (`query N completed in S seconds`).
"""

import os
import re
import shutil
import subprocess
import sys
import time

RELEASE = "4.12"
TARBALL = f"https://github.com/TPC-Council/HammerDB/releases/download/v{RELEASE}/HammerDB-{RELEASE}-Linux.tar.gz"
INSTALL = (f"install HammerDB v{RELEASE}: `curl -LO {TARBALL} && tar -xzf HammerDB-{RELEASE}-Linux.tar.gz` "
           f"then HAMMERDB_HOME=$PWD/HammerDB-{RELEASE} (or --hammerdb DIR)")
# The scale factors HammerDB's CLI builds (it refuses any other, 0.1 included).
SCALE_FACTORS = ("1", "10", "30", "100", "300", "1000", "3000", "10000", "30000", "100000")
DATABASE = "hammerdb"


def find_home(given):
    """The HammerDB directory: `given`, $HAMMERDB_HOME, or where `hammerdbcli` on PATH lives;
    None when none of them holds a hammerdbcli."""
    on_path = shutil.which("hammerdbcli")
    for candidate in (given, os.environ.get("HAMMERDB_HOME"),
                      os.path.dirname(os.path.realpath(on_path)) if on_path else None):
        if candidate and os.access(os.path.join(candidate, "hammerdbcli"), os.X_OK):
            return os.path.abspath(candidate)
    return None


def not_run(home, sf):
    """Why the HammerDB column is empty, with the fix; None when it can run."""
    if home is None:
        return f"not run: HammerDB not found; {INSTALL}"
    if sf not in SCALE_FACTORS:
        return f"not run: HammerDB builds SF {', '.join(SCALE_FACTORS[:4])}, … only (asked for {sf})"
    return None


def dsn_fields(dsn):
    """The keyword/value pairs of a libpq connection string without quoted values."""
    return dict(pair.split("=", 1) for pair in dsn.split() if "=" in pair)


def tcl_word(value):
    """`value` as one Tcl word: braced, which no password character of the instance's breaks."""
    if any(c in value for c in "{}\\\n"):
        sys.exit(f"bench: cannot pass {value!r} to HammerDB as a Tcl word")
    return "{" + value + "}"


class HammerDB:
    def __init__(self, home, dsn, scratch):
        self.home, self.scratch = home, scratch
        os.makedirs(scratch, exist_ok=True)
        fields = dsn_fields(dsn)
        password = ""
        if "passfile" in fields:
            with open(fields["passfile"]) as f:
                password = f.readline().rstrip("\n").split(":", 4)[-1]
        self.connection = [
            "dbset db pg", "dbset bm TPC-H",
            f"diset connection pg_host {tcl_word(fields.get('host', 'localhost'))}",
            f"diset connection pg_port {fields.get('port', '5432')}",
            f"diset connection pg_sslmode {fields.get('sslmode', 'disable')}",
            f"diset tpch pg_tpch_superuser {tcl_word(fields.get('user', 'postgres'))}",
            f"diset tpch pg_tpch_superuserpass {tcl_word(password or 'postgres')}",
            "diset tpch pg_tpch_defaultdbase postgres",
            f"diset tpch pg_tpch_user {DATABASE}", f"diset tpch pg_tpch_pass {DATABASE}",
            f"diset tpch pg_tpch_dbase {DATABASE}",
        ]
        self.version = self.banner()

    def banner(self):
        """HammerDB's version as its CLI prints it (`HammerDB CLI v4.12`)."""
        lines, _ = self.cli([])
        for _, line in lines:
            if line.startswith("HammerDB CLI "):
                return line.split()[-1]
        sys.exit(f"bench: {self.home}/hammerdbcli did not print its version:\n" + "\n".join(l for _, l in lines))

    def cli(self, commands):
        """Runs `commands` as a hammerdbcli auto script; ([(monotonic s, line)], wall s). Lines are
        stamped as they arrive (the script makes HammerDB's stdout line-buffered). Exits the bench
        on a failed virtual user or a non-zero exit, with HammerDB's last lines."""
        script = os.path.join(self.scratch, "bench.tcl")
        with open(script, "w") as f:
            f.write("\n".join(["fconfigure stdout -buffering line", *commands, "quit", ""]))
        env = dict(os.environ, TMP=self.scratch, TEMP=self.scratch)
        start = time.monotonic()
        proc = subprocess.Popen(["./hammerdbcli", "auto", script], cwd=self.home, env=env, text=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        lines = [(time.monotonic(), line.rstrip("\n")) for line in proc.stdout]
        rc = proc.wait()
        wall = time.monotonic() - start
        failed = [l for _, l in lines if "FINISHED FAILED" in l or l.startswith(("Error", "Error in Virtual User"))]
        if rc != 0 or failed:
            tail = "\n".join(l for _, l in lines[-25:])
            sys.exit(f"bench: hammerdbcli failed (exit {rc}){': ' + failed[0] if failed else ''}\n{tail}")
        return lines, wall

    def build(self, sf, jobs):
        """HammerDB's TPROC-H build: (wall, data, keys) seconds from its own lines."""
        lines, _ = self.cli([*self.connection, f"diset tpch pg_scale_fact {sf}",
                             f"diset tpch pg_num_tpch_threads {jobs}", "buildschema", "vudestroy"])

        def at(pattern):
            hits = [t for t, l in lines if re.search(pattern, l)]
            if not hits:
                sys.exit(f"bench: HammerDB's build never printed {pattern!r}:\n" + "\n".join(l for _, l in lines[-25:]))
            return hits[0]

        start, indexes, done = at(r"^Vuser \d+:RUNNING"), at(r"CREATING TPCH INDEXES"), at(r"SCHEMA COMPLETE")
        return done - start, indexes - start, done - indexes

    def power(self, sf, parallel):
        """One query set by one virtual user: {query number: seconds}, and its wall seconds."""
        lines, _ = self.cli([*self.connection, f"diset tpch pg_scale_fact {sf}",
                             f"diset tpch pg_degree_of_parallel {parallel}", "diset tpch pg_total_querysets 1",
                             "diset tpch pg_refresh_on false", "diset tpch pg_raise_query_error true",
                             "loadscript", "vuset vu 1", "vucreate", "vurun", "vudestroy"])
        times = {}
        for _, line in lines:
            m = re.search(r"query (\d+) completed in ([\d.]+) seconds", line)
            if m:
                times[int(m.group(1))] = float(m.group(2))
        m = [re.search(r"Completed 1 query set\(s\) in (\d+) seconds", l) for _, l in lines]
        wall = next((float(x.group(1)) for x in m if x), float("nan"))
        if len(times) != 22:
            sys.exit(f"bench: HammerDB's power run timed {len(times)} of 22 queries:\n"
                     + "\n".join(l for _, l in lines[-25:]))
        return times, wall
