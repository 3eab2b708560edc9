# The mixture-of-experts organism (tests/fixtures/organism-moe, a Qwen2-MoE trained so that its
# routed experts write the refusal): `abliterate run` removes its refusals only when the experts
# are ablated. With the default (every expert's down projection ablated too) a small sweep finds
# a trial without refusals at a small KL; with --ablate-experts false (attention, the shared
# expert and dense MLPs only — what tools that skip expert tensors do) no trial of the same sweep
# removes them. The best trial is exported and the exported model refuses exactly as the sweep
# measured. The same organism with its experts stacked as transformers 5 saves them
# (fuse_experts.py), swept on 2 ranks with sharded weights, gives the same trials and an export
# that refuses as measured and holds the per-expert export's tensors, stacked (the unit tests
# ExportFamilies.*_fused hold the bit-for-bit equality with the same directions).
source "$(dirname "$0")/common.sh"
MOE="$HERE/../fixtures/organism-moe"
OPTS=(--threads 1 --quiet --backend cpu --good "$MOE/prompts/harmless.txt"
      --bad "$MOE/prompts/harmful.txt" "${EVAL_ARGS[@]}" --trials 40 --startup-trials 16 --trials-per-batch 8)
ARGS=(--model "$MOE" "${OPTS[@]}")
ALL="$WORK/moe/all" SHARED="$WORK/moe/shared" FUSED="$WORK/moe/fused"
rm -rf "$WORK/moe" && mkdir -p "$ALL" "$SHARED" "$FUSED"
"$BIN" run "${ARGS[@]}" --out "$ALL"
cp "$ALL"/baseline.h5 "$ALL"/residuals.h5 "$ALL"/directions.h5 "$SHARED"/
"$BIN" run "${ARGS[@]}" --ablate-experts false --out "$SHARED"
"$PY" "$HERE/fuse_experts.py" "$MOE" "$WORK/moe/fused-model"
"$MPIEXEC" -np 2 --oversubscribe "$BIN" run --model "$WORK/moe/fused-model" "${OPTS[@]}" --sharding FULL_SHARD \
  --out "$FUSED"
# Refusals equal, KL within 1e-4 relative: the 1-rank and 2-rank passes sum in other orders, and
# on a CPU without AVX-512 (the avx2 kernels) trial 21's KL of 8.4e-4 moves by 1.9e-5 of itself.
"$PY" "$HERE/compare_trials.py" "$ALL" "$FUSED" 40 1e-4
"$BIN" report --trials "$ALL" --json "$ALL/report.json"
"$BIN" report --trials "$SHARED" --json "$SHARED/report.json"
TRIAL=$("$PY" - "$ALL/report.json" "$SHARED/report.json" <<'PY'
import json, sys
every, shared = (json.load(open(p)) for p in sys.argv[1:3])
n = every["meta"]["n_refusal"]
assert every["meta"]["baseline_refusals"] >= 0.9 * n, f"baseline refuses only {every['meta']['baseline_refusals']}/{n}"
best_every = min(every["trials"], key=lambda t: (t["refusals"], t["kl"]))
best_shared = min(shared["trials"], key=lambda t: (t["refusals"], t["kl"]))
print(f"every expert ablated: best trial {best_every['trial']}: {best_every['refusals']}/{n} refusals, "
      f"KL {best_every['kl']:.4f}", file=sys.stderr)
print(f"routed experts untouched: best of {len(shared['trials'])} trials: {best_shared['refusals']}/{n} refusals",
      file=sys.stderr)
assert best_every["refusals"] <= 0.1 * n and best_every["kl"] < 0.2, "ablating every expert did not remove refusals"
assert best_shared["refusals"] >= 0.8 * n, "refusals went away without ablating the routed experts"
print(best_every["trial"])
PY
)
export_behaves_like_trial "$ALL" "$TRIAL" "$MOE/prompts"
export_behaves_like_trial "$FUSED" "$TRIAL" "$MOE/prompts"
# The stacked export holds the per-expert one's tensors: untouched ones bit for bit, the ablated
# ones as far as the two runs' directions (1 and 2 ranks) differ.
"$PY" "$HERE/fuse_experts.py" --stack "$ALL/model" "$FUSED/model" 1e-4
