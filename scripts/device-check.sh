#!/usr/bin/env bash
# The GPU checks of issue 13 in few, long device calls. On the GPU machine, from the repository
# root, with the bundle of scripts/device-bundle.sh carried (the device tool's carry: .devcarry):
#
#   source .devcarry/env.sh && bash scripts/device-check.sh PHASE...   # OUT defaults to $OUT
#
# Phases (several may be given; all names are checked before anything runs):
#   preflight      uname, nvidia-smi -L, toolkit, `abliterate --version`; fails when a bundled
#                  program lacks a library (ldd), `mpirun -np 2 hostname` or an MPI start of
#                  test_mpi_cuda fails, a one-prompt `abliterate generate --backend cpu` of the
#                  organism fails, Python cannot import torch, transformers, h5py and numpy, or
#                  torch cannot allocate on the GPU
#   tests          test_backend_cuda, test_engine_cuda, test_parallel_cuda; test_mpi_cuda on 1 to 4
#                  ranks (FULL_SHARD, as ctest runs it)
#   sanitize-mem   compute-sanitizer memcheck on the three GPU test programs and on a small
#                  `abliterate run` of the organism
#   sanitize-race  racecheck and synccheck on the kernel tests that use shared memory and barriers
#                  (RACE_FILTER, a gtest filter of test_backend_cuda)
#   sanitize       both (may not fit one call: give them a call each). compute-sanitizer is looked
#                  for on PATH and in ${CUDA_HOME:-/usr/local/cuda}/bin; missing, or refusing the
#                  device (gVisor machines), every sanitizer step is a SKIP with the reason
#   driver         tests/driver/setup.sh and cuda_backend.sh (the app on --backend cuda against cpu)
#   bench          bench_cuda (make bench's GPU figures)
#   hf-families    tools/hf_check/hf_check.py --backend cuda on the random-init models of every
#                  family (HF_FAMILIES, default all) and an export of the first
#   hf-golden      the same on the golden fixtures (HF_GOLDEN, default all)
#   hf             both
#   lease          the first GPU session's plan in one call, most needed first: preflight, the
#                  three GPU test programs, test_mpi_cuda on 1 to 4 ranks, the driver on
#                  --backend cuda, bench_cuda, then hf-golden with whatever time is left; each
#                  step capped (LEASE_CAPS below) so that one slow step cannot starve the rest
# With no phase: lease.
#
# Time: the device tool kills a command after 600 s, and a session has 15 minutes of device time
# in all, the machine's start (a minute or more) included: plan one full call (lease), and a
# second short one only to rerun what failed. Every step is bounded by STEP_TIMEOUT (default
# 300 s; sanitize and hf steps may take all that is left), by its cap in the lease phase, and by
# one deadline, DEVICE_CHECK_BUDGET seconds (default 560) after the start: a step gets what is
# left less 10 s, and a step with under 20 s left is not started (SKIP, no time left).
#
# Output: the device tool brings back at most 8 files. OUT gets summary.txt (one line per step:
# PASS, FAIL, TIMEOUT or SKIP, seconds, name, why), logs.tgz (every step's log, the hf checker's
# command logs and its JSON of every number), the hf tables (hf-*-table.md, rewritten after each
# case) and, while a step runs, its log (NAME.log). The archive is remade after each step, so a
# command killed part-way still brings back the steps before. The last lines of each log go to
# stderr too. Exit status: the number of FAIL and TIMEOUT steps; 2 for bad usage.
#
# Python (preflight, hf) runs as `syspython`, the machine's Python with the machine's library
# path (env.sh): the bundle's Debian libraries first on the path can break torch. Our programs
# and mpirun run with the bundle's path.

