#!/usr/bin/env bash
# The portable binary on CPUs without the wider instructions, emulated by qemu-user: on a
# Nehalem (SSE4.2, no AVX) it picks the baseline kernels and runs without SIGILL, both the CPU
# op tests and a whole generation (same responses as natively with ABL_CPU_ISA=baseline); on a
# Haswell (AVX2, no AVX-512) it picks avx2 and refuses ABL_CPU_ISA=avx512, naming what it has.
# Skips (77) without qemu-x86_64 (Debian: qemu-user) or off x86-64.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
TEST_BIN=${ABL_TEST_BACKEND_CPU:?}
QEMU=$(command -v qemu-x86_64 || true)
[ -n "$QEMU" ] || { echo "skipped: qemu-x86_64 not installed (apt-get install qemu-user)"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "skipped: not an x86-64 machine"; exit 77; }
[ "$(kernels_of_version "$("$BIN" --version)")" != native ] || { echo "skipped: a -march=native build"; exit 77; }

# emulate CPU PROGRAM ARGS...: qemu's warnings about host features TCG lacks go to stderr.
emulate() {
  local cpu=$1
  shift
  "$QEMU" -cpu "$cpu" "$@"
}

out=$(emulate Nehalem "$BIN" --version 2> "$WORK/qemu.err") || { cat "$WORK/qemu.err"; echo "FAIL: --version under a Nehalem"; exit 1; }
grep 'CPU kernels' <<<"$out"
grep -q 'CPU kernels:   baseline (dispatch: baseline, avx2, avx512 built; this CPU: baseline)' <<<"$out" ||
  { echo "FAIL: a Nehalem should get the baseline kernels"; exit 1; }

out=$(emulate Haswell "$BIN" --version 2> "$WORK/qemu.err") || { cat "$WORK/qemu.err"; echo "FAIL: --version under a Haswell"; exit 1; }
grep 'CPU kernels' <<<"$out"
grep -q 'CPU kernels:   avx2 (dispatch: baseline, avx2, avx512 built; this CPU: avx2)' <<<"$out" ||
  { echo "FAIL: a Haswell should get the avx2 kernels"; exit 1; }
if out=$(ABL_CPU_ISA=avx512 emulate Haswell "$BIN" --version 2>&1); then
  echo "FAIL: ABL_CPU_ISA=avx512 should fail on a Haswell"; exit 1
fi
grep -q 'ABL_CPU_ISA=avx512: this CPU lacks the instructions of those kernels (it runs: baseline, avx2)' <<<"$out" ||
  { echo "FAIL: the error should name the variants the CPU runs: $out"; exit 1; }
echo "ok: ABL_CPU_ISA=avx512 on a Haswell: $(grep -o 'ABL_CPU_ISA.*' <<<"$out")"

# The CPU ops, the GEMM of every variant the emulated CPU has against the baseline's included.
for cpu in Nehalem Haswell; do
  emulate $cpu "$TEST_BIN" --gtest_brief=1 > "$WORK/ops-$cpu.log" 2>&1 ||
    { tail -30 "$WORK/ops-$cpu.log"; echo "FAIL: the CPU op tests under a $cpu"; exit 1; }
  echo "ok: CPU op tests under a $cpu: $(grep -E '^\[  PASSED  \]|SKIPPED \]' "$WORK/ops-$cpu.log" | head -1)"
done

# A whole run of the program (MPI singleton, engine, tokenizer) under a Nehalem.
ABL_CPU_ISA=baseline generate_organism "$WORK/native-baseline.jsonl"
generate_organism "$WORK/nehalem.jsonl" emulate Nehalem 2> "$WORK/qemu.err" || { cat "$WORK/qemu.err"; echo "FAIL: generate under a Nehalem"; exit 1; }
cmp "$WORK/native-baseline.jsonl" "$WORK/nehalem.jsonl" || { echo "FAIL: generations differ under the emulator"; exit 1; }
echo "ok: generate under a Nehalem: $(wc -l < "$WORK/nehalem.jsonl") responses, identical to the native baseline kernels"
