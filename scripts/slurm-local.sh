#!/usr/bin/env bash
# Brings up (or tears down) a throwaway one-node Slurm cluster on this machine, so tidebench's
# integration tests can exercise the Slurm launcher (`srun`, `sbatch --wait`) without a real
# cluster. Everything runs on localhost: munged, slurmctld and slurmd, started directly (no
# systemd: containers and CI VMs usually have none), with Debian's `slurm-wlm` + `munge`.
#
#   scripts/slurm-local.sh up      install if missing, configure, start, wait until `srun -n 2 true` works
#   scripts/slurm-local.sh down    stop slurmd and slurmctld (munged and the packages stay)
#   scripts/slurm-local.sh status  print "up ..." or "down: <why>"; exit 0 when up, 1 when not
#
# `up` and `down` are idempotent. Progress goes to stderr, one line per step, prefixed
# `slurm-local: `. `up`/`down` need root (they re-run themselves with sudo when available).
#
# The cluster: ClusterName=tidebench, one node named after `hostname -s` (address 127.0.0.1) with
# this machine's CPU count, one partition `debug` (default). Node RealMemory is left out on
# purpose: a value above what slurmd measures at registration drains the node.
#
# More tasks than CPUs (e.g. `srun -n 4` on a 2-core box). Partition OverSubscribe only lets
# *different* jobs share cores; one job still gets at most one task per CPU. Two ways out:
#  - callers pass `srun --overcommit` / `sbatch --overcommit` (-O), or export SLURM_OVERCOMMIT=1
#    (srun) and SBATCH_OVERCOMMIT=1 (sbatch); a plain `srun` inside an overcommitted batch job
#    then runs all its tasks; or
#  - bring the cluster up with SLURM_LOCAL_CPUS=N: the node then advertises N CPUs whatever the
#    hardware has (SlurmdParameters=config_overrides), and no flags are needed. `up` without the
#    variable goes back to the real count (and restarts the daemons if that changes the config).
# A job asking for more than the node can give fails at once ("More processors requested than
# permitted", EnforcePartLimits=ALL) instead of pending forever. The partition has
# OverSubscribe=FORCE:4 so that concurrent tests' jobs share the cores instead of queueing.
#
# MinJobAge=5: `sbatch --wait` polls the job every 2 s, then every 8 s, then every 32 s, as long
# as its pause is below half of MinJobAge (so a finished job's record outlives a pause). Under
# the default 300 a 15 s job was seen done only at 42 s; at 5 it polls every 2 s throughout, and
# a finished job's record stays at least 5 s (slurmctld purges it in its next pass after that).
#
# Files: /etc/slurm/slurm.conf (written only when absent or when it carries the marker line
# below; a foreign slurm.conf makes `up` exit 2 untouched), state under /var/lib/slurm-tidebench,
# logs in /var/log/slurm-tidebench/{slurmctld,slurmd}.log, pid files in /run/slurm-tidebench.
set -euo pipefail

say() { printf 'slurm-local: %s\n' "$*" >&2; }

# `up` and `down` need root; `status` does not.
if [ "$(id -u)" -ne 0 ] && [ "${1:-}" != status ]; then
  if command -v sudo >/dev/null 2>&1; then exec sudo -- "$0" "$@"; fi
  say "must run as root (starts munged, slurmctld and slurmd)"; exit 2
fi

CONF=/etc/slurm/slurm.conf
MARKER='# Written by tidebench scripts/slurm-local.sh; it rewrites this file. Remove this line to keep your own edits.'
STATE_DIR=/var/lib/slurm-tidebench
LOG_DIR=/var/log/slurm-tidebench
RUN_DIR=/run/slurm-tidebench
CTLD_PID=$RUN_DIR/slurmctld.pid
SLURMD_PID=$RUN_DIR/slurmd.pid
CTLD_LOG=$LOG_DIR/slurmctld.log
SLURMD_LOG=$LOG_DIR/slurmd.log
WAIT_SECS=${SLURM_LOCAL_WAIT:-60}
NODE=$(hostname -s)
PARTITION=debug

# --- helpers -----------------------------------------------------------------------------------

# pid of a running daemon from its pid file, if the process is alive and really is that daemon.
daemon_pid() { # name pidfile
  local pid
  [ -r "$2" ] || return 1
  pid=$(cat "$2" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$1" ] || return 1
  echo "$pid"
}

munge_ok() { munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; }

# The node's state as sinfo reports it (e.g. idle, mixed, down*, drained), empty when unreachable.
node_state() { timeout 10 sinfo -h -N -n "$NODE" -o %T 2>/dev/null | head -n1 || true; }

node_usable() { case "$1" in idle|mixed|allocated|completing) return 0;; *) return 1;; esac; }

show_logs() {
  local f
  for f in "$CTLD_LOG" "$SLURMD_LOG" /var/log/munge/munged.log; do
    [ -s "$f" ] || continue
    say "--- last lines of $f"
    tail -n 15 "$f" | sed 's/^/slurm-local:   /' >&2
  done
}

