#!/bin/bash
# A Sobol or grid sweep spread over a Slurm job array. Run it as a plain script on a login node
# (not with sbatch): with the settings of CONFIG it submits
#   1. a prepare job (baseline, residuals, directions), unless RUN_DIR already holds them;
#   2. a job array of TASKS tasks, after the prepare job (--dependency=afterok): task I runs
#      `abliterate sweep --slice I/TASKS`, writing RUN_DIR/trials.slice-I-of-TASKS.h5;
#   3. a merge job, after every array task succeeded: `abliterate merge` combines the slices
#      into RUN_DIR/trials.h5, every trial once and in order, as one job evaluating them all.
#
#   slurm/sweep.sh [-n TASKS] [-o RUN_DIR] CONFIG [abliterate sweep options...]
#   slurm/sweep.sh -n 8 -o outputs/llama-sobol my.ini --search sobol --trials 800
#
# CONFIG holds the model, prompt and evaluation settings (the prepare phases read them there);
# the options after it go to every array task's `abliterate sweep`. RUN_DIR: -o, else ABL_OUT,
# else `out` of CONFIG ([output]), else outputs/sweep-<date>-<time>. Run it from the directory
# relative paths in CONFIG are taken from (the repository root, or yours with an installed
# abliterate). Environment variables and everything else: slurm/README.md.
#
# The same file is the batch script of the three jobs (ABL_SWEEP_ROLE tells each its part).
# Defaults of every job (the submit step adds --array, --dependency, --output; ABL_SBATCH_ARGS
# adds yours, e.g. "-p gpu -N 2 --ntasks-per-node=8 --gpus-per-node=8"):
#SBATCH --job-name=abl-sweep
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=8
# No GPUs by default, so it runs unchanged on CPU-only partitions (see slurm/abliterate.sh).
##SBATCH --gpus-per-node=8
#SBATCH --time=04:00:00
#SBATCH --open-mode=append
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
set -uo pipefail

log() { echo "$(date '+%Y-%m-%d %H:%M:%S') sweep.sh${SLURM_ARRAY_TASK_ID:+[$SLURM_ARRAY_TASK_ID]}: $*"; }
die() { echo "sweep.sh: error: $*" >&2; exit 2; }

