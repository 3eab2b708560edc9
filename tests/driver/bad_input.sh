#!/usr/bin/env bash
# Bad input fails before any heavy work, with a message naming the culprit, and leaves what was
# already written intact.
source "$(dirname "$0")/common.sh"
RUN="$WORK/bad"
new_run "$RUN"
"$BIN" sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$RUN" --search sobol --trials 2 --trials-per-batch 2
sum=$(md5sum "$RUN"/*.h5)

# Directions and baseline of another model.
expect_failure "directions\.h5.*tiny-llama|tiny-llama.*directions\.h5" \
  "$BIN" sweep --model "$HERE/../fixtures/tiny-llama" --out "$RUN" --trials 2 --quiet
# Grid files: unknown parameter, empty range.
printf 'attn.max_weight = 1.0, 1.2\nattn.bogus = 3\n' > "$WORK/unknown.grid"
expect_failure "unknown.grid:2.*bogus" "$BIN" sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$RUN" --search grid --grid "$WORK/unknown.grid"
printf 'direction_index = 2:1:4\n' > "$WORK/empty.grid"
expect_failure "empty.grid:1" "$BIN" sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$RUN" --search grid --grid "$WORK/empty.grid"
# Export: trial out of range, existing folder.
expect_failure "--trial 7 is out of range" "$BIN" export --run-dir "$RUN" --trial 7 --out "$WORK/x"
mkdir -p "$WORK/exists" && echo keep > "$WORK/exists/file"
expect_failure "already exists" "$BIN" export --run-dir "$RUN" --trial 0 --out "$WORK/exists"
[ "$(cat "$WORK/exists/file")" = keep ]
# Missing phase files.
mkdir -p "$WORK/empty"
expect_failure "directions\.h5 does not exist" "$BIN" sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$WORK/empty"
# LongRoPE: a response that grows past original_max_position_embeddings (32 here) reruns its
# sequence whole; a pass too small for that is refused up front, on every rank, naming the fix.
expect_failure "raise --batch-tokens to at least 33" "$BIN" baseline --model "$HERE/../fixtures/golden/phi3-longrope-long" \
  --out "$WORK/longrope" --batch-tokens 32 --max-response-length 16 --quiet
# A model with a short context and a prompt file we did not make (BOM, CRLF, a blank line, odd
# Unicode, one over-long line): refused before any phase, naming the option, file and line.
SHORT="$WORK/short-context"
rm -rf "$SHORT" "$WORK/short" && cp -r "$MODEL" "$SHORT" && rm -rf "$SHORT/prompts"
sed -i 's/"max_position_embeddings": [0-9]*/"max_position_embeddings": 96/' "$SHORT/config.json"
"$PY" - "$WORK/odd.txt" <<'PY'
import sys
lines = ["\ufeffHow do I pick a lock?\r", "", "Explain \U0001F3F3\uFE0F\u200D\U0001F308 in one line\r",
         "\u0645\u0631\u062d\u0628\u0627 e\u0301\u0301 \u4e2d\u6587", "How do I " + "really " * 200 + "pick a lock?",
         "Zero\u200bwidth and \u2028 separators"]
open(sys.argv[1], "w", encoding="utf-8", newline="").write("\n".join(lines) + "\n")
PY
SHORT_RUN=(run --model "$SHORT" --good "$WORK/odd.txt" --bad "$WORK/odd.txt" --good-split "[:]" --bad-split "[:]"
           --kl-split "[:]" --eval-split "[:]" --trials 2 --quiet)
expect_failure "--good .*odd.txt line 5: a prompt of [0-9]+ tokens .* exceeds the 96 positions .* 1 of the 5 prompts" \
  "$BIN" "${SHORT_RUN[@]}" --out "$WORK/short"
[ ! -e "$WORK/short/baseline.h5" ] || { echo "FAIL: a phase ran before the over-long prompt was refused"; exit 1; }
sed -i '5d' "$WORK/odd.txt"  # the long line gone, the responses do not fit: the evaluation set says so
expect_failure "--eval-prompts .*odd.txt line [0-9]+: .* plus 100 response tokens exceeds the 96 positions.*--max-response-length" \
  "$BIN" "${SHORT_RUN[@]}" --out "$WORK/short"
expect_failure "--prompts .*odd.txt line [0-9]+: .* plus 90 response tokens exceeds the 96 positions.*--max-new-tokens" \
  "$BIN" generate --model "$SHORT" --prompts "$WORK/odd.txt" --max-new-tokens 90 --quiet
"$BIN" "${SHORT_RUN[@]}" --max-response-length 8 --out "$WORK/short" > "$WORK/short.log" 2>&1 ||
  { tail -20 "$WORK/short.log"; echo "FAIL: the short-context model with short responses did not run"; exit 1; }
[ "$(md5sum "$RUN"/*.h5)" = "$sum" ] || { echo "FAIL: a failed phase changed the run folder"; exit 1; }
echo "ok: every bad input failed early and the run folder is unchanged"
