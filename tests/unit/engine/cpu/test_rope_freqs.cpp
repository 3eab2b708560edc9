// YaRN rope scaling: the keys of a config (Qwen's documented long-context block, DeepSeek's mscale
// pair, truncate, the betas) parse to the numbers transformers' _compute_yarn_parameters uses, and
// the inverse frequencies keep, ramp and divide the dimension pairs it names. That whole models
// equal the torch reference is the golden test's job (tests/fixtures/golden/qwen3-yarn). Proportional RoPE (Gemma 4's
// full-attention layers): the leading frequencies of the whole head, then zeros.
#include <gtest/gtest.h>

#include <cmath>

#include "abl/engine/rope_freqs.h"
#include "abl/io/json_file.h"
#include "abl/model/model_spec.h"
#include "io/safetensors_test_util.h"

using abl::model::ModelSpec;
using abl::model::RopeScaling;

namespace {

nlohmann::json qwen25_7b() {
  return abl::io::read_json_file(std::string(ABL_FIXTURE_DIR) + "/configs/Qwen2.5-7B-Instruct.json").json();
}
ModelSpec parse(const nlohmann::json& c) {
  return abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "my/config.json"));
}
// theta^(-2i/HD), the unscaled inverse frequency of pair i
double plain(const ModelSpec& s, int64_t i) {
  return 1.0 / std::pow(s.rope_theta, static_cast<double>(2 * i) / static_cast<double>(s.head_dim));
}

// Gemma 4 31B's attention (docs/gemma4.md §1) in a Gemma4ForCausalLM text config.
nlohmann::json gemma4_text() {
  return nlohmann::json::parse(R"({"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text",
    "hidden_size": 5376, "intermediate_size": 21504, "num_hidden_layers": 12, "num_attention_heads": 32,
    "num_key_value_heads": 16, "head_dim": 256, "global_head_dim": 512, "hidden_size_per_layer_input": 0,
    "vocab_size": 1000, "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
      "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0}}})");
}

// Dynamic NTK raises the base only for sequences past max_position_embeddings, which runs never
// reach (context_length caps prompt + generation): the frequencies are the default ones.
TEST(RopeDynamic, IsTheDefaultRopeWithinTheContext) {
  nlohmann::json c = qwen25_7b();
  const std::vector<float> plain_freqs = abl::engine::rope_inv_freq(parse(c));
  c["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  const ModelSpec s = parse(c);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::dynamic);
  EXPECT_EQ(abl::engine::rope_inv_freq(s), plain_freqs);
  EXPECT_FLOAT_EQ(abl::engine::rope_attention_factor(s), 1.0f);
  EXPECT_EQ(s.context_length(), 32768);
  EXPECT_NE(abl::model::describe(s).find("dynamic NTK x2"), std::string::npos) << abl::model::describe(s);
  c["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", -2.0}};
  try {
    parse(c);
    FAIL() << "a negative factor was accepted";
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("rope_scaling.factor"), std::string::npos) << e.what();
  }
}

// Llama 4 Scout's llama3 block has low_freq_factor = high_freq_factor = 1: no blended band — each
// wavelength above original_max_position_embeddings is divided by factor, the others kept (and no NaN).
TEST(RopeLlama3, EqualFreqFactorsLeaveNoBand) {
  nlohmann::json c = qwen25_7b();
  c["rope_theta"] = 500000.0;
  c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 16.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 1.0},
                       {"original_max_position_embeddings", 8192}};
  const ModelSpec s = parse(c);
  const std::vector<float> f = abl::engine::rope_inv_freq(s);
  int divided = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const double p = plain(s, static_cast<int64_t>(i)), wavelen = 2 * M_PI * std::pow(500000.0, 2.0 * i / s.head_dim);
    ASSERT_TRUE(std::isfinite(f[i])) << i;
    if (wavelen > 8192) {
      EXPECT_NEAR(f[i], p / 16, 1e-6 * p) << i;
      ++divided;
    } else {
      EXPECT_NEAR(f[i], p, 1e-6 * p) << i;
    }
  }
  EXPECT_GT(divided, 0);
  EXPECT_LT(divided, static_cast<int>(f.size()));
}

