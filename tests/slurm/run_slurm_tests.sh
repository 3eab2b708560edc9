#!/usr/bin/env bash
# slurm/abliterate.sh and slurm/sweep.sh against a real Slurm: installs Debian's slurmctld,
# slurmd, slurm-client and munge if missing, starts a private cluster on loopback (slurmctld and
# two virtual nodes n1, n2 of 4 CPUs, with their own munge key and socket), and checks on the
# model organism with a tiny budget (40 Sobol trials, 2 per batch) that
#   a) `sbatch -N 2 slurm/abliterate.sh` completes with the trials of a direct run of the binary
#      (same parameters and refusals, KL within 1e-6 relative, every trial once);
#   b) `slurm/sweep.sh -n 3` (prepare job, 3-task array, merge job) gives the same trials;
#   c) stops: USR1 to the batch shell (the --signal warning) makes the job stop after a batch
#      and requeue itself, and the requeued job (same id, same folder) completes; a job stopped
#      by `scancel -s TERM` exits 75 and, submitted again on its folder, completes; an array
#      task stopped by TERM requeues itself and the merge waits for it. Each ends with the trials
#      of the uninterrupted run, every trial once; so does sweep.sh submitted again on a folder
#      whose array task ended with 75;
#   d) the config file's `out` is the run folder (no --out passed over it), and ABL_OUT beats it;
#   e) with an installed tree on PATH and no CONFIG, a job takes <prefix>/share/abliterate/default.ini.
# Usage: run_slurm_tests.sh BIN [SOURCE_DIR]. Exit 0 pass, 1 fail, 77 skipped ("SKIPPED: why").
# The daemons run from a private /tmp/abl-slurm.* folder and are stopped by their recorded pids
# on every exit (and by a watchdog if this script is killed); the jobs' outputs and logs stay in
# $ABL_SLURM_WORK (default ./slurm-work). ABL_SLURM_KEEP=1 keeps the cluster folder.
set -euo pipefail
BIN=$(realpath "${1:?usage: run_slurm_tests.sh BIN [SOURCE_DIR]}")
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
WORK=$(realpath -m "${ABL_SLURM_WORK:-slurm-work}")
MODEL=$SRC/tests/fixtures/organism
PY=/usr/bin/python3
T0=$SECONDS
C=""

