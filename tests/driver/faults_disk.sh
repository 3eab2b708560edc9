#!/usr/bin/env bash
# A full disk in every phase, on 1, 2 and 4 ranks, on a real small file system (a tmpfs): the job
# ends within seconds with exit status 1 and a message that says the disk is full; the files of
# the phases before it and every trial committed before it stay readable; once there is space the
# same command finishes, with the trials of a run that never hit the full disk. The sweep is
# filled while it runs (after its first batch is stored), with and without --store-responses; and
# residuals.h5 finds too little room to reserve before its first collective write; and trials.h5
# has no room for its second chunks (row 1024).
# Needs root for the tmpfs mount; skipped (77) without it.
source "$(dirname "$0")/common.sh"
rm -rf "$WORK" && mkdir -p "$WORK"
T="$WORK/tmpfs"
mkdir -p "$T"
if ! mount -t tmpfs -o size=4m tmpfs "$T" 2>/dev/null; then
  echo "SKIPPED: cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)"
  exit 77
fi
trap 'umount "$T" 2>/dev/null || umount -l "$T" 2>/dev/null || true' EXIT
export ABL_DISK_RESERVE_MB=0  # the tmpfs is smaller than the default reserve
SMALL=(run "${MODEL_ARGS[@]}" "${PROMPT_ARGS[@]}" --good-split "[:16]" --bad-split "[:16]" --kl-split "[400:408]"
       --eval-split "[400:408]" --max-response-length 8 --trials 8 --trials-per-batch 4 --startup-trials 4)
"$BIN" "${SMALL[@]}" --out "$WORK/ref" > /dev/null
"$BIN" "${SMALL[@]}" --store-responses --out "$WORK/ref-responses" > /dev/null
files_before() {  # the phase files a run has before phase $1
  case $1 in
    baseline) ;;
    residuals) echo baseline.h5 ;;
    directions) echo baseline.h5 residuals.h5 ;;
    sweep) echo baseline.h5 residuals.h5 directions.h5 ;;
  esac
}
fill() {  # fills the tmpfs, leaving $1 KiB
  local avail
  avail=$(df -k --output=avail "$T" | tail -1)
  [ "$avail" -gt "$1" ] && dd if=/dev/zero of="$T/fill" bs=1k count=$((avail - $1)) status=none 2>/dev/null || true
}
launch() {  # ranks, extra options...: the run on the tmpfs, its status in $rc, its output in $T.log
  local n=$1
  shift
  rc=0
  if [ "$n" = 1 ]; then
    timeout 120 "$BIN" "${SMALL[@]}" "$@" --out "$T/run" > "$WORK/out.log" 2>&1 || rc=$?
  else
    timeout 120 "$MPIEXEC" -np "$n" --oversubscribe "$BIN" "${SMALL[@]}" "$@" --out "$T/run" > "$WORK/out.log" 2>&1 || rc=$?
  fi
}
expect_disk_full() {  # what: the failed run must have ended with 1 and a disk-full message
  if [ "$rc" != 1 ] || ! grep -q "disk full" "$WORK/out.log"; then
    tail -20 "$WORK/out.log"
    echo "FAIL: $1: status $rc, expected 1 with a disk-full message"
    exit 1
  fi
}

