#!/usr/bin/env bash
# The main job on the bundled default model, on the CPU, writing to outputs/demo/.
# Until the engine and the pipeline exist (issues #3–#5) this is the most complete thing that
# runs: inspect the model folder, then render and tokenize the default prompt sets as a run would.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BIN="$BUILD/bin/abliterate"
CONFIG=inputs/demo.ini
OUT=outputs/demo
mkdir -p "$OUT"

"$BIN" --version
echo
"$BIN" info --config "$CONFIG" | tee "$OUT/info.txt"
echo
for set in harmless harmful; do
  for split in "[:400]" "[400:]"; do
    "$BIN" prompts --config "$CONFIG" --prompts "inputs/prompts/$set.txt" --split "$split"
  done
done | tee "$OUT/prompts.txt"
echo
"$BIN" prompts --config "$CONFIG" --prompts inputs/prompts/harmful.txt --split "[400:]" --show 1 \
  | head -n 8
# Tokenize every default prompt and decode it back: the round trip must give the text again.
python3 - "$BIN" "$CONFIG" "$OUT" <<'PY'
import json, subprocess, sys
binary, config, out = sys.argv[1:4]
texts = [l.rstrip("\n") for f in ("harmless", "harmful") for l in open(f"inputs/prompts/{f}.txt", encoding="utf-8") if l.strip()]
lines = "".join(json.dumps({"text": t}) + "\n" for t in texts)
res = subprocess.run([binary, "tokenize", "--config", config, "--decode"], input=lines.encode(), capture_output=True, check=True)
rows = [json.loads(l) for l in res.stdout.decode().splitlines()]
with open(f"{out}/tokens.jsonl", "w") as f:
    f.write(res.stdout.decode())
same = sum(r["decoded"] == t for r, t in zip(rows, texts))
print(f"tokenize: {len(rows)} prompts, {sum(len(r['ids']) for r in rows)} tokens, decode round trips {same}/{len(texts)}")
sys.exit(0 if same == len(texts) else 1)
PY
echo "demo outputs in $OUT/"