# `out` of an INI config file, at the top level or in [output], as in abliterate.sh.
config_out() {
  awk '
    { sub(/\r$/, ""); line = $0; sub(/^[ \t]+/, "", line); sub(/[ \t]+$/, "", line) }
    line == "" || line ~ /^[#;]/ { next }
    line ~ /^\[/ { section = line; gsub(/^\[[ \t]*|[ \t]*\]$/, "", section); next }
    (section == "" || section == "output") && match(line, /^out[ \t]*=/) {
      value = substr(line, RLENGTH + 1); sub(/^[ \t]+/, "", value)
      if (length(value) >= 2 && value ~ /^".*"$/) value = substr(value, 2, length(value) - 2)
      found = value
    }
    END { if (found != "") print found }' "$1"
}

# ---------------------------------------------------------------------------- submit (default)
submit() {
  local tasks=${ABL_TASKS:-4} run_dir=${ABL_OUT:-}
  while [ $# -gt 0 ]; do
    case $1 in
      -n) tasks=${2:?-n needs a number of array tasks}; shift 2 ;;
      -o) run_dir=${2:?-o needs a folder}; shift 2 ;;
      -h | --help) sed -n '2,/^# The same file/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      --) shift; break ;;
      -*) die "unknown option $1 (options for abliterate sweep go after CONFIG)" ;;
      *) break ;;
    esac
  done
  [ $# -gt 0 ] || die "no CONFIG; usage: slurm/sweep.sh [-n TASKS] [-o RUN_DIR] CONFIG [abliterate sweep options...]"
  local config=$1
  shift
  [[ $tasks =~ ^[1-9][0-9]*$ ]] || die "-n wants a positive number of array tasks, got '$tasks'"
  [ -f "$config" ] || die "config file $config not found (in $PWD)"
  local a
  for a in "$@"; do
    case $a in --out | --out=*) die "the run folder is -o RUN_DIR (or ABL_OUT, or out in $config), not --out among the sweep options" ;; esac
  done
  command -v sbatch > /dev/null || die "sbatch not found: run this where Slurm's commands are"
  # Only Sobol and grid sweeps can be sliced (each TPE batch depends on the previous ones).
  local search
  search=$(sed -n 's/^[[:space:]]*search[[:space:]]*=[[:space:]]*\([a-z]*\).*/\1/p' "$config" | tail -1)
  local prev=""
  for a in "$@"; do
    case $a in --search=*) search=${a#--search=} ;; esac
    [ "$prev" = --search ] && search=$a
    prev=$a
  done
  case ${search:-tpe} in sobol | grid) ;; *) die "the sweep's search is '${search:-tpe}': slices need --search sobol or grid (TPE runs as one job: sbatch slurm/abliterate.sh)" ;; esac

  # The run folder: -o, else ABL_OUT, else `out` of the config, else outputs/sweep-<date>-<time>.
  local out_from="-o or ABL_OUT"
  if [ -z "$run_dir" ]; then
    run_dir=$(config_out "$config")
    out_from="out in $config"
  fi
  if [ -z "$run_dir" ]; then
    run_dir=outputs/sweep-$(date +%Y%m%d-%H%M%S)
    out_from="default: no -o, ABL_OUT or out in $config"
  fi
  config=$(realpath "$config")
  run_dir=$(realpath -m "$run_dir")
  # $ABL_BIN, else abliterate on PATH (`module load abliterate`), else this checkout's build;
  # passed to the jobs as an absolute ABL_BIN (they run a copy of this script from Slurm's spool).
  local bin=${ABL_BIN:-$(command -v abliterate || echo build/bin/abliterate)}
  [ -x "$bin" ] || die "abliterate binary $bin not found (ABL_BIN, PATH, build/bin/abliterate in $PWD); set ABL_BIN or load the module"
  export ABL_BIN ABL_OUT=$run_dir
  ABL_BIN=$(realpath "$bin")
  mkdir -p "$run_dir/logs" || exit 1

  local -a common merge_opts
  read -r -a common <<< "--export=ALL ${ABL_SBATCH_ARGS:-}"
  read -r -a merge_opts <<< "--nodes=1 --ntasks=1 --ntasks-per-node=1 --cpus-per-task=1 ${ABL_MERGE_SBATCH_ARGS:-}"
  local prepare="" array merge after=()
  if [ ! -f "$run_dir/baseline.h5" ] || [ ! -f "$run_dir/residuals.h5" ] || [ ! -f "$run_dir/directions.h5" ]; then
    prepare=$(ABL_SWEEP_ROLE=prepare sbatch --parsable "${common[@]}" --job-name=abl-prepare \
      --output="$run_dir/logs/prepare-%j.out" "$0" "$config") || die "sbatch of the prepare job failed"
    prepare=${prepare%%;*}
    after=(--dependency="afterok:$prepare")
  fi
  array=$(ABL_SWEEP_ROLE=slice sbatch --parsable "${common[@]}" "${after[@]}" --array="0-$((tasks - 1))" \
    --output="$run_dir/logs/slice-%A_%a.out" "$0" "$config" "$@") || die "sbatch of the array failed"
  array=${array%%;*}
  merge=$(ABL_SWEEP_ROLE=merge sbatch --parsable "${common[@]}" "${merge_opts[@]}" --job-name=abl-merge \
    --dependency="afterok:$array" --output="$run_dir/logs/merge-%j.out" "$0" "$config") ||
    die "sbatch of the merge job failed"
  merge=${merge%%;*}
  echo "run folder:  $run_dir ($out_from)"
  if [ -n "$prepare" ]; then echo "prepare job: $prepare"; else echo "prepare job: none (the run folder holds baseline, residuals and directions)"; fi
  echo "array job:   $array (tasks 0-$((tasks - 1)))"
  echo "merge job:   $merge"
  echo "logs:        $run_dir/logs/   results: abliterate report --trials $run_dir"
}

# ------------------------------------------------------------------------ the jobs' three roles
# Threads per rank, as in abliterate.sh: the CPUs per task (ABL_THREADS overrides); prints
# "--threads N" unless the options given set it.
thread_args() {
  [ -n "$threads" ] || return 0
  case " $* " in *" --threads "* | *" --threads="*) ;; *) printf '%s\n' --threads "$threads" ;; esac
}

