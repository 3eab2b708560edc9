// Synthetic presets parse like real configs; synthetic weights are deterministic, slice-invariant
// and at the intended scale.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "abl/model/model_spec.h"
#include "abl/model/weights.h"
#include "io/safetensors_test_util.h"

namespace {

using abl::model::ExpectedWeight;
using abl::model::WeightRole;

const ExpectedWeight& find(const std::vector<ExpectedWeight>& all, WeightRole role, int64_t layer) {
  for (const ExpectedWeight& w : all) {
    if (w.role == role && w.layer == layer) return w;
  }
  throw std::runtime_error("not found");
}

TEST(Synthetic, PresetsMatchTheirRealConfigs) {
  EXPECT_EQ(abl::model::synthetic_presets().size(), 59u);
  for (const std::string& name : abl::model::synthetic_presets()) {
    EXPECT_NO_THROW(abl::model::synthetic_model_spec(name)) << name;
  }
  abl::model::ModelSpec s = abl::model::synthetic_model_spec("synthetic:llama-3.3-70b");
  EXPECT_EQ(s.source, "synthetic:llama-3.3-70b");
  EXPECT_EQ(s.num_layers, 80);
  EXPECT_EQ(s.hidden_size, 8192);
  EXPECT_EQ(s.num_kv_heads, 8);
  EXPECT_EQ(abl::model::parameter_count(s), 70553706496);
  // The same numbers as the fixture configs of the real checkpoints.
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("llama-3.1-8b")), 8030261248);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("qwen2.5-7b")), 7615616512);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("qwen3-0.6b")), 596049920);
  // Mistral Small 3.1's language model: head_dim 128 with hidden 5120 and 32 heads (q is 4096 wide)
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("mistral-small-3.1-24b")), 23572403200);
  // GLM-4-9B-0414: q/k/v biases, fused gate_up, four norms per layer (9.4B as published)
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("glm-4-9b-0414")), 9400279040);
  EXPECT_TRUE(abl::model::synthetic_model_spec("qwen2.5-0.5b").qkv_bias);
  EXPECT_TRUE(abl::model::synthetic_model_spec("qwen3-8b").qk_norm);
  // The published parameter counts of the other families (Gemma 2 9B, Phi-3-mini as its fixture
  // config, Mixtral 8x7B, Qwen3-30B-A3B, Qwen3-235B-A22B).
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("gemma-2-9b")), 9241705984);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("phi-3-mini-4k")), 3821079552);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("mixtral-8x7b")), 46702792704);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("qwen3-30b-a3b")), 30532122624);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("qwen3-235b-a22b")), 235093634560);
  // Qwen3-VL-235B-A22B's language model is Qwen3-235B-A22B's; gemma-7b is 8.5B as published
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("qwen3-vl-235b-a22b")), 235093634560);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("gemma-7b")), 8537680896);
  // Phi-3.5-MoE "41.9B" (its LongRoPE aside: the preset's sequences stay short)
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("phi-3.5-moe")), 41873153344);
  // Llama 4 Scout's language model: 107.8B, 17.2B active
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("llama-4-scout-17b-16e")), 107769861120);
  // Granite 4.0 micro "3B": 3.4B with its tied embeddings
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("granite-4.0-micro")), 3402836480);
  // Granite 4.0-H micro "3B": 3.19B, 36 of its 40 layers Mamba-2
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("granite-4.0-h-micro")), 3191396096);
  EXPECT_EQ(abl::model::synthetic_model_spec("granite-4.0-h-micro").attention_layers(), 4);
  // LFM2-1.2B "1.17B"
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("lfm2-1.2b")), 1170340608);
  // LFM2-8B-A1B "8.3B, 1.5B active"
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("lfm2-8b-a1b")), 8339930560);
  EXPECT_NEAR(abl::model::active_parameter_count(abl::model::synthetic_model_spec("lfm2-8b-a1b")) / 1e9, 1.56, 0.01);
  // GLM-4.7-Flash "30B-A3B": 29.94B and 3.90B active without its MTP layer (not run)
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("glm-4.7-flash")), 29943393920);
  EXPECT_EQ(abl::model::active_parameter_count(abl::model::synthetic_model_spec("glm-4.7-flash")), 3896766080);
  // Apertus-8B: 8.05B, the xIELU's 4 scalars per layer among them (beta and eps are buffers in transformers, so its
  // num_parameters() says 64 fewer: 8,053,338,176)
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("apertus-8b")), 8053338240);
  // Hunyuan-7B "7.5B"
  EXPECT_NEAR(abl::model::parameter_count(abl::model::synthetic_model_spec("hunyuan-7b")) / 1e9, 7.50, 0.01);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("nemotron-h-8b")), 8100852736);
  // dots.llm1: 2·V·H + 62 attention layers + one dense MLP + 61 × (128 + 2 shared) experts and the router
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("dots.llm1")), 142774381696);
  // Hunyuan-A13B: V·H (tied) + 32 × (attention 41,951,488 + 65 MLPs of 3·H·3072 + the router) + H
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("hunyuan-a13b")), 80393183232);
  // DeepSeek-V2-Lite "15.7B", DeepSeek-V2 "236B, 21B active"; OLMo 3 32B
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("deepseek-v2-lite")), 15706484224);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("deepseek-v2")), 235741434880);
  EXPECT_NEAR(abl::model::active_parameter_count(abl::model::synthetic_model_spec("deepseek-v2")) / 1e9, 21.38, 0.01);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("olmo-3-32b")), 32233522176);
  // Qwen3-Next "80B-A3B" and Qwen3.5-35B-A3B's language model (the vision tower is not counted)
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("qwen3-next-80b-a3b")), 79674391296);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("qwen3.5-35b-a3b")), 34660610688);
  EXPECT_NEAR(abl::model::active_parameter_count(abl::model::synthetic_model_spec("qwen3.5-35b-a3b")) / 1e9, 3.45, 0.01);
  // Active per token: Mixtral's published 12.9 B, Qwen3's "A22B" and "A3B"; dense models all.
  EXPECT_EQ(abl::model::active_parameter_count(abl::model::synthetic_model_spec("mixtral-8x7b")), 12879925248);
  EXPECT_NEAR(abl::model::active_parameter_count(abl::model::synthetic_model_spec("qwen3-235b-a22b")) / 1e9, 22.19, 0.01);
  EXPECT_NEAR(abl::model::active_parameter_count(abl::model::synthetic_model_spec("qwen3-30b-a3b")) / 1e9, 3.35, 0.01);
  // GLM-4.5-Air, "106B total, 12B active" (the MTP layer not counted: never run): 13.42B active with
  // the embedding and the head, 12.18B without
  const abl::model::ModelSpec air = abl::model::synthetic_model_spec("glm-4.5-air");
  EXPECT_EQ(abl::model::parameter_count(air), 106852251264);
  EXPECT_EQ(abl::model::active_parameter_count(air), 13424129664);
  EXPECT_EQ(abl::model::active_parameter_count(abl::model::synthetic_model_spec("llama-3.1-8b")), 8030261248);
  // gpt-oss, as OpenAI's model card counts them: 20.91B / 116.83B in all, 3.61B / 5.13B active without the
  // embedding table (579,133,440 values); every bias and sink counted
  const abl::model::ModelSpec oss20 = abl::model::synthetic_model_spec("gpt-oss-20b");
  const abl::model::ModelSpec oss120 = abl::model::synthetic_model_spec("gpt-oss-120b");
  const int64_t embedding = 201088LL * 2880;
  EXPECT_NEAR(abl::model::parameter_count(oss20) / 1e9, 20.91, 0.005);
  EXPECT_NEAR(abl::model::parameter_count(oss120) / 1e9, 116.83, 0.005);
  EXPECT_NEAR((abl::model::active_parameter_count(oss20) - embedding) / 1e9, 3.61, 0.005);
  EXPECT_NEAR((abl::model::active_parameter_count(oss120) - embedding) / 1e9, 5.13, 0.005);
  // Command R+: 103.8 B, the published "104B" (its per-head q/k norms counted, the embedding tied)
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("command-r-plus")), 103810674688);
  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("seed-oss-36b")), 36151104512);
  // DeepSeek-V3: 671.0 B without its MTP layer (the published 671B; 685B with it), 37.5 B active;
  // Moonlight: 16.0 B (the published 16B, 3B active); Kimi-K2: 1.026 T (the published 1T, 32B active)
  const abl::model::ModelSpec v3 = abl::model::synthetic_model_spec("deepseek-v3");
  EXPECT_EQ(abl::model::parameter_count(v3), 671026419200);
  EXPECT_NEAR(abl::model::active_parameter_count(v3) / 1e9, 37.55, 0.01);
  const abl::model::ModelSpec moon = abl::model::synthetic_model_spec("moonlight-16b-a3b");
  EXPECT_EQ(abl::model::parameter_count(moon), 15960110208);
  EXPECT_NEAR(abl::model::active_parameter_count(moon) / 1e9, 2.915, 0.001);  // embedding and head included
  // OLMo 2 7B: 7.30 B (the published 7.3B); 32B: 32.2 B.
  EXPECT_NEAR(abl::model::parameter_count(abl::model::synthetic_model_spec("olmo-2-7b")) / 1e9, 7.30, 0.01);
  EXPECT_NEAR(abl::model::parameter_count(abl::model::synthetic_model_spec("olmo-2-32b")) / 1e9, 32.2, 0.1);
  const abl::model::ModelSpec kimi = abl::model::synthetic_model_spec("kimi-k2");
  EXPECT_EQ(abl::model::parameter_count(kimi), 1026408232448);
  EXPECT_NEAR(abl::model::active_parameter_count(kimi) / 1e9, 32.9, 0.1);
  EXPECT_ABL_ERROR(abl::model::synthetic_model_spec("synthetic:gpt-5"), "unknown synthetic model 'gpt-5'",
                   "llama-3.1-8b", "qwen2.5-7b");
}

