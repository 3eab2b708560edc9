#!/bin/bash
# One abliteration run as one Slurm job: `abliterate run` (baseline, residuals, directions,
# sweep) on every task of the allocation, from 1 CPU node to N GPU nodes, into the run folder:
# ABL_OUT, else --out among the options, else the config's `out`, else outputs/<job id>/.
# Ahead of the time limit (--signal below) the sweep stops after its current batch and exits 75
# (resumable); the job then requeues itself, and the requeued job (same id, same folder) resumes.
#
#   sbatch slurm/abliterate.sh [CONFIG] [abliterate run options...]
#   sbatch -N 4 --ntasks-per-node=8 --gpus-per-node=8 slurm/abliterate.sh my.ini --search sobol
#
# Submit from the directory that relative paths in CONFIG (and outputs/) are taken from: the
# repository root, or your own folder with an installed abliterate (`module load abliterate`;
# then CONFIG defaults to $ABLITERATE_SHARE/default.ini). Every variable and option: slurm/README.md.
#
#SBATCH --job-name=abliterate
#SBATCH --nodes=1
# One rank per GPU on GPU nodes (set it to the GPUs per node); one rank per CPU node otherwise.
#SBATCH --ntasks-per-node=1
# Threads of each rank's CPU engine (OMP_NUM_THREADS and --threads follow it).
#SBATCH --cpus-per-task=8
# GPUs are not requested by default, so the script runs unchanged on CPU-only partitions (a
# GPU request there is rejected). On GPU nodes add them on the command line:
#   sbatch --gpus-per-node=8 --ntasks-per-node=8 slurm/abliterate.sh ...
# or uncomment (and drop one '#' from) the next line in your copy.
##SBATCH --gpus-per-node=8
#SBATCH --time=04:00:00
# The log goes to the submit directory: Slurm opens it before the job starts and does not
# create folders, so a path inside outputs/<job id>/ cannot be used; the script links the log
# into the run folder (outputs/<job id>/slurm.out). Append: a requeued job continues the file.
#SBATCH --output=slurm-%j.out
#SBATCH --open-mode=append
# USR1 to this batch shell 120 s before the time limit: the trap below asks the sweep to stop
# after its current batch; make sure one batch takes less than that.
#SBATCH --signal=B:USR1@120
# Requeueable: after a stop ahead of the time limit the script requeues the job (sbatch
# --no-requeue or ABL_REQUEUE=0 turns that off; preemption with PreemptMode=REQUEUE needs it too).
#SBATCH --requeue

# Modules or containers, if your site uses them (examples, not assumptions):
#   module load openmpi/4.1 hdf5/1.10-mpi cuda/12.4 nccl
#   ABL_LAUNCH="srun --mpi=pmix --container-image=/scratch/abliterate.sqsh"   # pyxis/enroot
#   ABL_LAUNCH="srun --mpi=pmix apptainer exec --nv /scratch/abliterate.sif"     # with
#   ABL_BIN=/opt/abliterate/bin/abliterate (the image of apptainer/abliterate.def; docs/install.md)

# Network settings for NCCL (GPU collectives) and UCX (Open MPI's transport on InfiniBand).
# The defaults pick the fastest interfaces on most clusters; set these only when they do not.
# export NCCL_DEBUG=INFO              # print the rings/trees, transports and interfaces NCCL picks (WARN: errors only)
# export NCCL_DEBUG_SUBSYS=INIT,NET   # ... restricted to start-up and the network
# export NCCL_IB_HCA=mlx5_0,mlx5_1    # InfiniBand/RoCE adapters to use (ibv_devices lists them); =^mlx5_2 excludes one
# export NCCL_SOCKET_IFNAME=ib0       # interface for NCCL's bootstrap and socket transport; =^lo,docker excludes
# export NCCL_IB_DISABLE=1            # no InfiniBand: TCP sockets only (slow; for debugging a fabric)
# export NCCL_NET_GDR_LEVEL=PHB       # GPUDirect RDMA up to this PCI distance (when the NIC and GPU share a switch)
# export UCX_TLS=rc,sm,self           # UCX transports: reliable-connected IB, shared memory, loopback
# export UCX_NET_DEVICES=mlx5_0:1     # the IB port UCX uses
# export OMPI_MCA_pml=ucx             # Open MPI over UCX (InfiniBand); OMPI_MCA_btl_tcp_if_include=eth0 for TCP
set -uo pipefail