# The step functions run through `bash -c`, which shellcheck cannot see:
# shellcheck disable=SC2317
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
START=$(date +%s)
DEADLINE=$((START + ${DEVICE_CHECK_BUDGET:-560}))
STEP_TIMEOUT=${STEP_TIMEOUT:-300}
MIN_STEP=20
OUT=${OUT:-${DEVICE_CHECK_OUT:-/tmp/device-check}}
RACE_FILTER=${RACE_FILTER:-'AttentionDecode.SplitsMatchCpu:GqaHeadDimWindow/AttentionMixed.MatchesCpu/NH8_NKV4_HD128_W32_*:CudaRmsnorm.*:CudaLogSoftmax.*:CudaKlRows.*:CudaArgmax.*:GroupedGemm.*:CudaMoe.RouterTopkMatchesCpu:AblationEpilogueCuda.MatchesCpuEpilogueInAMixedBatch'}

phases=(preflight tests sanitize-mem sanitize-race sanitize driver bench hf-families hf-golden hf lease)
[[ $# -gt 0 ]] || set -- lease
for phase in "$@"; do
  [[ " ${phases[*]} " == *" $phase "* ]] ||
    { echo "device-check: unknown phase '$phase' (${phases[*]})" >&2; exit 2; }
done
if [[ -z ${ABL_ROOT:-} || -z ${ABL_BUNDLE_BIN:-} ]] || ! declare -F syspython > /dev/null; then
  echo "device-check: source .devcarry/env.sh first (scripts/device-bundle.sh)" >&2
  exit 2
fi

mkdir -p "$OUT"
LOGS=$(mktemp -d /tmp/device-check-logs.XXXXXX)  # finished steps' logs, archived into OUT/logs.tgz
HF_WORK=/tmp/hf_check                            # hf_check's work folders: /tmp/hf_check-PHASE
: > "$OUT/summary.txt"
failed=0 passed=0 skipped=0
SANITIZER_SKIP=unprobed  # after the probe: empty when compute-sanitizer works, else why not

# OUT/logs.tgz from the finished steps' logs and the hf checker's command logs and JSON.
pack_logs() {
  local extra=() w
  for w in "$HF_WORK"-*; do
    [[ -d $w/logs ]] && extra+=(-C "$(dirname "$w")" "$(basename "$w")/logs")
    [[ -f $w/hf_check.json ]] && extra+=(-C "$(dirname "$w")" "$(basename "$w")/hf_check.json")
  done
  # (a file that changes while it is read is only a warning: the archive is still good)
  tar -czf "$OUT/logs.tgz.part" -C "$LOGS" . "${extra[@]}"
  mv -f "$OUT/logs.tgz.part" "$OUT/logs.tgz"
}

# record STATUS SECONDS NAME [WHY]: one line of OUT/summary.txt, and the counts.
record() {
  printf '%-7s %4ss  %s%s\n' "$1" "$2" "$3" "${4:+  ($4)}" | tee -a "$OUT/summary.txt" >&2
  case $1 in PASS) passed=$((passed + 1)) ;; SKIP) skipped=$((skipped + 1)) ;; *) failed=$((failed + 1)) ;; esac
}

