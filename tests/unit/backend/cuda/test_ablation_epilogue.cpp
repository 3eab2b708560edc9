// The GPU ablation epilogue against its CPU twin (engine::AblationEpilogue) and against the
// explicitly ablated weights (ablation::ablate_weight), for all three row normalisations, in one
// batch that mixes trials, λ = 0 layers and un-ablated sequences, at odd sizes (H = 200).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "abl/ablation/export.h"
#include "abl/engine/cpu/ablation_epilogue.h"
#include "abl/backend/cuda/ablation_epilogue.h"
#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"
#include "abl/engine/cpu/engine.h"
#include "common/cuda_test.h"

using namespace abl;
using engine::RowNorm;
using cuda::AblationMode;
namespace tu = abl::testing;

namespace {

constexpr int64_t kH = 200, kHeads = 6, kHeadDim = 64, kF = 520, kL = 3;  // o_proj in = 384

model::ModelSpec small_spec() {
  model::ModelSpec s;
  s.hidden_size = kH;
  s.num_heads = kHeads;
  s.num_kv_heads = 2;
  s.head_dim = kHeadDim;
  s.intermediate_size = kF;
  s.num_layers = kL;
  s.vocab_size = 100;
  return s;
}

std::vector<float> normal_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<float> unit_vector(int64_t n, uint32_t seed) {
  auto v = normal_values(static_cast<size_t>(n), seed);
  double ss = 0;
  for (float x : v) ss += static_cast<double>(x) * x;
  for (auto& x : v) x = static_cast<float>(x / std::sqrt(ss));
  return v;
}

// A weight (H, in) as the device holds it (bf16-rounded), with rows of different norms and, when
// asked, one zero row (the n = 0 path).
std::vector<float> weight(int64_t in, uint32_t seed, bool zero_row) {
  auto w = normal_values(static_cast<size_t>(kH * in), seed, 0.05f);
  for (int64_t i = 0; i < kH; ++i) {
    const float row_scale = 0.5f + static_cast<float>(i % 7) * 0.25f;
    for (int64_t j = 0; j < in; ++j) w[static_cast<size_t>(i * in + j)] *= row_scale;
  }
  if (zero_row) std::fill(w.begin() + 7 * in, w.begin() + 8 * in, 0.0f);
  return tu::to_f32(tu::to_bf16(w));
}

std::vector<float> flat(const std::vector<std::vector<float>>& rows) {
  std::vector<float> f;
  for (const auto& r : rows) f.insert(f.end(), r.begin(), r.end());
  return f;
}

std::vector<engine::TrialAblation> make_trials() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> lam(-0.3f, 1.5f);
  const RowNorm modes[5] = {RowNorm::none, RowNorm::pre, RowNorm::full, RowNorm::full, RowNorm::pre};
  std::vector<engine::TrialAblation> trials;
  for (int k = 0; k < 5; ++k) {
    engine::TrialAblation t;
    t.mode = modes[k];
    for (int64_t l = 0; l < kL; ++l) {
      t.direction.push_back(static_cast<int32_t>((k + l) % 3));
      t.lambda[0].push_back(lam(rng));
      t.lambda[1].push_back(lam(rng));
    }
    trials.push_back(t);
  }
  trials[3].lambda[0][1] = 0.0f;  // some layers and components not ablated
  trials[3].lambda[1][0] = 0.0f;
  trials[2].lambda[1][2] = 0.0f;
  for (auto& l : trials[4].lambda) std::fill(l.begin(), l.end(), 0.0f);  // a trial that ablates nothing
  return trials;
}

cuda::AblationTrialsHost pack(const std::vector<engine::TrialAblation>& trials, int32_t num_slots) {
  cuda::AblationTrialsHost h(static_cast<int32_t>(kL));
  for (const auto& t : trials) {
    h.add_trial(static_cast<AblationMode>(t.mode), t.direction.data(), t.lambda[0].data(), t.lambda[1].data(),
                num_slots);
  }
  return h;
}