log() { echo "$(date '+%Y-%m-%d %H:%M:%S') abliterate.sh: $*"; }

# Slurm starts the job in the submit directory (or --chdir): relative paths are taken from there.
# sbatch runs a copy of this script from its spool folder, so nothing is found relative to $0.

# The binary: $ABL_BIN, else abliterate on PATH (where `module load abliterate` puts it; sbatch
# passes the environment on), else the build of the checkout submitted from.
# With a container launcher (ABL_LAUNCH running apptainer, singularity or pyxis) ABL_BIN may be a
# path inside the image.
bin=${ABL_BIN:-$(command -v abliterate || echo build/bin/abliterate)}
if [ ! -x "$bin" ]; then
  case ${ABL_BIN:+${ABL_LAUNCH:-}} in
    *apptainer* | *singularity* | *--container-image*) log "$bin is not on this node: taken as the binary inside the container" ;;
    *) log "error: abliterate binary $bin not found (ABL_BIN, PATH, build/bin/abliterate in $PWD); set ABL_BIN or load the module"; exit 2 ;;
  esac
fi

# The config: the first argument (unless it is an option), else inputs/default.ini of the submit
# directory (a checkout), else the default.ini installed with the binary (<prefix>/share/abliterate
# beside its bin/, else $ABLITERATE_SHARE, which the modulefile sets).
case ${1:-} in
  -*) config="" ;;
  *) config=${1:-}; [ $# -gt 0 ] && shift ;;
esac
config_given=$config
if [ -z "$config" ]; then
  config=inputs/default.ini
  [ -f "$config" ] || config=$(dirname "$bin")/../share/abliterate/default.ini
  [ -f "$config" ] || [ -z "${ABLITERATE_SHARE:-}" ] || config=$ABLITERATE_SHARE/default.ini
fi
if [ ! -f "$config" ]; then
  if [ -n "$config_given" ]; then
    log "error: config file $config not found (in $PWD)"
  else
    log "error: no CONFIG given and no default.ini found: not inputs/default.ini in $PWD, nor $(dirname "$bin")/../share/abliterate/default.ini${ABLITERATE_SHARE:+, nor $ABLITERATE_SHARE/default.ini}"
  fi
  exit 2
fi

# The value of the option $1 among the remaining arguments (--out DIR or --out=DIR), if given.
option_value() {
  local name=$1 prev=""
  shift
  for a in "$@"; do
    [ "$prev" = "$name" ] && { printf '%s\n' "$a"; return 0; }
    case $a in "$name="*) printf '%s\n' "${a#"$name="}"; return 0 ;; esac
    prev=$a
  done
  return 1
}
# `out` of an INI config file, at the top level or in [output] (as abliterate reads it: # and ;
# start comments, values are trimmed and may be quoted; [export] out = ... is another command's).
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

# The run folder: ABL_OUT (passed as --out, over the config's), else --out among the options,
# else `out` of the config file (abliterate reads it there: no --out), else outputs/<job id>.
# The job id stays the same when a job is requeued, so a requeued job continues its folder;
# ABL_OUT names another (e.g. to resume a job that ended with 75).
job=${SLURM_JOB_ID:-local-$(date +%Y%m%d-%H%M%S)}
out_args=()
if [ -n "${ABL_OUT:-}" ]; then
  out=$ABL_OUT out_from="ABL_OUT"
  if given=$(option_value --out "$@"); then  # e.g. a resubmission of a job run with --out
    [ "$given" = "$out" ] || { log "error: ABL_OUT=$ABL_OUT and --out $given name different run folders"; exit 2; }
  else
    out_args=(--out "$out")
  fi
elif out=$(option_value --out "$@"); then
  out_from="--out among the options"
elif out=$(config_out "$config") && [ -n "$out" ]; then
  out_from="out in $config"
