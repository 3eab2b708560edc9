#!/usr/bin/env bash
# Provenance: `run` records run.json in its folder (build, options, ranks, SHA-256 of the model's
# and the prompt files); `run --rerun run.json --out NEW` from another directory, on the same 2
# ranks, reproduces every trial exactly (a TPE sweep, whose proposals depend on every earlier
# result); a rerun whose prompt file changed since is refused, naming the file.
source "$(dirname "$0")/common.sh"
RUN="$WORK/rerun"
rm -rf "$RUN" && mkdir -p "$RUN/prompts" "$RUN/elsewhere"
cp "$PROMPTS"/harmless.txt "$PROMPTS"/harmful.txt "$RUN/prompts/"
"$MPIEXEC" -np 2 --oversubscribe "$BIN" run "${MODEL_ARGS[@]}" --good "$RUN/prompts/harmless.txt" \
  --bad "$RUN/prompts/harmful.txt" "${EVAL_ARGS[@]}" --search tpe --trials 12 --startup-trials 6 \
  --trials-per-batch 4 --seed 7 --out "$RUN/first"

"$PY" - "$RUN" "$MODEL" <<'PY'
import hashlib, json, os, sys
run, model = sys.argv[1], sys.argv[2]
rec = json.load(open(f"{run}/first/run.json"))
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
assert rec["schema"] == "abliterate-run" and rec["command"] == "run", rec["command"]
assert rec["abliterate"]["version"] and rec["abliterate"]["git_commit"], rec["abliterate"]
assert rec["seed"] == 7 and rec["options"]["seed"] == 7 and rec["options"]["trials"] == 12
assert rec["ranks"]["world"] == 2 and sum(rec["ranks"]["hosts"].values()) == 2
assert rec["engine"]["backend"] == "cpu" and "2 ranks" in rec["engine"]["topology"], rec["engine"]
files = rec["inputs"]["model"]["files"]
for name in ("config.json", "model.safetensors", "tokenizer.json"):
    assert files[name]["sha256"] == sha(os.path.join(model, name)), name
assert rec["inputs"]["files"]["good"]["sha256"] == sha(f"{run}/prompts/harmless.txt")
assert rec["inputs"]["files"]["bad"]["sha256"] == sha(f"{run}/prompts/harmful.txt")
assert os.path.isabs(rec["options"]["model"]) and os.path.isabs(rec["options"]["good"])
print(f"ok: run.json records commit {rec['abliterate']['git_commit'][:12]}, {len(rec['options'])} options, "
      f"{len(files)} model files and {len(rec['inputs']['files'])} prompt files with their SHA-256")
PY

# The rerun, from another directory, into another folder.
(cd "$RUN/elsewhere" && "$MPIEXEC" -np 2 --oversubscribe "$BIN" run --rerun ../first/run.json --out ../second)
[ "$(trials_of "$RUN/first")" = "$(trials_of "$RUN/second")" ] || {
  echo "FAIL: the rerun's trials differ"; diff <(trials_of "$RUN/first") <(trials_of "$RUN/second"); exit 1; }
grep -q '"rerun_of"' "$RUN/second/run.json" || { echo "FAIL: the rerun's run.json does not name its origin"; exit 1; }
echo "ok: the rerun reproduces all $(trials_of "$RUN/first" | wc -l) trials exactly"

# A changed input is refused before any work, naming the file.
echo "one more harmless request" >> "$RUN/prompts/harmless.txt"
expect_failure "good $RUN/prompts/harmless.txt: the run used SHA-256" \
  "$BIN" run --rerun "$RUN/first/run.json" --out "$RUN/third"
[ ! -e "$RUN/third/baseline.h5" ] || { echo "FAIL: the refused rerun computed a baseline"; exit 1; }
expect_failure "cannot be used together" "$BIN" run --rerun "$RUN/first/run.json" --config inputs/default.ini
