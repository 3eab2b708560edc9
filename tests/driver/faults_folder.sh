#!/usr/bin/env bash
# A run folder proves what it holds, and inputs nobody made for the tests are handled:
# two jobs on one folder (the second is refused, naming the first); a reused folder with a changed
# option or a model of the same shape with other weights (refused, naming what differs, until
# --redo); export with directions that are not the sweep's; bad inputs refused before any phase
# file is written; NaN weights (refused at load, naming the tensor); a padded vocabulary whose
# extra ids the model generates; a model with max_position_embeddings 256.
source "$(dirname "$0")/common.sh"
rm -rf "$WORK" && mkdir -p "$WORK"
"$PY" "$HERE/../../tools/fixtures/make_fault_models.py" "$MODEL" "$WORK/models"
# The run's options after --model (MODEL_ARGS starts with it), so that variants can replace the model.
REST=("${MODEL_ARGS[@]:2}" "${PROMPT_ARGS[@]}" --good-split "[:16]" --bad-split "[:16]" --kl-split "[400:408]"
      --eval-split "[400:408]" --max-response-length 8 --trials 8 --trials-per-batch 4 --startup-trials 4)
SMALL=(run --model "$MODEL" "${REST[@]}")
with_model() { echo run --model "$WORK/models/$1"; }
"$BIN" "${SMALL[@]}" --out "$WORK/ref" > /dev/null

# ---- two jobs, one folder ----
ABL_FAULT_DELAY_MS=30 "$MPIEXEC" -np 2 --oversubscribe "$BIN" "${SMALL[@]}" --out "$WORK/shared" > "$WORK/first.log" 2>&1 &
first=$!
for _ in $(seq 600); do [ -f "$WORK/shared/.abliterate.lock" ] && break; sleep 0.05; done
expect_failure "run folder .*/shared is in use by run .* \(pid [0-9]+" "$BIN" "${SMALL[@]}" --out "$WORK/shared"
wait "$first" || { tail -20 "$WORK/first.log"; echo "FAIL: the first job did not finish"; exit 1; }
[ ! -e "$WORK/shared/.abliterate.lock" ] || { echo "FAIL: the lock outlived its job"; exit 1; }
"$PY" "$HERE/compare_trials.py" "$WORK/ref" "$WORK/shared" 8 1e-5
# A lock whose process is gone is taken over.
echo '{"slurm_job_id":"","host":"'"$(hostname)"'","pid":999999999,"command":"run","started":"then"}' > "$WORK/shared/.abliterate.lock"
"$BIN" "${SMALL[@]}" --out "$WORK/shared" > "$WORK/stale.log" 2>&1
grep -q "taking over the lock" "$WORK/stale.log" || { cat "$WORK/stale.log"; echo "FAIL: stale lock not taken over"; exit 1; }
echo "ok: a stale lock (its pid is gone) is taken over"

# Slices of one sweep (job-array tasks) share a folder; one slice twice does not.
mkdir -p "$WORK/slices" && cp "$WORK/ref"/{baseline,residuals,directions}.h5 "$WORK/slices/"
SLICE=(sweep --model "$MODEL" "${MODEL_ARGS[@]:2}" --kl-split "[400:408]" --eval-split "[400:408]"
       --max-response-length 8 --search sobol --trials 8 --trials-per-batch 2 --out "$WORK/slices")
ABL_FAULT_DELAY_MS=30 "$BIN" "${SLICE[@]}" --slice 0/2 > "$WORK/slice0.log" 2>&1 &
slice0=$!
for _ in $(seq 600); do [ -f "$WORK/slices/.abliterate.slice-0-2.lock" ] && break; sleep 0.05; done
expect_failure "run folder .*/slices is in use by sweep" "$BIN" "${SLICE[@]}" --slice 0/2
"$BIN" "${SLICE[@]}" --slice 1/2 > "$WORK/slice1.log" 2>&1 || { cat "$WORK/slice1.log"; echo "FAIL: a second slice"; exit 1; }
wait "$slice0" || { cat "$WORK/slice0.log"; echo "FAIL: the first slice"; exit 1; }
"$BIN" merge --out "$WORK/slices" --quiet > /dev/null
echo "ok: two slices of one sweep ran side by side in one folder; one slice twice was refused"
# Slices that start at the same moment (a job array) update run.json one at a time: every slice's
# record is kept, in the file or its history, each with its own engine entry.
mkdir -p "$WORK/burst" && cp "$WORK/ref"/{baseline,residuals,directions}.h5 "$WORK/burst/"
BURST=("${SLICE[@]:0:${#SLICE[@]}-1}" "$WORK/burst")
pids=()
for i in 0 1 2 3; do "$BIN" "${BURST[@]}" --slice "$i/4" > "$WORK/burst$i.log" 2>&1 & pids+=($!); done
for p in "${pids[@]}"; do
  wait "$p" || { tail -n 5 "$WORK"/burst*.log; echo "FAIL: a slice started with three others"; exit 1; }