else
  out=outputs/$job out_from="default: no ABL_OUT, --out or out in $config"
  out_args=(--out "$out")
fi
mkdir -p "$out" || exit 1
if [ -n "${SLURM_JOB_ID:-}" ]; then
  log_file=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *StdOut=//p')
  [ -n "$log_file" ] && [ ! -e "$out/slurm.out" ] && ln -s "$log_file" "$out/slurm.out"
fi

# Threads per rank: the CPUs Slurm gave each task (ABL_THREADS overrides); passed as --threads,
# which overrides the config file's threads, unless --threads is among the options.
threads=${ABL_THREADS:-${SLURM_CPUS_PER_TASK:-}}
thread_args=()
if [ -n "$threads" ]; then
  export OMP_NUM_THREADS=$threads
  case " $* " in *" --threads "* | *" --threads="*) ;; *) thread_args=(--threads "$threads") ;; esac
fi

# The launcher: srun over the whole allocation (Debian's and most sites' Open MPI start with
# PMIx). ABL_LAUNCH overrides it, e.g. "mpirun", "srun --mpi=pmi2", or "" for one process.
read -r -a launch <<<"${ABL_LAUNCH-srun --mpi=pmix}"

log "job ${SLURM_JOB_ID:-none} (restart ${SLURM_RESTART_COUNT:-0}) on ${SLURM_JOB_NUM_NODES:-1} node(s), ${SLURM_NTASKS:-1} task(s): $config -> $out"
log "binary $bin; run folder $out ($out_from)"

# Signals: USR1 (the --signal warning above, or `scancel -b -s USR1`) and TERM (cancel,
# preemption) reach this shell; both are passed to the launcher as USR1, which srun and mpirun
# forward to every rank: the sweep finishes its batch, writes it and exits 75.
stop=""
launcher=""
on_signal() {
  stop=$1
  log "SIG$1: asking the sweep to stop after its current batch"
  [ -n "$launcher" ] && kill -USR1 "$launcher" 2>/dev/null
}
trap 'on_signal USR1' USR1
trap 'on_signal TERM' TERM

"${launch[@]}" "$bin" run --config "$config" "${out_args[@]}" "${thread_args[@]}" "$@" &
launcher=$!
# `wait` returns early when a trapped signal arrives; wait again until the launcher has ended.
while kill -0 "$launcher" 2>/dev/null; do wait "$launcher"; done
wait "$launcher"
status=$?

if [ "$status" = 75 ]; then
  # Stopped at a batch boundary: everything done so far is in $out. Requeue unless Slurm itself
  # is ending the job (TERM: scancel, or preemption, where PreemptMode decides), the job is not
  # requeueable, or it has been requeued ABL_MAX_REQUEUES times already.
  requeue=${ABL_REQUEUE:-1}
  restarts=${SLURM_RESTART_COUNT:-0}
  if [ -z "${SLURM_JOB_ID:-}" ] || [ "$stop" = TERM ] || [ "$requeue" = 0 ]; then
    requeue=0
  elif ! scontrol show job "$SLURM_JOB_ID" 2>/dev/null | grep -q 'Requeue=1'; then
    log "the job is not requeueable (--no-requeue)"
    requeue=0
  elif [ "$restarts" -ge "${ABL_MAX_REQUEUES:-20}" ]; then
    log "already requeued $restarts times (ABL_MAX_REQUEUES)"
    requeue=0
  fi
  if [ "$requeue" = 1 ]; then
    log "sweep stopped after a batch: requeueing job $SLURM_JOB_ID; it resumes in $out"
    # The requeue ends this job; exit 0 covers the moment before Slurm stops it.
    scontrol requeue "$SLURM_JOB_ID" && exit 0
    log "scontrol requeue failed"
  fi
  log "sweep stopped after a batch (exit 75); resume with: ABL_OUT=$out sbatch slurm/abliterate.sh $config $*"
  exit 75
fi
if [ "$status" = 0 ]; then log "done: $out (abliterate report --trials $out)"; else log "failed with exit status $status"; fi
exit "$status"
