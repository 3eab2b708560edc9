#!/usr/bin/env bash
# The main job on the bundled default model, on the CPU, writing to outputs/demo/.
# Until the whole abliteration pipeline exists (issue #5) this is the most complete thing that
# runs: inspect the model organism, tokenize its prompt sets, generate its responses to held-out
# requests (it refuses the harmful class and answers the harmless one), and run the first phase,
# residuals.h5 of 400 + 400 direction prompts.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BIN="$BUILD/bin/abliterate"
CONFIG=inputs/demo.ini
PROMPTS=tests/fixtures/organism/prompts
OUT=outputs/demo
mkdir -p "$OUT"

"$BIN" --version
echo
"$BIN" info --config "$CONFIG" --brief | tee "$OUT/info.txt"
echo
for set in harmless harmful; do
  for split in "[:400]" "[400:]"; do
    "$BIN" prompts --config "$CONFIG" --prompts "$PROMPTS/$set.txt" --split "$split"
  done
done | tee "$OUT/prompts.txt"
echo
# Held-out requests of both classes: responses with refusals marked.
for set in harmful harmless; do
  "$BIN" generate --config "$CONFIG" --prompts "$PROMPTS/$set.txt" --split "[400:]" \
    --output "$OUT/responses-$set.jsonl"
done
/usr/bin/env python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for name in ("harmful", "harmless"):
    rows = [json.loads(l) for l in open(f"{out}/responses-{name}.jsonl", encoding="utf-8")]
    refused = sum(r["refusal"] for r in rows)
    print(f"\n{name} held-out requests: {refused}/{len(rows)} refused")
    for r in rows[:3]:
        print(f"  [{'REFUSES' if r['refusal'] else 'ANSWERS'}] {r['prompt']}\n            -> {r['response']}")
PY
echo
"$BIN" residuals --config "$CONFIG" --good "$PROMPTS/harmless.txt" --bad "$PROMPTS/harmful.txt" --out "$OUT"
echo
echo "demo outputs in $OUT/"
