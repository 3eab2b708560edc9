// The CUDA linear-attention ops (the gated delta rule of Qwen3-Next / Qwen3.5, Granite 4.0-H's Mamba-2) against
// their CPU twins (abl::cpu::causal_conv_silu, gated_delta_rule, rmsnorm_gated, mul_sigmoid, mamba2_scan,
// rmsnorm_of_gated), on bf16-rounded inputs:
// two sequences in other slots, one of them continuing from the state a first pass left.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <cuda_bf16.h>

#include "abl/backend/cpu/ops.h"
#include "abl/backend/cuda/ops.h"
#include "common/cuda_test.h"
#include "common/random_values.h"

namespace abl {
namespace {

using namespace testing;

std::vector<float> bf16_rounded(const std::vector<float>& x) { return to_f32(to_bf16(x)); }

TEST(CudaLinearAttention, TwoPassesMatchCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const cudaStream_t s = stream.get();
  const cpu::DeltaRuleDims d{2, 6, 32, 48, 4};  // value heads 0-2 read key head 0, 3-5 key head 1
  const int64_t C = d.channels(), NV = d.NV, slots = 3;
  const std::vector<float> w = bf16_rounded(normal(static_cast<size_t>(C * d.K), 0.5f, 11));
  const std::vector<float> a_log = normal(static_cast<size_t>(NV), 0.5f, 12), dt = normal(static_cast<size_t>(NV), 0.5f, 13);
  const std::vector<float> norm_w = bf16_rounded(normal(static_cast<size_t>(d.DV), 0.3f, 14));
  std::vector<float> cpu_conv(static_cast<size_t>(slots * C * (d.K - 1))), cpu_S(static_cast<size_t>(slots * NV * d.DK * d.DV));
  auto dw = upload(to_bf16(w), s), dal = upload(a_log, s), ddt = upload(dt, s), dnw = upload(to_bf16(norm_w), s);
  cuda::DeviceBuffer dconv(cpu_conv.size() * sizeof(float)), dS(cpu_S.size() * sizeof(float));
  // Pass 1: a 70-token prompt in slot 2 and a 5-token one in slot 0. Pass 2: one token of the first
  // sequence (continuing) and a new 3-token prompt in slot 1.
  const std::vector<std::vector<cpu::AttnSeq>> passes = {{{0, 70, 0, 70}, {70, 5, 100, 5}}, {{0, 1, 0, 71}, {1, 3, 200, 3}}};
  const std::vector<std::vector<int64_t>> slot_of = {{2, 0}, {2, 1}};
  uint32_t seed = 20;
  for (size_t p = 0; p < passes.size(); ++p) {
    const auto& seqs = passes[p];
    int64_t T = 0;
    for (const auto& q : seqs) T += q.q_len;
    const std::vector<float> x = bf16_rounded(normal(static_cast<size_t>(T * C), 1.0f, ++seed));
    const std::vector<float> ba = bf16_rounded(normal(static_cast<size_t>(T * 2 * NV), 1.0f, ++seed));
    const std::vector<float> z = bf16_rounded(normal(static_cast<size_t>(T * NV * d.DV), 1.0f, ++seed));
    const int64_t B = static_cast<int64_t>(seqs.size());
    // CPU: conv (its output rounded to bf16, as the device stores it), delta rule, gated norm
    std::vector<float> cx = x, cout(static_cast<size_t>(T * NV * d.DV));
    const cpu::DeltaRuleState cs{cpu_conv.data(), cpu_S.data(), slot_of[p].data()};
    cpu::causal_conv_silu(cx.data(), w.data(), nullptr, seqs.data(), B, d, cs);
    cx = bf16_rounded(cx);
    cpu::gated_delta_rule(cx.data(), ba.data(), a_log.data(), dt.data(), seqs.data(), B, d, cs, cout.data());
    cout = bf16_rounded(cout);
    cpu::rmsnorm_gated(cout.data(), norm_w.data(), z.data(), T * NV, d.DV, 1e-6f);
    // GPU
    auto dx = upload(to_bf16(x), s), dba = upload(to_bf16(ba), s), dz = upload(to_bf16(z), s);
    auto dseqs = upload(seqs, s), dslots = upload(slot_of[p], s);
    cuda::DeviceBuffer dout(cout.size() * sizeof(__nv_bfloat16));
    cuda::causal_conv_silu(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), nullptr, dseqs.as<cpu::AttnSeq>(),
                           dslots.as<int64_t>(), B, C, d.K, dconv.as<float>(), s);
    expect_close(to_f32(download<__nv_bfloat16>(dx, x.size(), s)), cx, 2e-2, 1e-2, "causal_conv_silu");
    cuda::gated_delta_rule(dx.as<__nv_bfloat16>(), dba.as<__nv_bfloat16>(), dal.as<float>(), ddt.as<float>(),
                           dseqs.as<cpu::AttnSeq>(), dslots.as<int64_t>(), B, d.NK, NV, d.DK, d.DV, dS.as<float>(),
                           dout.as<__nv_bfloat16>(), s);
    cuda::rmsnorm_gated(dout.as<__nv_bfloat16>(), dnw.as<__nv_bfloat16>(), dz.as<__nv_bfloat16>(), T * NV, d.DV, 1e-6f, s);
    expect_close(to_f32(download<__nv_bfloat16>(dout, cout.size(), s)), cout, 2e-2, 2e-2, "delta rule + gated norm");
  }
  // The states the two passes left (slot 1's and 2's), the conv's exactly (bf16 inputs, stored as fp32).
  expect_close(download<float>(dS, cpu_S.size(), s), cpu_S, 1e-2, 2e-2, "delta rule states");
  expect_close(download<float>(dconv, cpu_conv.size(), s), cpu_conv, 0.0, 0.0, "conv states");
}

TEST(CudaLinearAttention, OutputGateMatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const std::vector<float> x = bf16_rounded(normal(999, 2.0f, 31)), g = bf16_rounded(normal(999, 2.0f, 32));
  std::vector<float> want = x;
  cpu::mul_sigmoid(want.data(), g.data(), 999);
  auto dx = upload(to_bf16(x), stream.get()), dg = upload(to_bf16(g), stream.get());
  cuda::mul_sigmoid(dx.as<__nv_bfloat16>(), dg.as<__nv_bfloat16>(), 999, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dx, 999, stream.get())), want, 1e-3, 1e-2, "mul_sigmoid");
}