// Sequences of several lengths with trials, −1 (no ablation) among them.
engine::Batch make_batch() {
  const int32_t trial_of[8] = {2, -1, 0, 1, 3, 4, 2, 0};
  const int64_t len[8] = {5, 3, 1, 7, 4, 2, 6, 9};
  engine::Batch b;
  int64_t kv = 0;
  for (int s = 0; s < 8; ++s) {
    const std::vector<int32_t> toks(static_cast<size_t>(len[s]), 1);
    b.add(toks.data(), len[s], kv, 0, trial_of[s]);
    kv += len[s];
  }
  return b;
}

// Everything the device needs for a batch, uploaded once.
struct DeviceBatch {
  cuda::DeviceBuffer row_seq, seq_trial, mode, slot, lambda, dirs;
  cuda::AblationTrials tables;

  DeviceBatch(const engine::Batch& b, const cuda::AblationTrialsHost& h, const std::vector<float>& directions,
              cudaStream_t s)
      : row_seq(tu::upload(b.row_seq, s)),
        seq_trial(tu::upload(b.trial, s)),
        mode(tu::upload(h.mode, s)),
        slot(tu::upload(h.slot, s)),
        lambda(tu::upload(h.lambda, s)),
        dirs(tu::upload(directions, s)) {
    tables.num_trials = h.num_trials();
    tables.num_layers = h.num_layers;
    tables.mode = mode.as<int32_t>();
    tables.slot = slot.as<int32_t>();
    tables.lambda = lambda.as<float>();
  }
};

// n, Ŵa, ‖a‖² of one weight for all slots, computed on the device.
struct DeviceVectors {
  cuda::DeviceBuffer w, n, a, wa, a2;
  cuda::AblationVectors view;

  DeviceVectors(const std::vector<float>& weight_f32, int64_t in, const DeviceBatch& db, int64_t S, cudaStream_t s)
      : w(tu::upload(tu::to_bf16(weight_f32), s)),
        n(static_cast<size_t>(kH) * sizeof(float)),
        a(static_cast<size_t>(S * in) * sizeof(float)),
        wa(static_cast<size_t>(S * kH) * sizeof(float)),
        a2(static_cast<size_t>(S) * sizeof(float)) {
    cuda::ablation_row_norms(w.as<__nv_bfloat16>(), kH, in, n.as<float>(), s);
    cuda::ablation_direction_vectors(w.as<__nv_bfloat16>(), kH, in, n.as<float>(), db.dirs.as<float>(), S,
                                     a.as<float>(), wa.as<float>(), a2.as<float>(), s);
    view.v = db.dirs.as<float>();
    view.n = n.as<float>();
    view.wa = wa.as<float>();
    view.a2 = a2.as<float>();
  }
};

}  // namespace

TEST(AblationEpilogueCuda, ModesAreNumberedAsRowNorm) {
  EXPECT_EQ(static_cast<int>(AblationMode::none), static_cast<int>(RowNorm::none));
  EXPECT_EQ(static_cast<int>(AblationMode::pre), static_cast<int>(RowNorm::pre));
  EXPECT_EQ(static_cast<int>(AblationMode::full), static_cast<int>(RowNorm::full));
}

