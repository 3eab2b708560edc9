#!/usr/bin/env bash
# The same TPE sweep on 1 rank and on 4 ranks in 2 virtual nodes (HYBRID_SHARD: weights sharded
# within each node, trials spread over both): the same trials, the same refusal counts, KL within
# 1e-6 relative.
source "$(dirname "$0")/common.sh"
args=(sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --search tpe --trials 12 --startup-trials 4 --trials-per-batch 4)
new_run "$WORK/one"
new_run "$WORK/four"
"$BIN" "${args[@]}" --out "$WORK/one"
"$MPIEXEC" -np 4 --oversubscribe "$BIN" "${args[@]}" --out "$WORK/four" --sharding HYBRID_SHARD --ranks-per-node 2
"$PY" "$HERE/compare_trials.py" "$WORK/one" "$WORK/four" 12
