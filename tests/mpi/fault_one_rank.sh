#!/usr/bin/env bash
# One rank of a 3-rank job is given a corrupt weights file while the others are fine: the job
# must end by itself, non-zero, within seconds, with a message naming the file — never hang.
# usage: fault_one_rank.sh ABLITERATE MPIEXEC WORK_DIR
set -euo pipefail
BIN=$1 MPIEXEC=$2 WORK=$3
HERE=$(cd "$(dirname "$0")" && pwd)
GOOD="$HERE/../fixtures/tiny-llama"
PROMPTS="$HERE/../fixtures/organism/prompts"
rm -rf "$WORK" && mkdir -p "$WORK/bad"
cp "$GOOD"/*.json "$WORK/bad/"
# The header promises more data than the truncated file holds.
head -c 100000 "$GOOD/model.safetensors" >"$WORK/bad/model.safetensors"
args=(residuals --good "$PROMPTS/harmless.txt" --bad "$PROMPTS/harmful.txt" --good-split "[:40]"
      --bad-split "[:40]" --sharding FULL_SHARD --out "$WORK/out")
start=$(date +%s)
set +e
timeout 120 "$MPIEXEC" -np 2 --oversubscribe "$BIN" "${args[@]}" --model "$GOOD" : \
                       -np 1 --oversubscribe "$BIN" "${args[@]}" --model "$WORK/bad" >"$WORK/log" 2>&1
rc=$?
set -e
took=$(( $(date +%s) - start ))
sed 's/^/  | /' "$WORK/log" | head -20
if [[ $rc -eq 0 ]]; then echo "FAILED: the job succeeded with a corrupt shard on rank 2"; exit 1; fi
if [[ $rc -eq 124 ]]; then echo "FAILED: the job hung (killed after 120 s)"; exit 1; fi
if ! grep -q "$WORK/bad/model.safetensors" "$WORK/log"; then echo "FAILED: no message names the corrupt file"; exit 1; fi
if ! grep -q "rank 2" "$WORK/log"; then echo "FAILED: the message does not name the failing rank"; exit 1; fi
if [[ -e "$WORK/out/residuals.h5" ]]; then echo "FAILED: a failed run left a complete-looking residuals.h5"; exit 1; fi
echo "PASSED: exit code $rc after ${took} s, the failing rank and file named, no complete output"

# expect_refused LABEL DIR WANT: a 3-rank job whose rank 2 reads the model in DIR (the others the
# good one) must end by itself, non-zero, with a message matching WANT, and leave no residuals.h5.
expect_refused() {
  local label=$1 dir=$2 want=$3 rc
  set +e
  timeout 120 "$MPIEXEC" -np 2 --oversubscribe "$BIN" "${args[@]}" --model "$GOOD" : \
                         -np 1 --oversubscribe "$BIN" "${args[@]}" --model "$dir" >"$WORK/log-$label" 2>&1
  rc=$?
  set -e
  sed 's/^/  | /' "$WORK/log-$label" | head -8
  if [[ $rc -eq 0 ]]; then echo "FAILED: the job ran with $label on rank 2"; exit 1; fi
  if [[ $rc -eq 124 ]]; then echo "FAILED: the job hung (killed after 120 s)"; exit 1; fi
  if ! grep -q "$want" "$WORK/log-$label"; then echo "FAILED: no message '$want'"; exit 1; fi
  if [[ -e "$WORK/out/residuals.h5" ]]; then echo "FAILED: a refused run left a residuals.h5"; exit 1; fi
  echo "PASSED: $label on rank 2 refuses the job on every rank (exit code $rc)"
}

# Rank 2 reads a config.json that differs (a model folder copied unevenly to the nodes' disks):
# every rank must refuse the job together, before any work, naming the model folder.
mkdir -p "$WORK/edited"
cp "$GOOD"/* "$WORK/edited/"
sed -i 's/"rms_norm_eps": *[0-9.e-]*/"rms_norm_eps": 1e-3/' "$WORK/edited/config.json"
cmp -s "$GOOD/config.json" "$WORK/edited/config.json" && { echo "FAILED: the test did not edit config.json"; exit 1; }
expect_refused "a different config.json" "$WORK/edited" "the ranks read different models from"

# Rank 2 reads another chat template (tokenizer_config.json edited on one node): the prompts would
# render differently on that rank, so every rank refuses the job together; and a template that
# cannot run on rank 2 alone fails every rank with its message, instead of leaving ranks 0 and 1
# in the next collective.
for kind in other broken; do
  mkdir -p "$WORK/$kind"
  cp "$GOOD"/* "$WORK/$kind/"
  PYTHONIOENCODING=utf-8 /usr/bin/python3 - "$WORK/$kind/tokenizer_config.json" "$kind" <<'PY'
import json, sys
path, kind = sys.argv[1:3]
c = json.load(open(path, encoding="utf-8"))
c["chat_template"] = c["chat_template"].replace("<|im_start|>assistant", "<|im_start|>assistant ") if kind == "other" \
    else "{% include 'header.jinja' %}" + c["chat_template"]
json.dump(c, open(path, "w", encoding="utf-8"), ensure_ascii=False)
PY
done
expect_refused "another chat template" "$WORK/other" "the ranks read different chat templates from"
expect_refused "a broken chat template" "$WORK/broken" \
  "rank 2: .*tokenizer_config.json:1: the tag {% include %} is not supported"
