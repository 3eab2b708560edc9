// The epilogue equals explicitly modified weights: for random directions and λ, a model with W'
// written into its o_proj/down_proj and no epilogue gives the same logits as the original model
// with the epilogue, for every row-normalisation mode — also with several trials in one batch —
// and for every family: Gemma's post-norms come after the epilogue, and in mixture-of-experts
// models every expert's and the shared expert's down projection is ablated, each with its own row
// norms (an epilogue after the routing sum fails this in `pre` and `full`).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "abl/ablation/export.h"
#include "abl/engine/cpu/weights.h"
#include "abl/engine/cpu/ablation_epilogue.h"
#include "abl/core/error.h"
#include "abl/engine/cpu/engine.h"
#include "common/unit_vector.h"

using namespace abl;
using engine::RowNorm;

namespace {

using abl::testing::unit_vector;

engine::TrialAblation random_trial(const model::ModelSpec& spec, RowNorm mode, int32_t n_dirs, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> lam(-0.3f, 1.5f);
  engine::TrialAblation t;
  t.mode = mode;
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    t.direction.push_back(static_cast<int32_t>(rng() % static_cast<uint32_t>(n_dirs)));
    t.lambda[0].push_back(lam(rng));
    t.lambda[1].push_back(l == 0 ? 0.0f : lam(rng));  // one component left alone
  }
  return t;
}

// The model under test: a synthetic preset (shortened) or a golden fixture folder.
struct Model {
  model::ModelSpec spec;
  std::string dir;  // empty: synthetic
};
Model model_named(const std::string& name) {
  if (name == "tiny-llama") {
    model::ModelSpec spec = model::synthetic_model_spec("tiny-llama");
    spec.num_layers = 3;
    return {spec, ""};
  }
  const std::string dir = std::string(ABL_FIXTURE_DIR) + "/golden/" + name;
  return {model::load_model_spec(dir), dir};
}

// The explicitly ablated model of one trial: every o_proj and every down projection (dense MLP,
// each expert or a LatentMoE's fc2_latent_proj, the shared expert) rewritten as export does.
std::unique_ptr<engine::HostWeights> ablated_model(const Model& m, const engine::TrialAblation& t,
                                                   const std::vector<std::vector<float>>& dirs) {
  auto w = engine::HostWeights::load(m.spec, m.dir);
  for (int64_t l = 0; l < m.spec.num_layers; ++l) {
    const float* v = dirs[static_cast<size_t>(t.direction[static_cast<size_t>(l)])].data();
    for (const model::WeightSlot& s : model::layer_slots(m.spec, l)) {
      const bool o = s.role == model::WeightRole::o_proj;
      if (!o && !model::is_down_projection(m.spec, s.role)) continue;
      ablation::ablate_weight(w->layer_tensor(l, s.role, s.expert), s.shape[0], s.shape[1], v,
                              t.lambda[o ? 0 : 1][static_cast<size_t>(l)], t.mode);
    }
  }
  return w;
}

std::vector<int32_t> tokens(int64_t n, int32_t seed, int64_t V) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    t[static_cast<size_t>(i)] = static_cast<int32_t>((seed * 71 + i * 29) % std::min<int64_t>(V, 500));
  }
  return t;
}

