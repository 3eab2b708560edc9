// The CUDA elementwise and reduction ops (backend/cuda/ops.h) against their CPU twins over odd,
// non-power-of-two shapes; the CPU twin gets the bf16-rounded inputs the device sees. The
// HostChecks tests need no device: bad extents throw and empty calls enqueue nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "abl/backend/cuda/ops.h"
#include "abl/backend/cpu/ops.h"
#include "abl/core/dtype.h"
#include "abl/core/error.h"
#include "common/cuda_test.h"
#include "common/random_values.h"

namespace abl {
namespace {

// upload/download, to_bf16/to_f32, expect_close and the seeded inputs (cuda_test.h, random_values.h).
using namespace testing;

// Tolerances by output dtype: bf16 keeps 8 significant bits (relative rounding error ≤ 2⁻⁹).
constexpr double kBf16Rtol = 1e-2;
constexpr double kBf16Atol = 1e-3;
constexpr double kF32Rtol = 1e-5;

// The inputs as the device holds them: rounded to bf16.
std::vector<float> bf16_rounded(const std::vector<float>& x) { return to_f32(to_bf16(x)); }

TEST(CudaConvert, F32ToBf16RoundsToNearestEven) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  std::vector<float> x = normal(37 * 211, 3.0f, 1);
  // Ties (1 + 2⁻⁸ → 1, 1 + 3·2⁻⁸ → 1 + 2⁻⁶), signed zeros, subnormals, the largest finite bf16.
  const std::vector<float> special = {0.0f, -0.0f, 1.0f + 0x1p-8f, 1.0f + 0x1.8p-7f, -1.0f - 0x1p-8f, 1e-40f, -3e-39f,
                                      3.3895313892515355e38f, 65504.0f, 1e-20f};
  x.insert(x.end(), special.begin(), special.end());
  auto dx = upload(x, stream.get());
  cuda::DeviceBuffer dy(x.size() * sizeof(__nv_bfloat16));
  cuda::f32_to_bf16(dx.as<float>(), dy.as<__nv_bfloat16>(), static_cast<int64_t>(x.size()), stream.get());
  const auto got = to_f32(download<__nv_bfloat16>(dy, x.size(), stream.get()));
  expect_close(got, bf16_rounded(x), 0.0, 0.0, "f32_to_bf16");
}

TEST(CudaConvert, Bf16ToF32IsExact) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const auto x = to_bf16(normal(37 * 211 + 5, 10.0f, 2));
  auto dx = upload(x, stream.get());
  cuda::DeviceBuffer dy(x.size() * sizeof(float));
  cuda::bf16_to_f32(dx.as<__nv_bfloat16>(), dy.as<float>(), static_cast<int64_t>(x.size()), stream.get());
  expect_close(download<float>(dy, x.size(), stream.get()), to_f32(x), 0.0, 0.0, "bf16_to_f32");
}

TEST(CudaConvert, F16ToBf16) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const auto xf = normal(37 * 211 + 3, 100.0f, 3);
  std::vector<__half> x(xf.size());
  std::vector<float> want(xf.size());
  for (size_t i = 0; i < xf.size(); ++i) {
    x[i] = __float2half(xf[i]);
    want[i] = __bfloat162float(__float2bfloat16(__half2float(x[i])));
  }
  auto dx = upload(x, stream.get());
  cuda::DeviceBuffer dy(x.size() * sizeof(__nv_bfloat16));
  cuda::f16_to_bf16(dx.as<__half>(), dy.as<__nv_bfloat16>(), static_cast<int64_t>(x.size()), stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dy, x.size(), stream.get())), want, 0.0, 0.0, "f16_to_bf16");
}

TEST(CudaEmbedding, MatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t T = 37, V = 1089, H = 200;
  const auto table = to_bf16(normal(static_cast<size_t>(V * H), 0.5f, 4));
  std::vector<int32_t> tokens(T);
  std::mt19937 rng(5);
  for (auto& t : tokens) t = static_cast<int32_t>(rng() % V);
  tokens[0] = 0;
  tokens[1] = static_cast<int32_t>(V - 1);
  std::vector<float> want(static_cast<size_t>(T * H));
  cpu::embedding(tokens.data(), T, to_f32(table).data(), V, H, want.data());

  auto dtok = upload(tokens, stream.get());
  auto dtable = upload(table, stream.get());
  cuda::DeviceBuffer dout(want.size() * sizeof(float));
  cuda::embedding(dtok.as<int32_t>(), T, dtable.as<__nv_bfloat16>(), V, H, dout.as<float>(), stream.get());
  expect_close(download<float>(dout, want.size(), stream.get()), want, 0.0, 0.0, "embedding");
}

TEST(CudaEmbedding, BadTokenGivesNanRowWithoutReadingOutside) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t T = 3, V = 17, H = 40;
  const auto table = to_bf16(normal(static_cast<size_t>(V * H), 1.0f, 6));
  const std::vector<int32_t> tokens = {2, static_cast<int32_t>(V), -1};
  auto dtok = upload(tokens, stream.get());
  auto dtable = upload(table, stream.get());
  cuda::DeviceBuffer dout(static_cast<size_t>(T * H) * sizeof(float));
  cuda::embedding(dtok.as<int32_t>(), T, dtable.as<__nv_bfloat16>(), V, H, dout.as<float>(), stream.get());
  const auto got = download<float>(dout, static_cast<size_t>(T * H), stream.get());
  for (int64_t h = 0; h < H; ++h) {
    EXPECT_EQ(got[static_cast<size_t>(h)], __bfloat162float(table[static_cast<size_t>(2 * H + h)]));
    EXPECT_TRUE(std::isnan(got[static_cast<size_t>(H + h)])) << "token V, column " << h;
    EXPECT_TRUE(std::isnan(got[static_cast<size_t>(2 * H + h)])) << "token -1, column " << h;
  }
}