fail() { say "FAILED: $*"; show_logs; exit 1; }

# Stop one daemon by the pid in its pid file: SIGTERM, then SIGKILL after 15 s.
stop_daemon() { # name pidfile
  local pid i
  if ! pid=$(daemon_pid "$1" "$2"); then say "$1 is not running"; rm -f "$2"; return 0; fi
  say "stopping $1 (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 30); do
    [ -d "/proc/$pid" ] || { rm -f "$2"; return 0; }
    sleep 0.5
  done
  say "$1 (pid $pid) ignored SIGTERM for 15 s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$2"
}

# --- steps of `up` -----------------------------------------------------------------------------

install_packages() {
  local missing=0 c
  for c in slurmctld slurmd srun sbatch sinfo scontrol munged munge unmunge; do
    command -v "$c" >/dev/null 2>&1 || missing=1
  done
  if [ "$missing" -eq 0 ]; then say "slurm-wlm and munge are installed"; return; fi
  command -v apt-get >/dev/null 2>&1 || { say "Slurm/munge missing and no apt-get: install slurm-wlm and munge"; exit 2; }
  say "installing slurm-wlm and munge (apt-get)"
  # Debian containers often have a policy-rc.d that stops postinst from starting services; that
  # is fine, this script starts the daemons itself.
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
}

ensure_munge() {
  local key=/etc/munge/munge.key
  if [ ! -s "$key" ]; then
    say "creating munge key $key"
    install -d -o munge -g munge -m 0700 /etc/munge
    rm -f "$key"
    if command -v mungekey >/dev/null 2>&1; then mungekey --create --keyfile="$key"
    else dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
    fi
    chown munge:munge "$key"; chmod 0400 "$key"
  fi
  # munged refuses a key that is not owned by its user or that others can read.
  if [ "$(stat -c %U "$key")" != munge ] || [ $((0$(stat -c %a "$key") & 077)) -ne 0 ]; then
    say "setting owner munge, mode 0400 on $key"
    chown munge:munge "$key"; chmod 0400 "$key"
  fi
  if munge_ok; then say "munged is running"; return; fi
  say "starting munged"
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged 9>&- || fail "munged did not start"
  local i
  for i in $(seq 1 20); do munge_ok && return; sleep 0.5; done
  fail "munged started but munge -n | unmunge does not work"
}

# The node line from what slurmd detects (`slurmd -C`), falling back to nproc. With
# SLURM_LOCAL_CPUS=N (N above the real count) the node advertises N single-thread cores instead,
# which slurmctld accepts because of SlurmdParameters=config_overrides (see render_conf).
node_hardware() {
  local line cpus sockets cores threads
  if [ -n "${SLURM_LOCAL_CPUS:-}" ]; then
    echo "CPUs=$SLURM_LOCAL_CPUS Sockets=1 CoresPerSocket=$SLURM_LOCAL_CPUS ThreadsPerCore=1"
    return
  fi
  line=$(slurmd -C 2>/dev/null | head -n1 || true)
  cpus=$(sed -n 's/.*[[:space:]]CPUs=\([0-9]*\).*/\1/p' <<<"$line")
  sockets=$(sed -n 's/.*SocketsPerBoard=\([0-9]*\).*/\1/p' <<<"$line")
  cores=$(sed -n 's/.*CoresPerSocket=\([0-9]*\).*/\1/p' <<<"$line")
  threads=$(sed -n 's/.*ThreadsPerCore=\([0-9]*\).*/\1/p' <<<"$line")
  if [ -n "$cpus" ] && [ -n "$sockets" ] && [ -n "$cores" ] && [ -n "$threads" ]; then
    echo "CPUs=$cpus Sockets=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads"
  else
    echo "CPUs=$(nproc)"
  fi
}

render_conf() {
  cat <<EOF
$MARKER
# A one-node test cluster on localhost for tidebench's integration tests (scripts/slurm-local.sh up).
ClusterName=tidebench
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$STATE_DIR/slurmctld
SlurmdSpoolDir=$STATE_DIR/slurmd
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$CTLD_LOG
SlurmdLogFile=$SLURMD_LOG
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
EnforcePartLimits=ALL
MailProg=/bin/true
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
InactiveLimit=0
KillWait=5
MinJobAge=5
SlurmctldTimeout=120
SlurmdTimeout=300
NodeName=$NODE NodeAddr=127.0.0.1 $(node_hardware) State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
}

# Writes slurm.conf; returns 0 when it changed (daemons then need a restart), 1 when unchanged.
write_conf() {
  local new
  if [ -e "$CONF" ] && ! grep -qxF "$MARKER" "$CONF"; then
    say "$CONF exists and was not written by this script; refusing to overwrite it."
    say "Move it aside (e.g. to slurm.conf.orig) and run again, or test against that cluster instead."
    exit 2
  fi
  new=$(render_conf)
  if [ -e "$CONF" ] && [ "$new" = "$(cat "$CONF")" ]; then say "$CONF is up to date"; return 1; fi
  say "writing $CONF (node $NODE: $(node_hardware))"
  install -d -m 0755 /etc/slurm
  printf '%s\n' "$new" >"$CONF.tmp.$$" && chmod 0644 "$CONF.tmp.$$" && mv -f "$CONF.tmp.$$" "$CONF"
  return 0
}