# step [-long | -max SECONDS] NAME COMMAND...: runs it with its output in OUT/NAME.log, bounded by
# STEP_TIMEOUT (-long: not; -max: by SECONDS instead) and by the deadline. Status 77 is a skip,
# with the log's last line as the reason. Sets LAST to PASS, FAIL, TIMEOUT or SKIP.
step() {
  local limit=$STEP_TIMEOUT
  if [[ $1 == -long ]]; then
    limit=$((DEADLINE - START)); shift  # the deadline bounds it
  elif [[ $1 == -max ]]; then
    limit=$2; shift 2
  fi
  local name=$1 now left start status log secs
  shift
  now=$(date +%s)
  left=$((DEADLINE - now - 10))
  if ((left < MIN_STEP)); then
    LAST=SKIP
    record SKIP 0 "$name" "no time left"
    return
  fi
  ((left < limit)) && limit=$left
  log=$OUT/$name.log
  echo "== $name (at most ${limit}s): $*" >&2
  start=$now
  # through bash, so that the functions below (exported) run as steps too
  timeout --kill-after=5 "$limit" bash -c '"$@"' "$name" "$@" > "$log" 2>&1 < /dev/null
  status=$?
  secs=$(($(date +%s) - start))
  # timeout's own statuses: 124 (TERM sent at the limit), 137 (KILL 5 s later); a 137 before the
  # limit is a kill from elsewhere (out of memory).
  if ((status == 124 || (status == 137 && secs >= limit))); then
    LAST=TIMEOUT; record TIMEOUT "$secs" "$name" "stopped at its limit of ${limit}s"
  elif ((status == 0)); then
    LAST=PASS; record PASS "$secs" "$name" "$(gtest_skips "$log")"
  elif ((status == 77)); then
    LAST=SKIP; record SKIP "$secs" "$name" "$(grep -v '^\s*$' "$log" | tail -n 1)"
  elif ((status > 128)); then
    LAST=FAIL; record FAIL "$secs" "$name" "killed by signal $((status - 128))"
  else
    LAST=FAIL; record FAIL "$secs" "$name" "exit status $status"
  fi
  if [[ $LAST == PASS ]]; then tail -n 3 "$log" >&2; else tail -n 20 "$log" >&2; fi
  mv "$log" "$LOGS/"
  pack_logs
}

# gtest_skips LOG: "N skipped by the test program" when a gtest program skipped tests (without a
# usable GPU they all skip and the program passes).
gtest_skips() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" | sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?, listed below.*/\1 skipped by the test program/p' | tail -n 1
}

# skip_steps WHY NAME...: records each as skipped.
skip_steps() {
  local why=$1 name
  shift
  for name; do record SKIP 0 "$name" "$why"; done
}

# The steps' functions (exported: steps run them through bash).

preflight_info() {  # what the machine is; fails only when abliterate does not start
  uname -r
  nvidia-smi -L || echo "nvidia-smi -L failed"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv || true
  nvcc --version | tail -n 2 || echo "nvcc: not found"
  echo "compute-sanitizer: $(find_sanitizer || echo 'not found')"
  echo "python: $ABL_SYS_PYTHON; LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  "$ABL_BIN" --version
}