// Residual-stream norm: fp32 rows → bf16; dim 200 (one partial warp) and 2049 (strided, > 1024).
TEST(CudaRmsnorm, Fp32RowsMatchCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  for (const int64_t dim : {int64_t{200}, int64_t{2049}}) {
    const int64_t rows = 37;
    const float eps = 1e-6f;
    const auto x = normal(static_cast<size_t>(rows * dim), 2.0f, 7);
    const auto w = to_bf16(uniform(static_cast<size_t>(dim), 0.5f, 1.5f, 8));
    std::vector<float> want(x.size());
    cpu::rmsnorm(x.data(), to_f32(w).data(), want.data(), rows, dim, eps);

    auto dx = upload(x, stream.get());
    auto dw = upload(w, stream.get());
    cuda::DeviceBuffer dy(x.size() * sizeof(__nv_bfloat16));
    cuda::rmsnorm(dx.as<float>(), dw.as<__nv_bfloat16>(), dy.as<__nv_bfloat16>(), rows, dim, eps, 0.0f, stream.get());
    expect_close(to_f32(download<__nv_bfloat16>(dy, x.size(), stream.get())), want, kBf16Atol, kBf16Rtol,
                 "rmsnorm f32, dim " + std::to_string(dim));
  }
}

// Per-head q/k norm: bf16 rows (T·heads) of HD = 72, in place.
TEST(CudaRmsnorm, Bf16RowsInPlaceMatchCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t rows = 37 * 7, dim = 72;
  const float eps = 1e-6f;
  const auto x = to_bf16(normal(static_cast<size_t>(rows * dim), 1.5f, 9));
  const auto w = to_bf16(uniform(static_cast<size_t>(dim), 0.5f, 1.5f, 10));
  std::vector<float> want(x.size());
  cpu::rmsnorm(to_f32(x).data(), to_f32(w).data(), want.data(), rows, dim, eps);

  auto dx = upload(x, stream.get());
  auto dw = upload(w, stream.get());
  cuda::rmsnorm(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), dx.as<__nv_bfloat16>(), rows, dim, eps, 0.0f,
                stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dx, x.size(), stream.get())), want, kBf16Atol, kBf16Rtol,
               "rmsnorm bf16 in place");

  // Llama 4's q/k L2 norm: no weight
  cpu::rmsnorm(to_f32(x).data(), nullptr, want.data(), rows, dim, eps);
  auto dl2 = upload(x, stream.get());
  cuda::rmsnorm(dl2.as<__nv_bfloat16>(), nullptr, dl2.as<__nv_bfloat16>(), rows, dim, eps, 0.0f, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dl2, x.size(), stream.get())), want, kBf16Atol, kBf16Rtol,
               "rmsnorm without weight");
}

TEST(CudaRope, MatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t T = 37, heads = 5, HD = 72;
  const auto x = to_bf16(normal(static_cast<size_t>(T * heads * HD), 1.0f, 11));
  std::vector<int64_t> positions(T);
  std::mt19937 rng(12);
  for (auto& p : positions) p = static_cast<int64_t>(rng() % 32768);  // unsorted, as in a packed batch
  positions[0] = 0;
  std::vector<float> inv_freq(static_cast<size_t>(HD / 2));
  for (int64_t i = 0; i < HD / 2; ++i) {
    inv_freq[static_cast<size_t>(i)] = static_cast<float>(1.0 / std::pow(500000.0, 2.0 * static_cast<double>(i) / HD));
  }
  auto want = to_f32(x);
  cpu::rope(want.data(), positions.data(), T, heads, HD, inv_freq.data());

  auto dx = upload(x, stream.get());
  auto dpos = upload(positions, stream.get());
  auto dfreq = upload(inv_freq, stream.get());
  cuda::rope(dx.as<__nv_bfloat16>(), dpos.as<int64_t>(), T, heads, HD, dfreq.as<float>(), nullptr, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dx, x.size(), stream.get())), want, kBf16Atol, kBf16Rtol, "rope");

  // LongRoPE: a second table row picked per token, as the CPU twin does.
  std::vector<float> tables = inv_freq;
  for (float f : inv_freq) tables.push_back(f / 3.5f);
  std::vector<int32_t> row(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) row[static_cast<size_t>(t)] = t % 3 == 1 ? 1 : 0;
  auto want2 = to_f32(x);
  cpu::rope(want2.data(), positions.data(), T, heads, HD, tables.data(), 1.0f, row.data());
  auto dx2 = upload(x, stream.get());
  auto dtables = upload(tables, stream.get());
  auto drow = upload(row, stream.get());
  cuda::rope(dx2.as<__nv_bfloat16>(), dpos.as<int64_t>(), T, heads, HD, dtables.as<float>(), drow.as<int32_t>(),
             stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dx2, x.size(), stream.get())), want2, kBf16Atol, kBf16Rtol,
               "rope with a table row per token");

  // Partial rotary (Phi-4-mini): the first R = 48 of 72 dims rotate, the rest pass unchanged.
  const int64_t R = 48;
  auto want3 = to_f32(x);
  cpu::rope(want3.data(), positions.data(), T, heads, HD, inv_freq.data(), 1.0f, nullptr, R);
  auto dx3 = upload(x, stream.get());
  cuda::rope(dx3.as<__nv_bfloat16>(), dpos.as<int64_t>(), T, heads, HD, dfreq.as<float>(), nullptr, stream.get(), R);
  const auto got3 = download<__nv_bfloat16>(dx3, x.size(), stream.get());
  expect_close(to_f32(got3), want3, kBf16Atol, kBf16Rtol, "rope of the first 48 dims");
  const std::vector<float> got3_f = to_f32(got3), x_f = to_f32(x);
  for (size_t i = 0; i < x.size(); ++i) {
    if (static_cast<int64_t>(i) % HD >= R) {
      ASSERT_EQ(got3_f[i], x_f[i]) << "passed dim " << i;
    }
  }

  // GLM: the first R dims rotate in adjacent pairs (2i, 2i + 1), the rest pass unchanged.
  auto want4 = to_f32(x);
  cpu::rope(want4.data(), positions.data(), T, heads, HD, inv_freq.data(), 1.0f, nullptr, R, /*interleaved=*/true);
  auto dx4 = upload(x, stream.get());
  cuda::rope(dx4.as<__nv_bfloat16>(), dpos.as<int64_t>(), T, heads, HD, dfreq.as<float>(), nullptr, stream.get(), R,
             /*interleaved=*/true);
  const std::vector<float> got4 = to_f32(download<__nv_bfloat16>(dx4, x.size(), stream.get()));
  expect_close(got4, want4, kBf16Atol, kBf16Rtol, "interleaved rope of the first 48 dims");
  for (size_t i = 0; i < x.size(); ++i) {
    if (static_cast<int64_t>(i) % HD >= R) {
      ASSERT_EQ(got4[i], x_f[i]) << "passed dim " << i;
    }
  }

  // LongRoPE's / YaRN's attention factor scales cos and sin: the rotated dims only (Phi-4-mini's
  // partial rotary), as the CPU twin and transformers do; the passed dims keep their values.
  const float factor = 1.118034f;
  auto want5 = to_f32(x);
  cpu::rope(want5.data(), positions.data(), T, heads, HD, inv_freq.data(), factor, nullptr, R);
  auto dx5 = upload(x, stream.get());
  cuda::rope(dx5.as<__nv_bfloat16>(), dpos.as<int64_t>(), T, heads, HD, dfreq.as<float>(), nullptr, stream.get(), R,
             false, factor);
  const std::vector<float> got5 = to_f32(download<__nv_bfloat16>(dx5, x.size(), stream.get()));
  expect_close(got5, want5, kBf16Atol, kBf16Rtol, "rope with an attention factor");
  for (size_t i = 0; i < x.size(); ++i) {
    if (static_cast<int64_t>(i) % HD >= R) {
      ASSERT_EQ(got5[i], x_f[i]) << "passed dim " << i;
    }
  }
}

