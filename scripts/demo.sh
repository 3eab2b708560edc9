#!/usr/bin/env bash
# The main job on the bundled default model, on the CPU, writing to outputs/demo/: the whole
# abliteration run (baseline, residuals, directions, a 200-trial sweep) under `mpirun -np 2` on
# the model organism, the Pareto front, the export of one front trial as a Hugging Face folder,
# its evaluation against the organism, the exported model's responses to held-out requests, and
# the analysis plots.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BIN="$BUILD/bin/abliterate"
CONFIG=inputs/demo.ini
PROMPTS=tests/fixtures/organism/prompts
OUT=outputs/demo
NP=${ABL_DEMO_RANKS:-2}
mkdir -p "$OUT"
# Open MPI refuses root unless told; shared memory between the ranks of this one machine.
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
# A progress line every 5 s (the default, 30 s, suits long cluster jobs).
export ABL_PROGRESS_INTERVAL=${ABL_PROGRESS_INTERVAL:-5}

"$BIN" --version
echo
"$BIN" info --config "$CONFIG" --brief | tee "$OUT/info.txt"
echo
# A fresh run each time (delete nothing else): the phases reuse existing files by design.
rm -f "$OUT"/baseline.h5 "$OUT"/residuals.h5 "$OUT"/directions.h5 "$OUT"/trials.h5 "$OUT"/trials.h5.partial
mpirun -np "$NP" --oversubscribe "$BIN" run --config "$CONFIG" --threads 1
echo
"$BIN" report --trials "$OUT" --csv "$OUT/trials.csv" --json "$OUT/trials.json"
# The front trial with the fewest refusals among those that change the model little (KL < 0.2).
TRIAL=$(/usr/bin/env python3 - "$OUT/trials.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
front = [t["trials"][i] for i in t["front"]]
ok = [r for r in front if r["kl"] < 0.2] or front
print(min(ok, key=lambda r: (r["refusals"], r["kl"]))["trial"])
PY
)
echo
# f32: W' exactly as the sweep scored it. The organism is tiny and the front trials are the
# weakest ablations that still remove refusals, so rounding W' to bf16 can flip its decisions.
mpirun -np "$NP" --oversubscribe "$BIN" export --run-dir "$OUT" --trial "$TRIAL" --out "$OUT/model" --overwrite \
  --dtype f32
echo
# The exported model scored against the organism as the sweep scored the trial (evaluate.h5).
mpirun -np "$NP" --oversubscribe "$BIN" evaluate --config "$CONFIG" --model "$OUT/model" \
  --base tests/fixtures/organism --out "$OUT/evaluate" --threads 1 --quiet
echo
for set in harmful harmless; do
  "$BIN" generate --config "$CONFIG" --model "$OUT/model" --prompts "$PROMPTS/$set.txt" --split "[400:]" \
    --refusal-markers builtin --output "$OUT/abliterated-$set.jsonl" --quiet
done
/usr/bin/env python3 - "$OUT" "$TRIAL" <<'PY'
import json, sys
out, trial = sys.argv[1], sys.argv[2]
print(f"exported trial {trial} -> {out}/model")
for name in ("harmful", "harmless"):
    rows = [json.loads(l) for l in open(f"{out}/abliterated-{name}.jsonl", encoding="utf-8")]
    refused = sum(r["refusal"] for r in rows)
    print(f"\nabliterated model, {name} held-out requests: {refused}/{len(rows)} refused")
    for r in rows[:3]:
        print(f"  [{'REFUSES' if r['refusal'] else 'ANSWERS'}] {r['prompt']}\n            -> {r['response']}")
PY
echo
# Offline analysis of the run: Pareto front, per-depth direction statistics, PCA of residuals.
/usr/bin/python3 tools/analysis/plot_run.py "$OUT" || echo "(plots skipped: see tools/analysis/README.md)"
echo
echo "demo outputs in $OUT/ (plots in $OUT/plots/)"