TEST(RopeYarn, QwenLongContextBlock) {
  // As Qwen2.5's model cards say to add for contexts over 32768 tokens.
  nlohmann::json c = qwen25_7b();
  c["rope_scaling"] = {{"factor", 4.0}, {"original_max_position_embeddings", 32768}, {"type", "yarn"}};
  const ModelSpec s = parse(c);
  const RopeScaling& r = s.rope_scaling;
  EXPECT_EQ(r.type, RopeScaling::Type::yarn);
  EXPECT_DOUBLE_EQ(r.factor, 4.0);
  EXPECT_EQ(r.original_max_position_embeddings, 32768);
  EXPECT_DOUBLE_EQ(r.beta_fast, 32.0);
  EXPECT_DOUBLE_EQ(r.beta_slow, 1.0);
  EXPECT_TRUE(r.truncate);
  EXPECT_NEAR(r.attention_factor, 0.1 * std::log(4.0) + 1.0, 1e-12);
  EXPECT_NE(abl::model::describe(s).find("yarn x4 (from 32768 tokens, attention x1.139)"), std::string::npos)
      << abl::model::describe(s);
  EXPECT_FLOAT_EQ(abl::engine::rope_attention_factor(s), static_cast<float>(r.attention_factor));

  // head_dim 128, theta 1e6: 32 turns over 32768 tokens at pair 23.6 (floored: 23), one turn at
  // pair 39.6 (ceiled: 40); pairs up to 23 keep their frequency, from 40 on it is divided by 4.
  const std::vector<float> f = abl::engine::rope_inv_freq(s);
  ASSERT_EQ(f.size(), 64u);
  for (int64_t i = 0; i < 64; ++i) {
    const double base = plain(s, i);
    double want = base / 4.0;
    if (i <= 23) {
      want = base;
    } else if (i < 40) {
      const double ramp = static_cast<double>(i - 23) / 17.0;
      want = base / 4.0 * ramp + base * (1.0 - ramp);
      EXPECT_GT(f[static_cast<size_t>(i)], base / 4.0 * 1.0001) << i;
      EXPECT_LT(f[static_cast<size_t>(i)], base * 0.9999) << i;
    }
    EXPECT_NEAR(f[static_cast<size_t>(i)], want, 2e-6 * want) << "pair " << i;
  }
}

TEST(RopeYarn, OptionalKeys) {
  nlohmann::json c = qwen25_7b();
  // DeepSeek's spelling: mscale over mscale_all_dim sets the attention factor; without truncate the
  // ramp starts at the fractional pair 23.6, so pair 24 is already blended a little.
  c["rope_scaling"] = {{"factor", 4.0},          {"original_max_position_embeddings", 32768},
                       {"mscale", 0.707},        {"mscale_all_dim", 1.0},
                       {"beta_fast", nullptr},   {"truncate", false},
                       {"rope_type", "yarn"}};
  ModelSpec s = parse(c);
  EXPECT_DOUBLE_EQ(s.rope_scaling.beta_fast, 32.0);  // `get("beta_fast") or 32`
  EXPECT_FALSE(s.rope_scaling.truncate);
  EXPECT_NEAR(s.rope_scaling.attention_factor, (0.0707 * std::log(4.0) + 1) / (0.1 * std::log(4.0) + 1), 1e-12);
  const double low = 128 * std::log(32768 / (32 * 2 * M_PI)) / (2 * std::log(1e6));
  const double high = 128 * std::log(32768 / (2 * M_PI)) / (2 * std::log(1e6));
  const std::vector<float> loose = abl::engine::rope_inv_freq(s);
  const double ramp24 = (24 - low) / (high - low);
  EXPECT_NEAR(loose[24], plain(s, 24) * (1 - ramp24) + plain(s, 24) / 4 * ramp24, 2e-6 * plain(s, 24));
  EXPECT_NEAR(loose[23], plain(s, 23), 2e-6 * plain(s, 23));

  // An explicit attention_factor wins over mscale; without original_max_position_embeddings in the
  // block, the top-level key (transformers 5.x moves it there), else max_position_embeddings.
  c["rope_scaling"]["attention_factor"] = 1.25;
  c["rope_scaling"].erase("original_max_position_embeddings");
  s = parse(c);
  EXPECT_DOUBLE_EQ(s.rope_scaling.attention_factor, 1.25);
  EXPECT_EQ(s.rope_scaling.original_max_position_embeddings, c["max_position_embeddings"].get<int64_t>());
  c["original_max_position_embeddings"] = 8192;
  EXPECT_EQ(parse(c).rope_scaling.original_max_position_embeddings, 8192);

  // A yarn factor of 1 with attention factor 1 is plain RoPE.
  c["rope_scaling"] = {{"factor", 1.0}, {"rope_type", "yarn"}};
  s = parse(c);
  EXPECT_DOUBLE_EQ(s.rope_scaling.attention_factor, 1.0);
  const std::vector<float> one = abl::engine::rope_inv_freq(s);
  for (int64_t i = 0; i < 64; ++i) EXPECT_NEAR(one[static_cast<size_t>(i)], plain(s, i), 2e-6 * plain(s, i));
}

