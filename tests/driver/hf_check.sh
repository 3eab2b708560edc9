#!/usr/bin/env bash
# The plumbing of tools/hf_check/hf_check.py (the equality check against Hugging Face transformers,
# docs/hf-equality.md), exercised where transformers is not installed:
#  1. the dry path (--reference ours-torch: tools/organism/reference.py stands in for transformers)
#     on three golden fixtures and an export made by a 2-trial `abliterate run`; everything after
#     model creation is the transformers path's code;
#  2. the transformers path itself against a stand-in module (tools/hf_check/test_stub: reference.py
#     again, NOT transformers) building two "random" models, with the CUDA comparison rows fed by
#     the CPU backend (--test-cuda-as-cpu) and HDF5 read through libhdf5 (ctypes) instead of h5py;
#  3. without transformers and without --reference ours-torch, it reports "skipped" (status 77).
source "$(dirname "$0")/common.sh"
CHECK="$HERE/../../tools/hf_check/hf_check.py"
# The stand-in reference is torch code: without Debian's python3-torch (install-deps.sh --tools)
# there is nothing to run, which ctest shows as a skip.
if ! "$PY" -c 'import torch' 2> /dev/null; then
  echo "SKIPPED: $PY cannot import torch (./scripts/install-deps.sh --tools installs python3-torch)"
  exit 77
fi
OUT="${WORK%/}-hf_check"  # its own folder beside the shared work folder
rm -rf "$OUT" && mkdir -p "$OUT"
"$PY" "$CHECK" --reference ours-torch --abliterate "$BIN" --threads 1 --work "$OUT/dry" \
  --golden llama-tied,qwen3-moe,gemma3-mm --table "$OUT/dry.md"
grep -q '| export-of-golden-llama-tied | LlamaForCausalLM | cpu |.*| pass |' "$OUT/dry.md"
PYTHONPATH="$HERE/../../tools/hf_check/test_stub" "$PY" "$CHECK" --abliterate "$BIN" --threads 1 \
  --work "$OUT/stub" --families LlamaForCausalLM,MixtralForCausalLM --golden none --export none \
  --backend cuda --test-cuda-as-cpu --h5-reader ctypes --table "$OUT/stub.md"
grep -q '| random-mixtral-moe | MixtralForCausalLM | cuda | transformers fp32 (cpu) |.*| pass' "$OUT/stub.md"
if ! "$PY" -c 'import transformers' 2> /dev/null; then
  set +e
  out=$("$PY" "$CHECK" --abliterate "$BIN" --work "$OUT/skip" 2>&1)
  status=$?
  set -e
  [[ $status == 77 && $out == "skipped: transformers not importable" ]] ||
    { echo "FAIL: expected status 77 and the skip line, got $status: $out"; exit 1; }
  echo "ok: without transformers: $out (status 77)"
fi
