# Shared by the driver tests: paths, the organism's prompt sets and small-budget settings.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${ABL_BIN:?} MPIEXEC=${ABL_MPIEXEC:-mpirun} WORK=${ABL_WORK:?}
MODEL="$HERE/../fixtures/organism"
PROMPTS="$MODEL/prompts"
BASE="$WORK/base"  # baseline.h5, residuals.h5, directions.h5 of the setup test
PY=${ABL_PYTHON:-/usr/bin/python3}  # Debian's, with numpy and h5py (install-deps.sh)
export OMP_NUM_THREADS=1
# Model and direction prompts (every phase), evaluation settings (baseline and sweep).
# The CPU backend: these tests hold exact equalities (layouts, resume, export) that bf16 on a GPU
# would blur; cuda_backend.sh compares the two backends.
MODEL_ARGS=(--model "$MODEL" --threads 1 --quiet --backend cpu)
PROMPT_ARGS=(--good "$PROMPTS/harmless.txt" --bad "$PROMPTS/harmful.txt")
EVAL_ARGS=(--kl-split "[400:460]" --eval-split "[400:460]" --max-response-length 32)

# A run folder with the setup's phase files.
new_run() {
  rm -rf "$1" && mkdir -p "$1"
  cp "$BASE"/baseline.h5 "$BASE"/residuals.h5 "$BASE"/directions.h5 "$1"/
}

# `report --json` of a run folder, printed as one line per trial: refusals kl params...
trials_of() {
  "$BIN" report --trials "$1" --json "$1/report.json" --quiet > /dev/null
  "$PY" - "$1/report.json" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["trials"]:
    print(" ".join(str(v) for k, v in t.items() if k not in ("trial", "elapsed_s")))
PY
}

# Exports trial $2 of run folder $1 (with $1/report.json) as fp32, generates on the held-out
# harmful prompts of prompt folder $3, and checks the exported model refuses exactly as the sweep
# measured that trial.
export_behaves_like_trial() {
  local run=$1 trial=$2 prompts=$3
  "$BIN" export --run-dir "$run" --trial "$trial" --out "$run/model" --dtype f32 --quiet
  "$BIN" generate --model "$run/model" --prompts "$prompts/harmful.txt" --split "[400:460]" --max-new-tokens 32 \
    --refusal-markers builtin --threads 1 --backend cpu --output "$run/exported.jsonl" --quiet
  "$PY" - "$run/exported.jsonl" "$run/report.json" "$trial" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
refused = sum(r["refusal"] for r in rows)
trial = json.load(open(sys.argv[2]))["trials"][int(sys.argv[3])]
print(f"exported model: {refused}/{len(rows)} refusals (the sweep measured {trial['refusals']})")
assert refused == trial["refusals"], "the exported model does not behave like the trial"
PY
}

# Runs a command that must fail with a message matching a pattern.
expect_failure() {
  local pattern=$1
  shift
  local out
  if out=$("$@" 2>&1); then
    echo "FAIL: expected an error from: $*"
    exit 1
  fi
  if ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: the error does not match '$pattern':"
    echo "$out"
    exit 1
  fi
  echo "ok: fails with: $(grep -E -- "$pattern" <<<"$out" | head -1)"
}