start_daemons() {
  install -d -m 0755 "$STATE_DIR" "$STATE_DIR/slurmctld" "$STATE_DIR/slurmd" "$LOG_DIR" "$RUN_DIR"
  if daemon_pid slurmctld "$CTLD_PID" >/dev/null; then say "slurmctld is running"
  else
    say "starting slurmctld"
    slurmctld 9>&- || fail "slurmctld did not start"
  fi
  if daemon_pid slurmd "$SLURMD_PID" >/dev/null; then say "slurmd is running"
  else
    say "starting slurmd (node $NODE)"
    slurmd -N "$NODE" 9>&- || fail "slurmd did not start"
  fi
}

wait_node_ready() {
  local deadline=$((SECONDS + WAIT_SECS)) state last="" resumed_at=-100
  say "waiting up to ${WAIT_SECS}s for node $NODE to be idle"
  while :; do
    state=$(node_state)
    [ "$state" != "$last" ] && [ -n "$state" ] && say "node $NODE is ${state}"
    last=$state
    if node_usable "$state"; then return 0; fi
    case "$state" in
      down|drain*|drained|fail*)
        # Responding but down/drained (e.g. left so by an earlier run): put it back in service.
        if [ $((SECONDS - resumed_at)) -ge 5 ]; then
          say "resuming node $NODE (was $state)"
          scontrol update nodename="$NODE" state=resume 2>/dev/null || true
          resumed_at=$SECONDS
        fi ;;
    esac
    daemon_pid slurmctld "$CTLD_PID" >/dev/null || fail "slurmctld exited"
    daemon_pid slurmd "$SLURMD_PID" >/dev/null || fail "slurmd exited"
    [ "$SECONDS" -lt "$deadline" ] || fail "node $NODE not idle after ${WAIT_SECS}s (state: ${state:-no answer from slurmctld})"
    sleep 1
  done
}

smoke_test() {
  local out
  say "checking: srun -n 2 true"
  if ! out=$(timeout 60 srun -p "$PARTITION" -n 2 true 2>&1); then
    say "srun output: $out"
    fail "srun -n 2 true did not work"
  fi
  say "up: cluster tidebench, node $NODE, partition $PARTITION (srun -n 2 true works)"
}

cmd_up() {
  local t0=$SECONDS
  install_packages
  ensure_munge
  if write_conf && { daemon_pid slurmctld "$CTLD_PID" >/dev/null || daemon_pid slurmd "$SLURMD_PID" >/dev/null; }; then
    say "configuration changed: restarting the daemons"
    stop_daemon slurmd "$SLURMD_PID"
    stop_daemon slurmctld "$CTLD_PID"
  fi
  start_daemons
  wait_node_ready
  smoke_test
  say "done in $((SECONDS - t0))s"
}

cmd_down() {
  stop_daemon slurmd "$SLURMD_PID"
  stop_daemon slurmctld "$CTLD_PID"
  say "down (munged left running; packages stay installed)"
}

cmd_status() {
  local state why=""
  command -v slurmctld >/dev/null 2>&1 || why="slurm is not installed"
  [ -n "$why" ] || munge_ok || why="munged is not running"
  [ -n "$why" ] || daemon_pid slurmctld "$CTLD_PID" >/dev/null || why="slurmctld is not running"
  [ -n "$why" ] || daemon_pid slurmd "$SLURMD_PID" >/dev/null || why="slurmd is not running"
  if [ -z "$why" ]; then
    state=$(node_state)
    node_usable "$state" || why="node $NODE is ${state:-not reported by sinfo}"
  fi
  if [ -n "$why" ]; then echo "down: $why"; return 1; fi
  echo "up: cluster tidebench, node $NODE $state, partition $PARTITION, config $CONF"
}

if [ -n "${SLURM_LOCAL_CPUS:-}" ] && ! [[ "$SLURM_LOCAL_CPUS" =~ ^[1-9][0-9]*$ ]]; then
  say "SLURM_LOCAL_CPUS must be a positive integer, got '$SLURM_LOCAL_CPUS'"; exit 2
fi

# One `up`/`down` at a time (tests running in parallel may all call `up`). The daemons are
# started with fd 9 closed: munged keeps inherited descriptors and would hold the lock forever.
lock() { exec 9>/run/slurm-tidebench.lock; flock -w 300 9 || { say "another slurm-local.sh holds /run/slurm-tidebench.lock"; exit 1; }; }

case "${1:-}" in
  up) lock; cmd_up ;;
  down) lock; cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
