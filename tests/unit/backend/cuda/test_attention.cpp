// CUDA attention against abl::cpu::attention on the same bf16-rounded inputs: packed batches that
// mix prompts, chunked prefill and decode rows, GQA ratios 1–7, every head dim, sliding windows,
// both paths; and the host-side planning (split counts, scratch sizes), which runs without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "abl/backend/cuda/attention.h"
#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"
#include "common/cuda_test.h"

namespace {

using abl::cuda::AttnBounds;
using abl::cuda::AttnPath;
using abl::testing::download;
using abl::testing::to_bf16;
using abl::testing::to_f32;
using abl::testing::upload;

constexpr double kAtol = 2e-3;
constexpr double kRtol = 2e-2;  // bf16 output
constexpr int kH100Sms = 132;

struct Lens {
  int64_t q_len;
  int64_t kv_len;
};

int device_sm_count() {
  int dev = 0, sms = 0;
  EXPECT_EQ(cudaGetDevice(&dev), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  return sms;
}

std::string describe(const std::vector<Lens>& lens, int64_t NH, int64_t NKV, int64_t HD, int64_t window,
                     AttnPath path) {
  std::string s = "NH " + std::to_string(NH) + " NKV " + std::to_string(NKV) + " HD " + std::to_string(HD) +
                  " window " + std::to_string(window) + (path == AttnPath::tiled ? " tiled" : " automatic") +
                  " (q_len/kv_len:";
  for (const Lens& l : lens) s += " " + std::to_string(l.q_len) + "/" + std::to_string(l.kv_len);
  return s + ")";
}

// Packs the sequences (q rows in order; each sequence's cache rows after a 3-row gap, so kv_begin
// matters), runs both backends on the same bf16 values and compares the outputs.
// `sinks` (NH values or empty): gpt-oss's sink logits, host memory for the CPU, uploaded for the GPU.
void check_against_cpu(const std::vector<Lens>& lens, int64_t NH, int64_t NKV, int64_t HD, int64_t window,
                       AttnPath path, uint32_t seed, abl::cpu::AttnScores scores = {},
                       const std::vector<float>& sinks = {}) {
  const std::string what = describe(lens, NH, NKV, HD, window, path) + " scale " + std::to_string(scores.scale) +
                           " softcap " + std::to_string(scores.softcap) + (sinks.empty() ? "" : " sinks");
  scores.sinks = sinks.empty() ? nullptr : sinks.data();
  std::vector<abl::cpu::AttnSeq> seqs;
  int64_t T = 0, C = 0, max_q = 0, max_kv = 0;
  for (const Lens& l : lens) {
    seqs.push_back({T, l.q_len, C + 3, l.kv_len});
    T += l.q_len;
    C += l.kv_len + 3;
    max_q = std::max(max_q, l.q_len);
    max_kv = std::max(max_kv, l.kv_len);
  }
  const int64_t B = static_cast<int64_t>(lens.size());

  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto fill = [&](size_t n, float scale) {
    std::vector<float> x(n);
    for (float& v : x) v = scale * u(rng);
    return x;
  };
  // q scaled up so the softmax is peaked enough for the comparison to notice a wrong key.
  const auto q = to_bf16(fill(static_cast<size_t>(T * NH * HD), 3.0f));
  const auto k = to_bf16(fill(static_cast<size_t>(C * NKV * HD), 1.0f));
  const auto v = to_bf16(fill(static_cast<size_t>(C * NKV * HD), 1.0f));

  std::vector<float> want(static_cast<size_t>(T * NH * HD));
  abl::cpu::attention(to_f32(q).data(), to_f32(k).data(), to_f32(v).data(), want.data(), seqs.data(), B, NH, NKV,
                      HD, window, scores);

  abl::cuda::Stream st;
  const auto dsinks = upload(sinks.empty() ? std::vector<float>{0.0f} : sinks, st.get());
  scores.sinks = sinks.empty() ? nullptr : dsinks.as<float>();
  const auto dq = upload(q, st.get());
  const auto dk = upload(k, st.get());
  const auto dv = upload(v, st.get());
  const auto dseqs = upload(seqs, st.get());
  abl::cuda::DeviceBuffer dout(want.size() * sizeof(__nv_bfloat16));
  ASSERT_EQ(cudaMemsetAsync(dout.get(), 0xff, dout.bytes(), st.get()), cudaSuccess);  // NaN: rows left unwritten fail
  const AttnBounds bounds{B, max_q, max_kv, path};
  const size_t scratch_bytes = abl::cuda::attention_scratch_bytes(bounds, NH, NKV, HD, window, device_sm_count());
  abl::cuda::DeviceBuffer scratch(scratch_bytes);
  abl::cuda::attention(dq.as<__nv_bfloat16>(), dk.as<__nv_bfloat16>(), dv.as<__nv_bfloat16>(),
                       dout.as<__nv_bfloat16>(), dseqs.as<abl::cpu::AttnSeq>(), bounds, NH, NKV, HD, window,
                       scores, scratch.get(), scratch_bytes, st.get());
  st.synchronize();
  abl::testing::expect_close(to_f32(download<__nv_bfloat16>(dout, want.size(), st.get())), want, kAtol, kRtol, what);
}

// Prompts of 1, 17, 63 and 200 tokens, a chunked prefill (40 queries at the end of 300 keys) and
// decode rows whose contexts reach 3000 keys.
const std::vector<Lens> kMixedBatch = {{1, 1},   {17, 17}, {1, 5},    {63, 63},  {200, 200},
                                       {1, 700}, {40, 300}, {1, 3000}, {1, 129}};

// ---- GPU: mixed packed batch over GQA ratios, head dims 64/128, windows, both paths -----------

using Heads = std::pair<int64_t, int64_t>;                      // (NH, NKV)
using MixedParam = std::tuple<Heads, int64_t, int64_t, AttnPath>;  // heads, HD, window, path
class AttentionMixed : public ::testing::TestWithParam<MixedParam> {};

TEST_P(AttentionMixed, MatchesCpu) {
  ABL_REQUIRE_GPU();
  const auto [heads, HD, window, path] = GetParam();
  check_against_cpu(kMixedBatch, heads.first, heads.second, HD, window, path, 7);
}

std::string mixed_name(const ::testing::TestParamInfo<MixedParam>& info) {
  const auto& [heads, HD, window, path] = info.param;
  return "NH" + std::to_string(heads.first) + "_NKV" + std::to_string(heads.second) + "_HD" + std::to_string(HD) +
         "_W" + std::to_string(window) + (path == AttnPath::tiled ? "_tiled" : "_auto");
}

INSTANTIATE_TEST_SUITE_P(GqaHeadDimWindow, AttentionMixed,
                         ::testing::Combine(::testing::Values(Heads(4, 4), Heads(8, 4), Heads(16, 4), Heads(28, 4)),
                                            ::testing::Values(int64_t{64}, int64_t{128}),
                                            ::testing::Values(int64_t{0}, int64_t{32}),
                                            ::testing::Values(AttnPath::automatic, AttnPath::tiled)),
                         mixed_name);

// ---- GPU: the other head dims (correct, not tuned) -------------------------------------------

class AttentionHeadDim : public ::testing::TestWithParam<int64_t> {};

TEST_P(AttentionHeadDim, MatchesCpu) {
  ABL_REQUIRE_GPU();
  const int64_t HD = GetParam();
  const std::vector<Lens> lens = {{1, 1}, {33, 33}, {1, 900}, {0, 40}, {70, 70}, {1, 2}};  // q_len 0: no rows
  for (const int64_t window : {int64_t{0}, int64_t{32}}) {
    for (const AttnPath path : {AttnPath::automatic, AttnPath::tiled}) {
      check_against_cpu(lens, 8, 2, HD, window, path, 11);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllHeadDims, AttentionHeadDim, ::testing::Values(64, 80, 96, 128, 256));

// ---- GPU: decode batches that split along the KV sequence ------------------------------------

TEST(AttentionDecode, SplitsMatchCpu) {
  ABL_REQUIRE_GPU();
  const std::vector<Lens> lens = {{1, 1}, {1, 2}, {1, 255}, {1, 256}, {1, 1000}, {1, 3000}};
  const int sms = device_sm_count();
  ASSERT_GT(abl::cuda::attention_decode_splits(6, 32, 8, 3000, 0, sms), 1) << "the batch should split";
  for (const int64_t HD : {int64_t{64}, int64_t{128}}) {
    check_against_cpu(lens, 32, 8, HD, 0, AttnPath::automatic, 3);
    check_against_cpu(lens, 32, 8, HD, 600, AttnPath::automatic, 4);  // window: splits over the visible keys
  }
  // Query-head groups wider than one decode block (32 heads per kv head), and multi-query (NKV 1).
  check_against_cpu(lens, 64, 2, 128, 0, AttnPath::automatic, 5);
  check_against_cpu(lens, 12, 1, 64, 0, AttnPath::automatic, 6);
  check_against_cpu(lens, 28, 4, 128, 0, AttnPath::automatic, 8);  // group 7
}

// Gemma's scores: an explicit scale and a soft-cap small enough to bite, in the tiled kernel, the
// decode kernel and its splits.
TEST(AttentionScores, ScaleAndSoftcapMatchCpu) {
  ABL_REQUIRE_GPU();
  const abl::cpu::AttnScores gemma2{0.0625f, 5.0f};
  for (const AttnPath path : {AttnPath::tiled, AttnPath::automatic}) {
    check_against_cpu(kMixedBatch, 8, 4, 256, 0, path, 21, gemma2);
    check_against_cpu(kMixedBatch, 8, 4, 128, 32, path, 22, {0.2f, 2.0f});
    check_against_cpu(kMixedBatch, 8, 4, 64, 0, path, 23, {0.3f, 0.0f});  // scale only
  }
}

// gpt-oss's sinks: one more logit per head in every softmax (a large one leaves little to the keys), in
// the tiled kernel, the decode kernel and its splits' combine, with and without a window.
TEST(AttentionScores, SinksMatchCpu) {
  ABL_REQUIRE_GPU();
  const std::vector<float> sinks = {0.5f, -2.0f, 3.0f, 0.0f, 8.0f, -0.7f, 1.5f, 2.5f};
  for (const AttnPath path : {AttnPath::tiled, AttnPath::automatic}) {
    check_against_cpu(kMixedBatch, 8, 2, 64, 0, path, 24, {}, sinks);
    check_against_cpu(kMixedBatch, 8, 2, 64, 128, path, 25, {}, sinks);
  }
}

TEST(AttentionDecode, LargeBatchWithoutSplits) {
  ABL_REQUIRE_GPU();
  std::vector<Lens> lens;
  for (int64_t i = 0; i < 300; ++i) lens.push_back({1, 1 + (i * 37) % 520});
  ASSERT_EQ(abl::cuda::attention_decode_splits(300, 32, 8, 520, 0, device_sm_count()), 1);
  check_against_cpu(lens, 32, 8, 128, 0, AttnPath::automatic, 9);
}

// The decode step is one CUDA graph: captured once under bounds, replayed while the lengths in the
// device-resident AttnSeq array grow.
TEST(AttentionDecode, CapturedGraphReplaysAsLengthsGrow) {
  ABL_REQUIRE_GPU();
  const int64_t B = 3, NH = 16, NKV = 4, HD = 128, cap = 2000;  // cap: cache rows per sequence
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto fill = [&](int64_t n, float scale) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = scale * u(rng);
    return to_bf16(x);
  };
  const auto q = fill(B * NH * HD, 3.0f);
  const auto k = fill(B * cap * NKV * HD, 1.0f);
  const auto v = fill(B * cap * NKV * HD, 1.0f);
  auto seqs_for = [&](const std::vector<int64_t>& kv_lens) {
    std::vector<abl::cpu::AttnSeq> seqs;
    for (int64_t s = 0; s < B; ++s) seqs.push_back({s, 1, s * cap, kv_lens[static_cast<size_t>(s)]});
    return seqs;
  };

  abl::cuda::Stream st;
  const auto dq = upload(q, st.get());
  const auto dk = upload(k, st.get());
  const auto dv = upload(v, st.get());
  auto dseqs = upload(seqs_for({10, 700, 1500}), st.get());
  abl::cuda::DeviceBuffer dout(static_cast<size_t>(B * NH * HD) * sizeof(__nv_bfloat16));
  const AttnBounds bounds{B, 1, cap, AttnPath::automatic};
  const size_t scratch_bytes = abl::cuda::attention_scratch_bytes(bounds, NH, NKV, HD, 0, device_sm_count());
  ASSERT_GT(scratch_bytes, 0u) << "the captured step should split";
  abl::cuda::DeviceBuffer scratch(scratch_bytes);

  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(st.get(), cudaStreamCaptureModeGlobal), cudaSuccess);
  abl::cuda::attention(dq.as<__nv_bfloat16>(), dk.as<__nv_bfloat16>(), dv.as<__nv_bfloat16>(),
                       dout.as<__nv_bfloat16>(), dseqs.as<abl::cpu::AttnSeq>(), bounds, NH, NKV, HD, 0,
                       {}, scratch.get(), scratch_bytes, st.get());
  ASSERT_EQ(cudaStreamEndCapture(st.get(), &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

  for (const std::vector<int64_t>& kv_lens : {std::vector<int64_t>{10, 700, 1500}, {11, 1999, 1}, {300, 2000, 2}}) {
    const auto seqs = seqs_for(kv_lens);
    abl::cuda::copy_to_device(dseqs.get(), seqs.data(), seqs.size() * sizeof(abl::cpu::AttnSeq), st.get());
    ASSERT_EQ(cudaGraphLaunch(exec, st.get()), cudaSuccess);
    st.synchronize();
    std::vector<float> want(static_cast<size_t>(B * NH * HD));
    abl::cpu::attention(to_f32(q).data(), to_f32(k).data(), to_f32(v).data(), want.data(), seqs.data(), B, NH, NKV,
                        HD, 0);
    abl::testing::expect_close(to_f32(download<__nv_bfloat16>(dout, want.size(), st.get())), want, kAtol, kRtol,
                               "graph replay, kv_len " + std::to_string(kv_lens[0]) + "/" +
                                   std::to_string(kv_lens[1]) + "/" + std::to_string(kv_lens[2]));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST(AttentionDecode, RejectsTooSmallScratch) {
  ABL_REQUIRE_GPU();
  const AttnBounds bounds{1, 1, 3000, AttnPath::automatic};
  ASSERT_GT(abl::cuda::attention_scratch_bytes(bounds, 32, 8, 128, 0, device_sm_count()), 0u);
  abl::cuda::DeviceBuffer buf(4096);
  const auto* p = buf.as<__nv_bfloat16>();
  EXPECT_THROW(abl::cuda::attention(p, p, p, buf.as<__nv_bfloat16>(), buf.as<abl::cpu::AttnSeq>(), bounds, 32, 8,
                                    128, 0, {}, nullptr, 0, nullptr),
               abl::Error);
}

// ---- host only: argument checks, split counts, scratch sizes ---------------------------------

TEST(AttentionHost, HeadDims) {
  for (const int64_t HD : {64, 80, 96, 128, 256}) EXPECT_TRUE(abl::cuda::attention_supports_head_dim(HD)) << HD;
  for (const int64_t HD : {0, 32, 72, 112, 160, 512}) EXPECT_FALSE(abl::cuda::attention_supports_head_dim(HD)) << HD;
}

TEST(AttentionHost, RejectsBadArgumentsBeforeTouchingTheDevice) {
  const AttnBounds bounds{2, 4, 8, AttnPath::automatic};
  const __nv_bfloat16* p = nullptr;
  auto call = [&](const AttnBounds& b, int64_t NH, int64_t NKV, int64_t HD, int64_t window) {
    abl::cuda::attention(p, p, p, nullptr, nullptr, b, NH, NKV, HD, window, {}, nullptr, 0, nullptr);
  };
  EXPECT_THROW(call(bounds, 8, 8, 72, 0), abl::Error);                                      // head dim
  EXPECT_THROW(call(bounds, 8, 3, 64, 0), abl::Error);                                      // NH % NKV
  EXPECT_THROW(call(bounds, 8, 8, 64, -1), abl::Error);                                     // window
  EXPECT_THROW(call({2, 9, 8, AttnPath::automatic}, 8, 8, 64, 0), abl::Error);              // q past kv
  EXPECT_THROW(call({70000, 1, 8, AttnPath::automatic}, 8, 8, 64, 0), abl::Error);          // grid
  EXPECT_THROW(call(bounds, 8, 8, 64, 0), abl::Error);                                      // null tensors
  EXPECT_NO_THROW(call({0, 0, 0, AttnPath::automatic}, 8, 8, 64, 0));                       // empty: no-op
}

TEST(AttentionHost, SplitsOnlyLongContextsThatLeaveTheGpuIdle) {
  using abl::cuda::attention_decode_splits;
  // Short contexts never split; neither do batches that fill the GPU on their own.
  EXPECT_EQ(attention_decode_splits(1, 32, 8, 511, 0, kH100Sms), 1);
  EXPECT_EQ(attention_decode_splits(1024, 32, 8, 100000, 0, kH100Sms), 1);
  // One long sequence: limited by 256 keys per split, then by the cap of 64.
  EXPECT_EQ(attention_decode_splits(1, 32, 8, 3000, 0, kH100Sms), 3000 / 256);
  EXPECT_EQ(attention_decode_splits(1, 32, 8, 1 << 20, 0, kH100Sms), 64);
  // A window bounds the visible keys, so it bounds the splits.
  EXPECT_EQ(attention_decode_splits(1, 32, 8, 100000, 32, kH100Sms), 1);
  EXPECT_EQ(attention_decode_splits(1, 32, 8, 100000, 1024, kH100Sms), 4);
  // Degenerate input: one split.
  EXPECT_EQ(attention_decode_splits(0, 32, 8, 3000, 0, kH100Sms), 1);
  EXPECT_EQ(attention_decode_splits(4, 32, 0, 3000, 0, kH100Sms), 1);
  EXPECT_EQ(attention_decode_splits(4, 32, 8, 0, 0, kH100Sms), 1);
  EXPECT_EQ(attention_decode_splits(4, 32, 8, 3000, 0, 0), 1);  // no SM count: no reason to split
}

TEST(AttentionHost, SplitsAreMonotone) {
  using abl::cuda::attention_decode_splits;
  for (const auto& [NH, NKV] : {Heads(32, 8), Heads(28, 4), Heads(64, 2), Heads(12, 1)}) {
    for (const int sms : {1, 108, 132}) {
      int prev_b = 1 << 30;
      for (int64_t B = 1; B <= 512; B = B * 3 / 2 + 1) {  // fewer splits as the batch grows
        const int s = attention_decode_splits(B, NH, NKV, 8192, 0, sms);
        EXPECT_GE(s, 1);
        EXPECT_LE(s, 64);
        EXPECT_LE(s, prev_b) << "B " << B;
        prev_b = s;
      }
      int prev_kv = 0;
      for (int64_t kv = 1; kv <= 40000; kv = kv * 2 + 7) {  // more as the context grows
        const int s = attention_decode_splits(3, NH, NKV, kv, 0, sms);
        EXPECT_GE(s, prev_kv) << "kv " << kv;
        EXPECT_LE(s, std::max<int64_t>(1, kv / 256)) << "kv " << kv;
        prev_kv = s;
      }
    }
  }
}

TEST(AttentionHost, ScratchPlannedOnceCoversEverySmallerBatch) {
  using abl::cuda::attention_scratch_bytes;
  const int64_t NH = 28, NKV = 4, HD = 128;
  const AttnBounds plan{256, 2048, 4096, AttnPath::automatic};
  const size_t planned = attention_scratch_bytes(plan, NH, NKV, HD, 0, kH100Sms);
  ASSERT_GT(planned, 0u);
  for (int64_t B = 1; B <= plan.B; ++B) {
    for (const int64_t kv : {int64_t{1}, int64_t{300}, int64_t{1000}, int64_t{3000}, plan.max_kv_len}) {
      const AttnBounds batch{B, 1, kv, AttnPath::automatic};
      ASSERT_LE(attention_scratch_bytes(batch, NH, NKV, HD, 0, kH100Sms), planned) << "B " << B << " kv " << kv;
    }
  }
}

TEST(AttentionHost, ScratchSizes) {
  using abl::cuda::attention_scratch_bytes;
  // Per (sequence, head, split): an fp32 accumulator of HD plus (max, sum).
  const int splits = abl::cuda::attention_decode_splits(1, 28, 4, 3000, 0, kH100Sms);
  ASSERT_EQ(splits, 11);
  EXPECT_EQ(attention_scratch_bytes({1, 1, 3000, AttnPath::automatic}, 28, 4, 128, 0, kH100Sms),
            size_t{28} * 11 * (128 + 2) * sizeof(float));
  // No splits, no scratch: short contexts, narrow windows, the tiled path, empty batches.
  EXPECT_EQ(attention_scratch_bytes({64, 1, 500, AttnPath::automatic}, 28, 4, 128, 0, kH100Sms), 0u);
  EXPECT_EQ(attention_scratch_bytes({64, 1, 50000, AttnPath::automatic}, 28, 4, 128, 32, kH100Sms), 0u);
  EXPECT_EQ(attention_scratch_bytes({64, 512, 50000, AttnPath::tiled}, 28, 4, 128, 0, kH100Sms), 0u);
  EXPECT_EQ(attention_scratch_bytes({0, 0, 0, AttnPath::automatic}, 28, 4, 128, 0, kH100Sms), 0u);
}

}  // namespace