TEST(CudaKvAppend, MatchesCpuAndLeavesOtherRows) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t T = 37, kv_dim = 5 * 40, C = 101;
  const auto k = to_bf16(normal(static_cast<size_t>(T * kv_dim), 1.0f, 13));
  const auto v = to_bf16(normal(static_cast<size_t>(T * kv_dim), 1.0f, 14));
  const auto k_cache = to_bf16(normal(static_cast<size_t>(C * kv_dim), 1.0f, 15));
  const auto v_cache = to_bf16(normal(static_cast<size_t>(C * kv_dim), 1.0f, 16));
  std::vector<int64_t> rows(static_cast<size_t>(C));
  std::iota(rows.begin(), rows.end(), int64_t{0});
  std::shuffle(rows.begin(), rows.end(), std::mt19937(17));
  rows.resize(static_cast<size_t>(T));
  auto want_k = to_f32(k_cache), want_v = to_f32(v_cache);
  cpu::kv_append(to_f32(k).data(), to_f32(v).data(), rows.data(), T, kv_dim, want_k.data(), want_v.data());

  auto dk = upload(k, stream.get());
  auto dv = upload(v, stream.get());
  auto drows = upload(rows, stream.get());
  auto dkc = upload(k_cache, stream.get());
  auto dvc = upload(v_cache, stream.get());
  cuda::kv_append(dk.as<__nv_bfloat16>(), dv.as<__nv_bfloat16>(), drows.as<int64_t>(), T, kv_dim,
                  dkc.as<__nv_bfloat16>(), dvc.as<__nv_bfloat16>(), stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dkc, k_cache.size(), stream.get())), want_k, 0.0, 0.0, "k cache");
  expect_close(to_f32(download<__nv_bfloat16>(dvc, v_cache.size(), stream.get())), want_v, 0.0, 0.0, "v cache");
}

// Latent attention's keys and values (DeepSeek-V3's shape in small: nope 16, R 8, HDv 12) into rows padded to
// 64, as the engine runs them: the CPU twin's values at the head's columns, the padding left as it was.
TEST(CudaMlaSplitKv, MatchesCpuIntoPaddedRows) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t T = 29, NH = 5, nope = 16, R = 8, HDv = 12, C = 24, HDp = 64;
  const auto kvb = to_bf16(normal(static_cast<size_t>(T * NH * (nope + HDv)), 1.0f, 61));
  const auto kv_a = to_bf16(normal(static_cast<size_t>(T * (C + R)), 1.0f, 62));  // k_pe: each row's tail
  std::vector<float> want_k(static_cast<size_t>(T * NH * (nope + R))), want_v(static_cast<size_t>(T * NH * HDv));
  cpu::mla_split_kv(to_f32(kvb).data(), to_f32(kv_a).data() + C, C + R, T, NH, nope, R, HDv, want_k.data(),
                    want_v.data());
  const std::vector<float> fill(static_cast<size_t>(T * NH * HDp), -3.0f);
  auto dkvb = upload(kvb, stream.get());
  auto dkv_a = upload(kv_a, stream.get());
  auto dk = upload(to_bf16(fill), stream.get());
  auto dv = upload(to_bf16(fill), stream.get());
  cuda::mla_split_kv(dkvb.as<__nv_bfloat16>(), dkv_a.as<__nv_bfloat16>() + C, C + R, T, NH, nope, R, HDv,
                     dk.as<__nv_bfloat16>(), HDp, dv.as<__nv_bfloat16>(), HDp, stream.get());
  const std::vector<float> k = to_f32(download<__nv_bfloat16>(dk, fill.size(), stream.get()));
  const std::vector<float> v = to_f32(download<__nv_bfloat16>(dv, fill.size(), stream.get()));
  std::vector<float> got_k, got_v, pad;
  for (int64_t row = 0; row < T * NH; ++row) {
    for (int64_t c = 0; c < HDp; ++c) {
      const float kc = k[static_cast<size_t>(row * HDp + c)], vc = v[static_cast<size_t>(row * HDp + c)];
      (c < nope + R ? got_k : pad).push_back(kc);
      (c < HDv ? got_v : pad).push_back(vc);
    }
  }
  expect_close(got_k, want_k, 0.0, 0.0, "keys");
  expect_close(got_v, want_v, 0.0, 0.0, "values");
  EXPECT_EQ(std::count(pad.begin(), pad.end(), -3.0f), static_cast<std::ptrdiff_t>(pad.size())) << "padding written";
}