# Runs an abliterate command on every task of the job with the launcher (ABL_LAUNCH, as in
# abliterate.sh), passing USR1 or TERM received by this shell on as USR1, and returns its status.
stop=""
launched() {
  local -a launch
  read -r -a launch <<< "${ABL_LAUNCH-srun --mpi=pmix}"
  "${launch[@]}" "$@" &
  local pid=$!
  trap 'stop=USR1; log "SIGUSR1: asking the sweep to stop after its current batch"; kill -USR1 '"$pid"' 2> /dev/null' USR1
  trap 'stop=TERM; log "SIGTERM: asking the sweep to stop after its current batch"; kill -USR1 '"$pid"' 2> /dev/null' TERM
  while kill -0 "$pid" 2> /dev/null; do wait "$pid"; done
  wait "$pid"
}

prepare_role() {
  local config=$1 phase status
  for phase in baseline residuals directions; do
    if [ -f "$ABL_OUT/$phase.h5" ]; then
      log "reusing $ABL_OUT/$phase.h5"
      continue
    fi
    if [ "$phase" = directions ]; then
      "$bin" directions --config "$config" --out "$ABL_OUT"  # reads residuals.h5 only: one process
    else
      # shellcheck disable=SC2046  # thread_args prints zero or two words
      launched "$bin" "$phase" --config "$config" --out "$ABL_OUT" $(thread_args)
    fi
    status=$?
    [ "$status" = 0 ] || { log "$phase failed with exit status $status"; exit "$status"; }
  done
}

slice_role() {
  local config=$1 status
  shift
  local slice="${SLURM_ARRAY_TASK_ID:?not an array task}/${SLURM_ARRAY_TASK_COUNT:?}"
  # shellcheck disable=SC2046
  launched "$bin" sweep --config "$config" --out "$ABL_OUT" --slice "$slice" $(thread_args "$@") "$@"
  status=$?
  if [ "$status" = 75 ]; then
    # Stopped after a batch: requeue this task (same id, same slice file, resumed) unless Slurm
    # itself is ending it (TERM to this shell), it is not requeueable, or ABL_MAX_REQUEUES is used up.
    if [ "$stop" != TERM ] && [ "${ABL_REQUEUE:-1}" != 0 ] &&
      [ "${SLURM_RESTART_COUNT:-0}" -lt "${ABL_MAX_REQUEUES:-20}" ] &&
      scontrol show job "$SLURM_JOB_ID" 2> /dev/null | grep -q 'Requeue=1'; then
      log "slice $slice stopped after a batch: requeueing task $SLURM_JOB_ID"
      scontrol requeue "$SLURM_JOB_ID" && exit 0
    fi
    log "slice $slice stopped after a batch (exit 75). To finish the sweep, scancel the merge job"
    log "(it waits for this task forever) and submit again with -o $ABL_OUT: finished slices are kept."
  fi
  exit "$status"
}

merge_role() {
  "$bin" merge --out "$ABL_OUT" || exit
  "$bin" report --trials "$ABL_OUT" --csv "$ABL_OUT/trials.csv" --quiet > /dev/null
}

case ${ABL_SWEEP_ROLE:-submit} in
  submit) submit "$@" ;;
  prepare | slice | merge)
    bin=${ABL_BIN:?set by the submit step} && : "${ABL_OUT:?set by the submit step}"
    threads=${ABL_THREADS:-${SLURM_CPUS_PER_TASK:-}}
    [ -z "$threads" ] || export OMP_NUM_THREADS=$threads
    log "$ABL_SWEEP_ROLE job ${SLURM_ARRAY_JOB_ID:+${SLURM_ARRAY_JOB_ID}_}${SLURM_ARRAY_TASK_ID:-${SLURM_JOB_ID:-}} (restart ${SLURM_RESTART_COUNT:-0}) on ${SLURM_JOB_NUM_NODES:-1} node(s), ${SLURM_NTASKS:-1} task(s) -> $ABL_OUT"
    "${ABL_SWEEP_ROLE}_role" "$@" ;;
  *) die "ABL_SWEEP_ROLE=$ABL_SWEEP_ROLE: expected prepare, slice or merge (or unset, to submit)" ;;
esac
