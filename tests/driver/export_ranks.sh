#!/usr/bin/env bash
# export under mpirun: 3 ranks writing their own shards of a 6-shard folder give exactly the
# files of a serial export (every shard, the index, config and tokenizer files byte-identical).
source "$(dirname "$0")/common.sh"
RUN="$WORK/export"
new_run "$RUN"
"$BIN" sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$RUN" --search sobol --trials 2 --trials-per-batch 2
args=(export --run-dir "$RUN" --trial 1 --max-shard-size 400KB --quiet)
"$BIN" "${args[@]}" --out "$RUN/serial"
"$MPIEXEC" -np 3 --oversubscribe "$BIN" "${args[@]}" --out "$RUN/three"
n=$(ls "$RUN/serial"/model-*.safetensors | wc -l)
[ "$n" -ge 3 ] || { echo "FAIL: expected several shards, got $n"; exit 1; }
diff -r "$RUN/serial" "$RUN/three"
[ ! -e "$RUN/three.partial" ] || { echo "FAIL: the .partial folder was left behind"; exit 1; }
echo "ok: $n shards and $(ls "$RUN/serial" | wc -l) files identical from 1 and 3 ranks"