// Each sequence's last row into a strided destination (a depth slot of the captures).
TEST(CudaGatherRows, CopiesPickedRowsIntoAStridedDestination) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t T = 53, H = 200, B = 7, stride = 3 * H;
  const auto x = normal(static_cast<size_t>(T * H), 1.0f, 21);
  const std::vector<int64_t> rows = {4, 0, 52, 17, 17, 30, 9};  // a repeated row is fine
  std::vector<float> dst(static_cast<size_t>(B * stride), -1.0f), want = dst;
  for (int64_t i = 0; i < B; ++i) {
    std::copy_n(x.begin() + rows[static_cast<size_t>(i)] * H, H, want.begin() + i * stride + H);
  }
  auto dx = upload(x, stream.get());
  auto drows = upload(rows, stream.get());
  auto ddst = upload(dst, stream.get());
  cuda::gather_rows(dx.as<float>(), drows.as<int64_t>(), B, H, ddst.as<float>() + H, stride, stream.get());
  expect_close(download<float>(ddst, dst.size(), stream.get()), want, 0.0, 0.0, "gathered rows");
}

TEST(CudaSwiglu, MatchesCpuAlsoInPlace) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t n = 37 * 301;
  const auto gate = to_bf16(uniform(static_cast<size_t>(n), -9.0f, 9.0f, 18));
  const auto up = to_bf16(uniform(static_cast<size_t>(n), -2.0f, 2.0f, 19));
  std::vector<float> want(static_cast<size_t>(n));
  cpu::swiglu(to_f32(gate).data(), to_f32(up).data(), want.data(), n);

  auto dgate = upload(gate, stream.get());
  auto dup = upload(up, stream.get());
  cuda::DeviceBuffer dout(static_cast<size_t>(n) * sizeof(__nv_bfloat16));
  cuda::swiglu(dgate.as<__nv_bfloat16>(), dup.as<__nv_bfloat16>(), dout.as<__nv_bfloat16>(), n, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dout, want.size(), stream.get())), want, 1e-4, kBf16Rtol, "swiglu");
  cuda::swiglu(dgate.as<__nv_bfloat16>(), dup.as<__nv_bfloat16>(), dgate.as<__nv_bfloat16>(), n, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dgate, want.size(), stream.get())), want, 1e-4, kBf16Rtol,
               "swiglu in place");
}

// gpt-oss's experts: rows in expert order (offsets), each adding its expert's gate/up biases before the
// clamped SwiGLU, and its down bias after; against the CPU ops on the same values.
TEST(CudaSwigluClamped, GroupBiasesMatchCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t E = 5, F = 96, H = 40, stride = 1000;
  const std::vector<int64_t> offsets = {0, 3, 3, 10, 11, 20};  // expert 1 has no rows
  const int64_t rows = offsets.back();
  const auto gate = to_bf16(uniform(static_cast<size_t>(rows * F), -10.0f, 10.0f, 42));
  const auto up = to_bf16(uniform(static_cast<size_t>(rows * F), -10.0f, 10.0f, 43));
  const auto biases = to_bf16(uniform(static_cast<size_t>(E * stride), -3.0f, 3.0f, 44));  // gate at 0, up at 200
  std::vector<float> g = to_f32(gate), u = to_f32(up);
  const std::vector<float> b = to_f32(biases);
  for (int64_t e = 0; e < E; ++e) {
    for (int64_t r = offsets[static_cast<size_t>(e)]; r < offsets[static_cast<size_t>(e) + 1]; ++r) {
      for (int64_t f = 0; f < F; ++f) {
        g[static_cast<size_t>(r * F + f)] += b[static_cast<size_t>(e * stride + f)];
        u[static_cast<size_t>(r * F + f)] += b[static_cast<size_t>(e * stride + 200 + f)];
      }
    }
  }
  std::vector<float> want(g.size());
  cpu::swiglu_clamped(g.data(), u.data(), want.data(), rows * F, 1.702f, 7.0f);
  auto dgate = upload(gate, stream.get());
  auto dup = upload(up, stream.get());
  auto db = upload(biases, stream.get());
  auto doff = upload(offsets, stream.get());
  const auto* b0 = db.as<__nv_bfloat16>();
  const cuda::GroupBias gb{b0, stride, doff.as<int64_t>(), E}, ub{b0 + 200, stride, doff.as<int64_t>(), E};
  cuda::swiglu_clamped(dgate.as<__nv_bfloat16>(), dup.as<__nv_bfloat16>(), dgate.as<__nv_bfloat16>(), rows, F, 1.702f,
                       7.0f, gb, ub, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dgate, want.size(), stream.get())), want, 1e-4, kBf16Rtol,
               "swiglu_clamped with group biases");

  // down bias per group, and one bias for every row (o_proj's)
  std::vector<float> x = uniform(static_cast<size_t>(rows * H), -1.0f, 1.0f, 45), want_x = x;
  for (int64_t e = 0; e < E; ++e) {
    for (int64_t r = offsets[static_cast<size_t>(e)]; r < offsets[static_cast<size_t>(e) + 1]; ++r) {
      for (int64_t i = 0; i < H; ++i) want_x[static_cast<size_t>(r * H + i)] += b[static_cast<size_t>(e * stride + 500 + i)];
    }
  }
  auto dx = upload(x, stream.get());
  cuda::add_group_bias(dx.as<float>(), rows, H, {b0 + 500, stride, doff.as<int64_t>(), E}, stream.get());
  expect_close(download<float>(dx, x.size(), stream.get()), want_x, 1e-6, 1e-6, "add_group_bias");
  cuda::add_bias_rows(dx.as<float>(), b0 + 700, rows, H, stream.get());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < H; ++i) want_x[static_cast<size_t>(r * H + i)] += b[static_cast<size_t>(700 + i)];
  }
  expect_close(download<float>(dx, x.size(), stream.get()), want_x, 1e-6, 1e-6, "add_bias_rows");
}