for ranks in 1 2 4; do
  for phase in baseline residuals directions; do
    rm -rf "${T:?}"/* && mkdir -p "$T/run"
    for f in $(files_before $phase); do cp "$WORK/ref/$f" "$T/run/"; done
    fill 12
    t0=$(date +%s)
    launch "$ranks"
    took=$(( $(date +%s) - t0 ))
    expect_disk_full "$phase on $ranks ranks"
    [ "$took" -le 30 ] || { echo "FAIL: $phase on $ranks ranks: $took s to fail"; exit 1; }
    for f in $(files_before $phase); do cmp -s "$WORK/ref/$f" "$T/run/$f" || { echo "FAIL: $f changed"; exit 1; }; done
    echo "ok: $phase, $ranks ranks, full disk: status 1 after $took s: $(grep -o 'disk full.*' "$WORK/out.log" | head -1 | cut -c1-110)"
    rm -f "$T/fill"
    launch "$ranks"
    [ "$rc" = 0 ] || { tail -20 "$WORK/out.log"; echo "FAIL: $phase, $ranks ranks: the run after freeing space ended with $rc"; exit 1; }
    "$PY" "$HERE/compare_trials.py" "$WORK/ref" "$T/run" 8 1e-5
  done
  # Room for the phase's free-space check but not for the reservation of the collective writer
  # (residuals.h5 reserves its datasets plus 1 MiB before the first collective write).
  rm -rf "${T:?}"/* && mkdir -p "$T/run"
  cp "$WORK/ref/baseline.h5" "$T/run/"
  fill 400
  launch "$ranks"
  expect_disk_full "residuals (reservation) on $ranks ranks"
  grep -q "cannot be reserved" "$WORK/out.log" || { tail -5 "$WORK/out.log"; echo "FAIL: not the reservation"; exit 1; }
  echo "ok: residuals, $ranks ranks, room for the check but not the reservation: status 1 before any collective write"
  rm -f "$T/fill"

  # The sweep: the disk fills up after the first batch is stored (the run is slowed by delays
  # before its collectives, so the filler lands between two batches).
  for responses in "" --store-responses; do
    ref="$WORK/ref${responses:+-responses}"
    rm -rf "${T:?}"/* && mkdir -p "$T/run"
    for f in $(files_before sweep); do cp "$ref/$f" "$T/run/"; done
    rc=0
    log="$WORK/out.log"
    if [ "$ranks" = 1 ]; then
      ABL_FAULT_DELAY_MS=30 timeout 120 "$BIN" "${SMALL[@]/--quiet/}" $responses --out "$T/run" > "$log" 2>&1 &
    else
      ABL_FAULT_DELAY_MS=30 timeout 120 "$MPIEXEC" -np "$ranks" --oversubscribe "$BIN" "${SMALL[@]/--quiet/}" $responses \
        --out "$T/run" > "$log" 2>&1 &
    fi
    pid=$!
    for _ in $(seq 1200); do
      grep -q "sweep: batch 0:" "$log" && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    fill 0
    wait "$pid" || rc=$?
    expect_disk_full "sweep$responses on $ranks ranks"
    stored=$("$BIN" report --trials "$T/run" --quiet | head -1)
    grep -qE ": 4 trials \(sweep not finished\)" <<<"$stored" || { echo "$stored"; echo "FAIL: the first batch is not readable"; exit 1; }
    echo "ok: sweep$responses, $ranks ranks, disk full after batch 0: status 1, $(cut -d: -f2 <<<"$stored" | cut -c1-40) kept"
    rm -f "$T/fill"
    launch "$ranks" $responses
    [ "$rc" = 0 ] || { tail -20 "$WORK/out.log"; echo "FAIL: the resumed sweep ended with $rc"; exit 1; }
    "$PY" "$HERE/compare_trials.py" "$ref" "$T/run" 8 1e-5
  done
done

# trials.h5 at a chunk boundary (1024 rows): a sweep of exactly 1024 trials fills the first chunk
# of every dataset; extended on a nearly full disk, the batch that starts the second chunks has no
# room for them: status 1, the 1024 trials kept; after freeing space the extension equals a sweep
# that never hit the full disk. One KL and one evaluation prompt keep 1088 trials quick.
CHUNK=(--kl-split "[400:401]" --eval-split "[400:401]" --max-response-length 2)
SWEEP=(sweep "${MODEL_ARGS[@]}" "${CHUNK[@]}" --search sobol --trials-per-batch 64)
"$BIN" run "${MODEL_ARGS[@]}" "${PROMPT_ARGS[@]}" --good-split "[:16]" --bad-split "[:16]" "${CHUNK[@]}" --trials 0 \
  --out "$WORK/chunk-ref" > /dev/null
cp -r "$WORK/chunk-ref" "$WORK/chunk-phases"
"$BIN" "${SWEEP[@]}" --trials 1088 --out "$WORK/chunk-ref" > /dev/null
for responses in "" --store-responses; do
  rm -rf "${T:?}"/* && mkdir -p "$T/run"
  cp "$WORK/chunk-phases"/{baseline,residuals,directions}.h5 "$T/run/"
  "$BIN" "${SWEEP[@]}" $responses --trials 1024 --out "$T/run" > /dev/null
  fill 40
  rc=0
  "$BIN" "${SWEEP[@]}" $responses --trials 1088 --out "$T/run" > "$WORK/out.log" 2>&1 || rc=$?
  expect_disk_full "the batch after a full chunk$responses"
  stored=$("$BIN" report --trials "$T/run" --quiet | head -1)
  grep -q ": 1024 trials (sweep not finished)" <<<"$stored" || { echo "$stored"; echo "FAIL: the full chunk is not readable"; exit 1; }
  echo "ok: chunk boundary$responses: status 1, 1024 trials kept: $(grep -o 'disk full.*' "$WORK/out.log" | head -1 | cut -c1-100)"
  rm -f "$T/fill"
  "$BIN" "${SWEEP[@]}" $responses --trials 1088 --out "$T/run" > /dev/null
  "$PY" "$HERE/compare_trials.py" "$WORK/chunk-ref" "$T/run" 1088
done
