#!/usr/bin/env bash
# The CUDA backend end to end against the CPU backend on the organism (needs a GPU; exits 77,
# "skipped", without one): the baseline's refusals and KL reference, a short Sobol sweep's
# refusals and KL per trial, and greedy responses of `generate`. The GPU computes in bf16 and the
# CPU in fp32, so counts may differ by a few prompts where the greedy choice is a near-tie; the
# tolerances below say how many.
source "$(dirname "$0")/common.sh"
if ! "$BIN" --version | grep -qE 'CUDA devices: +[1-9]'; then
  echo "skipped: $("$BIN" --version | grep -E 'CUDA' | tr -s ' ' | paste -sd ';')"
  exit 77
fi
GPU_ARGS=(--model "$MODEL" --quiet --backend cuda)
RUN="$WORK/cuda"
rm -rf "$RUN" && mkdir -p "$RUN"
cp "$BASE"/residuals.h5 "$BASE"/directions.h5 "$RUN"/
"$BIN" baseline "${GPU_ARGS[@]}" "${PROMPT_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$RUN"
"$PY" - "$BASE/baseline.h5" "$RUN/baseline.h5" <<'PY'
import sys, h5py, numpy as np
cpu, gpu = (h5py.File(p, "r") for p in sys.argv[1:3])
rc, rg = cpu["/refusal/is_refusal"][:], gpu["/refusal/is_refusal"][:]
lc, lg = cpu["/kl/logprobs"][:].astype(np.float64), gpu["/kl/logprobs"][:].astype(np.float64)
kl = (np.exp(lc) * (lc - lg)).sum(axis=1)
print(f"baseline refusals: CPU {rc.sum()}/{len(rc)}, GPU {rg.sum()}/{len(rg)}, differing prompts {(rc != rg).sum()}")
print(f"baseline KL(CPU || GPU) per prompt: mean {kl.mean():.2e}, max {kl.max():.2e}")
assert (rc != rg).sum() <= 3, "more than 3 prompts change their refusal between the backends"
assert kl.max() < 1e-2, "the GPU's first-token distribution is far from the CPU's"
PY
# The same 16 Sobol trials on both backends (the CPU's trials.h5 in a copy with the CPU baseline).
CPU_RUN="$WORK/cuda-cpu-ref"
new_run "$CPU_RUN"
SWEEP=(--search sobol --trials 16 --trials-per-batch 8)
"$BIN" sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$CPU_RUN" "${SWEEP[@]}"
cp "$BASE"/baseline.h5 "$RUN"/baseline.h5
"$BIN" sweep "${GPU_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$RUN" "${SWEEP[@]}"
paste <(trials_of "$CPU_RUN") <(trials_of "$RUN") | "$PY" -c '
import sys
worst_r = worst_kl = 0.0
for line in sys.stdin:
    cols = line.split("\t")
    c, g = cols[0].split(), cols[1].split()
    rc, kc, rg, kg = int(c[0]), float(c[1]), int(g[0]), float(g[1])
    worst_r = max(worst_r, abs(rc - rg))
    worst_kl = max(worst_kl, abs(kc - kg) / max(kc, 1e-3))
    print(f"refusals CPU {rc:3d} GPU {rg:3d}   KL CPU {kc:.4f} GPU {kg:.4f}")
print(f"largest refusal difference {worst_r:.0f}, largest relative KL difference {worst_kl:.3f}")
assert worst_r <= 3, "a trial refuses more than 3 prompts differently on the GPU"
assert worst_kl <= 0.25, "a trial KL differs by more than 25 % (of max(KL, 1e-3)) on the GPU"
'
for backend in cpu cuda; do
  "$BIN" generate --model "$MODEL" --prompts "$PROMPTS/harmful.txt" --split "[400:460]" --max-new-tokens 32 \
    --backend "$backend" --quiet --output "$RUN/generate-$backend.jsonl"
done
"$PY" - "$RUN/generate-cpu.jsonl" "$RUN/generate-cuda.jsonl" <<'PY'
import json, sys
cpu, gpu = ([json.loads(l)["response"] for l in open(p)] for p in sys.argv[1:3])
same = sum(a == b for a, b in zip(cpu, gpu))
print(f"generate: {same}/{len(cpu)} greedy responses identical on both backends")
assert same >= 0.9 * len(cpu), "fewer than 90 % of the greedy responses are identical"
PY