TEST(CudaLayerNorm, MatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t rows = 7, dim = 4096 + 37;
  const auto x = uniform(static_cast<size_t>(rows * dim), 1.0f, 3.0f, 46);  // a mean far from 0
  const auto w = to_bf16(uniform(static_cast<size_t>(dim), 0.5f, 1.5f, 47));
  std::vector<float> want(x.size());
  cpu::layernorm(x.data(), to_f32(w).data(), want.data(), rows, dim, 1e-5f);
  auto dx = upload(x, stream.get());
  auto dw = upload(w, stream.get());
  cuda::DeviceBuffer dy(x.size() * sizeof(__nv_bfloat16));
  cuda::layernorm(dx.as<float>(), dw.as<__nv_bfloat16>(), nullptr, dy.as<__nv_bfloat16>(), rows, dim, 1e-5f,
                  stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dy, want.size(), stream.get())), want, 1e-3, kBf16Rtol, "layernorm");

  // Phi-3.5-MoE's nn.LayerNorm: the bias added before the one rounding to bf16.
  const auto b = to_bf16(uniform(static_cast<size_t>(dim), -0.5f, 0.5f, 48));
  const std::vector<float> bf = to_f32(b);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < dim; ++i) want[static_cast<size_t>(r * dim + i)] += bf[static_cast<size_t>(i)];
  }
  auto db = upload(b, stream.get());
  cuda::layernorm(dx.as<float>(), dw.as<__nv_bfloat16>(), db.as<__nv_bfloat16>(), dy.as<__nv_bfloat16>(), rows, dim,
                  1e-5f, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dy, want.size(), stream.get())), want, 1e-3, kBf16Rtol,
               "layernorm with bias");
}

// Command R+'s q/k norm: bf16 head rows in place, each head with its own weight row.
TEST(CudaLayerNorm, PerHeadInPlaceMatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t T = 5, heads = 6, dim = 128;
  const auto x = to_bf16(uniform(static_cast<size_t>(T * heads * dim), -1.0f, 3.0f, 48));
  const auto w = to_bf16(uniform(static_cast<size_t>(heads * dim), 0.5f, 1.5f, 49));
  std::vector<float> want(x.size());
  cpu::layernorm(to_f32(x).data(), to_f32(w).data(), want.data(), T * heads, dim, 1e-5f, heads);
  auto dx = upload(x, stream.get());
  auto dw = upload(w, stream.get());
  cuda::layernorm(dx.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), dx.as<__nv_bfloat16>(), T * heads, dim, 1e-5f, heads,
                  stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dx, want.size(), stream.get())), want, 1e-3, kBf16Rtol,
               "per-head layernorm");
}

TEST(CudaGeglu, MatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t n = 37 * 301;
  const auto gate = to_bf16(uniform(static_cast<size_t>(n), -6.0f, 6.0f, 40));
  const auto up = to_bf16(uniform(static_cast<size_t>(n), -2.0f, 2.0f, 41));
  std::vector<float> want(static_cast<size_t>(n));
  cpu::geglu(to_f32(gate).data(), to_f32(up).data(), want.data(), n);
  auto dgate = upload(gate, stream.get());
  auto dup = upload(up, stream.get());
  cuda::geglu(dgate.as<__nv_bfloat16>(), dup.as<__nv_bfloat16>(), dgate.as<__nv_bfloat16>(), n, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dgate, want.size(), stream.get())), want, 1e-4, kBf16Rtol,
               "geglu in place");
}

TEST(CudaReluSquared, MatchesCpu) {  // Nemotron-H's ungated MLP
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t n = 37 * 301;
  const auto x = to_bf16(uniform(static_cast<size_t>(n), -6.0f, 6.0f, 42));
  std::vector<float> want = to_f32(x);
  cpu::relu_squared(want.data(), n);
  auto dx = upload(x, stream.get());
  cuda::relu_squared(dx.as<__nv_bfloat16>(), n, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dx, want.size(), stream.get())), want, 1e-4, kBf16Rtol, "relu_squared");
}