TEST(AblationEpilogueCuda, TrialTablesAreLaidOutTrialComponentLayer) {
  cuda::AblationTrialsHost h(3);
  const int32_t s0[3] = {0, 1, 2}, s1[3] = {2, 2, 0};
  const float la0[3] = {1, 2, 3}, lm0[3] = {4, 5, 6}, la1[3] = {7, 8, 9}, lm1[3] = {10, 11, 12};
  h.add_trial(AblationMode::pre, s0, la0, lm0, 3);
  h.add_trial(AblationMode::full, s1, la1, lm1, 3);
  ASSERT_EQ(h.num_trials(), 2);
  EXPECT_EQ(h.mode, (std::vector<int32_t>{1, 2}));
  // slot[k*L + l]
  EXPECT_EQ(h.slot, (std::vector<int32_t>{0, 1, 2, 2, 2, 0}));
  // lambda[(k*2 + c)*L + l]
  EXPECT_EQ(h.lambda, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(h.lambda[(1 * 2 + 1) * 3 + 2], 12.0f);
}

TEST(AblationEpilogueCuda, TrialTablesRejectSlotsAndModesOutOfRange) {
  cuda::AblationTrialsHost h(2);
  const int32_t bad[2] = {0, 3};
  const float lam[2] = {1, 1};
  EXPECT_THROW(h.add_trial(AblationMode::full, bad, lam, lam, 3), Error);
  const int32_t ok[2] = {0, 2};
  EXPECT_THROW(h.add_trial(static_cast<AblationMode>(7), ok, lam, lam, 3), Error);
  EXPECT_EQ(h.num_trials(), 0);
  EXPECT_TRUE(h.slot.empty() && h.lambda.empty());
}

TEST(AblationEpilogueCuda, DirectionVectorsMatchDoublePrecision) {
  ABL_REQUIRE_GPU();
  const int64_t in = kHeads * kHeadDim;
  const auto w = weight(in, 31, true);
  const std::vector<std::vector<float>> dirs = {unit_vector(kH, 1), unit_vector(kH, 2), unit_vector(kH, 3)};
  const int64_t S = 3;
  cuda::Stream stream;
  const engine::Batch b = make_batch();
  const DeviceBatch db(b, pack(make_trials(), 3), flat(dirs), stream.get());
  const DeviceVectors dv(w, in, db, S, stream.get());

  std::vector<float> n_want(kH), wa_want(static_cast<size_t>(S * kH)), a2_want(static_cast<size_t>(S));
  for (int64_t i = 0; i < kH; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < in; ++j) ss += static_cast<double>(w[static_cast<size_t>(i * in + j)]) * w[static_cast<size_t>(i * in + j)];
    n_want[static_cast<size_t>(i)] = static_cast<float>(std::sqrt(ss));
  }
  for (int64_t s = 0; s < S; ++s) {
    std::vector<double> a(static_cast<size_t>(in), 0.0);
    for (int64_t i = 0; i < kH; ++i) {
      const double n = n_want[static_cast<size_t>(i)];
      if (n == 0) continue;
      for (int64_t j = 0; j < in; ++j) a[static_cast<size_t>(j)] += dirs[static_cast<size_t>(s)][static_cast<size_t>(i)] / n * w[static_cast<size_t>(i * in + j)];
    }
    double a2 = 0;
    for (double x : a) a2 += x * x;
    a2_want[static_cast<size_t>(s)] = static_cast<float>(a2);
    for (int64_t i = 0; i < kH; ++i) {
      const double n = n_want[static_cast<size_t>(i)];
      double dot = 0;
      for (int64_t j = 0; j < in; ++j) dot += w[static_cast<size_t>(i * in + j)] * a[static_cast<size_t>(j)];
      wa_want[static_cast<size_t>(s * kH + i)] = static_cast<float>(n > 0 ? dot / n : 0.0);
    }
  }
  tu::expect_close(tu::download<float>(dv.n, kH, stream.get()), n_want, 1e-6, 1e-5, "n");
  tu::expect_close(tu::download<float>(dv.wa, static_cast<size_t>(S * kH), stream.get()), wa_want, 1e-5, 1e-4, "Ŵa");
  tu::expect_close(tu::download<float>(dv.a2, static_cast<size_t>(S), stream.get()), a2_want, 1e-6, 1e-4, "‖a‖²");
}

