// The CUDA mixture-of-experts ops (backend/cuda/ops.h, moe.cu) against their CPU twins: the routers'
// top-k (softmax, and GLM-4.5's sigmoid with bias and groups) (the same experts, weights within fp32 rounding), the counting sort by expert in slot order,
// gather and the fixed-order combine reproducing abl::cpu::combine_experts, and the gated shared
// expert. The host checks need no device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <cuda_bf16.h>

#include "abl/backend/cpu/ops.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "common/cuda_test.h"
#include "common/random_values.h"

namespace abl {
namespace {

// upload/download, to_bf16/to_f32, expect_close and the seeded inputs (cuda_test.h, random_values.h).
using namespace testing;

RouterConfig softmax_router(bool renormalize) {
  RouterConfig r;
  r.renormalize = renormalize;
  return r;
}

// cuda::router_topk against cpu::router_topk on T rows of E logits: the same experts in the same
// order, weights within fp32 rounding. r.bias and r.expert_scale, when set, point at E host floats (uploaded here).
void expect_router_matches_cpu(const std::vector<float>& logits, int64_t T, int64_t E, int64_t k, RouterConfig r,
                               const std::string& what) {
  cuda::Stream st;
  std::vector<int32_t> want_ids(static_cast<size_t>(T * k));
  std::vector<float> want_w(want_ids.size());
  cpu::router_topk(logits.data(), T, E, k, r, want_ids.data(), want_w.data());
  auto dl = upload(logits, st.get());
  cuda::DeviceBuffer db;
  if (r.bias) {
    db = upload(std::vector<float>(r.bias, r.bias + E), st.get());
    r.bias = db.as<float>();
  }
  cuda::DeviceBuffer ds;
  if (r.expert_scale) {
    ds = upload(std::vector<float>(r.expert_scale, r.expert_scale + E), st.get());
    r.expert_scale = ds.as<float>();
  }
  cuda::DeviceBuffer ids(want_ids.size() * sizeof(int32_t)), w(want_w.size() * sizeof(float));
  cuda::router_topk(dl.as<float>(), T, E, k, r, ids.as<int32_t>(), w.as<float>(), st.get());
  EXPECT_EQ(download<int32_t>(ids, want_ids.size(), st.get()), want_ids) << what;
  expect_close(download<float>(w, want_w.size(), st.get()), want_w, 1e-6, 1e-5, what + ": router weights");
}

TEST(CudaMoe, RouterTopkMatchesCpu) {
  ABL_REQUIRE_GPU();
  for (const auto& [E, k, renorm] : std::vector<std::tuple<int64_t, int64_t, bool>>{{4, 2, true}, {60, 4, false},
                                                                                     {128, 8, true}}) {
    const int64_t T = 301;
    const auto logits = normal(static_cast<size_t>(T * E), 2.0f, static_cast<uint32_t>(E));
    expect_router_matches_cpu(logits, T, E, k, softmax_router(renorm),
                              "softmax E " + std::to_string(E) + " k " + std::to_string(k));
  }
}

// GLM-4.5's sigmoid router (router.h): the correction bias on the device, with and without groups
// (DeepSeek-V3's 8 groups, the best 4 kept), renormalised or not, scaled.
TEST(CudaMoe, SigmoidRouterMatchesCpu) {
  ABL_REQUIRE_GPU();
  struct Case {
    int64_t E, k, groups, topk_groups;
    bool renorm;
    float scale;
  };
  for (const Case& c : {Case{128, 8, 1, 1, true, 1.0f}, Case{256, 8, 8, 4, true, 2.5f}, Case{16, 3, 4, 2, false, 1.5f},
                        Case{32, 4, 1, 1, true, 1.0f}}) {
    const int64_t T = 301;
    const auto logits = normal(static_cast<size_t>(T * c.E), 2.0f, static_cast<uint32_t>(c.E + 1));
    const auto bias = normal(static_cast<size_t>(c.E), 0.3f, static_cast<uint32_t>(c.E + 2));
    RouterConfig r;
    r.sigmoid = true;
    r.groups = c.groups;
    r.topk_groups = c.topk_groups;
    r.renormalize = c.renorm;
    r.scale = c.scale;
    r.bias = bias.data();
    if (c.E == 32) r.norm_eps = 1e-6f;  // LFM2-8B-A1B's router: 32 experts, top-4, (sum + 1e-6)
    expect_router_matches_cpu(logits, T, c.E, c.k, r,
                              "sigmoid E " + std::to_string(c.E) + " groups " + std::to_string(c.groups));
  }
  // Llama 4's: no bias (the logits rank), top-1 of 16 and top-2 of 128, large logits whose sigmoids are 1
  for (const int64_t E : {16, 128}) {
    const int64_t T = 301, k = E == 16 ? 1 : 2;
    const auto logits = normal(static_cast<size_t>(T * E), 12.0f, static_cast<uint32_t>(E + 3));
    RouterConfig r;
    r.sigmoid = true;
    expect_router_matches_cpu(logits, T, E, k, r, "unbiased sigmoid E " + std::to_string(E));
  }
}

// DeepSeek-V2's softmax router with groups scored by their best expert (group_limited_greedy: 160
// experts in 8 groups, the best 3 kept, top-6 times 16), and V3's sigmoid router under the same rule.
TEST(CudaMoe, GroupMaxRouterMatchesCpu) {
  ABL_REQUIRE_GPU();
  for (const bool sigmoid : {false, true}) {
    const int64_t T = 257, E = 160, k = 6;
    const auto logits = normal(static_cast<size_t>(T * E), 2.0f, sigmoid ? 41u : 42u);
    RouterConfig r;
    r.sigmoid = sigmoid;
    r.groups = 8;
    r.topk_groups = 3;
    r.group_max = true;
    r.scale = 16.0f;
    expect_router_matches_cpu(logits, T, E, k, r, sigmoid ? "group-max sigmoid" : "group-max softmax");
  }
}

// ERNIE 4.5's softmax router choosing by p + e_score_correction_bias (64 experts, top-6, renormalised).
TEST(CudaMoe, BiasedSoftmaxRouterMatchesCpu) {
  ABL_REQUIRE_GPU();
  const int64_t T = 263, E = 64, k = 6;
  const auto logits = normal(static_cast<size_t>(T * E), 2.0f, 43u);
  const auto bias = normal(static_cast<size_t>(E), 0.02f, 44u);
  RouterConfig r;
  r.renormalize = true;
  r.bias = bias.data();
  expect_router_matches_cpu(logits, T, E, k, r, "biased softmax");
}

// Gemma 4's router: softmax top-8 of 128 renormalised, each weight times its expert's per_expert_scale.
TEST(CudaMoe, PerExpertScaledRouterMatchesCpu) {
  ABL_REQUIRE_GPU();
  const int64_t T = 257, E = 128, k = 8;
  const auto logits = normal(static_cast<size_t>(T * E), 2.0f, 45u);
  std::vector<float> scale = normal(static_cast<size_t>(E), 0.3f, 46u);
  for (float& s : scale) s += 1.0f;
  RouterConfig r;
  r.renormalize = true;
  r.expert_scale = scale.data();
  expect_router_matches_cpu(logits, T, E, k, r, "per-expert scaled softmax");
}

// Phi-3.5-MoE's sparsemixer (16 experts, top-2, jitter eps 0.01 as released and a wider 0.2).
TEST(CudaMoe, SparsemixerRouterMatchesCpu) {
  ABL_REQUIRE_GPU();
  const int64_t T = 263, E = 16, k = 2;
  const auto logits = normal(static_cast<size_t>(T * E), 2.0f, 45u);
  for (const float eps : {0.01f, 0.2f}) {
    RouterConfig r;
    r.sparsemixer = true;
    r.jitter_eps = eps;
    expect_router_matches_cpu(logits, T, E, k, r, "sparsemixer eps " + std::to_string(eps));
  }
}

TEST(CudaMoe, DispatchGatherCombineMatchCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream st;
  const int64_t T = 97, E = 8, k = 3, H = 40, slots = T * k;
  const auto logits = normal(static_cast<size_t>(T * E), 1.0f, 5);
  std::vector<int32_t> ids(static_cast<size_t>(slots));
  std::vector<float> weights(ids.size());
  cpu::router_topk(logits.data(), T, E, k, softmax_router(true), ids.data(), weights.data());
  const auto h = to_bf16(normal(static_cast<size_t>(T * H), 1.0f, 6));
  std::vector<int64_t> row_seq(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) row_seq[static_cast<size_t>(t)] = t / 10;

  auto d_ids = upload(ids, st.get());
  cuda::DeviceBuffer counts(static_cast<size_t>(E) * sizeof(int32_t));
  cuda::moe_expert_counts(d_ids.as<int32_t>(), slots, E, counts.as<int32_t>(), st.get());
  const auto got_counts = download<int32_t>(counts, static_cast<size_t>(E), st.get());
  std::vector<int64_t> offsets(static_cast<size_t>(E + 1), 0);
  for (int64_t e = 0; e < E; ++e) {
    int32_t n = 0;
    for (int32_t id : ids) n += id == e;
    EXPECT_EQ(got_counts[static_cast<size_t>(e)], n) << "expert " << e;
    offsets[static_cast<size_t>(e + 1)] = offsets[static_cast<size_t>(e)] + n;
  }
  auto d_off = upload(offsets, st.get());
  cuda::DeviceBuffer order(static_cast<size_t>(slots) * 8), pos(static_cast<size_t>(slots) * 8);
  cuda::moe_dispatch(d_ids.as<int32_t>(), slots, E, d_off.as<int64_t>(), order.as<int64_t>(), pos.as<int64_t>(),
                     st.get());
  const auto got_order = download<int64_t>(order, static_cast<size_t>(slots), st.get());
  std::vector<int64_t> want_order;
  for (int64_t e = 0; e < E; ++e) {
    for (int64_t i = 0; i < slots; ++i) {
      if (ids[static_cast<size_t>(i)] == e) want_order.push_back(i);
    }
  }
  EXPECT_EQ(got_order, want_order);

  auto dh = upload(h, st.get());
  auto drs = upload(row_seq, st.get());
  cuda::DeviceBuffer rows(static_cast<size_t>(slots * H) * sizeof(__nv_bfloat16)), rs(static_cast<size_t>(slots) * 8);
  cuda::moe_gather(dh.as<__nv_bfloat16>(), order.as<int64_t>(), slots, k, H, drs.as<int64_t>(), nullptr,
                   rows.as<__nv_bfloat16>(), rs.as<int64_t>(), st.get());
  const auto got_rows = to_f32(download<__nv_bfloat16>(rows, static_cast<size_t>(slots * H), st.get()));
  const auto got_rs = download<int64_t>(rs, static_cast<size_t>(slots), st.get());
  const auto hf = to_f32(h);
  // Each expert's "output" is its input row scaled by (e + 1): sorted rows → fp32 expert outputs.
  std::vector<float> expert_out(static_cast<size_t>(slots * H)), by_slot(expert_out.size());
  for (int64_t r = 0; r < slots; ++r) {
    const int64_t slot = want_order[static_cast<size_t>(r)], t = slot / k;
    EXPECT_EQ(got_rs[static_cast<size_t>(r)], row_seq[static_cast<size_t>(t)]);
    const float f = static_cast<float>(ids[static_cast<size_t>(slot)] + 1);
    for (int64_t c = 0; c < H; ++c) {
      ASSERT_EQ(got_rows[static_cast<size_t>(r * H + c)], hf[static_cast<size_t>(t * H + c)]);
      expert_out[static_cast<size_t>(r * H + c)] = f * hf[static_cast<size_t>(t * H + c)];
      by_slot[static_cast<size_t>(slot * H + c)] = expert_out[static_cast<size_t>(r * H + c)];
    }
  }
  std::vector<float> want(static_cast<size_t>(T * H));
  cpu::combine_experts(by_slot.data(), weights.data(), T, k, H, want.data());
  auto dout = upload(expert_out, st.get());
  auto dw = upload(weights, st.get());
  cuda::DeviceBuffer y(want.size() * sizeof(float));
  cuda::moe_combine(dout.as<float>(), pos.as<int64_t>(), dw.as<float>(), T, k, H, y.as<float>(), st.get());
  // The same products in the same order (the device may fuse them into FMAs: to rounding).
  expect_close(download<float>(y, want.size(), st.get()), want, 1e-6, 1e-6, "moe_combine");

  // Llama 4: the weights scale the gathered inputs (bf16 · fp32, rounded once), the combine sums as is
  cuda::moe_gather(dh.as<__nv_bfloat16>(), order.as<int64_t>(), slots, k, H, drs.as<int64_t>(), dw.as<float>(),
                   rows.as<__nv_bfloat16>(), rs.as<int64_t>(), st.get());
  const auto scaled = to_f32(download<__nv_bfloat16>(rows, static_cast<size_t>(slots * H), st.get()));
  for (int64_t r = 0; r < slots; ++r) {
    const int64_t slot = want_order[static_cast<size_t>(r)], t = slot / k;
    for (int64_t c = 0; c < H; ++c) {
      const float v = hf[static_cast<size_t>(t * H + c)] * weights[static_cast<size_t>(slot)];
      ASSERT_EQ(scaled[static_cast<size_t>(r * H + c)], to_f32(to_bf16(std::vector<float>{v}))[0]);
    }
  }
  std::vector<float> ones(weights.size(), 1.0f);
  cpu::combine_experts(by_slot.data(), ones.data(), T, k, H, want.data());
  cuda::moe_combine(dout.as<float>(), pos.as<int64_t>(), nullptr, T, k, H, y.as<float>(), st.get());
  expect_close(download<float>(y, want.size(), st.get()), want, 1e-6, 1e-6, "moe_combine without weights");
}

TEST(CudaMoe, AddGatedMatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream st;
  const int64_t T = 37, H = 200;
  const auto x = to_bf16(normal(static_cast<size_t>(T * H), 1.0f, 7));
  const auto w = to_bf16(normal(static_cast<size_t>(H), 0.1f, 8));
  const auto shared = normal(static_cast<size_t>(T * H), 1.0f, 9);
  std::vector<float> want = normal(static_cast<size_t>(T * H), 1.0f, 10);
  auto dy = upload(want, st.get());
  cpu::add_gated(to_f32(x).data(), to_f32(w).data(), shared.data(), T, H, want.data());
  auto dx = upload(x, st.get());
  auto dwt = upload(w, st.get());
  auto ds = upload(shared, st.get());
  cuda::add_gated(dx.as<__nv_bfloat16>(), dwt.as<__nv_bfloat16>(), ds.as<float>(), T, H, dy.as<float>(), st.get());
  expect_close(download<float>(dy, want.size(), st.get()), want, 1e-5, 1e-5, "add_gated");
}

TEST(CudaMoeHostChecks, BadExtentsThrowBeforeLaunch) {
  cudaStream_t s = nullptr;
  const RouterConfig r = softmax_router(true);
  EXPECT_THROW(cuda::router_topk(nullptr, 4, 2000, 2, r, nullptr, nullptr, s), Error);  // E > 1024
  EXPECT_THROW(cuda::router_topk(nullptr, 4, 8, 9, r, nullptr, nullptr, s), Error);     // k > E
  RouterConfig grouped;
  grouped.sigmoid = true;
  grouped.groups = 3;
  EXPECT_THROW(cuda::router_topk(nullptr, 4, 8, 2, grouped, nullptr, nullptr, s), Error);  // 8 experts in 3 groups
  grouped.groups = 128;
  EXPECT_THROW(cuda::router_topk(nullptr, 4, 256, 2, grouped, nullptr, nullptr, s), Error);  // groups > 64
  EXPECT_THROW(cuda::moe_combine(nullptr, nullptr, nullptr, 4, 0, 8, nullptr, s), Error);
  cuda::router_topk(nullptr, 0, 8, 2, r, nullptr, nullptr, s);  // empty: nothing launched
  cuda::moe_dispatch(nullptr, 0, 8, nullptr, nullptr, nullptr, s);
  cuda::moe_gather(nullptr, nullptr, 0, 2, 8, nullptr, nullptr, nullptr, nullptr, s);
  cuda::add_gated(nullptr, nullptr, nullptr, 0, 8, nullptr, s);
}

}  // namespace
}  // namespace abl
