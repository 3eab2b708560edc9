// The table of kernel variants in this binary and the choice among them (isa.h). CMake defines
// ABL_CPU_HAVE_<VARIANT> for each variant it compiled from variant/kernels.cpp.
#include "abl/backend/cpu/isa.h"

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "abl/core/error.h"

namespace abl::cpu {

#ifdef ABL_CPU_HAVE_BASELINE
namespace isa_baseline { extern const Kernels kernels; }
#endif
#ifdef ABL_CPU_HAVE_AVX2
namespace isa_avx2 { extern const Kernels kernels; }
#endif
#ifdef ABL_CPU_HAVE_AVX512
namespace isa_avx512 { extern const Kernels kernels; }
#endif
#ifdef ABL_CPU_HAVE_NATIVE
namespace isa_native { extern const Kernels kernels; }
#endif

namespace {

struct Variant {
  Isa isa;
  const Kernels* kernels;
};

// Lowest first: the automatic choice is the last one the CPU supports.
const Variant kVariants[] = {
#ifdef ABL_CPU_HAVE_BASELINE
    {Isa::baseline, &isa_baseline::kernels},
#endif
#ifdef ABL_CPU_HAVE_AVX2
    {Isa::avx2, &isa_avx2::kernels},
#endif
#ifdef ABL_CPU_HAVE_AVX512
    {Isa::avx512, &isa_avx512::kernels},
#endif
#ifdef ABL_CPU_HAVE_NATIVE
    {Isa::native, &isa_native::kernels},
#endif
};

// x86-64 micro-architecture level 3 (AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE) or 4 (plus AVX-512
// F/BW/CD/DQ/VL), as -march=x86-64-v3/-v4 assume. GCC (since 7.4, bug 85100) and clang report AVX
// and AVX-512 only when the OS saves their registers (XCR0), so a kernel without that state
// reads as unsupported.
bool x86_level([[maybe_unused]] int level) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  return level == 3 ? __builtin_cpu_supports("x86-64-v3") != 0 : __builtin_cpu_supports("x86-64-v4") != 0;
#elif defined(__x86_64__)
  // clang names no levels; these features imply the rest of each level on every CPU made.
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  return level == 3 ? v3
                    : v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512cd");
#else
  return false;
#endif
}

std::string join_names(const std::vector<Isa>& isas) {
  std::string s;
  for (Isa i : isas) s += (s.empty() ? "" : ", ") + std::string(isa_name(i));
  return s;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (const Variant& v : kVariants) {
    if (cpu_supports(v.isa)) out.push_back(v.isa);
  }
  return out;
}

Isa choose() {
  const char* env = std::getenv("ABL_CPU_ISA");
  const std::string_view want = env ? env : "";
  if (want.empty() || want == "auto") return supported_isas().back();
  for (const Variant& v : kVariants) {
    if (want != isa_name(v.isa)) continue;
    ABL_CHECK(cpu_supports(v.isa), "ABL_CPU_ISA={}: this CPU lacks the instructions of those kernels (it runs: {})",
              want, join_names(supported_isas()));
    return v.isa;
  }
  fail("ABL_CPU_ISA={} names no kernel variant of this build (built: {}; or auto)", want, join_names(built_isas()));
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::baseline: return "baseline";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::native: return "native";
  }
  return "?";
}

std::vector<Isa> built_isas() {
  std::vector<Isa> out;
  for (const Variant& v : kVariants) out.push_back(v.isa);
  return out;
}

bool cpu_supports(Isa isa) {
  switch (isa) {
    case Isa::baseline:
    case Isa::native: return true;
    case Isa::avx2: return x86_level(3);
    case Isa::avx512: return x86_level(4);
  }
  return false;
}

const Kernels* kernels_of(Isa isa) {
  for (const Variant& v : kVariants) {
    if (v.isa == isa) return v.kernels;
  }
  return nullptr;
}

Isa selected_isa() {
  static const Isa chosen = choose();  // a throw leaves it unset: the next call throws again
  return chosen;
}

const Kernels& kernels() {
  static const Kernels& k = *kernels_of(selected_isa());
  return k;
}

std::string isa_summary() {
  const Isa isa = selected_isa();
  if (isa == Isa::native) return "native (-march=native build)";
  const char* env = std::getenv("ABL_CPU_ISA");
  const bool forced = env && *env && std::string_view(env) != "auto";
  return fmt::format("{} ({}dispatch: {} built; this CPU: {})", isa_name(isa), forced ? "ABL_CPU_ISA; " : "",
                     join_names(built_isas()), isa_name(supported_isas().back()));
}

}  // namespace abl::cpu