// Every layer and component of a mixed batch equals the CPU epilogue.
TEST(AblationEpilogueCuda, MatchesCpuEpilogueInAMixedBatch) {
  ABL_REQUIRE_GPU();
  const model::ModelSpec spec = small_spec();
  const std::vector<std::vector<float>> dirs = {unit_vector(kH, 1), unit_vector(kH, 2), unit_vector(kH, 3)};
  const auto trials = make_trials();
  engine::AblationEpilogue cpu_epi(spec, dirs, trials);
  const engine::Batch b = make_batch();
  const int64_t T = b.num_tokens();
  cuda::Stream stream;
  const DeviceBatch db(b, pack(trials, 3), flat(dirs), stream.get());

  for (int64_t l = 0; l < kL; ++l) {
    const auto wo = weight(spec.q_dim(), static_cast<uint32_t>(100 + l), l == 1);
    const auto wd = weight(kF, static_cast<uint32_t>(200 + l), l == 2);
    engine::LayerWeights lw;
    lw.wo = wo.data();
    lw.w_down = wd.data();
    cpu_epi.begin_layer(l, lw);
    for (const engine::Component c : {engine::Component::attn_o, engine::Component::mlp_down}) {
      const bool attn = c == engine::Component::attn_o;
      const DeviceVectors dv(attn ? wo : wd, attn ? spec.q_dim() : kF, db, 3, stream.get());
      const auto y0 = normal_values(static_cast<size_t>(T * kH), static_cast<uint32_t>(300 + 2 * l + (attn ? 0 : 1)));
      auto want = y0;
      cpu_epi.apply(c, l, want.data(), b);
      auto dy = tu::upload(y0, stream.get());
      cuda::ablation_apply(dy.as<float>(), T, kH, db.row_seq.as<int64_t>(), db.seq_trial.as<int32_t>(), db.tables,
                           static_cast<int32_t>(c), static_cast<int32_t>(l), dv.view, stream.get());
      const auto got = tu::download<float>(dy, y0.size(), stream.get());
      tu::expect_close(got, want, 1e-5, 1e-4,
                       "layer " + std::to_string(l) + (attn ? " o_proj" : " down_proj"));
      // Tokens without a trial or with λ = 0 are bit-for-bit untouched.
      for (int64_t t = 0; t < T; ++t) {
        const int32_t k = b.trial[static_cast<size_t>(b.row_seq[static_cast<size_t>(t)])];
        if (k >= 0 && trials[static_cast<size_t>(k)].lambda[static_cast<size_t>(c)][static_cast<size_t>(l)] != 0.0f) continue;
        for (int64_t i = 0; i < kH; ++i) {
          ASSERT_EQ(got[static_cast<size_t>(t * kH + i)], y0[static_cast<size_t>(t * kH + i)]) << "token " << t;
        }
      }
    }
  }
}

// The routed experts' epilogue: expert rows (the batch's tokens shuffled, sorted into four experts,
// one of them empty), each expert ablated with its own weight's vectors in one launch, equals
// ablation_apply on each expert's block — bit for bit, since both run the same per-row code.
TEST(AblationEpilogueCuda, GroupedApplyEqualsApplyPerExpert) {
  ABL_REQUIRE_GPU();
  const std::vector<std::vector<float>> dirs = {unit_vector(kH, 1), unit_vector(kH, 2), unit_vector(kH, 3)};
  const auto trials = make_trials();
  const engine::Batch b = make_batch();
  const int64_t T = b.num_tokens();
  ASSERT_GT(T, 25);
  cuda::Stream stream;
  const DeviceBatch db(b, pack(trials, 3), flat(dirs), stream.get());
  std::vector<int64_t> row_seq(b.row_seq.begin(), b.row_seq.end());
  std::shuffle(row_seq.begin(), row_seq.end(), std::mt19937(9));
  const std::vector<int64_t> offsets = {0, 11, 11, 25, T};
  const int64_t E = static_cast<int64_t>(offsets.size()) - 1;
  std::vector<std::unique_ptr<DeviceVectors>> experts;
  std::vector<cuda::AblationVectors> table;
  for (int64_t e = 0; e < E; ++e) {
    experts.push_back(std::make_unique<DeviceVectors>(weight(kF, static_cast<uint32_t>(400 + e), e == 3), kF, db, 3,
                                                      stream.get()));
    table.push_back(experts.back()->view);
  }
  auto dtable = tu::upload(table, stream.get());
  auto drs = tu::upload(row_seq, stream.get());
  auto doff = tu::upload(offsets, stream.get());
  for (int32_t l = 0; l < static_cast<int32_t>(kL); ++l) {
    const auto y0 = normal_values(static_cast<size_t>(T * kH), static_cast<uint32_t>(500 + l));
    auto want = tu::upload(y0, stream.get());
    for (int64_t e = 0; e < E; ++e) {
      const int64_t o = offsets[static_cast<size_t>(e)], n = offsets[static_cast<size_t>(e) + 1] - o;
      cuda::ablation_apply(want.as<float>() + o * kH, n, kH, drs.as<int64_t>() + o, db.seq_trial.as<int32_t>(), db.tables, 1, l,
                           experts[static_cast<size_t>(e)]->view, stream.get());
    }
    auto got = tu::upload(y0, stream.get());
    cuda::ablation_apply_grouped(got.as<float>(), T, kH, drs.as<int64_t>(), db.seq_trial.as<int32_t>(), db.tables, l,
                                 doff.as<int64_t>(), E, dtable.as<cuda::AblationVectors>(), stream.get());
    const auto g = tu::download<float>(got, y0.size(), stream.get());
    EXPECT_EQ(g, tu::download<float>(want, y0.size(), stream.get())) << "layer " << l;
    EXPECT_NE(g, y0) << "layer " << l << ": nothing was ablated";
  }
}

