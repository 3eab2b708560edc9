#!/usr/bin/env bash
# An interrupted sweep resumes: killed (SIGKILL) after its first batch was written, or stopped
# by SIGTERM, then run again, it ends with exactly the trials and scores of an uninterrupted
# sweep; a sweep extended from 8 to 16 trials equals one of 16; changed settings refuse to
# resume unless --restart.
source "$(dirname "$0")/common.sh"
args=(sweep "${MODEL_ARGS[@]}" "${EVAL_ARGS[@]}" --search tpe --startup-trials 4 --trials-per-batch 4)
new_run "$WORK/whole"
"$BIN" "${args[@]}" --out "$WORK/whole" --trials 16
trials_of "$WORK/whole" > "$WORK/whole.txt"
[ "$(wc -l < "$WORK/whole.txt")" = 16 ]

# Without --quiet: the progress line of the first batch is what start_and_wait waits for.
loud=()
for a in "${args[@]}"; do [ "$a" = --quiet ] || loud+=("$a"); done
# Starts a 16-trial sweep into run folder $1 in the background, logging to $1.log, and returns
# (pid in $pid) once its first batch is written or it has ended.
start_and_wait() {
  new_run "$1"
  log="$1.log"
  "$BIN" "${loud[@]}" --out "$1" --trials 16 > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    grep -q "sweep: batch 0:" "$log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
}

# Killed after the first batch.
start_and_wait "$WORK/killed"
kill -KILL "$pid" || true
wait "$pid" 2>/dev/null || true
grep -q "sweep: batch 0:" "$log" || { cat "$log"; echo "FAIL: the first batch never finished"; exit 1; }
[ -f "$WORK/killed/trials.h5.partial" ] && [ ! -f "$WORK/killed/trials.h5" ]
echo "killed after: $(grep 'sweep: batch' "$log" | tail -1)"
"$BIN" "${loud[@]}" --out "$WORK/killed" --trials 16 2>&1 | tee "$WORK/resumed.log" | grep -E "resuming|sweep: [0-9]+ trials"
grep -q "resuming" "$WORK/resumed.log"
trials_of "$WORK/killed" > "$WORK/killed.txt"
diff "$WORK/whole.txt" "$WORK/killed.txt"
echo "ok: killed and resumed = uninterrupted (16 trials)"

# Stopped by SIGTERM (Slurm's preemption signal): the batch in flight is finished and written,
# the exit status is 75 (resumable), and running again completes the same 16 trials.
start_and_wait "$WORK/termed"
kill -TERM "$pid" || true
status=0
wait "$pid" || status=$?
if grep -q "sweep: 16 trials in" "$log"; then
  echo "note: the sweep finished before the signal arrived; stop not exercised"
else
  [ "$status" = 75 ] || { cat "$log"; echo "FAIL: exit status $status after SIGTERM, expected 75"; exit 1; }
  grep -q "stopping on signal 15" "$log" || { cat "$log"; echo "FAIL: no stop message"; exit 1; }
  echo "stopped: $(grep 'stopping on signal' "$log")"
fi
"$BIN" "${args[@]}" --out "$WORK/termed" --trials 16
trials_of "$WORK/termed" > "$WORK/termed.txt"
diff "$WORK/whole.txt" "$WORK/termed.txt"
echo "ok: stopped by SIGTERM with status 75 and resumed = uninterrupted"

# Extended.
new_run "$WORK/extended"
"$BIN" "${args[@]}" --out "$WORK/extended" --trials 8
"$BIN" "${args[@]}" --out "$WORK/extended" --trials 16
trials_of "$WORK/extended" > "$WORK/extended.txt"
diff "$WORK/whole.txt" "$WORK/extended.txt"
echo "ok: 8 then 16 trials = 16 trials"

# Changed settings.
before=$(md5sum < "$WORK/whole/trials.h5")
expect_failure "config hash|--restart" "$BIN" "${args[@]}" --out "$WORK/whole" --seed 2 --trials 20
[ "$(md5sum < "$WORK/whole/trials.h5")" = "$before" ] || { echo "FAIL: trials.h5 changed"; exit 1; }
"$BIN" "${args[@]}" --out "$WORK/whole" --seed 2 --trials 4 --restart
[ "$(trials_of "$WORK/whole" | wc -l)" = 4 ]
echo "ok: changed settings refuse to resume; --restart starts over"