note() { echo "[$((SECONDS - T0))s] $*"; }
skip() { echo "SKIPPED: $*"; exit 77; }
fail() {
  echo "FAIL: $*"
  local f
  for f in "$C"/log/*.log; do
    [ -f "$f" ] && { echo "---- $f (last 10 lines)"; tail -10 "$f"; }
  done
  exit 1
}

# ------------------------------------------------------------------------------- installation
[ -x "$BIN" ] || fail "no binary $BIN"
[ -x "$PY" ] || skip "$PY not found (the comparisons read report --json with it)"
packages=(slurmctld slurmd slurm-client munge)
have_slurm() { command -v slurmctld && command -v slurmd && command -v sbatch && command -v munged; } > /dev/null
if ! have_slurm; then
  [ "$(id -u)" = 0 ] || skip "Slurm is not installed, and installing it (apt-get install ${packages[*]}) needs root"
  command -v apt-get > /dev/null || skip "Slurm is not installed and there is no apt-get"
  note "installing ${packages[*]}"
  # The packages' scripts must start no system-wide service: a policy-rc.d while installing.
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    trap 'rm -f "$policy"' EXIT
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"
  fi
  apt_log=$(mktemp)
  install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" > "$apt_log" 2>&1; }
  install || { apt-get update -qq > /dev/null 2>&1 && install; } || true
  [ -z "$policy" ] || { rm -f "$policy"; trap - EXIT; }
  if ! have_slurm; then
    tail -5 "$apt_log"
    rm -f "$apt_log"
    skip "could not install ${packages[*]} with apt-get"
  fi
  rm -f "$apt_log"
  note "installed"
fi
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs"

# ---------------------------------------------------------------------------- private cluster
# A short path: the munge socket's must fit a sockaddr_un (~100 characters).
C=$(mktemp -d /tmp/abl-slurm.XXXXXX)
# stop.sh stops the daemons listed in $C/daemons ("pid start-time name", one line as each
# starts; a pid whose start time or name differs belongs to someone else now), newest first;
# then what is left of the cluster's jobs (slurmstepd, job scripts, tasks: the processes whose
# environment holds this cluster's SLURM_CONF, not counting stop.sh's own ancestors); then
# removes $C. It runs on every exit of this script, and from a watchdog in its own session when
# this script is killed outright (a ctest timeout).
cat > "$C/stop.sh" <<'STOP'
#!/bin/bash
C=$(dirname "$(realpath "$0")")
# Neither this script nor its subshells may look like the cluster's jobs: start again without it.
[ -z "${SLURM_CONF:-}" ] || exec env -u SLURM_CONF "$0"
ours() { [ "$(cut -d' ' -f22 "/proc/$1/stat" 2> /dev/null)" = "$2" ] && [ "$(cat "/proc/$1/comm" 2> /dev/null)" = "$3" ]; }
alive() { tac "$C/daemons" | while read -r pid start name; do ours "$pid" "$start" "$name" && echo "$pid"; done; }
jobs_left() {
  local self=" $$ " p=$$ pid
  while [ "$p" -gt 1 ] 2> /dev/null; do p=$(awk '{print $4}' "/proc/$p/stat" 2> /dev/null) || break; self+="$p "; done
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    case $self in *" $pid "*) continue ;; esac
    { tr '\0' '\n' < "/proc/$pid/environ"; } 2> /dev/null | grep -qxF "SLURM_CONF=$C/slurm.conf" && echo "$pid"
  done
}
if [ -f "$C/daemons" ]; then
  for pid in $(alive); do kill "$pid" 2> /dev/null; done
  for _ in $(seq 100); do [ -z "$(alive)" ] && break; sleep 0.1; done
  for pid in $(alive); do kill -KILL "$pid" 2> /dev/null; done
fi
for _ in 1 2 3 4 5; do
  pids=$(jobs_left)
  [ -n "$pids" ] || break
  kill -KILL $pids 2> /dev/null
  sleep 0.2
done
[ "${ABL_SLURM_KEEP:-0}" = 1 ] && echo "cluster folder kept: $C" || rm -rf "$C"
STOP
chmod +x "$C/stop.sh"
: > "$C/daemons"
trap 'status=$?; "$C/stop.sh"; exit $status' EXIT
trap 'exit 1' INT TERM
setsid bash -c 'while kill -0 "$1" 2> /dev/null; do sleep 1; done; [ ! -d "$2" ] || exec "$2/stop.sh"' \
  watchdog $$ "$C" < /dev/null > /dev/null 2>&1 &

# Records a daemon from its pid file.
started() {
  local name=$1 file=$2 pid=""
  for _ in $(seq 100); do
    pid=$(cat "$file" 2> /dev/null) && [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] && break
    pid=""
    sleep 0.05
  done
  [ -n "$pid" ] || fail "$name wrote no pid file $file"
  echo "$pid $(cut -d' ' -f22 "/proc/$pid/stat") $(cat "/proc/$pid/comm")" >> "$C/daemons"
}

# Three free TCP ports on loopback: slurmctld and the two slurmd.
read -r P0 P1 P2 < <("$PY" -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
HOST=$(hostname -s)
mkdir -p "$C"/{state,log,munge,spool,tmp/n1,tmp/n2}
chmod 700 "$C/munge"
dd if=/dev/urandom of="$C/munge/key" bs=1024 count=1 status=none
chmod 400 "$C/munge/key"
munged --socket="$C/munge/sock" --key-file="$C/munge/key" --pid-file="$C/munge/pid" \
  --log-file="$C/log/munged.log" --seed-file="$C/munge/seed" --force > "$C/log/munged.err" 2>&1 ||
  fail "munged did not start: $(cat "$C/log/munged.err")"
started munged "$C/munge/pid"

# Each virtual node's tasks get their own TMPDIR (Open MPI names its shared-memory files by host,
# job and local rank, so two virtual nodes on one host would collide) and MPI over loopback.
cat > "$C/task_prolog.sh" <<EOF
#!/bin/sh
d=$C/tmp/\$SLURMD_NODENAME/job\$SLURM_JOB_ID
mkdir -p "\$d"
echo "export TMPDIR=\$d"
echo "export OMPI_MCA_btl_tcp_if_include=lo"
echo "export OMPI_MCA_oob_tcp_if_include=lo"
EOF
chmod +x "$C/task_prolog.sh"
cat > "$C/slurm.conf" <<EOF
ClusterName=abltest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$P0
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: how long a requeued job waits before it starts again, and how long slurmd
# refuses the old credentials of a requeued job (a job started sooner is killed with "Job
# credential revoked"); 10 s instead of 120 s keeps the requeue cases short and safe.
AuthInfo=socket=$C/munge/sock,cred_expire=10
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool/%n
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd-%n.pid
SlurmctldLogFile=$C/log/slurmctld.log
SlurmdLogFile=$C/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
SlurmdParameters=config_overrides
EnforcePartLimits=ALL
TmpFS=$C/tmp/%n
TaskProlog=$C/task_prolog.sh
ReturnToService=2
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
MinJobAge=600
NodeName=n1 NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$P1 CPUs=4 State=UNKNOWN
NodeName=n2 NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$P2 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
EOF
# Nothing of an outer Slurm (this script may itself run in a job) may reach the private one.
for v in $(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC|SQUEUE|SINFO|SCONTROL)_'); do unset "$v"; done
export SLURM_CONF=$C/slurm.conf
slurmctld -i > "$C/log/slurmctld.err" 2>&1 || fail "slurmctld did not start: $(cat "$C/log/slurmctld.err")"
started slurmctld "$C/slurmctld.pid"
for n in n1 n2; do
  slurmd -N "$n" > "$C/log/slurmd-$n.err" 2>&1 || fail "slurmd -N $n did not start: $(cat "$C/log/slurmd-$n.err")"
  started "slurmd -N $n" "$C/slurmd-$n.pid"
done
for _ in $(seq 100); do
  [ "$(sinfo -h -t idle -o '%D' 2> /dev/null)" = 2 ] && break
  sleep 0.2
done
[ "$(sinfo -h -t idle -o '%D' 2> /dev/null)" = 2 ] || fail "the two nodes did not become idle: $(sinfo 2>&1)"
note "cluster up: nodes $(sinfo -h -N -o '%N' | tr '\n' ' ')idle, slurmctld on 127.0.0.1:$P0"

# ----------------------------------------------------------------------------------- helpers
# "STATE EXITCODE RESTARTS" of a job (scontrol keeps finished jobs for MinJobAge).
job_state() {
  scontrol show job "$1" 2> /dev/null | tr ' ' '\n' |
    awk -F= '$1 == "JobState" {s = $2} $1 == "ExitCode" {e = $2} $1 == "Restarts" {r = $2} END {print s, e, r}'
}
# Waits until a job has ended (or, with a third argument, until it is pending again after that
# many restarts) and sets STATE to "STATE EXITCODE"; a job not there after $2 seconds fails.
wait_job() {
  local id=$1 limit=$2 restarts=${3:-} s
  for _ in $(seq $((limit * 5))); do
    read -r -a s <<< "$(job_state "$id")"
    STATE="${s[0]:-} ${s[1]:-}"
    if [ -n "$restarts" ]; then
      [ "${s[2]:-0}" -ge "$restarts" ] && [ "${s[0]}" = PENDING ] && return 0
    else
      case ${s[0]:-} in COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL | BOOT_FAIL | DEADLINE) return 0 ;; esac
    fi
    sleep 0.2
  done
  scontrol show job "$id"
  fail "job $id not there after ${limit}s (state ${s[*]})"
}
expect_state() {  # ID "STATE EXITCODE" LIMIT LOG: waits for the job to end in that state
  wait_job "$1" "$3"
  [ "$STATE" = "$2" ] || { tail -20 "$4" 2> /dev/null; fail "job $1 ended as '$STATE', expected '$2'"; }
}
wait_log() {  # FILE PATTERN: until the pattern appears (30 s)
  for _ in $(seq 300); do
    grep -q -- "$2" "$1" 2> /dev/null && return 0
    sleep 0.1
  done
  cat "$1" 2> /dev/null
  fail "'$2' never appeared in $1"
}
# The trials of two run folders agree: same parameters and refusals, KL within 1e-6 relative,
# trials 0..N-1 each exactly once.
same_trials() {
  local a=$1 b=$2 what=$3
  "$BIN" report --trials "$a" --json "$a/report.json" --quiet > /dev/null
  "$BIN" report --trials "$b" --json "$b/report.json" --quiet > /dev/null
  "$PY" - "$a/report.json" "$b/report.json" "$TRIALS" <<'PY' || fail "$what: trials differ from the direct run"
import json, sys
a, b = (json.load(open(f))["trials"] for f in sys.argv[1:3])
n = int(sys.argv[3])
for t in (a, b):
    ids = [x["trial"] for x in t]
    assert sorted(ids) == list(range(n)), f"trials {ids}, expected each of 0..{n - 1} once"
for x, y in zip(sorted(a, key=lambda t: t["trial"]), sorted(b, key=lambda t: t["trial"])):
    for k in x:
        if k in ("elapsed_s", "batch"):
            continue
        if k == "kl":
            assert abs(x[k] - y[k]) <= 1e-6 * abs(x[k]) + 1e-12, (x["trial"], x[k], y[k])
        else:
            assert x[k] == y[k], (x["trial"], k, x[k], y[k])
PY
  echo "ok: $what: $TRIALS trials, each once, equal to the direct run"
}

# ---------------------------------------------------------------------------------- the runs
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
export ABL_BIN=$BIN OMP_NUM_THREADS=1
unset ABL_OUT ABL_LAUNCH ABL_THREADS ABL_TASKS ABL_SBATCH_ARGS ABL_MERGE_SBATCH_ARGS ABL_REQUEUE \
  ABL_MAX_REQUEUES ABL_SWEEP_ROLE OMPI_MCA_btl
TRIALS=40
cat > organism.ini <<EOF
# The model organism with a tiny budget: 60 + 60 direction prompts, 30 KL and 30 evaluation
# prompts, 24-token responses, 40 Sobol trials in batches of 2.
[model]
model = $MODEL
[prompts]
good = $MODEL/prompts/harmless.txt
bad = $MODEL/prompts/harmful.txt
good-split = [:60]
bad-split = [:60]
[evaluation]
kl-split = [400:430]
eval-split = [400:430]
max-response-length = 24
[sweep]
search = sobol
trials = $TRIALS
trials-per-batch = 2
[engine]
threads = 1
EOF
"$BIN" run --config organism.ini --out direct > direct.log 2>&1 || { cat direct.log; fail "the direct run failed"; }
note "direct run (one process, no launcher): $(grep -o 'sweep: [0-9]* trials in [0-9.]* s' direct.log)"

# a) One job on two nodes, one rank each.
a=$(sbatch --parsable -N 2 --ntasks-per-node=1 --cpus-per-task=1 "$SRC/slurm/abliterate.sh" organism.ini)
expect_state "$a" "COMPLETED 0:0" 120 "slurm-$a.out"
grep -q "2 nodes x 1 rank" "slurm-$a.out" || fail "job $a did not run 2 ranks on 2 nodes: $(head -3 "slurm-$a.out")"
[ -f "outputs/$a/trials.h5" ] || fail "no outputs/$a/trials.h5"
same_trials direct "outputs/$a" "a) sbatch -N 2 slurm/abliterate.sh (job $a)"

# b) The sweep as a job array: prepare job, 3 slices, merge.
ABL_SBATCH_ARGS="--cpus-per-task=1" "$SRC/slurm/sweep.sh" -n 3 -o sweep organism.ini > sweep.txt ||
  { cat sweep.txt; fail "slurm/sweep.sh failed"; }
merge=$(awk '/^merge job:/ {print $3}' sweep.txt)
array=$(awk '/^array job:/ {print $3}' sweep.txt)
prepare=$(awk '/^prepare job:/ {print $3}' sweep.txt)
expect_state "$merge" "COMPLETED 0:0" 180 "sweep/logs/merge-$merge.out"
for i in 0 1 2; do
  [ "$(job_state "${array}_$i" | cut -d' ' -f1,2)" = "COMPLETED 0:0" ] || fail "array task ${array}_$i: $(job_state "${array}_$i")"
  [ -f "sweep/trials.slice-$i-of-3.h5" ] || fail "no sweep/trials.slice-$i-of-3.h5"
done
same_trials direct sweep "b) slurm/sweep.sh -n 3 (prepare $prepare, array $array, merge $merge)"

# c1) USR1 to the batch shell (what --signal=B:USR1@120 sends ahead of the time limit): the sweep
# stops after its batch, the job requeues itself and, started again, resumes in the same folder.
c1=$(sbatch --parsable --cpus-per-task=1 "$SRC/slurm/abliterate.sh" organism.ini)
wait_log "slurm-$c1.out" "sweep: batch 0:"
scancel -b -s USR1 "$c1"
wait_job "$c1" 60 1
grep -q "sweep: stopping on signal 10" "slurm-$c1.out" || fail "job $c1: no graceful stop on USR1"
grep -q "requeueing job $c1" "slurm-$c1.out" || fail "job $c1 did not requeue itself"
[ -f "outputs/$c1/trials.h5.partial" ] || fail "job $c1 left no outputs/$c1/trials.h5.partial"
note "c1) job $c1 $(grep -o 'stopping on signal 10 after [0-9/]* trials' "slurm-$c1.out"), requeued itself"
# Slurm holds a requeued job for cred_expire (10 s here) before it starts again.
expect_state "$c1" "COMPLETED 0:0" 120 "slurm-$c1.out"
grep -q "job $c1 (restart 1)" "slurm-$c1.out" || fail "job $c1: no restart in its log"
grep -q "resuming" "slurm-$c1.out" || fail "job $c1: the requeued job did not resume"
same_trials direct "outputs/$c1" "c1) USR1, requeued (job $c1, same id and folder)"

# c2) TERM to the job's tasks (`scancel -s TERM`, as a preemption with send_user_signal or a
# --signal=TERM would): the sweep finishes its batch and exits 75; --no-requeue, so the job ends
# (FAILED, exit code 75) and a new job on the same folder completes it.
c2=$(sbatch --parsable --no-requeue --cpus-per-task=1 "$SRC/slurm/abliterate.sh" organism.ini)
wait_log "slurm-$c2.out" "sweep: batch 0:"
scancel -s TERM "$c2"
expect_state "$c2" "FAILED 75:0" 60 "slurm-$c2.out"
grep -q "sweep: stopping on signal 15" "slurm-$c2.out" || fail "job $c2: no graceful stop on TERM"
[ -f "outputs/$c2/trials.h5.partial" ] && [ ! -e "outputs/$c2/trials.h5" ] || fail "job $c2: no partial sweep left"
note "c2) job $c2 $(grep -o 'stopping on signal 15 after [0-9/]* trials' "slurm-$c2.out"), exit 75"
c2b=$(ABL_OUT="outputs/$c2" sbatch --parsable --cpus-per-task=1 "$SRC/slurm/abliterate.sh" organism.ini)
expect_state "$c2b" "COMPLETED 0:0" 120 "slurm-$c2b.out"
grep -q "resuming" "slurm-$c2b.out" || fail "job $c2b did not resume outputs/$c2"
same_trials direct "outputs/$c2" "c2) TERM, exit 75, resubmitted (jobs $c2, $c2b)"

# c3) TERM to one array task of a sweep: it stops after a batch and requeues itself; the merge
# waits for it and the merged trials are those of the uninterrupted run.
mkdir -p sweep-term
cp direct/baseline.h5 direct/residuals.h5 direct/directions.h5 sweep-term/
ABL_SBATCH_ARGS="--cpus-per-task=1" "$SRC/slurm/sweep.sh" -n 3 -o sweep-term organism.ini > sweep-term.txt ||
  { cat sweep-term.txt; fail "slurm/sweep.sh failed"; }
grep -q "^prepare job: none" sweep-term.txt || fail "sweep.sh submitted a prepare job for a prepared folder"
array=$(awk '/^array job:/ {print $3}' sweep-term.txt)
merge=$(awk '/^merge job:/ {print $3}' sweep-term.txt)
wait_log "sweep-term/logs/slice-${array}_1.out" "sweep: batch 0:"
scancel -s TERM "${array}_1"
wait_job "${array}_1" 60 1
grep -q "requeueing task" "sweep-term/logs/slice-${array}_1.out" || fail "array task ${array}_1 did not requeue itself"
note "c3) array task ${array}_1 $(grep -o 'stopping on signal 15 after [0-9/]* trials' "sweep-term/logs/slice-${array}_1.out"), requeued"
expect_state "$merge" "COMPLETED 0:0" 120 "sweep-term/logs/merge-$merge.out"
grep -q "resuming" "sweep-term/logs/slice-${array}_1.out" || fail "array task ${array}_1 did not resume"
same_trials direct sweep-term "c3) array task stopped by TERM, requeued, merged (array $array)"

# c4) The same without requeue: the stopped task fails with exit code 75, the merge can never run
# (it is cancelled), and sweep.sh submitted again on the folder finishes the stopped slice; the
# finished ones are kept.
mkdir -p sweep-again
cp direct/baseline.h5 direct/residuals.h5 direct/directions.h5 sweep-again/
ABL_SBATCH_ARGS="--cpus-per-task=1 --no-requeue" "$SRC/slurm/sweep.sh" -n 3 -o sweep-again organism.ini > sweep-again.txt ||
  { cat sweep-again.txt; fail "slurm/sweep.sh failed"; }
array=$(awk '/^array job:/ {print $3}' sweep-again.txt)
merge=$(awk '/^merge job:/ {print $3}' sweep-again.txt)
wait_log "sweep-again/logs/slice-${array}_2.out" "sweep: batch 0:"
scancel -s TERM "${array}_2"
expect_state "${array}_2" "FAILED 75:0" 60 "sweep-again/logs/slice-${array}_2.out"
note "c4) array task ${array}_2 $(grep -o 'stopping on signal 15 after [0-9/]* trials' "sweep-again/logs/slice-${array}_2.out"), exit 75"
for i in 0 1; do expect_state "${array}_$i" "COMPLETED 0:0" 60 "sweep-again/logs/slice-${array}_$i.out"; done
[ "$(squeue -h -j "$merge" -o %T)" = PENDING ] || fail "merge job $merge: $(job_state "$merge")"
scancel "$merge"
ABL_SBATCH_ARGS="--cpus-per-task=1" "$SRC/slurm/sweep.sh" -n 3 -o sweep-again organism.ini > sweep-again2.txt ||
  { cat sweep-again2.txt; fail "slurm/sweep.sh (again) failed"; }
array2=$(awk '/^array job:/ {print $3}' sweep-again2.txt)
merge=$(awk '/^merge job:/ {print $3}' sweep-again2.txt)
expect_state "$merge" "COMPLETED 0:0" 120 "sweep-again/logs/merge-$merge.out"
grep -q "resuming" "sweep-again/logs/slice-${array2}_2.out" || fail "slice 2 did not resume"
same_trials direct sweep-again "c4) array task stopped by TERM, exit 75, sweep.sh submitted again (arrays $array, $array2)"

# d) The run folder: `out` of the config file ([output] out; [export] out is another command's)
# is honoured — the script passes no --out over it — and ABL_OUT overrides it. Both jobs start
# from the direct run's phase files and run side by side.
{ cat organism.ini; printf '[output]\nout = config-out\n[export]\nout = not-this\n'; } > organism-out.ini
for d in config-out env-out; do mkdir -p "$d" && cp direct/baseline.h5 direct/residuals.h5 direct/directions.h5 "$d"/; done
d1=$(sbatch --parsable --cpus-per-task=1 "$SRC/slurm/abliterate.sh" organism-out.ini)
d2=$(ABL_OUT=env-out sbatch --parsable --cpus-per-task=1 "$SRC/slurm/abliterate.sh" organism-out.ini)
expect_state "$d1" "COMPLETED 0:0" 120 "slurm-$d1.out"
expect_state "$d2" "COMPLETED 0:0" 120 "slurm-$d2.out"
grep -q "run folder config-out (out in organism-out.ini)" "slurm-$d1.out" ||
  fail "job $d1 did not take the run folder from the config's out: $(grep 'run folder' "slurm-$d1.out")"
grep -q "run folder env-out (ABL_OUT)" "slurm-$d2.out" ||
  fail "job $d2 did not take the run folder from ABL_OUT: $(grep 'run folder' "slurm-$d2.out")"
for j in "$d1" "$d2"; do [ ! -e "outputs/$j" ] || fail "job $j wrote outputs/$j instead of the folder it chose"; done
[ ! -e not-this ] || fail "[export] out was taken for the run folder"
[ -L config-out/slurm.out ] && [ -L env-out/slurm.out ] || fail "no slurm.out link in config-out/ or env-out/"
same_trials direct config-out "d1) config [output] out honoured (job $d1)"
same_trials direct env-out "d2) ABL_OUT over the config's out (job $d2)"

# e) An installed tree (bin/abliterate beside share/abliterate/, as `cmake --install` lays it out)
# on PATH, no ABL_BIN, submitted from a folder without inputs/ and without a CONFIG: the script
# takes the binary from PATH and <prefix>/share/abliterate/default.ini, with options after it.
mkdir -p prefix/bin prefix/share/abliterate elsewhere
cp "$BIN" prefix/bin/abliterate
cp -r "$SRC/inputs/." prefix/share/abliterate/
e=$(cd elsewhere && env -u ABL_BIN -u ABLITERATE_SHARE PATH="$WORK/prefix/bin:$PATH" \
  sbatch --parsable --cpus-per-task=1 "$SRC/slurm/abliterate.sh" --model "$MODEL" \
  --good "$MODEL/prompts/harmless.txt" --bad "$MODEL/prompts/harmful.txt" --good-split "[:60]" \
  --bad-split "[:60]" --kl-split "[400:430]" --eval-split "[400:430]" --max-response-length 24 \
  --search sobol --trials 4 --trials-per-batch 2)
expect_state "$e" "COMPLETED 0:0" 120 "elsewhere/slurm-$e.out"
grep -q "binary $WORK/prefix/bin/abliterate;" "elsewhere/slurm-$e.out" ||
  fail "job $e did not take the binary from PATH: $(grep 'binary' "elsewhere/slurm-$e.out")"
grep -q "task(s): $WORK/prefix/bin/../share/abliterate/default.ini -> outputs/$e" "elsewhere/slurm-$e.out" ||
  fail "job $e did not take the installed default.ini: $(grep 'task(s)' "elsewhere/slurm-$e.out")"
[ -f "elsewhere/outputs/$e/trials.h5" ] || fail "job $e wrote no elsewhere/outputs/$e/trials.h5"
echo "ok: e) installed binary on PATH and its share/abliterate/default.ini (job $e)"

note "all Slurm checks passed"