// y' from the epilogue equals x·W'ᵀ with W' = ablate_weight(W): the exactness the design relies on.
class AblationEpilogueCudaModes : public ::testing::TestWithParam<RowNorm> {};

TEST_P(AblationEpilogueCudaModes, EqualsExplicitlyAblatedWeight) {
  ABL_REQUIRE_GPU();
  const RowNorm mode = GetParam();
  const int64_t in = kHeads * kHeadDim, T = 37, layer = 1;
  const auto w = weight(in, 41, true);
  const auto x = normal_values(static_cast<size_t>(T * in), 42);
  const std::vector<std::vector<float>> dirs = {unit_vector(kH, 1), unit_vector(kH, 2)};
  const float lambda = 1.2f;
  // One sequence of 37 tokens, trial 0: direction slot 1 and λ at layer 1 for o_proj.
  engine::TrialAblation t;
  t.mode = mode;
  t.direction = {0, 1, 0};
  t.lambda[0] = {0.5f, lambda, 0.5f};
  t.lambda[1] = {0.0f, 0.0f, 0.0f};
  engine::Batch b;
  const std::vector<int32_t> toks(static_cast<size_t>(T), 1);
  b.add(toks.data(), T, 0, 0, 0);

  std::vector<float> y(static_cast<size_t>(T * kH)), want(y.size());
  cpu::linear(x.data(), w.data(), nullptr, y.data(), T, in, kH);
  auto w_ablated = w;
  ablation::ablate_weight(w_ablated.data(), kH, in, dirs[1].data(), lambda, mode);
  cpu::linear(x.data(), w_ablated.data(), nullptr, want.data(), T, in, kH);

  cuda::Stream stream;
  const DeviceBatch db(b, pack({t}, 2), flat(dirs), stream.get());
  const DeviceVectors dv(w, in, db, 2, stream.get());
  auto dy = tu::upload(y, stream.get());
  cuda::ablation_apply(dy.as<float>(), T, kH, db.row_seq.as<int64_t>(), db.seq_trial.as<int32_t>(), db.tables, 0,
                       static_cast<int32_t>(layer), dv.view, stream.get());
  const auto got = tu::download<float>(dy, y.size(), stream.get());
  tu::expect_close(got, want, 1e-4, 1e-3, std::string("mode ") + std::string(engine::row_norm_name(mode)));
}

INSTANTIATE_TEST_SUITE_P(AllModes, AblationEpilogueCudaModes,
                         ::testing::Values(RowNorm::none, RowNorm::pre, RowNorm::full),
                         [](const ::testing::TestParamInfo<RowNorm>& p) {
                           return std::string(engine::row_norm_name(p.param));
                         });