TEST(RopeYarn, BadKeysNamed) {
  nlohmann::json c = qwen25_7b();
  c["rope_scaling"] = {{"factor", 4.0}, {"beta_fast", 1.0}, {"beta_slow", 32.0}, {"rope_type", "yarn"}};
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "rope_scaling.beta_fast", "at least beta_slow");
  // Equal betas (Kimi-K2: 1 and 1) are allowed, as in transformers: the ramp is then one dimension wide
  // (floor to ceil of the same correction dim), every pair below it kept and every pair above it divided.
  c["rope_scaling"] = {{"factor", 4.0}, {"beta_fast", 1.0}, {"beta_slow", 1.0}, {"rope_type", "yarn"},
                       {"original_max_position_embeddings", 4096}};
  const abl::model::ModelSpec equal = parse(c);
  const std::vector<float> f = abl::engine::rope_inv_freq(equal);
  int64_t kept = 0, divided = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(f.size()); ++i) {
    const float p = plain(equal, i), got = f[static_cast<size_t>(i)];
    EXPECT_TRUE(got <= p * (1 + 1e-6f) && got >= p / 4 * (1 - 1e-6f)) << i;
    kept += std::fabs(got - p) <= 1e-6f * p;
    divided += std::fabs(got - p / 4) <= 1e-6f * p;
  }
  EXPECT_GE(kept + divided, static_cast<int64_t>(f.size()) - 1);  // at most one pair on the ramp
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  c["rope_scaling"] = {{"factor", -4.0}, {"rope_type", "yarn"}};
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "rope_scaling.factor", "positive");
  c["rope_scaling"] = {{"factor", 4.0}, {"attention_factor", 0}, {"rope_type", "yarn"}};
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "rope_scaling.attention_factor", "positive");
  c["rope_scaling"] = {{"factor", 4.0}, {"truncate", "yes"}, {"rope_type", "yarn"}};
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "rope_scaling.truncate");
  c["rope_scaling"] = {{"factor", 4.0}, {"rope_type", "yarn"}};
  c["rope_theta"] = 1.0;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "rope_theta", "greater than 1 with yarn");
}

}  // namespace

// _compute_proportional_rope_parameters over the 512-wide full heads: int(0.25 · 512 // 2) = 64 frequencies
// θ^(−2i/512) (the exponent over the whole head), zeros for the other 192; the sliding layers' default table spans
// their 256-wide heads.
TEST(RopeProportional, LeadingFrequenciesOfTheWholeHeadThenZeros) {
  nlohmann::json c = gemma4_text();
  const ModelSpec s = parse(c);
  const std::vector<float> full = abl::engine::rope_inv_freq(s), local = abl::engine::rope_inv_freq(s, true);
  ASSERT_EQ(full.size(), 256u);
  ASSERT_EQ(local.size(), 128u);
  for (size_t i = 0; i < full.size(); ++i) {
    const double want = i < 64 ? std::pow(1e6, -static_cast<double>(2 * i) / 512.0) : 0.0;
    EXPECT_NEAR(full[i], want, 1e-6 * want) << i;
  }
  for (size_t i = 0; i < local.size(); ++i) {
    EXPECT_NEAR(local[i], std::pow(1e4, -static_cast<double>(2 * i) / 256.0), 1e-6) << i;
  }
  EXPECT_FLOAT_EQ(abl::engine::rope_attention_factor(s), 1.0f);
  // factor divides every frequency (the zeros stay zeros)
  c["rope_parameters"]["full_attention"]["factor"] = 8.0;
  const std::vector<float> scaled = abl::engine::rope_inv_freq(parse(c));
  for (size_t i = 0; i < full.size(); ++i) EXPECT_FLOAT_EQ(scaled[i], full[i] / 8.0f) << i;
}
