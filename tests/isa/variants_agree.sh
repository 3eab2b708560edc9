#!/usr/bin/env bash
# Every kernel variant this CPU runs gives the organism the same greedy generations and refusal
# verdicts as the baseline variant, and --version names the variant ABL_CPU_ISA forces.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
version=$("$BIN" --version)
auto=$(kernels_of_version "$version")
echo "auto: $(grep 'CPU kernels' <<<"$version")"
if [ "$auto" = native ]; then
  echo "skipped: a -march=native build has a single kernel variant"
  exit 77
fi
ABL_CPU_ISA=baseline generate_organism "$WORK/baseline.jsonl"
ran=baseline
for isa in avx2 avx512 auto; do
  if ! v=$(ABL_CPU_ISA=$isa "$BIN" --version 2>&1); then
    echo "$isa: not on this CPU ($(tail -1 <<<"$v"))"
    continue
  fi
  [ "$(kernels_of_version "$v")" = "${isa/auto/$auto}" ] || { echo "FAIL: ABL_CPU_ISA=$isa gives: $v"; exit 1; }
  ABL_CPU_ISA=$isa generate_organism "$WORK/$isa.jsonl"
  if ! cmp -s "$WORK/baseline.jsonl" "$WORK/$isa.jsonl"; then
    echo "FAIL: the $isa kernels generate otherwise than the baseline kernels:"
    diff "$WORK/baseline.jsonl" "$WORK/$isa.jsonl" | head -10
    exit 1
  fi
  ran+=" $isa"
done
echo "ok: identical generations ($(wc -l < "$WORK/baseline.jsonl") prompts) with the kernels: $ran"
