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

# Rank 2 reads a config.json that differs (a model folder copied unevenly to the nodes' disks):
# every rank must refuse the job together, before any work, naming the model folder.
mkdir -p "$WORK/edited"
cp "$GOOD"/* "$WORK/edited/"
sed -i 's/"rms_norm_eps": *[0-9.e-]*/"rms_norm_eps": 1e-3/' "$WORK/edited/config.json"
cmp -s "$GOOD/config.json" "$WORK/edited/config.json" && { echo "FAILED: the test did not edit config.json"; exit 1; }
set +e
timeout 120 "$MPIEXEC" -np 2 --oversubscribe "$BIN" "${args[@]}" --model "$GOOD" : \
                       -np 1 --oversubscribe "$BIN" "${args[@]}" --model "$WORK/edited" >"$WORK/log2" 2>&1
rc=$?
set -e
sed 's/^/  | /' "$WORK/log2" | head -10
if [[ $rc -eq 0 ]]; then echo "FAILED: the job ran with a different config.json on rank 2"; exit 1; fi
if [[ $rc -eq 124 ]]; then echo "FAILED: the job hung (killed after 120 s)"; exit 1; fi
if ! grep -q "the ranks read different models from" "$WORK/log2"; then echo "FAILED: no message says the models differ"; exit 1; fi
if [[ -e "$WORK/out/residuals.h5" ]]; then echo "FAILED: a refused run left a residuals.h5"; exit 1; fi
echo "PASSED: ranks that read different configs refuse the job together (exit code $rc)"
