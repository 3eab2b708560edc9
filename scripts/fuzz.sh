#!/usr/bin/env bash
# `make fuzz`: builds the parsers' libFuzzer targets (tests/fuzz) with clang, ASan and UBSan in
# BUILD (default build-fuzz), then runs each for FUZZ_SECONDS (default 60) from its seed corpus
# tests/fuzz/corpus/<target>. What the fuzzer learns goes to a scratch folder, never into the
# repository: $FUZZ_OUT/<target>/{corpus,artifacts,log} (default BUILD/fuzz-out). At the end a
# table gives each target's time, executions and findings; the exit status is 1 when any target
# found a crash, hang, leak or broken property (its reproducer is in artifacts/).
# Environment: FUZZ_SECONDS, FUZZ_TARGETS (space-separated names), FUZZ_TIMEOUT (seconds one
# input may take, default 10), FUZZ_JOBS (build parallelism), FUZZ_OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
TIMEOUT=${FUZZ_TIMEOUT:-10}
JOBS=${FUZZ_JOBS:-$(nproc)}
OUT=${FUZZ_OUT:-$BUILD/fuzz-out}
TARGETS=${FUZZ_TARGETS:-"safetensors_header safetensors_index model_config tokenizer_json tokenizer_encode ini grid prompts parquet dataset_card chat_template tiktoken_folder"}

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found: run scripts/install-deps.sh --fuzz" >&2; exit 2; }
CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DABL_FUZZ=ON -DABL_CUDA=OFF \
  -DABL_BUILD_TESTS=OFF -DABL_WERROR=OFF >/dev/null
cmake --build "$BUILD" --target fuzz_all -j"$JOBS"

mkdir -p "$OUT"
summary=$OUT/summary.md
printf '| target | seconds | executions | exec/s | corpus (seed + new) | findings |\n| --- | ---: | ---: | ---: | ---: | --- |\n' >"$summary"
found=0
for t in $TARGETS; do
  work=$OUT/$t
  mkdir -p "$work/corpus" "$work/artifacts"
  seeds=tests/fuzz/corpus/$t
  dict=()
  [ -f "tests/fuzz/dict/$t.dict" ] && dict=(-dict="tests/fuzz/dict/$t.dict")
  echo "== fuzz_$t for ${SECONDS_EACH}s (log: $work/log)"
  start=$(date +%s)
  rc=0
  # New inputs land in the first folder given, the scratch corpus; the seeds are only read.
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$BUILD/bin/fuzz_$t" -max_total_time="$SECONDS_EACH" \
    -timeout="$TIMEOUT" -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "${dict[@]}" "$work/corpus" "$seeds" >"$work/log" 2>&1 || rc=$?
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
  corpus=$(( $(find "$seeds" -type f | wc -l) + $(find "$work/corpus" -type f | wc -l) ))
  artifacts=$(find "$work/artifacts" -type f | sort | tr '\n' ' ')
  if [ "$rc" -ne 0 ] || [ -n "$artifacts" ]; then
    found=1
    result="exit $rc: ${artifacts:-see log}"
    tail -n 30 "$work/log"
  else
    result=none
  fi
  printf '| %s | %s | %s | %s | %s | %s |\n' "$t" "$elapsed" "${execs:-?}" "${rate:-?}" "$corpus" "$result" | tee -a "$summary"
done
echo
cat "$summary"
exit "$found"
