# Shared by the isa tests: the binary, a work folder, and a short greedy generation on the model
# organism (tests/fixtures/organism) whose responses any kernel variant must reproduce.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${ABL_BIN:?} WORK=${ABL_WORK:?}
MODEL="$HERE/../fixtures/organism"
export OMP_NUM_THREADS=1
mkdir -p "$WORK"

# generate_organism OUT.jsonl [launcher...]: 15 held-out harmful and 15 harmless prompts, 32
# greedy tokens each (the harmless ones answer in varied words, not one refusal).
generate_organism() {
  local out=$1 set
  shift
  : > "$out"
  for set in harmful harmless; do
    "$@" "$BIN" generate --model "$MODEL" --prompts "$MODEL/prompts/$set.txt" --split "[400:415]" \
      --max-new-tokens 32 --refusal-markers builtin --threads 1 --backend cpu --output "$out.$set" --quiet
    cat "$out.$set" >> "$out"
  done
}

# The kernel variant --version reports (first word after "CPU kernels:").
kernels_of_version() {
  sed -n 's/^ *CPU kernels: *\([a-z0-9]*\).*/\1/p' <<<"$1"
}