// Apertus' ungated MLP: the scalars read from fp32 device memory. The kernel rounds the two per-layer factors
// softplus(alpha_p) and beta + softplus(alpha_n) to bf16 as transformers' bf16 model does, so the CPU op (fp32
// factors) is given the stored alphas that produce those rounded factors exactly.
TEST(CudaXielu, MatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t n = 37 * 301;
  const auto x = to_bf16(uniform(static_cast<size_t>(n), -6.0f, 6.0f, 43));
  const std::vector<float> scalars = {0.3f, -0.9f, 0.55f, -1e-6f};  // alpha_p, alpha_n, beta, eps
  const auto round_bf16 = [](double v) { return double{bf16_to_f32(f32_to_bf16(static_cast<float>(v)))}; };
  const auto softplus = [](double v) { return std::log1p(std::exp(v)); };
  const double ap = round_bf16(softplus(scalars[0]));
  const double an = round_bf16(scalars[2] + round_bf16(softplus(scalars[1])));
  const float alpha_p = static_cast<float>(std::log(std::expm1(ap)));  // softplus⁻¹ of the rounded factors
  const float alpha_n = static_cast<float>(std::log(std::expm1(an - scalars[2])));
  std::vector<float> want = to_f32(x);
  cpu::xielu(want.data(), n, XieluParams{&alpha_p, &alpha_n, &scalars[2], &scalars[3]});
  auto dx = upload(x, stream.get());
  auto ds = upload(scalars, stream.get());
  const float* d = ds.as<float>();
  cuda::xielu(dx.as<__nv_bfloat16>(), n, XieluParams{d, d + 1, d + 2, d + 3}, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dx, want.size(), stream.get())), want, 1e-4, kBf16Rtol, "xielu");
}

// Gemma's norms: (1 + w) applied in the kernel, for all three row types (bf16 weights near 0, where
// storing 1 + w in bf16 would lose the digits the offset keeps), and the fp32 post-norm in place.
TEST(CudaRmsnorm, OffsetOneMatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t rows = 37, dim = 200;
  const float eps = 1e-6f;
  const auto x = normal(static_cast<size_t>(rows * dim), 2.0f, 42);
  const auto w = to_bf16(normal(static_cast<size_t>(dim), 0.05f, 43));
  std::vector<float> want(x.size());
  cpu::rmsnorm(x.data(), to_f32(w).data(), want.data(), rows, dim, eps, 1.0f);
  auto dx = upload(x, stream.get());
  auto dw = upload(w, stream.get());
  cuda::DeviceBuffer dy(x.size() * sizeof(__nv_bfloat16));
  cuda::rmsnorm(dx.as<float>(), dw.as<__nv_bfloat16>(), dy.as<__nv_bfloat16>(), rows, dim, eps, 1.0f, stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dy, x.size(), stream.get())), want, kBf16Atol, kBf16Rtol,
               "rmsnorm (1+w) f32 -> bf16");
  cuda::rmsnorm(dx.as<float>(), dw.as<__nv_bfloat16>(), dx.as<float>(), rows, dim, eps, 1.0f, stream.get());
  expect_close(download<float>(dx, x.size(), stream.get()), want, 1e-5, 1e-5, "rmsnorm (1+w) f32 in place");
  const auto xb = to_bf16(x);
  cpu::rmsnorm(to_f32(xb).data(), to_f32(w).data(), want.data(), rows, dim, eps, 1.0f);
  auto dxb = upload(xb, stream.get());
  cuda::rmsnorm(dxb.as<__nv_bfloat16>(), dw.as<__nv_bfloat16>(), dxb.as<__nv_bfloat16>(), rows, dim, eps, 1.0f,
                stream.get());
  expect_close(to_f32(download<__nv_bfloat16>(dxb, x.size(), stream.get())), want, kBf16Atol, kBf16Rtol,
               "rmsnorm (1+w) bf16 in place");
}

TEST(CudaScaleSoftcap, MatchCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t n = 5003;
  const auto x = normal(static_cast<size_t>(n), 40.0f, 44);
  std::vector<float> want = x;
  cpu::scale(want.data(), 55.5f, n);
  cpu::softcap(want.data(), 30.0f, n);
  auto dx = upload(x, stream.get());
  cuda::scale(dx.as<float>(), 55.5f, n, stream.get());
  cuda::softcap(dx.as<float>(), 30.0f, n, stream.get());
  expect_close(download<float>(dx, x.size(), stream.get()), want, 1e-5, 1e-5, "scale, softcap");
}

// Ministral 3's query scaling: the factor per position (1 below the period, log-growing after), rounded
// to bf16 as transformers casts it, times bf16 queries.
TEST(CudaScaleByPosition, MatchesCpuInBf16) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const std::vector<int64_t> positions = {0, 7, 8, 15, 16, 100, 4095, 70000};
  const auto T = static_cast<int64_t>(positions.size());
  const int64_t width = 24 * 5 + 1;
  const auto x = to_bf16(normal(static_cast<size_t>(T * width), 2.0f, 45));
  const auto xf = to_f32(x);
  auto dx = upload(x, stream.get());
  auto dpos = upload(positions, stream.get());
  cuda::scale_by_position(dx.as<__nv_bfloat16>(), dpos.as<int64_t>(), T, width, 0.3f, 8, 0, true, stream.get());
  const auto got = to_f32(download<__nv_bfloat16>(dx, x.size(), stream.get()));
  for (int64_t t = 0; t < T; ++t) {
    std::vector<float> one = {1.0f};  // the CPU twin's factor for this position, rounded to bf16
    cpu::scale_by_position(one.data(), &positions[static_cast<size_t>(t)], 1, 1, 0.3f, 8);
    const float f = to_f32(to_bf16(one))[0];
    for (int64_t i = 0; i < width; ++i) {
      const float want = to_f32(to_bf16(std::vector<float>{xf[static_cast<size_t>(t * width + i)] * f}))[0];
      EXPECT_EQ(got[static_cast<size_t>(t * width + i)], want) << "position " << positions[static_cast<size_t>(t)];
    }
  }
  // Llama 4's NoPE layers: positions + 1, the fp32 factor times the bf16 query, rounded once (logf on the
  // device may differ from the host's by an fp32 ulp: one bf16 ulp allowed)
  auto dx4 = upload(x, stream.get());
  cuda::scale_by_position(dx4.as<__nv_bfloat16>(), dpos.as<int64_t>(), T, width, 0.3f, 8, 1, false, stream.get());
  const auto got4 = to_f32(download<__nv_bfloat16>(dx4, x.size(), stream.get()));
  for (int64_t t = 0; t < T; ++t) {
    std::vector<float> one = {1.0f};
    cpu::scale_by_position(one.data(), &positions[static_cast<size_t>(t)], 1, 1, 0.3f, 8, 1);
    for (int64_t i = 0; i < width; ++i) {
      const float want = to_f32(to_bf16(std::vector<float>{xf[static_cast<size_t>(t * width + i)] * one[0]}))[0];
      EXPECT_NEAR(got4[static_cast<size_t>(t * width + i)], want, std::abs(want) * 0x1p-7f)
          << "position " << positions[static_cast<size_t>(t)];
    }
  }
}

