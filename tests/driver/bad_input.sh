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
[ "$(md5sum "$RUN"/*.h5)" = "$sum" ] || { echo "FAIL: a failed phase changed the run folder"; exit 1; }
echo "ok: every bad input failed early and the run folder is unchanged"