done
"$PY" - "$WORK/burst/run.json" <<'EOF'
import json, sys
rec = json.load(open(sys.argv[1]))
sweeps = [r for r in [rec] + rec.get("history", []) if r.get("command") == "sweep"]
assert len(sweeps) == 4, f"FAIL: {len(sweeps)} sweep records in run.json, 4 slices ran"
assert len({r["process"] for r in sweeps}) == 4, "FAIL: two records name one process"
missing = [r["process"] for r in sweeps if "engine" not in r]
assert not missing, f"FAIL: no engine entry in the records of {missing}"
print("ok: four slices started at once: run.json keeps the four records, each with its engine")
EOF

# ---- a reused folder with other inputs ----
cp -r "$WORK/ref" "$WORK/reused"
expect_failure "baseline.h5 was computed from other inputs .*differ in: system_prompt.*--redo" \
  "$BIN" "${SMALL[@]}" --out "$WORK/reused" --system-prompt "You are terse."
expect_failure "baseline.h5 was computed from other inputs .*differ in: model.*--redo" \
  "$BIN" $(with_model other-weights) "${REST[@]}" --out "$WORK/reused"
expect_failure "residuals.h5 was computed from other inputs .*differ in: winsorize_quantile" \
  "$BIN" "${SMALL[@]}" --out "$WORK/reused" --winsorize-quantile 0.99
expect_failure "directions.h5 was computed from other inputs .*differ in: projected" \
  "$BIN" "${SMALL[@]}" --out "$WORK/reused" --projected false
cmp "$WORK/ref/trials.h5" "$WORK/reused/trials.h5"
"$BIN" "${SMALL[@]}" --out "$WORK/reused" --system-prompt "You are terse." --redo --restart > /dev/null 2>&1 ||
  { echo "FAIL: --redo"; exit 1; }
echo "ok: --redo recomputes the phases for a changed input (--restart the sweep)"

# ---- export checks directions against the sweep ----
cp -r "$WORK/ref" "$WORK/mixed"
"$BIN" directions --out "$WORK/mixed" --projected false --quiet
expect_failure "is not the directions.h5 the sweep of .* used" "$BIN" export --run-dir "$WORK/mixed" --trial 0 \
  --out "$WORK/export" --quiet
[ ! -e "$WORK/export" ] || { echo "FAIL: export wrote a folder"; exit 1; }

# ---- bad inputs fail before any phase file is written ----
bad() {  # pattern, option, value: the run with that option replaced fails and leaves an empty run folder
  local args=() skip=0 a
  for a in "${SMALL[@]}"; do
    if [ "$skip" = 1 ]; then skip=0; continue; fi
    if [ "$a" = "$2" ]; then skip=1; continue; fi
    args+=("$a")
  done
  rm -rf "$WORK/bad"
  expect_failure "$1" "$BIN" "${args[@]}" --out "$WORK/bad" "$2" "$3"
  [ -z "$(ls -A "$WORK/bad" 2>/dev/null)" ] || { ls -la "$WORK/bad"; echo "FAIL: files written before the error"; exit 1; }
}
bad "no-such.txt" --good "$WORK/no-such.txt"
printf 'fine\n\xff\xfe broken\n' > "$WORK/bad-utf8.txt"
bad "bad-utf8.txt:2" --bad "$WORK/bad-utf8.txt"
bad "winsorize-quantile must be in \(0, 1\], got 0" --winsorize-quantile 0
bad "winsorize-quantile must be in \(0, 1\], got nan" --winsorize-quantile nan
bad "trials-per-batch must be 'auto' or a positive number, got '3abc'" --trials-per-batch 3abc
bad "seed must be >= 0, got -1" --seed -1
bad "threads 100000 is more than the [0-9]+ cores this rank may use" --threads 100000
bad "max-response-length must be positive" --max-response-length 0
expect_failure "run folder .*passwd/run is not writable|cannot create the run folder" "$BIN" "${SMALL[@]}" --out /etc/passwd/run
echo "ok: bad inputs fail before any phase runs"

# ---- models the tests did not make ----
expect_failure "model.layers.1.mlp.down_proj.weight' holds a non-finite value \(nan\) at element 7" \
  "$MPIEXEC" -np 2 --oversubscribe "$BIN" $(with_model nan) "${REST[@]}" --out "$WORK/nan"
"$BIN" $(with_model padded-vocab) "${REST[@]}" --out "$WORK/padded" > "$WORK/padded.log" 2>&1 ||
  { tail -20 "$WORK/padded.log"; echo "FAIL: a padded vocabulary ended the run"; exit 1; }
"$BIN" generate --model "$WORK/models/padded-vocab" --prompts "$PROMPTS/harmful.txt" --split "[:2]" \
  --max-new-tokens 24 --backend cpu --threads 1 --quiet > "$WORK/padded.jsonl"
grep -q '"n_tokens":24' "$WORK/padded.jsonl" || { cat "$WORK/padded.jsonl"; echo "FAIL: padded ids were not generated"; exit 1; }
echo "ok: a padded vocabulary: ids beyond the tokenizer are generated, skipped when decoding, the run completes"
"$MPIEXEC" -np 2 --oversubscribe "$BIN" $(with_model short-context) "${REST[@]}" --out "$WORK/short" \
  > "$WORK/short.log" 2>&1 || { tail -20 "$WORK/short.log"; echo "FAIL: a 256-position model was refused"; exit 1; }
"$PY" "$HERE/compare_trials.py" "$WORK/ref" "$WORK/short" 8 1e-5
echo "ok: a model with max_position_embeddings 256 runs"