float max_abs_diff(const float* a, const float* b, int64_t n) {
  float m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace

class EpilogueModes : public ::testing::TestWithParam<std::tuple<std::string, RowNorm>> {};

TEST_P(EpilogueModes, EqualsExplicitWeightsInOneMixedBatch) {
  const Model m = model_named(std::get<0>(GetParam()));
  const RowNorm mode = std::get<1>(GetParam());
  const model::ModelSpec& spec = m.spec;
  const int64_t H = spec.hidden_size, V = spec.vocab_size;
  const std::vector<std::vector<float>> dirs = {unit_vector(H, 1), unit_vector(H, 2), unit_vector(H, 3)};
  const RowNorm other = mode == RowNorm::full ? RowNorm::none : RowNorm::full;
  const std::vector<engine::TrialAblation> trials = {random_trial(spec, mode, 3, 10),
                                                       random_trial(spec, other, 3, 11)};
  auto base = engine::HostWeights::load(spec, m.dir);
  engine::AblationEpilogue epi(spec, dirs, trials);
  engine::Engine eng(*base, {64, 8});

  // Sequences: trial 0, trial 1, no ablation; prefill then two decode steps each.
  const int32_t trial_of[3] = {0, 1, -1};
  const int64_t len = 7;
  std::vector<std::vector<int32_t>> toks;
  for (int s = 0; s < 3; ++s) toks.push_back(tokens(len + 2, s + 1, V));
  engine::KvCache cache(spec, 64);
  std::vector<float> got(static_cast<size_t>(3 * V * 3));  // [step][seq][V]
  for (int step = 0; step < 3; ++step) {
    engine::Batch b;
    for (int s = 0; s < 3; ++s) {
      const int64_t n = step == 0 ? len : 1, cached = step == 0 ? 0 : len + step - 1;
      b.add(toks[static_cast<size_t>(s)].data() + cached, n, s * 20, cached, trial_of[s]);
    }
    engine::Outputs o;
    o.logits = got.data() + step * 3 * V;
    eng.forward(b, cache, o, &epi);
  }
  for (int s = 0; s < 3; ++s) {
    auto ref_w = trial_of[s] < 0 ? engine::HostWeights::load(spec, m.dir)
                                 : ablated_model(m, trials[static_cast<size_t>(trial_of[s])], dirs);
    engine::Engine ref(*ref_w, {64, 8});
    engine::KvCache c(spec, 32);
    std::vector<float> all(static_cast<size_t>((len + 2) * V));
    engine::Batch b;
    b.add(toks[static_cast<size_t>(s)].data(), len + 2, 0, 0);
    engine::Outputs o;
    o.all_logits = all.data();
    ref.forward(b, c, o);
    for (int step = 0; step < 3; ++step) {
      const float* want = all.data() + (len - 1 + step) * V;
      const float err = max_abs_diff(got.data() + (step * 3 + s) * V, want, V);
      // fp32 rounding is relative: 2e-5 of the row's largest logit (at least 1; olmo3-v5's exceed 30)
      float scale = 1.0f;
      for (int64_t i = 0; i < V; ++i) scale = std::max(scale, std::fabs(want[i]));
      EXPECT_LT(err, 2e-5f * scale) << "sequence " << s << " (trial " << trial_of[s] << ") step " << step
                                    << ", largest logit " << scale;
    }
  }
  // The ablation changes the logits noticeably (the comparison above is not vacuous).
  EXPECT_GT(max_abs_diff(got.data(), got.data() + 2 * V, V), 1e-3f);
}

INSTANTIATE_TEST_SUITE_P(
    Families, EpilogueModes,
    ::testing::Combine(::testing::Values("tiny-llama", "gemma2-softcap", "gemma3-mm", "mistral3-mm", "phi3-longrope",
                                         "mixtral-moe", "qwen2-moe-shared", "qwen3-moe", "glm4-interleaved-rope",
                                         "qwen3-vl-mm", "smollm3-nope", "glm4-moe", "granite-multipliers",
                                         "granite-moe-shared", "gpt-oss", "cohere", "cohere2", "cohere-qknorm",
                                         "llama-bias", "seed-oss", "deepseek-v3-mla", "deepseek-v3-qproj", "olmo2",
                                         "olmo2-bias", "olmo3", "olmo3-v5", "deepseek-v2-lite",
                                         "deepseek-v2-groups", "olmoe", "minimax-m2",
                                         "minimax-m2-v5", "exaone4", "exaone4-dense", "ernie4.5-moe",
                                         "ernie4.5-moe-interval", "ernie4.5-dense", "qwen3-next", "qwen3.5-mm",
                                         "qwen3.5-moe-mm", "qwen3-vl-moe-mm", "gemma", "ministral3-mm", "glm4v-mm",
                                         "glm4v-moe-mm", "phimoe", "llama4-mm", "granite4-micro",
                                         "granite4-moe-nope", "hunyuan-dense", "granite4-h",
                                         "granite4-h-moe", "lfm2", "lfm2-moe", "nemotron-h",
                                         "nemotron-h-moe", "nemotron-h-latent-moe", "arcee", "dots1",
                                         "hunyuan-moe", "apertus",
                                         "glm4-moe-lite", "llava-mm", "internvl-mm", "gemma4-dense", "gemma4-e",
                                         "gemma4-moe"),
                       ::testing::Values(RowNorm::none, RowNorm::pre, RowNorm::full)),
    [](const auto& p) {
      std::string name = std::get<0>(p.param) + "_" + std::string(engine::row_norm_name(std::get<1>(p.param)));
      for (char& c : name) {
        if (c == '-' || c == '.') c = '_';
      }
      return name;
    });

TEST(Epilogue, FullModeKeepsRowNorms) {
  const int64_t out = 9, in = 13;
  std::mt19937 rng(5);
  std::normal_distribution<float> d;
  std::vector<float> w(static_cast<size_t>(out * in));
  for (auto& x : w) x = d(rng);
  const auto orig = w;
  const auto v = unit_vector(out, 6);
  ablation::ablate_weight(w.data(), out, in, v.data(), 0.9f, RowNorm::full);
  for (int64_t i = 0; i < out; ++i) {
    double a = 0, b = 0;
    for (int64_t j = 0; j < in; ++j) {
      a += orig[static_cast<size_t>(i * in + j)] * orig[static_cast<size_t>(i * in + j)];
      b += w[static_cast<size_t>(i * in + j)] * w[static_cast<size_t>(i * in + j)];
    }
    EXPECT_NEAR(std::sqrt(a), std::sqrt(b), 1e-4);
  }
}

TEST(Epilogue, NoneModeWithLambdaOneRemovesTheDirection) {
  const int64_t out = 8, in = 5;
  std::vector<float> w(static_cast<size_t>(out * in));
  std::mt19937 rng(7);
  std::normal_distribution<float> d;
  for (auto& x : w) x = d(rng);
  const auto v = unit_vector(out, 8);
  ablation::ablate_weight(w.data(), out, in, v.data(), 1.0f, RowNorm::none);
  for (int64_t j = 0; j < in; ++j) {  // vᵀW' = 0
    double dot = 0;
    for (int64_t i = 0; i < out; ++i) dot += v[static_cast<size_t>(i)] * w[static_cast<size_t>(i * in + j)];
    EXPECT_NEAR(dot, 0.0, 1e-5);
  }
  EXPECT_EQ(engine::parse_row_norm("pre"), RowNorm::pre);
  EXPECT_THROW(engine::parse_row_norm("post"), Error);
}