preflight_ldd() {  # every bundled program and Open MPI's launcher find all their libraries
  local bad=0 f missing
  for f in "$ABL_BUNDLE_BIN"/* "$ABL_ROOT/usr/bin/orterun" "$ABL_ROOT/usr/bin/orted"; do
    # "not found", or a library that does not load (ldd fails)
    if missing=$(ldd "$f" 2>&1) && ! grep -q 'not found' <<<"$missing"; then
      echo "ok $f"
    else
      echo "$f:"; grep -E 'not found|error' <<<"$missing"; bad=1
    fi
  done
  return "$bad"
}

# mpi_test NP ARGS...: test_mpi_cuda as ctest runs it (tests/mpi/CMakeLists.txt): FULL_SHARD, one
# OpenMP thread per rank; no binding (the ranks share the cores and the GPU).
mpi_test() {
  local np=$1
  shift
  OMP_NUM_THREADS=1 ABL_TEST_SHARDING=FULL_SHARD mpirun -np "$np" --oversubscribe --bind-to none test_mpi_cuda "$@"
}

preflight_mpi() {  # two ranks start, and our MPI program initialises on both (running no test)
  mpirun -np 2 --oversubscribe --bind-to none hostname && mpi_test 2 --gtest_filter=NoTest.Selected
}

preflight_generate() {  # the app end to end on the CPU: its libraries, MPI start, model, tokenizer, engine
  local out=/tmp/device-check-generate.jsonl
  "$ABL_BIN" generate --backend cpu --model tests/fixtures/organism \
    --prompts tests/fixtures/organism/prompts/harmful.txt --split "[:1]" --max-new-tokens 4 --output "$out" &&
    cat "$out"
}

preflight_python() {  # what the driver and hf phases import (the error text shows when one fails)
  syspython -c 'import sys, torch, transformers, h5py, numpy
print("python", sys.version.split()[0], sys.executable)
for m in (torch, transformers, h5py, numpy):
    print(m.__name__, m.__version__)'
}

preflight_torch_cuda() {  # torch reaches the GPU (the hf checker's bf16 reference runs there)
  syspython -c 'import torch
x = torch.zeros(1).cuda()
print("torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0), x.device)'
}

# The compute-sanitizer on the PATH or in the toolkit.
find_sanitizer() {
  local c=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
  command -v compute-sanitizer || { [[ -x $c ]] && echo "$c"; }
}

# Status 77 (skip) when there is no compute-sanitizer or it refuses the device (gVisor machines
# answer "Device not supported"); otherwise the status of memcheck on one small kernel test.
sanitize_probe() {
  local s out status
  s=$(find_sanitizer) || { echo "compute-sanitizer not found"; return 77; }
  out=$("$s" --tool memcheck --error-exitcode 1 test_backend_cuda --gtest_filter=CudaAdd.IsExactFp32 2>&1)
  status=$?
  echo "$out"
  if [[ $status != 0 ]] && grep -qiE 'not supported|unable to|failed to (initialize|attach)' <<<"$out"; then
    echo "compute-sanitizer refuses this device: $(grep -iE 'not supported|unable to|failed to' <<<"$out" | head -n 1)"
    return 77
  fi
  return "$status"
}

sanitize() {  # sanitize TOOL PROGRAM ARGS...
  local tool=$1
  shift
  "$(find_sanitizer)" --tool "$tool" --error-exitcode 1 "$@"
}

organism_run() {  # a small run of the organism on the GPU under memcheck: every phase, few prompts and trials
  local run=/tmp/abl-sanitize-run prompts=tests/fixtures/organism/prompts
  rm -rf "$run" && mkdir -p "$run"
  sanitize memcheck "$ABL_BIN" run --model tests/fixtures/organism --backend cuda --quiet \
    --good "$prompts/harmless.txt" --bad "$prompts/harmful.txt" --good-split "[:32]" --bad-split "[:32]" \
    --kl-split "[400:408]" --eval-split "[400:408]" --max-response-length 8 --search sobol --trials 4 --out "$run"
}

hf_check() {  # hf_check NAME ARGS...: the checker with its table in OUT, its work (logs, JSON) archived
  local name=$1
  shift
  rm -rf "$HF_WORK-$name"
  PYTHONUNBUFFERED=1 syspython tools/hf_check/hf_check.py --backend cuda --work "$HF_WORK-$name" \
    --table "$OUT/$name-table.md" "$@"
}

export -f preflight_info preflight_ldd mpi_test preflight_mpi preflight_generate preflight_python \
  preflight_torch_cuda find_sanitizer sanitize_probe sanitize organism_run hf_check
export OUT HF_WORK GTEST_COLOR=no

sanitize_phase() {  # sanitize_phase mem|race; the probe runs once
  if [[ $SANITIZER_SKIP == unprobed ]]; then
    step sanitize-probe sanitize_probe
    SANITIZER_SKIP=
    [[ $LAST == SKIP ]] && SANITIZER_SKIP=$(grep -v '^\s*$' "$LOGS/sanitize-probe.log" | tail -n 1)
  fi
  if [[ -n $SANITIZER_SKIP ]]; then
    if [[ $1 == mem ]]; then
      skip_steps "$SANITIZER_SKIP" memcheck-test_backend_cuda memcheck-test_engine_cuda memcheck-test_parallel_cuda memcheck-organism-run
    else
      skip_steps "$SANITIZER_SKIP" racecheck-test_backend_cuda synccheck-test_backend_cuda
    fi
    return
  fi
  if [[ $1 == mem ]]; then
    for t in test_backend_cuda test_engine_cuda test_parallel_cuda; do
      step -long "memcheck-$t" sanitize memcheck "$t"
    done
    step -long memcheck-organism-run organism_run
  else
    for tool in racecheck synccheck; do
      step -long "$tool-test_backend_cuda" sanitize "$tool" test_backend_cuda --gtest_filter="$RACE_FILTER"
    done
  fi
}

preflight_phase() {  # preflight_phase [-max SECONDS]: each step bounded
  step "$@" preflight-info preflight_info
  step "$@" preflight-ldd preflight_ldd
  step "$@" preflight-mpi preflight_mpi
  step "$@" preflight-generate preflight_generate
  step "$@" preflight-python preflight_python
  step "$@" preflight-torch-cuda preflight_torch_cuda
}

# The caps of the lease phase's steps, in seconds (a step that ends sooner leaves its time to the
# later ones; the deadline still bounds each): the sum is more than one call has, on purpose.
LEASE_CAPS=${LEASE_CAPS:-'preflight=40 test_backend_cuda=150 test_engine_cuda=150 test_parallel_cuda=60 mpi=60 driver=150 bench=120'}
cap() {  # cap NAME: its LEASE_CAPS value
  local kv
  for kv in $LEASE_CAPS; do [[ ${kv%%=*} == "$1" ]] && { echo "${kv#*=}"; return; }; done
  echo "$STEP_TIMEOUT"
}

for phase in "$@"; do
  case $phase in
    preflight) preflight_phase ;;
    lease)
      preflight_phase -max "$(cap preflight)"
      for t in test_backend_cuda test_engine_cuda test_parallel_cuda; do step -max "$(cap "$t")" "$t" "$t"; done
      for n in 1 2 3 4; do step -max "$(cap mpi)" "test_mpi_cuda-np$n" mpi_test "$n"; done
      step -max "$(cap driver)" driver-setup bash tests/driver/setup.sh
      step -max "$(cap driver)" driver-cuda_backend bash tests/driver/cuda_backend.sh
      step -max "$(cap bench)" bench_cuda bench_cuda
      step -long hf-golden hf_check hf-golden --families none --golden "${HF_GOLDEN:-all}" --export none
      ;;
    tests)
      for t in test_backend_cuda test_engine_cuda test_parallel_cuda; do step "$t" "$t"; done
      for n in 1 2 3 4; do step "test_mpi_cuda-np$n" mpi_test "$n"; done
      ;;
    sanitize-mem) sanitize_phase mem ;;
    sanitize-race) sanitize_phase race ;;
    sanitize) sanitize_phase mem; sanitize_phase race ;;
    driver)
      step driver-setup bash tests/driver/setup.sh
      step driver-cuda_backend bash tests/driver/cuda_backend.sh
      ;;
    bench) step bench_cuda bench_cuda ;;
    hf-families) step -long hf-families hf_check hf-families --families "${HF_FAMILIES:-all}" --golden none ;;
    hf-golden) step -long hf-golden hf_check hf-golden --families none --golden "${HF_GOLDEN:-all}" --export none ;;
    hf)
      step -long hf-families hf_check hf-families --families "${HF_FAMILIES:-all}" --golden none
      step -long hf-golden hf_check hf-golden --families none --golden "${HF_GOLDEN:-all}" --export none
      ;;
  esac
done

# Only a few files come back: anything else left in OUT goes into the archive.
shopt -s nullglob
for f in "$OUT"/*; do
  case ${f##*/} in summary.txt | logs.tgz | *-table.md) ;; *) mv "$f" "$LOGS/" ;; esac
done
pack_logs && rm -rf "$LOGS"
printf 'device-check: %d passed, %d failed or timed out, %d skipped, %ss; summary in %s, logs in %s\n' \
  "$passed" "$failed" "$skipped" "$(($(date +%s) - START))" "$OUT/summary.txt" "$OUT/logs.tgz" | tee -a "$OUT/summary.txt" >&2
exit "$failed"