TEST(Synthetic, WeightsAreDeterministicAndSliceInvariant) {
  abl::model::ModelSpec s = abl::model::synthetic_model_spec("qwen2.5-0.5b");
  auto all = abl::model::expected_weights(s);
  const ExpectedWeight& q = find(all, WeightRole::q_proj, 3);  // (896, 896)
  const int64_t n = q.shape[0] * q.shape[1];
  std::vector<float> whole(static_cast<size_t>(n));
  abl::model::synthetic_weight_values(q, 0, n, whole.data());
  // Any split gives the same values.
  std::vector<float> parts(static_cast<size_t>(n));
  int64_t cut1 = 1234, cut2 = 500001;
  abl::model::synthetic_weight_values(q, 0, cut1, parts.data());
  abl::model::synthetic_weight_values(q, cut1, cut2 - cut1, parts.data() + cut1);
  abl::model::synthetic_weight_values(q, cut2, n - cut2, parts.data() + cut2);
  EXPECT_EQ(whole, parts);
  // Scale: std close to 1/sqrt(896), mean close to 0.
  double sum = 0, sq = 0;
  for (float v : whole) {
    sum += v;
    sq += double(v) * v;
  }
  double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, 0.0, 1e-3);
  EXPECT_NEAR(sd * std::sqrt(896.0), 1.0, 0.01);
  // Another tensor, layer or seed gives other values.
  std::vector<float> other(16), again(16);
  abl::model::synthetic_weight_values(find(all, WeightRole::q_proj, 4), 0, 16, other.data());
  EXPECT_NE(std::vector<float>(whole.begin(), whole.begin() + 16), other);
  abl::model::synthetic_weight_values(q, 0, 16, again.data(), /*seed=*/7);
  EXPECT_NE(std::vector<float>(whole.begin(), whole.begin() + 16), again);
  // Norms near one, biases small.
  std::vector<float> norm(896), bias(128);
  abl::model::synthetic_weight_values(find(all, WeightRole::attn_norm, 0), 0, 896, norm.data());
  abl::model::synthetic_weight_values(find(all, WeightRole::k_bias, 0), 0, 128, bias.data());
  for (float v : norm) ASSERT_NEAR(v, 1.0f, 0.05f);
  for (float v : bias) ASSERT_LE(std::fabs(v), 0.02f);
  EXPECT_ABL_ERROR(abl::model::synthetic_weight_values(q, n - 1, 2, whole.data()), "outside");
}

}  // namespace
