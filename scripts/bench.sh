#!/usr/bin/env bash
# `make bench`: runs every benchmark program and prints its figures. The CPU engine runs next to
# the torch reference (tools/bench/torch_reference_bench.py, Debian's python3-torch) on the same
# shapes in the same run, and the ratio is printed. The CUDA section (bench_cuda, built with the
# CUDA backend) prints the GPU figures, or one "skipped" line without a device; its JSON lines are
# kept in $BUILD/bench_cuda.jsonl. Figures only: nothing here passes or fails.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
THREADS=${BENCH_THREADS:-$(nproc)}
PY=/usr/bin/python3  # Debian's interpreter, where python3-torch is installed

echo "== tokenizer"
"$BUILD/bin/bench_tokenizer" "$PWD" "$BUILD/tokpeer/node_modules"

echo
echo "== CPU engine vs torch reference (fp32, $THREADS threads)"
have_torch=1
"$PY" -c "import torch" 2>/dev/null || { have_torch=0; echo "torch not installed: run scripts/install-deps.sh --tools for the side-by-side"; }
results=$(mktemp)
trap 'rm -f "$results"' EXIT
run_pair() {  # OURS_MODEL TORCH_MODEL PROMPTS LEN BATCH STEPS
  "$BUILD/bin/bench_engine" "$1" "$3" "$4" "$5" "$6" "$THREADS" | tee -a "$results" | grep -v '^{'
  if [[ $have_torch == 1 ]]; then
    "$PY" tools/bench/torch_reference_bench.py "$2" "$3" "$4" "$5" "$6" "$THREADS" | tee -a "$results" | grep -v '^{'
  fi
}
run_pair tests/fixtures/organism tests/fixtures/organism 16 64 16 32
run_pair synthetic:qwen2.5-0.5b tests/fixtures/configs/Qwen2.5-0.5B-Instruct.json 4 64 4 8
"$PY" - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ours = [r for r in rows if r["impl"] == "abliterate"]
ref = [r for r in rows if r["impl"] == "torch"]
for o, t in zip(ours, ref):
    print("ratio abliterate/torch  %-28s prefill %5.2fx  decode %5.2fx" % (o["model"], o["prefill_tps"] / t["prefill_tps"], o["decode_tps"] / t["decode_tps"]))
PY

echo
echo "== sweep throughput ($THREADS threads)"
BENCH_THREADS=$THREADS bash tests/bench/bench_sweep.sh "$BUILD"

echo
echo "== CUDA engine"
if [[ -x "$BUILD/bin/bench_cuda" ]]; then
  cuda_out=$(mktemp)
  "$BUILD/bin/bench_cuda" | tee "$cuda_out" | grep -v '^{' || echo "bench_cuda failed (its message is above)"
  grep '^{' "$cuda_out" > "$BUILD/bench_cuda.jsonl" || true
  rm -f "$cuda_out"
  if [[ -s "$BUILD/bench_cuda.jsonl" ]]; then echo "JSON lines: $BUILD/bench_cuda.jsonl"; fi
else
  echo "bench_cuda not built (CUDA backend off in $BUILD)"
fi