// Mamba-2: the conv with its bias, the scan and the norm of the gated output (over all of it, then per group), over
// the same two passes.
TEST(CudaLinearAttention, Mamba2TwoPassesMatchCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const cudaStream_t s = stream.get();
  const cpu::DeltaRuleDims d{2, 8, 64, 32, 4};  // 2 groups of state 64, 8 heads of 32: heads 0-3 read group 0
  const int64_t C = d.channels(), NV = d.NV, I = NV * d.DV, slots = 3;
  const std::vector<float> w = bf16_rounded(normal(static_cast<size_t>(C * d.K), 0.5f, 41));
  const std::vector<float> bias = bf16_rounded(normal(static_cast<size_t>(C), 0.5f, 42));
  const std::vector<float> a_log = normal(static_cast<size_t>(NV), 0.5f, 43), dt_bias = normal(static_cast<size_t>(NV), 0.5f, 44);
  const std::vector<float> D = normal(static_cast<size_t>(NV), 1.0f, 45);
  const std::vector<float> norm_w = bf16_rounded(normal(static_cast<size_t>(I), 0.3f, 46));
  std::vector<float> cpu_conv(static_cast<size_t>(slots * C * (d.K - 1))), cpu_S(static_cast<size_t>(slots * NV * d.DK * d.DV));
  auto dw = upload(to_bf16(w), s), dbias = upload(to_bf16(bias), s), dal = upload(a_log, s), ddtb = upload(dt_bias, s);
  auto dD = upload(D, s), dnw = upload(to_bf16(norm_w), s);
  cuda::DeviceBuffer dconv(cpu_conv.size() * sizeof(float)), dS(cpu_S.size() * sizeof(float));
  const std::vector<std::vector<cpu::AttnSeq>> passes = {{{0, 70, 0, 70}, {70, 5, 100, 5}}, {{0, 1, 0, 71}, {1, 3, 200, 3}}};
  const std::vector<std::vector<int64_t>> slot_of = {{2, 0}, {2, 1}};
  const cpu::DtRange range{0.001f, 100.0f};
  uint32_t seed = 50;
  for (size_t p = 0; p < passes.size(); ++p) {
    const auto& seqs = passes[p];
    int64_t T = 0;
    for (const auto& q : seqs) T += q.q_len;
    const std::vector<float> x = bf16_rounded(normal(static_cast<size_t>(T * C), 1.0f, ++seed));
    const std::vector<float> dt = bf16_rounded(normal(static_cast<size_t>(T * NV), 1.0f, ++seed));
    const std::vector<float> z = bf16_rounded(normal(static_cast<size_t>(T * I), 1.0f, ++seed));
    const int64_t B = static_cast<int64_t>(seqs.size());
    std::vector<float> cx = x, cout(static_cast<size_t>(T * I));
    const cpu::DeltaRuleState cs{cpu_conv.data(), cpu_S.data(), slot_of[p].data()};
    cpu::causal_conv_silu(cx.data(), w.data(), bias.data(), seqs.data(), B, d, cs);
    cx = bf16_rounded(cx);
    cpu::mamba2_scan(cx.data(), dt.data(), a_log.data(), dt_bias.data(), D.data(), seqs.data(), B, d, range, cs,
                     cout.data());
    cout = bf16_rounded(cout);
    const int64_t groups = p == 0 ? 1 : d.NK;  // the second pass normalises per group (Nemotron-H)
    cpu::rmsnorm_of_gated(cout.data(), norm_w.data(), z.data(), T, I, groups, 1e-5f);
    auto dx = upload(to_bf16(x), s), ddt = upload(to_bf16(dt), s), dz = upload(to_bf16(z), s);
    auto dseqs = upload(seqs, s), dslots = upload(slot_of[p], s);
    cuda::DeviceBuffer dout(cout.size() * sizeof(__nv_bfloat16));
    cuda::causal_conv_silu(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), dbias.as<__nv_bfloat16>(),
                           dseqs.as<cpu::AttnSeq>(), dslots.as<int64_t>(), B, C, d.K, dconv.as<float>(), s);
    expect_close(to_f32(download<__nv_bfloat16>(dx, x.size(), s)), cx, 2e-2, 1e-2, "causal_conv_silu with a bias");
    cuda::mamba2_scan(dx.as<__nv_bfloat16>(), ddt.as<__nv_bfloat16>(), dal.as<float>(), ddtb.as<float>(), dD.as<float>(),
                      dseqs.as<cpu::AttnSeq>(), dslots.as<int64_t>(), B, d.NK, NV, d.DK, d.DV, range.min, range.max,
                      dS.as<float>(), dout.as<__nv_bfloat16>(), s);
    cuda::rmsnorm_of_gated(dout.as<__nv_bfloat16>(), dnw.as<__nv_bfloat16>(), dz.as<__nv_bfloat16>(), T, I, groups, 1e-5f,
                           s);
    expect_close(to_f32(download<__nv_bfloat16>(dout, cout.size(), s)), cout, 2e-2, 2e-2, "Mamba-2 scan + gated norm");
  }
  expect_close(download<float>(dS, cpu_S.size(), s), cpu_S, 1e-2, 2e-2, "Mamba-2 states");
  expect_close(download<float>(dconv, cpu_conv.size(), s), cpu_conv, 0.0, 0.0, "conv states");
}

