#!/usr/bin/env bash
# A sweep through a real single-node Slurm cluster (docs/design.md §4.1 `npusim sweep
# --backend slurm`): starts munged, slurmctld and slurmd of Debian's packages
# in a private folder (own munge socket and key, own slurm.conf via
# SLURM_CONF, free ports, nothing in /etc touched), runs a small study as a
# job array, checks its results equal a local run of the same study, checks
# --resume resubmits only missing points, and stops the daemons.
#
#   bash tests/slurm_sweep_test.sh NPUSIM_BINARY SOURCE_DIR
#
# Exit 0 pass, 1 fail, 77 skipped (no Slurm/munge, or not root); with
# NPUSIM_REQUIRE_SLURM=1 a skip is a failure (CI installs Slurm and sets it).
# Every wait has a deadline and the daemons are stopped on any exit.
set -u
NPUSIM=${1:?usage: slurm_sweep_test.sh NPUSIM_BINARY SOURCE_DIR}
SRC=${2:?usage: slurm_sweep_test.sh NPUSIM_BINARY SOURCE_DIR}
export PATH="$PATH:/usr/sbin:/sbin"

say() { echo "slurm_sweep_test: $*"; }
skip() {
  say "SKIP: $*"
  if [ "${NPUSIM_REQUIRE_SLURM:-0}" = 1 ]; then say "FAIL: NPUSIM_REQUIRE_SLURM=1 but the test cannot run"; exit 1; fi
  exit 77
}
fail() { say "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (to run slurmd and munged as their users)"
for b in munged munge slurmctld slurmd sbatch sinfo scontrol scancel setpriv timeout; do
  command -v "$b" >/dev/null 2>&1 || skip "'$b' not found (apt-get install slurmctld slurmd slurm-client munge)"
done
id munge >/dev/null 2>&1 || skip "no 'munge' user (is the munge package installed?)"

T=$(mktemp -d /tmp/npusim-slurm-test.XXXXXX) || fail "mktemp"
chmod 755 "$T"
PIDS=()       # daemons, in start order
FG=           # the command run() is waiting for
WATCHDOG=
cleanup() {
  local rc=$?
  [ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2>/dev/null
  if [ -n "$FG" ]; then kill "$FG" 2>/dev/null; wait "$FG" 2>/dev/null; fi
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then timeout 10 scancel --user=root >/dev/null 2>&1 || true; fi
  # Stop in reverse order of start; each by its PID, with a deadline.
  local i pid
  for ((i=${#PIDS[@]}-1; i>=0; i--)); do
    pid=${PIDS[$i]}
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then say "pid $pid did not stop on SIGTERM: SIGKILL"; kill -9 "$pid" 2>/dev/null; fi
    wait "$pid" 2>/dev/null
  done
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
    for f in "$T"/slurmctld.log "$T"/slurmd.log "$T"/munged.log "$T"/*.out; do
      [ -f "$f" ] && { echo "---- $f (last 30 lines)"; tail -n 30 "$f"; }
    done
    find "$T"/slurm/slurm/logs -name '*.out' 2>/dev/null | head -3 | while read -r f; do echo "---- $f"; tail -n 20 "$f"; done
  fi
  rm -rf "$T"
  exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted (or over the time budget)"; exit 1' INT TERM
# The whole test has a budget well under ctest's TIMEOUT, so the daemons are
# always stopped by cleanup rather than left behind by a SIGKILL.
( sleep 280 & s=$!; trap 'kill $s 2>/dev/null; exit 0' TERM; wait $s; kill -TERM $$ ) &
WATCHDOG=$!

# Runs COMMAND with output to FILE, in the background, so that a signal's trap
# runs at once instead of after the command.
run() {
  local out=$1; shift
  "$@" >"$out" 2>&1 &
  FG=$!
  wait "$FG"
  local rc=$?
  FG=
  return $rc
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || fail "timed out after ${secs}s waiting for $what"
    sleep 0.2
  done
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 30000))
    port_free "$p" && port_free "$((p + 1))" && { echo "$p"; return 0; }
  done
  return 1
}

# ---- munge: own key and socket ------------------------------------------------
install -d -o munge -g munge -m 0700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none || fail "munge key"
chown munge:munge "$T/munge/munge.key"; chmod 0400 "$T/munge/munge.key"
SOCK="$T/munge/munge.socket"
setpriv --reuid=munge --regid=munge --clear-groups munged --foreground --force \
  --socket="$SOCK" --key-file="$T/munge/munge.key" --pid-file="$T/munge/munged.pid" \
  --seed-file="$T/munge/munge.seed" --log-file="$T/munged.log" >"$T/munged.out" 2>&1 &
PIDS+=($!)
wait_for 20 "munged" munge --socket="$SOCK" -n
say "munged up (pid ${PIDS[0]})"

# ---- slurm.conf ----------------------------------------------------------------
P=$(pick_port) || fail "no free port pair"
NODE=$(slurmd -C 2>/dev/null | head -1 | sed -E 's/RealMemory=[0-9]+/RealMemory=1000/')
[ -n "$NODE" ] || fail "slurmd -C printed nothing"
NODENAME=$(echo "$NODE" | sed -E 's/^NodeName=([^ ]+).*/\1/')
mkdir -p "$T/state" "$T/spool"
export SLURM_CONF="$T/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=npusimtest
SlurmctldHost=$NODENAME(127.0.0.1)
SlurmctldPort=$P
SlurmdPort=$((P + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SOCK
CredType=cred/munge
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/builtin
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
$NODE NodeAddr=127.0.0.1
PartitionName=npusim Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

# ---- daemons (-D: stay in the foreground, so $! is the daemon) -----------------
slurmctld -D -i >"$T/slurmctld.out" 2>&1 &
PIDS+=($!)
wait_for 30 "slurmctld" scontrol ping
slurmd -D >"$T/slurmd.out" 2>&1 &
PIDS+=($!)
node_idle() { [ "$(sinfo -h -o %T 2>/dev/null | head -1)" = idle ]; }
wait_for 60 "the node to become idle" node_idle
say "slurmctld and slurmd up (ports $P, $((P + 1))), node $NODENAME idle"

# ---- the study, locally and on Slurm ------------------------------------------
cat >"$T/study.json" <<JSON
{
  "chip": "$SRC/configs/chips/ax300.json",
  "workload": "$SRC/traces/convbnrelu_tile.jsonl",
  "axes": {"chip.hbm.bandwidth_gbps": [200, 400], "chip.l2.bandwidth_gbps": [220, 440]},
  "metrics": ["total_cycles", "units.cube.utilization", "overlap.cube_vector"]
}
JSON
run "$T/local.out" timeout 60 "$NPUSIM" sweep "$T/study.json" --out "$T/local" -j 2 || { cat "$T/local.out"; fail "local sweep"; }
run "$T/slurm.out" timeout 90 "$NPUSIM" sweep "$T/study.json" --out "$T/slurm" --backend slurm
rc=$?
cat "$T/slurm.out"
[ $rc = 0 ] || fail "slurm sweep exited $rc"
grep -q "array of 4 tasks" "$T/slurm.out" || fail "the sweep did not submit a 4-task array"
ls "$T"/slurm/slurm/logs/*.out >/dev/null 2>&1 || fail "no Slurm task logs: the points did not run through Slurm"
[ "$(wc -l <"$T/slurm/results.csv")" = 5 ] || fail "expected 4 result rows on Slurm"
diff "$T/local/results.csv" "$T/slurm/results.csv" || fail "Slurm results differ from the local run"
say "4 points through a Slurm array: results.csv equals the local run"

# ---- --resume: only the missing points are resubmitted ------------------------
head -n 2 "$T/slurm/results.jsonl" >"$T/keep.jsonl" && mv "$T/keep.jsonl" "$T/slurm/results.jsonl"
for id in $(tail -n 2 "$T/local/results.csv" | cut -d, -f2); do rm -rf "$T/slurm/points/$id"; done
run "$T/resume.out" timeout 90 "$NPUSIM" sweep "$T/study.json" --out "$T/slurm" --backend slurm --resume
rc=$?
cat "$T/resume.out"
[ $rc = 0 ] || fail "resumed slurm sweep exited $rc"
grep -q "resumed: 2 finished points skipped; running 2" "$T/resume.out" || fail "--resume did not skip the 2 finished points"
grep -q "array of 2 tasks" "$T/resume.out" || fail "--resume did not submit just the 2 missing points"
diff "$T/local/results.csv" "$T/slurm/results.csv" || fail "resumed Slurm results differ from the local run"
say "--resume resubmitted only the 2 missing points; results equal the local run"

# ---- latency: the 8-point sync study is done within 10 s of its last point ------
STUDY8="$SRC/configs/studies/sync_cube_convbnrelu.json"
run "$T/local8.out" timeout 60 "$NPUSIM" sweep "$STUDY8" --out "$T/local8" -j 2 || { cat "$T/local8.out"; fail "local 8-point sweep"; }
start=$(date +%s.%N)
run "$T/slurm8.out" timeout 120 "$NPUSIM" sweep "$STUDY8" --out "$T/slurm8" --backend slurm
rc=$?
end=$(date +%s.%N)
cat "$T/slurm8.out"
[ $rc = 0 ] || fail "8-point slurm sweep exited $rc"
grep -q "array of 8 tasks" "$T/slurm8.out" || fail "the sweep did not submit an 8-task array"
diff "$T/local8/results.csv" "$T/slurm8/results.csv" || fail "8-point Slurm results differ from the local run"
last=$(find "$T/slurm8/points" -name result.json -printf '%T@\n' | sort -n | tail -1)
[ -n "$last" ] || fail "no result.json in the 8-point Slurm sweep"
lag=$(awk -v a="$last" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
total=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
say "8-point sync study on Slurm: ${total}s in all, done ${lag}s after its last point"
awk -v l="$lag" 'BEGIN { exit !(l <= 10) }' || fail "the sweep reported done ${lag}s after its last point (limit 10 s)"
say "PASS"
