// cuBLASLt linear layers against cpu::linear. The row-major → column-major mapping is checked on
// the CPU against BLAS's column-major semantics (so the transposition logic is verified without a
// device); the device tests cover odd shapes, bias, bf16 and fp32 outputs and offset buffers.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "abl/backend/cuda/gemm.h"
#include "abl/backend/cpu/ops.h"
#include "common/cuda_test.h"

using namespace abl;
using abl::cuda::GemmLayout;
namespace tu = abl::testing;

namespace {

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

// What the values become on the device: rounded to bf16 and read back.
std::vector<float> bf16_rounded(const std::vector<float>& v) { return tu::to_f32(tu::to_bf16(v)); }

// BLAS semantics, column-major: C(m,n) = op(A)·op(B), X(r,c) at X[r + c·ld].
void colmajor_gemm(const GemmLayout& g, const float* A, const float* B, float* C) {
  for (int64_t j = 0; j < g.n; ++j) {
    for (int64_t i = 0; i < g.m; ++i) {
      double acc = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const float a = g.transa ? A[p + i * g.lda] : A[i + p * g.lda];
        const float b = g.transb ? B[j + p * g.ldb] : B[p + j * g.ldb];
        acc += static_cast<double>(a) * b;
      }
      C[i + j * g.ldc] = static_cast<float>(acc);
    }
  }
}

}  // namespace

TEST(GemmLayout, ColumnMajorGemmOfWeightAndInputIsTheRowMajorLinear) {
  for (const auto& [T, in, out] : {std::tuple<int64_t, int64_t, int64_t>{1, 7, 5}, {3, 4, 9}, {6, 11, 2}, {5, 1, 1}}) {
    const auto x = random_values(static_cast<size_t>(T * in), 1);
    const auto w = random_values(static_cast<size_t>(out * in), 2);
    std::vector<float> want(static_cast<size_t>(T * out)), got(want.size(), NAN);
    cpu::linear(x.data(), w.data(), nullptr, want.data(), T, in, out);

    const GemmLayout g = cuda::linear_layout(T, in, out);
    // The stored matrices fit the buffers and satisfy BLAS's ld ≥ rows.
    EXPECT_GE(g.lda, g.a_rows());
    EXPECT_GE(g.ldb, g.b_rows());
    EXPECT_GE(g.ldc, g.m);
    EXPECT_EQ(g.lda * g.a_cols(), out * in);
    EXPECT_EQ(g.ldb * g.b_cols(), T * in);
    EXPECT_EQ(g.ldc * g.n, T * out);
    // A = W, B = x, C = y, pointers unchanged.
    colmajor_gemm(g, w.data(), x.data(), got.data());
    tu::expect_close(got, want, 1e-5, 1e-5,
                          "layout T=" + std::to_string(T) + " in=" + std::to_string(in) + " out=" + std::to_string(out));
  }
}

TEST(GemmLayout, IsTheTnLayoutWithBiasAlongRows) {
  const GemmLayout g = cuda::linear_layout(37, 200, 1089);
  EXPECT_EQ(g.m, 1089);  // rows of C = out: the bias epilogue broadcasts a length-m vector
  EXPECT_EQ(g.n, 37);
  EXPECT_EQ(g.k, 200);
  EXPECT_TRUE(g.transa);
  EXPECT_FALSE(g.transb);
  EXPECT_EQ(g.lda, 200);
  EXPECT_EQ(g.ldb, 200);
  EXPECT_EQ(g.ldc, 1089);
}

TEST(GemmLayout, PointerAlignmentIsTheLargestPowerOfTwoUpTo256) {
  const auto at = [](uintptr_t a) { return cuda::pointer_alignment(reinterpret_cast<const void*>(a)); };
  EXPECT_EQ(at(0x10000), 256u);
  EXPECT_EQ(at(0x10100), 256u);
  EXPECT_EQ(at(0x10080), 128u);
  EXPECT_EQ(at(0x10010), 16u);
  EXPECT_EQ(at(0x10004), 4u);
  EXPECT_EQ(at(0x10002), 2u);
  EXPECT_EQ(at(0x10001), 1u);
}

TEST(Gemm, WorkspaceSizeIsKnownWithoutADevice) {
  EXPECT_EQ(cuda::Gemm::kDefaultWorkspaceBytes, size_t{32} << 20);
}

// (T, in, out)
class GemmShapes : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(GemmShapes, MatchesCpuLinear) {
  ABL_REQUIRE_GPU();
  const auto [T, in, out] = GetParam();
  const auto x = bf16_rounded(random_values(static_cast<size_t>(T * in), 11));
  const auto w = bf16_rounded(random_values(static_cast<size_t>(out * in), 12, 0.5f));
  const auto bias = bf16_rounded(random_values(static_cast<size_t>(out), 13, 4.0f));

  cuda::Stream stream;
  cuda::Gemm gemm;
  const auto dx = tu::upload(tu::to_bf16(x), stream.get());
  const auto dw = tu::upload(tu::to_bf16(w), stream.get());
  const auto db16 = tu::upload(tu::to_bf16(bias), stream.get());  // bias in the output's type
  const auto db32 = tu::upload(bias, stream.get());
  cuda::DeviceBuffer dy16(static_cast<size_t>(T * out) * sizeof(__nv_bfloat16));
  cuda::DeviceBuffer dy32(static_cast<size_t>(T * out) * sizeof(float));