TEST(CudaAdd, IsExactFp32) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  const int64_t n = 37 * 200 + 3;
  const auto x = normal(static_cast<size_t>(n), 3.0f, 20);
  const auto y = normal(static_cast<size_t>(n), 0.1f, 21);
  auto want = x;
  cpu::add(want.data(), y.data(), n);
  auto dx = upload(x, stream.get());
  auto dy = upload(y, stream.get());
  cuda::add(dx.as<float>(), dy.as<float>(), n, stream.get());
  expect_close(download<float>(dx, x.size(), stream.get()), want, 0.0, 0.0, "add");
}

// Logits with a spread like a model's; one row shifted by +120 overflows exp without the max.
std::vector<float> logits_like(int64_t rows, int64_t V, uint32_t seed) {
  auto x = normal(static_cast<size_t>(rows * V), 4.0f, seed);
  for (int64_t i = 0; i < V; ++i) x[static_cast<size_t>(i)] += 120.0f;
  return x;
}

TEST(CudaLogSoftmax, MatchesCpu) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  for (const auto& [rows, V] : {std::pair<int64_t, int64_t>{37, 1089}, std::pair<int64_t, int64_t>{3, 151936}}) {
    const auto x = logits_like(rows, V, 22);
    std::vector<float> want(x.size());
    cpu::log_softmax(x.data(), want.data(), rows, V);
    auto dx = upload(x, stream.get());
    cuda::DeviceBuffer dout(x.size() * sizeof(float));
    cuda::log_softmax(dx.as<float>(), dout.as<float>(), rows, V, stream.get());
    expect_close(download<float>(dout, x.size(), stream.get()), want, 1e-4, kF32Rtol,
                 "log_softmax V = " + std::to_string(V));
    cuda::log_softmax(dx.as<float>(), dx.as<float>(), rows, V, stream.get());
    expect_close(download<float>(dx, x.size(), stream.get()), want, 1e-4, kF32Rtol,
                 "log_softmax in place V = " + std::to_string(V));
  }
}

TEST(CudaKlRows, MatchesTheEvaluatorSum) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  for (const auto& [rows, V] : {std::pair<int64_t, int64_t>{37, 1089}, std::pair<int64_t, int64_t>{5, 151936}}) {
    const auto base = normal(static_cast<size_t>(rows * V), 4.0f, 23);
    auto trial = base;
    const auto noise = normal(trial.size(), 0.3f, 24);
    for (size_t i = 0; i < trial.size(); ++i) trial[i] += noise[i];
    std::vector<float> ref(base.size()), lp(trial.size());
    cpu::log_softmax(base.data(), ref.data(), rows, V);
    cpu::log_softmax(trial.data(), lp.data(), rows, V);
    std::vector<float> want(static_cast<size_t>(rows));  // as trial_evaluator.cpp sums it
    for (int64_t r = 0; r < rows; ++r) {
      double kl = 0;
      for (int64_t v = 0; v < V; ++v) {
        const auto i = static_cast<size_t>(r * V + v);
        kl += std::exp(static_cast<double>(ref[i])) * (ref[i] - lp[i]);
      }
      want[static_cast<size_t>(r)] = static_cast<float>(kl);
    }
    auto dref = upload(ref, stream.get());
    auto dlp = upload(lp, stream.get());
    cuda::DeviceBuffer dout(static_cast<size_t>(rows) * sizeof(double));
    cuda::kl_rows(dref.as<float>(), dlp.as<float>(), dout.as<double>(), rows, V, stream.get());
    const auto got64 = download<double>(dout, static_cast<size_t>(rows), stream.get());
    const std::vector<float> got(got64.begin(), got64.end());
    expect_close(got, want, 1e-9, 1e-6, "kl_rows V = " + std::to_string(V));
  }
}

TEST(CudaArgmax, MatchesCpuFirstIndexOnTies) {
  ABL_REQUIRE_GPU();
  cuda::Stream stream;
  for (const auto& [rows, V] : {std::pair<int64_t, int64_t>{37, 1089}, std::pair<int64_t, int64_t>{7, 151936}}) {
    auto x = normal(static_cast<size_t>(rows * V), 3.0f, 25);
    auto row = [&](int64_t r) { return x.begin() + r * V; };
    const float inf = std::numeric_limits<float>::infinity();
    // Ties between threads, warps and loop iterations: the smaller index must win.
    row(0)[V - 1] = 50.0f;
    row(0)[1030] = 50.0f;
    row(0)[6] = 50.0f;
    row(1)[5] = 50.0f;
    row(1)[V - 2] = 50.0f;
    std::fill(row(2), row(2) + V, 1.5f);  // all equal → 0
    std::fill(row(3), row(3) + V, -inf);  // all −inf → 0
    row(4)[3] = std::numeric_limits<float>::quiet_NaN();  // NaN is skipped
    row(4)[V / 2] = 60.0f;
    row(5)[V - 1] = inf;
    row(5)[V / 3] = inf;
    row(6)[0] = std::numeric_limits<float>::quiet_NaN();  // NaN first: still skipped
    row(6)[V / 4] = 70.0f;
    std::vector<int32_t> want(static_cast<size_t>(rows));
    cpu::argmax(x.data(), rows, V, want.data());
    ASSERT_EQ(want[0], 6);
    ASSERT_EQ(want[2], 0);
    ASSERT_EQ(want[6], V / 4);

    auto dx = upload(x, stream.get());
    cuda::DeviceBuffer dout(static_cast<size_t>(rows) * sizeof(int32_t));
    cuda::argmax(dx.as<float>(), rows, V, dout.as<int32_t>(), stream.get());
    const auto got = download<int32_t>(dout, static_cast<size_t>(rows), stream.get());
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(got[static_cast<size_t>(r)], want[static_cast<size_t>(r)]) << "row " << r << ", V " << V;
    }
  }
}

