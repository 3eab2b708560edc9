#!/usr/bin/env bash
# The GPU checks of issue 13 in few, long device calls. Each step's output goes to its own log
# under OUT (the device tool's $OUT; elsewhere any folder) and one line per step to
# OUT/summary.txt: status, seconds, name. On the GPU machine, from the repository root, with the
# bundle of scripts/device-bundle.sh carried:
#
#   source .devcarry/env.sh && scripts/device-check.sh PHASE...      # OUT defaults to $OUT
#
# Phases (several may be given; each is a few minutes on an H100, sanitize and hf the longest):
#   preflight  the device, driver, toolkit, Python (torch, transformers, h5py: the driver tests need
#              h5py) and `abliterate --version`
#   tests      test_backend_cuda, test_engine_cuda, test_parallel_cuda; test_mpi_cuda on 1 to 4 ranks
#   sanitize   compute-sanitizer memcheck on the three GPU test programs, racecheck and synccheck
#              on the kernels (test_backend_cuda), memcheck on a small `abliterate run` of the organism
#   driver     tests/driver/setup.sh and cuda_backend.sh (the app on --backend cuda against cpu)
#   bench      bench_cuda (make bench's GPU figures)
#   hf         tools/hf_check/hf_check.py --backend cuda (docs/hf-equality.md)
# Every step runs even when an earlier one failed; the exit status is the number of failed steps.
# STEP_TIMEOUT (seconds, default 540) bounds each step, so that a hang still leaves its log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${DEVICE_CHECK_OUT:-/tmp/device-check}}
mkdir -p "$OUT"
STEP_TIMEOUT=${STEP_TIMEOUT:-540}
PY=${ABL_PYTHON:-python3}
failed=0

# step NAME COMMAND...: runs it with its output in OUT/NAME.log; appends "status seconds NAME".
step() {
  local name=$1 start status
  shift
  start=$(date +%s)
  echo "== $name: $*" >&2
  # through bash, so that the functions below (exported) run as steps too
  timeout --signal=TERM --kill-after=20 "$STEP_TIMEOUT" bash -c '"$@"' "$name" "$@" > "$OUT/$name.log" 2>&1
  status=$?
  printf '%-4s %5ss  %s\n' "$status" "$(($(date +%s) - start))" "$name" | tee -a "$OUT/summary.txt"
  tail -n 3 "$OUT/$name.log" >&2
  [[ $status == 0 ]] || failed=$((failed + 1))
}

organism_run() {  # a small run of the organism on the GPU: every phase, few prompts and trials
  local run=$1
  shift
  local prompts=tests/fixtures/organism/prompts
  rm -rf "$run" && mkdir -p "$run"
  "$@" "${ABL_BIN:-abliterate}" run --model tests/fixtures/organism --backend cuda --quiet \
    --good "$prompts/harmless.txt" --bad "$prompts/harmful.txt" --good-split "[:32]" --bad-split "[:32]" \
    --kl-split "[400:408]" --eval-split "[400:408]" --max-response-length 8 --search sobol --trials 4 --out "$run"
}

preflight() {
  nvidia-smi || true
  nvcc --version | tail -n 2 || true
  command -v compute-sanitizer nsys ncu || true
  "${ABL_BIN:-abliterate}" --version
  "$PY" -c 'import sys; print("python", sys.version.split()[0])'
  for m in torch transformers h5py numpy; do
    "$PY" -c "import $m; print('$m', $m.__version__)" 2>/dev/null || echo "$m: not importable"
  done
  "$PY" -c 'import torch; print("torch cuda:", torch.cuda.is_available())' 2>/dev/null || true
}

export -f organism_run preflight
export PY
[[ $# -gt 0 ]] || set -- preflight tests
for phase in "$@"; do
  case $phase in
    preflight) step preflight preflight ;;
    tests)
      for t in test_backend_cuda test_engine_cuda test_parallel_cuda; do step "$t" "$t"; done
      for n in 1 2 3 4; do step "test_mpi_cuda-np$n" mpirun -np "$n" --oversubscribe test_mpi_cuda; done
      ;;
    sanitize)
      for t in test_backend_cuda test_engine_cuda test_parallel_cuda; do
        step "memcheck-$t" compute-sanitizer --tool memcheck --error-exitcode 1 "$t"
      done
      for tool in racecheck synccheck; do
        step "$tool-test_backend_cuda" compute-sanitizer --tool "$tool" --error-exitcode 1 test_backend_cuda
      done
      step memcheck-organism-run organism_run /tmp/abl-sanitize-run compute-sanitizer --tool memcheck --error-exitcode 1
      ;;
    driver)
      step driver-setup bash tests/driver/setup.sh
      step driver-cuda_backend bash tests/driver/cuda_backend.sh
      ;;
    bench) step bench_cuda bench_cuda ;;
    hf)
      step hf_check "$PY" tools/hf_check/hf_check.py --backend cuda --work /tmp/hf_check \
        --table "$OUT/hf-table.md" --json "$OUT/hf-check.json"
      ;;
    *) echo "device-check: unknown phase '$phase' (preflight, tests, sanitize, driver, bench, hf)" >&2; exit 2 ;;
  esac
done
echo "device-check: $failed failed step(s); summary in $OUT/summary.txt" >&2
exit "$failed"
