#!/usr/bin/env bash
# No hang under uneven timing: ABL_FAULT_RUNS (default 20) fresh `run`s on 4 oversubscribed ranks,
# each with random delays before every collective (ABL_FAULT_DELAY_MS, a new ABL_FAULT_SEED each),
# all finish with the trials of an undisturbed 1-rank run. And a hang nobody foresaw (a rank that
# stops before a collective: ABL_FAULT_HANG) is ended by the watchdog within --hang-timeout plus
# its grace, with exit status 1 and the place of the ranks printed; the next run takes over the
# folder. An error on one rank alone (ABL_FAULT_FAIL), in a sharded pass with gathers in flight,
# ends the whole job at once with MPI_Abort (no watchdog needed), naming the rank.
source "$(dirname "$0")/common.sh"
rm -rf "$WORK" && mkdir -p "$WORK"
SMALL=(run "${MODEL_ARGS[@]}" "${PROMPT_ARGS[@]}" --good-split "[:16]" --bad-split "[:16]" --kl-split "[400:408]"
       --eval-split "[400:408]" --max-response-length 8 --trials 8 --trials-per-batch 4 --startup-trials 4)
"$BIN" "${SMALL[@]}" --out "$WORK/ref" > /dev/null

runs=${ABL_FAULT_RUNS:-20}
t0=$(date +%s)
for i in $(seq 1 "$runs"); do
  rc=0
  ABL_FAULT_SEED=$i ABL_FAULT_DELAY_MS=${ABL_FAULT_DELAY_MS:-4} timeout 300 \
    "$MPIEXEC" -np 4 --oversubscribe "$BIN" "${SMALL[@]}" --hang-timeout 120 --out "$WORK/run$i" \
    > "$WORK/run$i.log" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    tail -30 "$WORK/run$i.log"
    echo "FAIL: run $i with random delays ended with status $rc (124: hung until the test's timeout)"
    exit 1
  fi
  "$PY" "$HERE/compare_trials.py" "$WORK/ref" "$WORK/run$i" 8 1e-5 > /dev/null
done
echo "ok: $runs fresh runs on 4 ranks with random delays before collectives, no hang, trials equal ($(( $(date +%s) - t0 )) s)"

# The watchdog: rank 2 stops for good before its first all-reduce.
t0=$(date +%s)
rc=0
out=$(ABL_FAULT_HANG="2:MPI_Allreduce" timeout 120 "$MPIEXEC" -np 4 --oversubscribe "$BIN" "${SMALL[@]}" \
        --hang-timeout 3 --out "$WORK/hang" 2>&1) || rc=$?
took=$(( $(date +%s) - t0 ))
echo "$out" | grep -E "hang watchdog|ABL_FAULT_HANG" | head -8
[ "$rc" != 0 ] && [ "$rc" != 124 ] || { echo "$out" | tail -20; echo "FAIL: the hung job ended with status $rc"; exit 1; }
grep -qE "\[rank 2 on .*\] hang watchdog: no progress .* in MPI_Allreduce" <<<"$out" ||
  { echo "$out" | tail -20; echo "FAIL: rank 2 did not report where it hung"; exit 1; }
[ "$(grep -c "hang watchdog: no progress" <<<"$out")" -ge 2 ] || { echo "FAIL: only one rank reported"; exit 1; }
[ "$took" -lt 60 ] || { echo "FAIL: the watchdog took $took s for --hang-timeout 3"; exit 1; }
echo "ok: a hang ended by the watchdog after $took s with status $rc"
"$MPIEXEC" -np 2 --oversubscribe "$BIN" "${SMALL[@]}" --out "$WORK/hang" > "$WORK/after-hang.log" 2>&1 ||
  { tail -20 "$WORK/after-hang.log"; echo "FAIL: the folder of the hung job cannot be used again"; exit 1; }
"$PY" "$HERE/compare_trials.py" "$WORK/ref" "$WORK/hang" 8 1e-5

# An error on rank 2 alone, in a FULL_SHARD pass (a weight gather in flight), without the watchdog.
for where in "forward pass (prefill)" "MPI_Wait (all-gather)" "forward pass (generation)"; do
  t0=$(date +%s)
  rc=0
  out=$(ABL_FAULT_FAIL="2:$where" timeout 120 "$MPIEXEC" -np 4 --oversubscribe "$BIN" "${SMALL[@]}" \
          --sharding FULL_SHARD --hang-timeout 0 --out "$WORK/fail" 2>&1) || rc=$?
  took=$(( $(date +%s) - t0 ))
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || { echo "$out" | tail -20; echo "FAIL: an error at '$where' ended with $rc"; exit 1; }
  grep -q "\[rank 2 on .*\] error: ABL_FAULT_FAIL: an error injected on rank 2 at $where" <<<"$out" ||
    { echo "$out" | tail -20; echo "FAIL: rank 2's error at '$where' was not reported"; exit 1; }
  grep -q "ending the whole job (MPI_Abort)" <<<"$out" || { echo "$out" | tail -20; echo "FAIL: no MPI_Abort"; exit 1; }
  [ "$took" -lt 60 ] || { echo "FAIL: the job took $took s to end after an error on one rank"; exit 1; }
  echo "ok: an error on rank 2 alone at '$where' ended the job in $took s with status $rc"
done
"$MPIEXEC" -np 2 --oversubscribe "$BIN" "${SMALL[@]}" --out "$WORK/fail" > "$WORK/after-fail.log" 2>&1 ||
  { tail -20 "$WORK/after-fail.log"; echo "FAIL: the folder of the failed job cannot be used again"; exit 1; }
"$PY" "$HERE/compare_trials.py" "$WORK/ref" "$WORK/fail" 8 1e-5
