#!/usr/bin/env bash
# export under mpirun: 3 ranks writing their own shards of a 6-shard folder give exactly the
# files of a serial export (every shard, the index, config and tokenizer files byte-identical; the
# model cards differ only in the command line they quote).
source "$(dirname "$0")/common.sh"
RUN="$WORK/export"
new_run "$RUN"
"$BIN" sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --out "$RUN" --search sobol --trials 2 --trials-per-batch 2
args=(export --run-dir "$RUN" --trial 1 --max-shard-size 400KB --quiet)
"$BIN" "${args[@]}" --out "$RUN/serial"
"$MPIEXEC" -np 3 --oversubscribe "$BIN" "${args[@]}" --out "$RUN/three"
n=$(ls "$RUN/serial"/model-*.safetensors | wc -l)
[ "$n" -ge 3 ] || { echo "FAIL: expected several shards, got $n"; exit 1; }
# The model card quotes each export's own command line (its --out differs); everything else is
# byte-identical, and each folder's SHA256SUMS verifies.
diff -r -x README.md -x SHA256SUMS "$RUN/serial" "$RUN/three"
diff <(grep -v ' README.md$' "$RUN/serial/SHA256SUMS") <(grep -v ' README.md$' "$RUN/three/SHA256SUMS")
for d in serial three; do (cd "$RUN/$d" && sha256sum --quiet -c SHA256SUMS); done
[ ! -e "$RUN/three.partial" ] || { echo "FAIL: the .partial folder was left behind"; exit 1; }
echo "ok: $n shards and $(ls "$RUN/serial" | wc -l) files identical from 1 and 3 ranks"