  std::vector<float> xw(static_cast<size_t>(T * out));
  cpu::linear(x.data(), w.data(), nullptr, xw.data(), T, in, out);
  const double xw_max = max_abs(xw), bias_max = max_abs(bias);
  for (const bool with_bias : {false, true}) {
    std::vector<float> want(static_cast<size_t>(T * out));
    cpu::linear(x.data(), w.data(), with_bias ? bias.data() : nullptr, want.data(), T, in, out);
    const std::string what = "T=" + std::to_string(T) + " in=" + std::to_string(in) + " out=" + std::to_string(out) +
                             (with_bias ? " +bias" : "");

    // bf16 output: x·Wᵀ is rounded to bf16 before the bias is added, so near-cancelling elements
    // carry up to one bf16 ulp (2^-8 relative) of the larger operand.
    gemm.linear(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), with_bias ? db16.as<__nv_bfloat16>() : nullptr,
                dy16.as<__nv_bfloat16>(), T, in, out, stream.get());
    const auto got16 = tu::to_f32(tu::download<__nv_bfloat16>(dy16, want.size(), stream.get()));
    const double atol16 = with_bias ? std::ldexp(std::max(xw_max, bias_max), -8) : 1e-4 * xw_max;
    tu::expect_close(got16, want, atol16, 2e-2, what + " bf16 out");

    gemm.linear(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), with_bias ? db32.as<float>() : nullptr,
                dy32.as<float>(), T, in, out, stream.get());
    const auto got32 = tu::download<float>(dy32, want.size(), stream.get());
    tu::expect_close(got32, want, 1e-5 * xw_max, 5e-3, what + " fp32 out");
  }
  // Repeated calls reuse the plans: one per (output type, bias).
  gemm.linear(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), static_cast<const float*>(nullptr), dy32.as<float>(), T,
              in, out, stream.get());
  EXPECT_EQ(gemm.num_plans(), 4u);
}

INSTANTIATE_TEST_SUITE_P(OddShapes, GemmShapes,
                         ::testing::Combine(::testing::Values<int64_t>(1, 37, 300),
                                            ::testing::Values<int64_t>(200, 384, 4096),
                                            ::testing::Values<int64_t>(1089, 96)));

TEST(Gemm, OffsetBuffersGetAnAlgorithmThatAcceptsThem) {
  ABL_REQUIRE_GPU();
  const int64_t T = 5, in = 200, out = 96;
  const auto x = bf16_rounded(random_values(static_cast<size_t>((T + 1) * in), 21));
  const auto w = bf16_rounded(random_values(static_cast<size_t>(out * in), 22, 0.5f));
  cuda::Stream stream;
  cuda::Gemm gemm;
  const auto dx = tu::upload(tu::to_bf16(x), stream.get());
  const auto dw = tu::upload(tu::to_bf16(w), stream.get());
  cuda::DeviceBuffer dy(static_cast<size_t>(T * out + 1) * sizeof(float));
  // x starts one row in (400 bytes: 16-byte aligned), y one element in (4-byte aligned).
  gemm.linear(dx.as<__nv_bfloat16>() + in, dw.as<__nv_bfloat16>(), static_cast<const float*>(nullptr),
              dy.as<float>() + 1, T, in, out, stream.get());
  std::vector<float> want(static_cast<size_t>(T * out));
  cpu::linear(x.data() + in, w.data(), nullptr, want.data(), T, in, out);
  auto got = tu::download<float>(dy, static_cast<size_t>(T * out + 1), stream.get());
  got.erase(got.begin());
  tu::expect_close(got, want, 1e-3, 5e-3, "offset buffers");
}

TEST(Gemm, EmptyBatchDoesNothing) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  cuda::Gemm gemm(size_t{1} << 20);
  EXPECT_EQ(gemm.workspace_bytes(), size_t{1} << 20);
  gemm.linear(static_cast<const __nv_bfloat16*>(nullptr), nullptr, static_cast<const float*>(nullptr),
              static_cast<float*>(nullptr), 0, 16, 16, stream.get());
  EXPECT_EQ(gemm.num_plans(), 0u);
}

// The decode step is replayed from a CUDA graph: a call whose plan exists only launches.
TEST(Gemm, CallWithABuiltPlanCanBeCapturedInAGraph) {
  ABL_REQUIRE_GPU();
  const int64_t T = 3, in = 384, out = 96;
  const auto x = bf16_rounded(random_values(static_cast<size_t>(T * in), 31));
  const auto w = bf16_rounded(random_values(static_cast<size_t>(out * in), 32, 0.5f));
  cuda::Stream stream;
  cuda::Gemm gemm;
  const auto dx = tu::upload(tu::to_bf16(x), stream.get());
  const auto dw = tu::upload(tu::to_bf16(w), stream.get());
  cuda::DeviceBuffer dy(static_cast<size_t>(T * out) * sizeof(float));
  const auto call = [&] {
    gemm.linear(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), static_cast<const float*>(nullptr), dy.as<float>(), T,
                in, out, stream.get());
  };
  call();  // builds the plan
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaMemsetAsync(dy.get(), 0, dy.bytes(), stream.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  call();
  ASSERT_EQ(cudaStreamEndCapture(stream.get(), &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream.get()), cudaSuccess);
  stream.synchronize();
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  EXPECT_EQ(gemm.num_plans(), 1u);
  std::vector<float> want(static_cast<size_t>(T * out));
  cpu::linear(x.data(), w.data(), nullptr, want.data(), T, in, out);
  tu::expect_close(tu::download<float>(dy, want.size(), stream.get()), want, 1e-3, 5e-3, "graph replay");
}
