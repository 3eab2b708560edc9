#!/usr/bin/env bash
# The portable build's promise, checked on the machine code: only the kernel variants
# (src/backend/cpu/variant/kernels.cpp compiled for avx2 and avx512) use instructions beyond
# baseline x86-64, and nothing of theirs can leak into the code every CPU runs.
#
#   check_isa_code.sh BINARY NAME=OBJECT...   (one NAME=OBJECT per kernel variant)
#
# 1. Each variant object defines no global or weak symbol outside its own namespaces
#    (abl::cpu::isa_NAME, Eigen renamed abl_eigen_NAME): a shared inline or template function
#    would be merged by the linker with the copies of other objects, and the one kept could be
#    the AVX-512 one. Nor does it run code at start-up (.init_array), which every CPU would run.
# 2. In BINARY, no function outside the avx2/avx512 variants' namespaces holds a VEX/EVEX-encoded
#    instruction (AT&T mnemonics v...), a ymm/zmm/mask register, or a BMI1/BMI2/LZCNT/MOVBE/
#    POPCNT/CRC32 instruction; and the variants do use their wide registers (the check sees them).
# Exit 77 (skipped) for a -march=native build, which promises nothing of the sort.
set -euo pipefail
bin=$1
shift
for tool in objdump nm readelf; do
  command -v $tool > /dev/null || { echo "skipped: $tool not installed (binutils)"; exit 77; }
done
variants=()
for arg in "$@"; do
  name=${arg%%=*} obj=${arg#*=}
  variants+=("$name")
  if [ "$name" = native ]; then
    echo "skipped: a -march=native build (ABL_NATIVE=ON) runs only on CPUs like the one that built it"
    exit 77
  fi
  if readelf -S -W "$obj" | grep -qE '\.(init_array|preinit_array|ctors)'; then
    echo "FAIL: the $name variant runs start-up code (.init_array) that every CPU would run: $obj"
    exit 1
  fi
  # Defined global (upper-case type) symbols outside the variant's namespaces; the personality
  # routine's DW.ref word is data, the same in every object.
  leaks=$(nm -C --defined-only "$obj" | awk '$2 ~ /^[A-Z]$/' | grep -vE "abl::cpu::isa_${name}::|abl_eigen_${name}::|DW\.ref\.__gxx_personality_v0" || true)
  if [ -n "$leaks" ]; then
    echo "FAIL: the $name variant defines symbols the linker may share with other objects:"
    echo "$leaks" | head -20
    exit 1
  fi
  echo "ok: $name variant object keeps to its namespaces"
done

wide=()
for name in "${variants[@]}"; do
  [ "$name" = baseline ] || wide+=("$name")
done
if [ ${#wide[@]} -eq 0 ]; then
  echo "skipped: no wide kernel variants in this build (not x86-64)"
  exit 77
fi
variant_re=""
for name in "${wide[@]}"; do variant_re+="${variant_re:+|}abl::cpu::isa_${name}::|abl_eigen_${name}::"; done

need_zmm=0
for name in "${wide[@]}"; do [ "$name" = avx512 ] && need_zmm=1; done

objdump -d -C --no-show-raw-insn "$bin" | awk -v variant_re="$variant_re" -v need_zmm=$need_zmm '
  /^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<") + 1); sub(/>:$/, "", fn); in_variant = (fn ~ variant_re); next }
  /^ +[0-9a-f]+:\t/ {
    split($0, parts, "\t"); insn = parts[2]; split(insn, words, " "); m = words[1]
    if (m ~ /^(rex|data16|addr32|lock|rep|repz|repnz|notrack|bnd|cs|ds|es|ss|fs|gs)/ && words[2] != "") m = words[2]
    wide = (m ~ /^v/ && m !~ /^ver[rw]$/) || insn ~ /%[yz]mm|%k[0-7]/ || m ~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|lzcnt|mulx|pdep|pext|rorx|sarx|shlx|shrx|movbe|popcnt)[wlq]?$|^crc32[bwlq]?$/
    if (in_variant) { if (insn ~ /%ymm/) ymm++; if (insn ~ /%zmm/) zmm++; next }
    if (wide) { bad++; if (bad <= 20) printf "FAIL: %s: %s\n", fn, insn; if (!(fn in fns)) { fns[fn] = 1; nfn++ } }
  }
  END {
    if (bad) { printf "%d instructions beyond baseline x86-64 in %d functions outside the kernel variants\n", bad, nfn; exit 1 }
    if (ymm == 0 || (need_zmm && zmm == 0)) { printf "FAIL: no ymm (%d) or zmm (%d) registers in the kernel variants: is the check blind?\n", ymm, zmm; exit 1 }
    printf "ok: baseline code holds no AVX/AVX-512/BMI instructions; the variants use ymm %d times, zmm %d times\n", ymm, zmm
  }'
