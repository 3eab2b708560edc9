#!/usr/bin/env bash
# The phases before the sweep, on one rank: baseline (with prefix detection), residuals of 400 +
# 400 direction prompts, directions. The other driver tests start from these files.
source "$(dirname "$0")/common.sh"
# Only its own folder: the tests that do not need these files (families, moe_organism, rerun) may
# already be running in theirs, and each test clears the folders it writes.
rm -rf "$BASE" && mkdir -p "$BASE"
"$BIN" baseline "${MODEL_ARGS[@]}" "${PROMPT_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$BASE"
"$BIN" residuals "${MODEL_ARGS[@]}" "${PROMPT_ARGS[@]}" --out "$BASE" --no-full-residuals
"$BIN" directions --out "$BASE"
ls -l "$BASE"
