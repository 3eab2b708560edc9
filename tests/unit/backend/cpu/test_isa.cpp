// The instruction-set variants of the hot kernels (isa.h): each one this CPU runs gives the
// baseline's results within rounding, the GEMM and attention alike; the choice is one of the built variants the CPU supports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "abl/backend/cpu/isa.h"
#include "abl/backend/cpu/ops.h"

namespace {

using abl::cpu::Isa;

std::vector<float> randn(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// The reference all variants are held to: the baseline variant (or the only one, `native`).
const abl::cpu::Kernels& reference() {
  const abl::cpu::Kernels* k = abl::cpu::kernels_of(Isa::baseline);
  return k ? *k : *abl::cpu::kernels_of(abl::cpu::built_isas().front());
}

class IsaVariant : public ::testing::TestWithParam<Isa> {};

TEST_P(IsaVariant, LinearMatchesBaseline) {
  const Isa isa = GetParam();
  const abl::cpu::Kernels* k = abl::cpu::kernels_of(isa);
  ASSERT_NE(k, nullptr);
  if (!abl::cpu::cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run the " << abl::cpu::isa_name(isa) << " kernels";
  // Odd shapes (edges of every packet and block size), small and large enough for threads.
  struct Shape {
    int64_t T, in, out;
    int threads;
  };
  for (const Shape& s : {Shape{1, 1, 1, 1}, Shape{3, 17, 5, 1}, Shape{7, 33, 65, 1}, Shape{16, 96, 130, 1},
                         Shape{61, 257, 129, 2}, Shape{129, 515, 67, 2}}) {
    const auto x = randn(static_cast<size_t>(s.T * s.in), 1);
    const auto w = randn(static_cast<size_t>(s.out * s.in), 2);
    const auto b = randn(static_cast<size_t>(s.out), 3);
    for (const float* bias : {static_cast<const float*>(nullptr), b.data()}) {
      std::vector<float> want(static_cast<size_t>(s.T * s.out)), got(want.size());
      reference().linear(x.data(), w.data(), bias, want.data(), s.T, s.in, s.out, 1);
      k->linear(x.data(), w.data(), bias, got.data(), s.T, s.in, s.out, s.threads);
      // Sums of `in` products of N(0,1) values: rounding differs by order and FMA, well below
      // 1e-5 of sqrt(in).
      const double tol = 1e-5 * std::sqrt(static_cast<double>(s.in)) + 1e-6;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], tol) << abl::cpu::isa_name(isa) << " T=" << s.T << " in=" << s.in
                                          << " out=" << s.out << " element " << i;
      }
    }
  }
}

TEST_P(IsaVariant, AttentionMatchesBaseline) {
  const Isa isa = GetParam();
  const abl::cpu::Kernels* k = abl::cpu::kernels_of(isa);
  ASSERT_NE(k, nullptr);
  if (!abl::cpu::cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run the " << abl::cpu::isa_name(isa) << " kernels";
  // Two packed sequences (prefill of 9 queries, decode of 1 query over 21 keys) in one cache.
  const int64_t NH = 6, NKV = 2, HD = 40, C = 30;
  const std::vector<abl::cpu::AttnSeq> seqs = {{0, 9, 0, 9}, {9, 1, 9, 21}};
  std::vector<abl::cpu::AttnRow> rows;
  for (int64_t s = 0; s < 2; ++s) {
    for (int64_t j = 0; j < seqs[static_cast<size_t>(s)].q_len; ++j) rows.push_back({s, j});
  }
  const auto q = randn(static_cast<size_t>(10 * NH * HD), 4);
  const auto kc = randn(static_cast<size_t>(C * NKV * HD), 5);
  const auto vc = randn(static_cast<size_t>(C * NKV * HD), 6);
  const std::vector<float> sinks = {0.5f, -1.0f, 2.0f, 0.0f, 3.0f, -0.25f};
  for (int64_t window : {0, 4}) {
    for (float softcap : {0.0f, 5.0f}) {
      for (const float* sink : {static_cast<const float*>(nullptr), sinks.data()}) {
        for (bool parallel : {false, true}) {
          for (int64_t HDv : {HD, HD / 2}) {  // value heads narrower than q/k heads: latent attention
            std::vector<float> want(q.size()), got(q.size());
            reference().attention(q.data(), kc.data(), vc.data(), want.data(), seqs.data(), rows.data(),
                                  static_cast<int64_t>(rows.size()), 21, NH, NKV, HD, HDv, window, 0.15f, softcap,
                                  sink, false);
            k->attention(q.data(), kc.data(), vc.data(), got.data(), seqs.data(), rows.data(),
                         static_cast<int64_t>(rows.size()), 21, NH, NKV, HD, HDv, window, 0.15f, softcap, sink,
                         parallel);
            for (size_t i = 0; i < want.size(); ++i) {
              ASSERT_NEAR(got[i], want[i], 1e-5) << abl::cpu::isa_name(isa) << " window " << window << " softcap "
                                                 << softcap << " sinks " << (sink != nullptr) << " HDv " << HDv
                                                 << " element " << i;
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, IsaVariant, ::testing::ValuesIn(abl::cpu::built_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return std::string(abl::cpu::isa_name(p.param)); });

TEST(Isa, SelectedIsBuiltAndSupported) {
  const std::vector<Isa> built = abl::cpu::built_isas();
  ASSERT_FALSE(built.empty());
  const Isa chosen = abl::cpu::selected_isa();
  EXPECT_NE(std::find(built.begin(), built.end(), chosen), built.end());
  EXPECT_TRUE(abl::cpu::cpu_supports(chosen));
  EXPECT_EQ(&abl::cpu::kernels(), abl::cpu::kernels_of(chosen));
  // Without an override the choice is the highest variant this CPU supports.
  if (!std::getenv("ABL_CPU_ISA")) {
    for (Isa i : built) {
      if (abl::cpu::cpu_supports(i)) {
        EXPECT_GE(static_cast<int>(chosen), static_cast<int>(i));
      }
    }
  }
  const std::string summary = abl::cpu::isa_summary();
  EXPECT_EQ(summary.rfind(abl::cpu::isa_name(chosen), 0), 0u) << summary;
}

TEST(Isa, BuiltVariants) {
  const std::vector<Isa> built = abl::cpu::built_isas();
  if (built == std::vector<Isa>{Isa::native}) {
    EXPECT_EQ(abl::cpu::isa_summary(), "native (-march=native build)");
    return;
  }
  EXPECT_EQ(built.front(), Isa::baseline);  // every portable build can fall back to it
  EXPECT_TRUE(abl::cpu::cpu_supports(Isa::baseline));
  EXPECT_EQ(abl::cpu::kernels_of(Isa::native), nullptr);
#if defined(__x86_64__)
  EXPECT_EQ(built, (std::vector<Isa>{Isa::baseline, Isa::avx2, Isa::avx512}));
#endif
}

}  // namespace
