#!/usr/bin/env bash
# `abliterate evaluate`: the exported front trial of a sweep, scored against the organism it came
# from on 1 and 3 ranks, has exactly the refusals the sweep recorded for that trial and its KL
# divergence to float rounding (the sweep ablates on the fly, the export merges the weights); the
# base scored against itself has KL 0 and the baseline's refusals; a model of another shape is
# refused before any work.
source "$(dirname "$0")/common.sh"
RUN="$WORK/evaluate"
new_run "$RUN"
"$BIN" sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$RUN" --search sobol --trials 8 --trials-per-batch 4
"$BIN" report --trials "$RUN" --json "$RUN/report.json" --quiet > /dev/null
TRIAL=$("$PY" - "$RUN/report.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
print(min((t["trials"][i] for i in t["front"]), key=lambda r: (r["refusals"], r["kl"]))["trial"])
PY
)
"$BIN" export --run-dir "$RUN" --trial "$TRIAL" --out "$RUN/model" --dtype f32 --quiet
args=(evaluate "${MODEL_ARGS[@]:2}" "${PROMPT_ARGS[@]}" "${EVAL_ARGS[@]}" --base "$MODEL")  # without --model
"$BIN" "${args[@]}" --model "$RUN/model" --out "$RUN/eval-1" | tee "$RUN/eval-1.txt"
"$MPIEXEC" -np 3 --oversubscribe "$BIN" "${args[@]}" --model "$RUN/model" --out "$RUN/eval-3" > "$RUN/eval-3.txt"
grep -q "^refusals:" "$RUN/eval-1.txt" || { echo "FAIL: evaluate printed no refusals"; exit 1; }
# The base against itself.
"$BIN" "${args[@]}" --model "$MODEL" --out "$RUN/eval-base"

"$PY" - "$RUN" "$TRIAL" <<'PY'
import json, sys
import h5py
run, k = sys.argv[1], int(sys.argv[2])
trial = json.load(open(f"{run}/report.json"))["trials"][k]
for folder in ("eval-1", "eval-3"):
    with h5py.File(f"{run}/{folder}/evaluate.h5") as f:
        assert f.attrs["schema"] == "abliterate-evaluate", f.attrs["schema"]
        refusals, kl = int(f.attrs["refusals"]), float(f.attrs["kl"])
        assert refusals == int(f["refusal/is_refusal"][:].sum())
        assert abs(kl - f["kl/kl"][:].mean()) <= 1e-12 * max(1.0, kl)
        print(f"{folder}: {refusals} refusals, KL {kl!r}; the sweep's trial {k}: {trial['refusals']}, {trial['kl']!r}")
        assert refusals == trial["refusals"], "the exported trial refuses otherwise than the sweep measured"
        assert abs(kl - trial["kl"]) <= 1e-5 * max(1e-3, trial["kl"]), "KL differs beyond float rounding"
with h5py.File(f"{run}/eval-base/evaluate.h5") as f, h5py.File(f"{run}/baseline.h5") as b:
    assert float(f.attrs["kl"]) == 0.0 and (f["kl/kl"][:] == 0).all(), "the base against itself has KL > 0"
    assert int(f.attrs["refusals"]) == int(b["refusal/is_refusal"][:].sum()), "the base refuses otherwise than baseline.h5"
    assert list(f["refusal/responses"].asstr()[:]) == list(b["refusal/responses"].asstr()[:])
print("ok: evaluate reproduces the sweep's trial and the baseline")
PY
expect_failure "is a .*but .* is a .*of its shape" "$BIN" "${args[@]}" --model synthetic:tiny-llama --out "$RUN/eval-bad"