// ---- host side, no device needed: argument checks happen before any CUDA call.

template <typename F>
void expect_error(F f, const char* what) {
  EXPECT_THROW(f(), Error) << what;
}

TEST(CudaOpsHostChecks, BadExtentsThrowBeforeLaunch) {
  cudaStream_t s = nullptr;
  expect_error([&] { cuda::f32_to_bf16(nullptr, nullptr, -1, s); }, "f32_to_bf16 n < 0");
  expect_error([&] { cuda::embedding(nullptr, -1, nullptr, 10, 4, nullptr, s); }, "embedding T < 0");
  expect_error([&] { cuda::rmsnorm(static_cast<const float*>(nullptr), nullptr, static_cast<__nv_bfloat16*>(nullptr), 3, -1,
                                   1e-6f, 0.0f, s); },
               "rmsnorm dim < 0");
  expect_error([&] { cuda::rmsnorm(static_cast<const __nv_bfloat16*>(nullptr), nullptr, nullptr, int64_t{1} << 32, 8,
                                   1e-6f, 0.0f, s); },
               "rmsnorm rows beyond one grid");
  expect_error([&] { cuda::rope(nullptr, nullptr, 4, 2, 7, nullptr, nullptr, s); }, "rope odd HD");
  expect_error([&] { cuda::rope(nullptr, nullptr, 4, 2, 0, nullptr, nullptr, s); }, "rope HD = 0");
  expect_error([&] { cuda::kv_append(nullptr, nullptr, nullptr, 2, -3, nullptr, nullptr, s); }, "kv_append kv_dim < 0");
  expect_error([&] { cuda::gather_rows(nullptr, nullptr, 2, 8, nullptr, 4, s); }, "gather_rows stride < width");
  expect_error([&] { cuda::mla_split_kv(nullptr, nullptr, 32, 2, 4, 16, 8, 12, nullptr, 20, nullptr, 64, s); },
               "mla_split_kv key rows narrower than nope + R");
  expect_error([&] { cuda::swiglu(nullptr, nullptr, nullptr, -5, s); }, "swiglu n < 0");
  expect_error([&] { cuda::geglu(nullptr, nullptr, nullptr, -5, s); }, "geglu n < 0");
  expect_error([&] { cuda::relu_squared(nullptr, -5, s); }, "relu_squared n < 0");
  expect_error([&] { cuda::xielu(nullptr, 4, XieluParams{}, s); }, "xielu without its scalars");
  expect_error([&] { cuda::softcap(nullptr, 0.0f, 5, s); }, "softcap cap 0");
  expect_error([&] { cuda::add(nullptr, nullptr, -5, s); }, "add n < 0");
  expect_error([&] { cuda::log_softmax(nullptr, nullptr, -1, 10, s); }, "log_softmax rows < 0");
  expect_error([&] { cuda::kl_rows(nullptr, nullptr, nullptr, 3, 0, s); }, "kl_rows V = 0");
  expect_error([&] { cuda::argmax(nullptr, 3, 0, nullptr, s); }, "argmax V = 0");
  expect_error([&] { cuda::argmax(nullptr, 3, int64_t{1} << 31, nullptr, s); }, "argmax V beyond int32");
}

TEST(CudaOpsHostChecks, EmptyCallsEnqueueNothing) {
  cudaStream_t s = nullptr;  // never reached: nothing is launched
  cuda::f32_to_bf16(nullptr, nullptr, 0, s);
  cuda::bf16_to_f32(nullptr, nullptr, 0, s);
  cuda::f16_to_bf16(nullptr, nullptr, 0, s);
  cuda::embedding(nullptr, 0, nullptr, 10, 4, nullptr, s);
  cuda::rmsnorm(static_cast<const float*>(nullptr), nullptr, static_cast<__nv_bfloat16*>(nullptr), 0, 8, 1e-6f, 0.0f,
                s);
  cuda::rmsnorm(static_cast<const __nv_bfloat16*>(nullptr), nullptr, nullptr, 0, 8, 1e-6f, 0.0f, s);
  cuda::rmsnorm(static_cast<const float*>(nullptr), nullptr, static_cast<float*>(nullptr), 0, 8, 1e-6f, 1.0f, s);
  cuda::geglu(nullptr, nullptr, nullptr, 0, s);
  cuda::relu_squared(nullptr, 0, s);
  cuda::scale(nullptr, 2.0f, 0, s);
  cuda::softcap(nullptr, 30.0f, 0, s);
  cuda::rope(nullptr, nullptr, 0, 2, 8, nullptr, nullptr, s);
  cuda::kv_append(nullptr, nullptr, nullptr, 0, 8, nullptr, nullptr, s);
  cuda::swiglu(nullptr, nullptr, nullptr, 0, s);
  cuda::add(nullptr, nullptr, 0, s);
  cuda::log_softmax(nullptr, nullptr, 0, 10, s);
  cuda::kl_rows(nullptr, nullptr, nullptr, 0, 10, s);
  cuda::argmax(nullptr, 0, 10, nullptr, s);
  SUCCEED();
}

}  // namespace
}  // namespace abl
