// Instruction-set variants of the hot CPU kernels (docs/performance.md, "Portable builds").
//
// A portable build (the default, -DABL_NATIVE=OFF) compiles the program for baseline x86-64 and the
// kernels of `Kernels` three times: baseline, x86-64-v3 (`avx2`: AVX2, FMA, BMI2) and x86-64-v4
// (`avx512`: AVX-512 F/BW/DQ/VL). The best variant this CPU runs is chosen once per process, at the
// first use; the environment variable ABL_CPU_ISA=baseline|avx2|avx512 forces one (an error when
// the CPU lacks it). A -DABL_NATIVE=ON build has the single variant `native` (-march=native, no
// dispatch); other architectures than x86-64 the single variant `baseline`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "abl/backend/cpu/ops.h"

namespace abl::cpu {

enum class Isa { baseline, avx2, avx512, native };

// "baseline", "avx2", "avx512", "native" (the names ABL_CPU_ISA takes).
const char* isa_name(Isa isa);

// One query row of attention: query j of sequence seq (see AttnSeq).
struct AttnRow {
  int64_t seq = 0;
  int64_t j = 0;
};

// The kernels compiled once per variant (src/backend/cpu/variant/kernels.cpp); ops.h's linear()
// and attention() call them.
struct Kernels {
  // y(T,out) = x(T,in) · W(out,in)ᵀ (+ bias(out) when non-null) on `threads` threads (Eigen's GEMM).
  void (*linear)(const float* x, const float* w, const float* bias, float* y, int64_t T, int64_t in,
                 int64_t out, int threads);
  // attention() (ops.h) for n_rows query rows, no row seeing more than max_keys keys; the score
  // scale is resolved (> 0); sinks (NH) or null; OpenMP threads when `parallel`.
  void (*attention)(const float* q, const float* k_cache, const float* v_cache, float* out, const AttnSeq* seqs,
                    const AttnRow* rows, int64_t n_rows, int64_t max_keys, int64_t NH, int64_t NKV, int64_t HD,
                    int64_t HDv, int64_t window, float scale, float softcap, const float* sinks, bool parallel);
};

// The variants in this binary, lowest first.
std::vector<Isa> built_isas();

// Whether this CPU, and the OS (the AVX and AVX-512 register state), can run a variant. `native`
// is assumed to run where it was built.
bool cpu_supports(Isa isa);

// The kernels of one variant; nullptr when this binary lacks it.
const Kernels* kernels_of(Isa isa);

// The variant this process uses, chosen at the first call: ABL_CPU_ISA when set (and not "auto"),
// else the highest built variant the CPU supports. Throws abl::Error naming the built variants
// and those this CPU supports when ABL_CPU_ISA asks for one it cannot have.
Isa selected_isa();

// The kernels of selected_isa().
const Kernels& kernels();

// One line for --version, e.g. "avx512 (dispatch: baseline, avx2, avx512 built; this CPU: avx512)",
// "avx2 (ABL_CPU_ISA; dispatch: ...)" when forced,
// or "native (-march=native build)".
std::string isa_summary();

}  // namespace abl::cpu