// LFM2's short conv over the same two passes.
TEST(CudaLinearAttention, ShortConvTwoPassesMatchCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const cudaStream_t s = stream.get();
  const cpu::DeltaRuleDims d{0, 1, 0, 256, 3};
  const int64_t C = d.channels(), slots = 3;
  const std::vector<float> w = bf16_rounded(normal(static_cast<size_t>(C * d.K), 0.5f, 71));
  std::vector<float> cpu_conv(static_cast<size_t>(slots * C * (d.K - 1))), no_S;
  auto dw = upload(to_bf16(w), s);
  cuda::DeviceBuffer dconv(cpu_conv.size() * sizeof(float));
  const std::vector<std::vector<cpu::AttnSeq>> passes = {{{0, 70, 0, 70}, {70, 5, 100, 5}}, {{0, 1, 0, 71}, {1, 3, 200, 3}}};
  const std::vector<std::vector<int64_t>> slot_of = {{2, 0}, {2, 1}};
  uint32_t seed = 80;
  for (size_t p = 0; p < passes.size(); ++p) {
    const auto& seqs = passes[p];
    int64_t T = 0;
    for (const auto& q : seqs) T += q.q_len;
    const std::vector<float> bcx = bf16_rounded(normal(static_cast<size_t>(T * 3 * C), 1.0f, ++seed));
    const int64_t B = static_cast<int64_t>(seqs.size());
    std::vector<float> cout(static_cast<size_t>(T * C));
    cpu::short_conv(bcx.data(), w.data(), seqs.data(), B, d, {cpu_conv.data(), no_S.data(), slot_of[p].data()},
                    cout.data());
    auto dbcx = upload(to_bf16(bcx), s), dseqs = upload(seqs, s), dslots = upload(slot_of[p], s);
    cuda::DeviceBuffer dout(cout.size() * sizeof(__nv_bfloat16));
    cuda::short_conv(dbcx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), dseqs.as<cpu::AttnSeq>(), dslots.as<int64_t>(),
                     B, C, d.K, dconv.as<float>(), dout.as<__nv_bfloat16>(), s);
    expect_close(to_f32(download<__nv_bfloat16>(dout, cout.size(), s)), cout, 2e-2, 1e-2, "short_conv");
  }
  expect_close(download<float>(dconv, cpu_conv.size(), s), cpu_conv, 1e-6, 1e-6, "short conv states");
}

}  // namespace
}  // namespace abl
