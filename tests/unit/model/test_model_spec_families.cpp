// ModelSpec for Gemma 1, 2 and 3 (text and multimodal), Phi-3, GLM, GLM-4.5 (MoE), Granite, gpt-oss,
// Cohere, Qwen-VL, Qwen3-VL-MoE and the other families: the published configs in
// tests/fixtures/configs parse to their numbers, and the keys only these families have (defaults
// of absent keys, absent vs null soft-caps, layer_types vs sliding_window_pattern, rope per layer
// type, LongRoPE, nested text_config) follow transformers' config classes; options we cannot run
// are refused naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "abl/io/json_file.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"
#include "common/error_of.h"
#include "common/temp_dir.h"
#include "io/safetensors_test_util.h"

namespace {

using abl::model::ModelSpec;
using abl::model::RopeScaling;

nlohmann::json fixture_config(const std::string& name) {
  return abl::io::read_json_file(std::string(ABL_FIXTURE_DIR) + "/configs/" + name + ".json").json();
}
ModelSpec parse(const nlohmann::json& c) {
  return abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "my/config.json"));
}
std::string error_of(const nlohmann::json& c) {
  return abl::testing::thrown_error_of([&] { parse(c); });
}
int64_t sliding_count(const ModelSpec& s) {
  int64_t n = 0;
  for (int64_t l = 0; l < s.num_layers; ++l) n += s.uses_sliding_window(l);
  return n;
}

// A Gemma 3 text config in the shape of the published 1B one (written for this test).
nlohmann::json gemma3_text() {
  return nlohmann::json::parse(R"({"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
    "hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 26, "num_attention_heads": 4,
    "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 262144, "max_position_embeddings": 32768,
    "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "rope_local_base_freq": 10000,
    "rope_scaling": null, "sliding_window": 512, "sliding_window_pattern": 6, "attn_logit_softcapping": null,
    "final_logit_softcapping": null, "hidden_activation": "gelu_pytorch_tanh", "torch_dtype": "bfloat16",
    "bos_token_id": 2, "eos_token_id": [1, 106], "pad_token_id": 0})");
}

}  // namespace

TEST(ModelSpecGemma2, PublishedConfig) {
  const ModelSpec s = parse(fixture_config("gemma-2-2b-it"));
  EXPECT_EQ(s.architecture, "Gemma2ForCausalLM");
  EXPECT_EQ(s.num_layers, 26);
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_EQ(s.q_dim(), 2048);  // NH·HD ≠ H
  EXPECT_TRUE(s.norm_plus_one);
  EXPECT_TRUE(s.sandwich_norms);
  EXPECT_FALSE(s.qk_norm);
  EXPECT_EQ(s.activation, abl::model::Activation::gelu_tanh);
  EXPECT_TRUE(s.tied_embeddings);                 // absent: Gemma2Config's default
  EXPECT_DOUBLE_EQ(s.embed_scale, 48.0);          // sqrt(2304), stored float32
  EXPECT_DOUBLE_EQ(s.attention_scale(), 1.0 / 16);  // query_pre_attn_scalar 256
  EXPECT_DOUBLE_EQ(s.attn_softcap, 50.0);
  EXPECT_DOUBLE_EQ(s.final_softcap, 30.0);
  EXPECT_EQ(s.sliding_window, 4096);
  EXPECT_EQ(sliding_count(s), 13);  // the even layers
  EXPECT_TRUE(s.uses_sliding_window(0));
  EXPECT_FALSE(s.uses_sliding_window(1));
  EXPECT_FALSE(s.uses_local_rope(0));  // Gemma 2: one RoPE for all layers
  EXPECT_EQ(s.eos_token_ids, (std::vector<int64_t>{1, 107}));
  EXPECT_EQ(abl::model::parameter_count(s), 2614341888);
  // The tensors: four norms per layer, no lm_head.
  std::vector<std::string> names;
  for (const auto& w : abl::model::expected_weights(s)) {
    if (w.layer == 0) names.push_back(w.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "model.layers.0.input_layernorm.weight", "model.layers.0.self_attn.q_proj.weight",
                       "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight",
                       "model.layers.0.self_attn.o_proj.weight", "model.layers.0.post_attention_layernorm.weight",
                       "model.layers.0.pre_feedforward_layernorm.weight", "model.layers.0.mlp.gate_proj.weight",
                       "model.layers.0.mlp.up_proj.weight", "model.layers.0.mlp.down_proj.weight",
                       "model.layers.0.post_feedforward_layernorm.weight"}));
}

TEST(ModelSpecGemma2, SoftcapsAbsentNullAndEmbedScaleRounding) {
  nlohmann::json c = fixture_config("gemma-2-2b-it");
  c.erase("attn_logit_softcapping");  // absent: the default 50
  c["final_logit_softcapping"] = nullptr;  // null: off
  c["torch_dtype"] = "bfloat16";
  c["hidden_size"] = 3072;
  ModelSpec s = parse(c);
  EXPECT_DOUBLE_EQ(s.attn_softcap, 50.0);
  EXPECT_DOUBLE_EQ(s.final_softcap, 0.0);
  // sqrt(3072) = 55.4256 is 55.5 in bf16, the value transformers multiplies by.
  EXPECT_DOUBLE_EQ(s.embed_scale, 55.5);
  c["layer_types"] = nlohmann::json::array();
  for (int l = 0; l < 26; ++l) c["layer_types"].push_back(l < 2 ? "sliding_attention" : "full_attention");
  EXPECT_EQ(sliding_count(parse(c)), 2);
  c["query_pre_attn_scalar"] = 144;
  EXPECT_NEAR(parse(c).attention_scale(), 1.0 / 12, 1e-15);
}

TEST(ModelSpecGemma3, LocalGlobalLayersAndTheirRope) {
  nlohmann::json c = gemma3_text();
  c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}};
  c["attn_logit_softcapping"] = 50.0;  // not used by Gemma 3
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.qk_norm);
  EXPECT_TRUE(s.norm_plus_one);
  EXPECT_DOUBLE_EQ(s.attn_softcap, 0.0);
  EXPECT_DOUBLE_EQ(s.final_softcap, 0.0);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::linear);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(s.rope_local_theta, 1e4);
  // Pattern 6: layers 5, 11, 17, 23 are global, the others slide with the local RoPE.
  for (int64_t l = 0; l < 26; ++l) {
    const bool global = (l + 1) % 6 == 0;
    EXPECT_EQ(s.uses_sliding_window(l), !global) << l;
    EXPECT_EQ(s.uses_local_rope(l), !global) << l;
  }
  // transformers 5.x: rope_parameters per layer type and layer_types.
  c.erase("rope_scaling");
  c.erase("rope_theta");
  c.erase("rope_local_base_freq");
  c["rope_parameters"] = {{"full_attention", {{"rope_type", "linear"}, {"factor", 4.0}, {"rope_theta", 5e5}}},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 2e4}}}};
  c["layer_types"] = nlohmann::json::array();
  for (int l = 0; l < 26; ++l) c["layer_types"].push_back(l % 2 ? "full_attention" : "sliding_attention");
  s = parse(c);
  EXPECT_DOUBLE_EQ(s.rope_theta, 5e5);
  EXPECT_DOUBLE_EQ(s.rope_scaling.factor, 4.0);
  EXPECT_DOUBLE_EQ(s.rope_local_theta, 2e4);
  EXPECT_EQ(sliding_count(s), 13);
  // Gemma3ForCausalLM caps the logits when the config asks.
  c["final_logit_softcapping"] = 30.0;
  EXPECT_DOUBLE_EQ(parse(c).final_softcap, 30.0);
}

TEST(ModelSpecGemma3, MultimodalTextConfigTakesDefaults) {
  nlohmann::json text = {{"model_type", "gemma3_text"}, {"hidden_size", 2560}, {"intermediate_size", 10240},
                         {"num_hidden_layers", 34}, {"num_attention_heads", 8}, {"sliding_window", 1024},
                         {"rope_scaling", {{"rope_type", "linear"}, {"factor", 8.0}}}};
  nlohmann::json c = {{"architectures", {"Gemma3ForConditionalGeneration"}},
                      {"model_type", "gemma3"},
                      {"text_config", text},
                      {"vision_config", {{"model_type", "siglip_vision_model"}}},
                      {"eos_token_id", {1, 106}},
                      {"torch_dtype", "bfloat16"},
                      {"final_logit_softcapping", 30.0}};
  const ModelSpec s = parse(c);
  EXPECT_EQ(s.hidden_size, 2560);
  EXPECT_EQ(s.vocab_size, 262208);  // Gemma3TextConfig defaults for the missing keys
  EXPECT_EQ(s.num_kv_heads, 4);
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(s.rope_local_theta, 1e4);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_EQ(s.eos_token_ids, (std::vector<int64_t>{1, 106}));  // from the top level
  EXPECT_EQ(s.torch_dtype, abl::DType::bf16);
  EXPECT_DOUBLE_EQ(s.final_softcap, 0.0);  // ForConditionalGeneration never caps
  EXPECT_EQ(s.weight_prefix, "language_model.model.");
  EXPECT_EQ(s.lm_head_name, "language_model.lm_head.weight");
  EXPECT_EQ(abl::model::global_slots(s)[0].pattern, "language_model.model.embed_tokens.weight");
  EXPECT_EQ(abl::model::layer_slots(s)[0].pattern, "language_model.model.layers.{}.input_layernorm.weight");
  c["text_config"]["use_bidirectional_attention"] = true;
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "use_bidirectional_attention"}));
}

TEST(ModelSpecPhi3, PublishedConfigAndFusedTensors) {
  const ModelSpec s = parse(fixture_config("Phi-3-mini-4k-instruct"));
  EXPECT_EQ(s.head_dim, 96);
  EXPECT_TRUE(s.fused_qkv);
  EXPECT_TRUE(s.fused_gate_up);
  EXPECT_EQ(s.sliding_window, 2047);
  EXPECT_EQ(sliding_count(s), 32);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_EQ(s.context_length(), 4096);
  EXPECT_EQ(s.long_rope_after(), 0);
  EXPECT_EQ(abl::model::parameter_count(s), 3821079552);
  // q, k, v are row blocks of qkv_proj; gate, up of gate_up_proj.
  const auto slots = abl::model::layer_slots(s);
  auto slot = [&](abl::model::WeightRole r) {
    for (const auto& x : slots) {
      if (x.role == r) return x;
    }
    ADD_FAILURE() << "no slot";
    return slots[0];
  };
  using R = abl::model::WeightRole;
  EXPECT_EQ(slot(R::q_proj).pattern, "model.layers.{}.self_attn.qkv_proj.weight");
  EXPECT_EQ(slot(R::v_proj).pattern, "model.layers.{}.self_attn.qkv_proj.weight");
  EXPECT_EQ(slot(R::q_proj).file_shape, (std::vector<int64_t>{9216, 3072}));
  EXPECT_EQ(slot(R::k_proj).file_offset, 3072 * 3072);
  EXPECT_EQ(slot(R::v_proj).file_offset, 2 * 3072 * 3072);
  EXPECT_EQ(slot(R::up_proj).pattern, "model.layers.{}.mlp.gate_up_proj.weight");
  EXPECT_EQ(slot(R::up_proj).file_offset, 8192 * 3072);
  EXPECT_EQ(slot(R::down_proj).pattern, "model.layers.{}.mlp.down_proj.weight");
  EXPECT_TRUE(slot(R::down_proj).file_shape.empty());
}

TEST(ModelSpecPhi3, LongRope) {
  nlohmann::json c = fixture_config("Phi-3-mini-4k-instruct");
  c["max_position_embeddings"] = 131072;
  std::vector<double> shorts(48, 1.0), longs(48, 2.0);
  shorts[47] = 1.5;
  c["rope_scaling"] = {{"type", "longrope"}, {"short_factor", shorts}, {"long_factor", longs}};
  ModelSpec s = parse(c);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::longrope);
  EXPECT_DOUBLE_EQ(s.rope_scaling.factor, 32.0);  // 131072 / original_max_position_embeddings 4096
  EXPECT_NEAR(s.rope_scaling.attention_factor, std::sqrt(1 + std::log(32.0) / std::log(4096.0)), 1e-12);
  EXPECT_NEAR(s.rope_scaling.attention_factor, 1.19024, 1e-5);
  EXPECT_EQ(s.context_length(), 131072);
  EXPECT_EQ(s.long_rope_after(), 4096);  // longer sequences run the long factors
  c.erase("original_max_position_embeddings");  // Phi3Config's default 4096 still applies
  EXPECT_DOUBLE_EQ(parse(c).rope_scaling.factor, 32.0);
  c["rope_scaling"]["type"] = "su";      // Phi3Config's older name
  c["rope_scaling"]["attention_factor"] = 1.25;
  s = parse(c);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::longrope);
  EXPECT_DOUBLE_EQ(s.rope_scaling.attention_factor, 1.25);
  c["rope_scaling"]["short_factor"] = std::vector<double>(47, 1.0);
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "rope_scaling.short_factor", "48"}));
}

// Phi-4-mini is a Phi3ForCausalLM that rotates 3/4 of each head (the published config's numbers).
TEST(ModelSpecPhi3, Phi4MiniRotatesPartOfEachHead) {
  nlohmann::json c = fixture_config("Phi-3-mini-4k-instruct");
  c.update({{"hidden_size", 3072}, {"num_attention_heads", 24}, {"num_key_value_heads", 8},
            {"intermediate_size", 8192}, {"vocab_size", 200064}, {"partial_rotary_factor", 0.75},
            {"max_position_embeddings", 131072}, {"original_max_position_embeddings", 4096},
            {"tie_word_embeddings", true}, {"bos_token_id", 199999}, {"eos_token_id", 199999},
            {"pad_token_id", 199999}, {"sliding_window", 262144}});
  c["rope_scaling"] = {{"type", "longrope"}, {"short_factor", std::vector<double>(48, 1.0)},
                       {"long_factor", std::vector<double>(48, 2.0)}};
  ModelSpec s = parse(c);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.partial_rotary_dim, 96);
  EXPECT_EQ(s.rotary_dim(), 96);
  EXPECT_NEAR(s.rope_scaling.attention_factor, 1.19024, 1e-5);
  EXPECT_NE(abl::model::describe(s).find("rope theta 10000 on 96/128 head dims longrope"), std::string::npos)
      << abl::model::describe(s);
  c["rope_scaling"]["short_factor"] = std::vector<double>(64, 1.0);  // head_dim / 2: not what rotates
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "rope_scaling.short_factor",
                                                       "has 64 values, expected the rotary dims / 2 = 48"}));
  c["rope_scaling"]["short_factor"] = std::vector<double>(48, 1.0);
  c["partial_rotary_factor"] = 1.5;
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "partial_rotary_factor", "(0, 1]"}));
  c["partial_rotary_factor"] = 0.01;  // int(1.28) = 1 dim
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"partial_rotary_factor", "rotates 1 dims", "even"}));
  c["partial_rotary_factor"] = 1.0;  // all of it, as Phi-3
  c["rope_scaling"] = nullptr;
  EXPECT_EQ(parse(c).rotary_dim(), 128);
}

// GLM-4-0414 (Glm4ForCausalLM), in the shape of GLM-4-9B-0414's config.json (written for this test).
nlohmann::json glm4_9b() {
  return nlohmann::json::parse(R"({"architectures": ["Glm4ForCausalLM"], "attention_bias": true,
    "attention_dropout": 0.0, "eos_token_id": [151329, 151336, 151338], "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 13696, "max_position_embeddings": 32768,
    "model_type": "glm4", "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 2,
    "pad_token_id": 151329, "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.51.3",
    "use_cache": true, "vocab_size": 151552})");
}

std::vector<std::string> layer_tensor_names(const ModelSpec& s) {
  std::vector<std::string> names;
  for (const auto& slot : abl::model::layer_slots(s)) names.push_back(abl::model::weight_name(slot, 0));
  return names;
}

// Layer l's input norm and attention tensors with q/k/v biases (GLM's), in unit order, then `rest`.
std::vector<std::string> biased_attention_names(int l, const std::vector<std::string>& rest) {
  std::vector<std::string> names;
  const std::string p = "model.layers." + std::to_string(l) + ".";
  for (const char* n : {"input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                        "self_attn.v_proj.weight", "self_attn.q_proj.bias", "self_attn.k_proj.bias",
                        "self_attn.v_proj.bias", "self_attn.o_proj.weight"}) {
    names.push_back(p + n);
  }
  for (const std::string& n : rest) names.push_back(p + n);
  return names;
}

TEST(ModelSpecGlm, Glm4PostNormsInterleavedHalfRopeAndQkvBias) {
  const ModelSpec s = parse(glm4_9b());
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.rotary_dim(), 64);  // int(128 * 0.5)
  EXPECT_TRUE(s.rope_interleaved);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_TRUE(s.fused_gate_up);
  EXPECT_FALSE(s.fused_qkv);
  EXPECT_TRUE(s.sandwich_norms);
  EXPECT_FALSE(s.norm_plus_one);  // Glm4RMSNorm scales by w
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-5);
  EXPECT_EQ(s.eos_token_ids, (std::vector<int64_t>{151329, 151336, 151338}));
  const std::vector<std::string> names = layer_tensor_names(s);
  EXPECT_EQ(names, biased_attention_names(0, {"post_self_attn_layernorm.weight", "post_attention_layernorm.weight",
                                              "mlp.gate_up_proj.weight", "mlp.gate_up_proj.weight",
                                              "mlp.down_proj.weight", "post_mlp_layernorm.weight"}));
  const std::string d = abl::model::describe(s);
  EXPECT_TRUE(abl::testing::contains_all(d, {"Glm4ForCausalLM", "on 64/128 head dims (interleaved pairs)",
                                              "qkv bias", "fused gate_up,", "post norms (GLM-4)"}))
      << d;
}

// GlmForCausalLM (GLM-4-9B-chat-hf): GlmConfig's defaults for absent keys, attention_bias false,
// and transformers 5's spelling with partial_rotary_factor inside rope_parameters.
TEST(ModelSpecGlm, GlmDefaultsAndRopeParameters) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["GlmForCausalLM"], "hidden_size": 256,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 151552})");
  ModelSpec s = parse(c);
  EXPECT_EQ(s.num_kv_heads, 2);
  EXPECT_EQ(s.head_dim, 128);  // GlmConfig's head_dim, not hidden / heads
  EXPECT_EQ(s.rotary_dim(), 64);
  EXPECT_TRUE(s.rope_interleaved);
  EXPECT_TRUE(s.qkv_bias);  // attention_bias defaults to true
  EXPECT_FALSE(s.sandwich_norms);
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1.5625e-07);
  EXPECT_EQ(s.max_position_embeddings, 131072);
  EXPECT_EQ(s.eos_token_ids, (std::vector<int64_t>{151329, 151336, 151338}));
  const std::vector<std::string> names = layer_tensor_names(s);  // Llama's two norms
  EXPECT_EQ(std::count(names.begin(), names.end(), "model.layers.0.post_attention_layernorm.weight"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "model.layers.0.post_self_attn_layernorm.weight"), 0);
  c["attention_bias"] = false;
  c["head_dim"] = 64;
  c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 500.0}, {"partial_rotary_factor", 0.25}};
  s = parse(c);
  EXPECT_FALSE(s.qkv_bias);
  EXPECT_EQ(s.rotary_dim(), 16);
  EXPECT_DOUBLE_EQ(s.rope_theta, 500.0);
  c["partial_rotary_factor"] = 1.0;  // the top-level key wins: the whole head rotates
  EXPECT_EQ(parse(c).rotary_dim(), 64);
  c["partial_rotary_factor"] = 0.01;
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "partial_rotary_factor", "rotates 0 dims"}));
}

// GLM-4.5-Air's config.json (the published numbers, written for this test): the sigmoid router and
// its keys, layer 0 dense, the ungated shared experts, the MTP layer, rotate-half partial RoPE.
TEST(ModelSpecGlm, Glm45AirMoe) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Glm4MoeForCausalLM"], "attention_bias": true,
    "eos_token_id": [151329, 151336, 151338], "first_k_dense_replace": 1, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "intermediate_size": 10944, "max_position_embeddings": 131072, "model_type": "glm4_moe",
    "moe_intermediate_size": 1408, "n_group": 1, "n_routed_experts": 128, "n_shared_experts": 1,
    "norm_topk_prob": true, "num_attention_heads": 96, "num_experts_per_tok": 8, "num_hidden_layers": 46,
    "num_key_value_heads": 8, "num_nextn_predict_layers": 1, "pad_token_id": 151329, "partial_rotary_factor": 0.5,
    "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 1000000, "routed_scaling_factor": 1.0,
    "tie_word_embeddings": false, "topk_group": 1, "torch_dtype": "bfloat16", "use_qk_norm": false,
    "vocab_size": 151552})");
  ModelSpec s = parse(c);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.rotary_dim(), 64);
  EXPECT_FALSE(s.rope_interleaved);  // Glm4MoeAttention rotates halves (unlike GLM-4)
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_FALSE(s.qk_norm);
  EXPECT_FALSE(s.fused_gate_up);
  EXPECT_EQ(s.num_experts, 128);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.shared_expert_intermediate_size, 1408);
  EXPECT_FALSE(s.shared_expert_gated);
  EXPECT_TRUE(s.router_sigmoid);
  EXPECT_TRUE(s.norm_topk_prob);
  EXPECT_EQ(s.mtp_layers, 1);
  EXPECT_FALSE(s.is_moe_layer(0));
  EXPECT_TRUE(s.is_moe_layer(1));
  EXPECT_TRUE(s.is_moe_layer(45));
  EXPECT_EQ(s.dense_mlp_width(), 10944);
  std::vector<std::string> moe;
  for (const auto& slot : abl::model::layer_slots(s, 1)) {
    if (slot.expert < 0) moe.push_back(abl::model::weight_name(slot, 1));
  }
  EXPECT_EQ(moe, biased_attention_names(1, {"post_attention_layernorm.weight", "mlp.gate.weight",
                                             "mlp.gate.e_score_correction_bias", "mlp.shared_experts.gate_proj.weight",
                                             "mlp.shared_experts.up_proj.weight", "mlp.shared_experts.down_proj.weight"}));
  const std::string d = abl::model::describe(s);
  EXPECT_TRUE(abl::testing::contains_all(d, {"Glm4MoeForCausalLM", "MoE 128x1408 top-8 (renormalised) on 45/46 layers",
                                              "sigmoid router with bias", "ungated shared expert 1408",
                                              "1 MTP layer not run"}))
      << d;
  // DeepSeek-V3's grouping and a scale; Glm4MoeConfig's defaults for absent keys
  c["n_group"] = 8;
  c["topk_group"] = 4;
  c["routed_scaling_factor"] = 2.5;
  s = parse(c);
  EXPECT_EQ(s.expert_groups, 8);
  EXPECT_EQ(s.topk_groups, 4);
  EXPECT_DOUBLE_EQ(s.routed_scaling_factor, 2.5);
  EXPECT_NE(abl::model::describe(s).find("(best 4 of 8 groups) x2.5"), std::string::npos);
  c["n_group"] = 3;  // 128 experts do not split into 3 groups
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "n_group", "3 groups of 128 experts"}));
  c["n_group"] = 8;
  c["topk_group"] = 9;
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "topk_group"}));
  for (const char* key : {"n_group", "topk_group", "routed_scaling_factor", "n_shared_experts", "first_k_dense_replace",
                          "num_nextn_predict_layers", "partial_rotary_factor", "attention_bias", "head_dim"}) {
    c.erase(key);
  }
  c["num_attention_heads"] = 32;
  s = parse(c);
  EXPECT_EQ(s.head_dim, 128);  // hidden / heads
  EXPECT_EQ(s.rotary_dim(), 64);
  EXPECT_EQ(s.expert_groups, 1);
  EXPECT_DOUBLE_EQ(s.routed_scaling_factor, 1.0);
  EXPECT_EQ(s.shared_expert_intermediate_size, 1408);
  EXPECT_FALSE(s.is_moe_layer(0));
  EXPECT_EQ(s.mtp_layers, 0);
  EXPECT_FALSE(s.qkv_bias);
}

// Granite 3.3 8B's config.json (the published numbers, written for this test): the four multipliers
// become the embedding scale, the attention scale, the branch multiplier and the logits divisor;
// GraniteConfig's 1.0 for each absent one; attention_bias and mlp_bias add biases as Llama's.
TEST(ModelSpecGranite, MultipliersAndDefaults) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["GraniteForCausalLM"], "attention_bias": false,
    "attention_multiplier": 0.0078125, "bos_token_id": 0, "embedding_multiplier": 12.0, "eos_token_id": 0,
    "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 12800, "logits_scaling": 16.0,
    "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "granite", "num_attention_heads": 32,
    "num_hidden_layers": 40, "num_key_value_heads": 8, "pad_token_id": 0, "residual_multiplier": 0.22,
    "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000000.0, "tie_word_embeddings": true,
    "torch_dtype": "bfloat16", "vocab_size": 49159})");
  ModelSpec s = parse(c);
  EXPECT_DOUBLE_EQ(s.embed_scale, 12.0);  // not rounded to bf16 (a Python float in GraniteModel.forward)
  EXPECT_DOUBLE_EQ(s.attention_scale(), 0.0078125);
  EXPECT_DOUBLE_EQ(s.residual_multiplier, 0.22);
  EXPECT_DOUBLE_EQ(s.logits_scaling, 16.0);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_TRUE(s.tied_embeddings);
  const std::string d = abl::model::describe(s);
  EXPECT_TRUE(abl::testing::contains_all(d, {"GraniteForCausalLM", "embeddings x12", "score scale 0.0078125",
                                              "branches x0.22", "logits /16"}))
      << d;
  for (const char* key : {"attention_multiplier", "embedding_multiplier", "residual_multiplier", "logits_scaling"}) {
    c.erase(key);
  }
  s = parse(c);
  EXPECT_DOUBLE_EQ(s.embed_scale, 1.0);
  EXPECT_DOUBLE_EQ(s.attention_scale(), 1.0);  // GraniteConfig's attention_multiplier, not head_dim^-0.5
  EXPECT_DOUBLE_EQ(s.residual_multiplier, 1.0);
  EXPECT_DOUBLE_EQ(s.logits_scaling, 1.0);
  c["logits_scaling"] = 0;
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "logits_scaling", "positive"}));
  c.erase("logits_scaling");
  c["attention_bias"] = true;
  c["mlp_bias"] = true;
  s = parse(c);
  EXPECT_TRUE(s.qkv_bias && s.o_bias && s.mlp_bias);
}

// granite-3.1-3b-a800m's config.json (the published numbers, written for this test): every layer MoE,
// 40 experts of intermediate_size stacked in input_linear / output_linear, top-8 renormalised, the
// multipliers; GraniteMoeShared adds an ungated shared_mlp (fused gate and up rows).
TEST(ModelSpecGranite, MoeStackedExpertsAndSharedMlp) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["GraniteMoeForCausalLM"], "attention_bias": false,
    "attention_multiplier": 0.015625, "embedding_multiplier": 12.0, "hidden_act": "silu", "hidden_size": 1536,
    "intermediate_size": 512, "logits_scaling": 6.0, "max_position_embeddings": 131072, "num_attention_heads": 24,
    "num_experts_per_tok": 8, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 40,
    "residual_multiplier": 0.22, "rms_norm_eps": 1e-06, "rope_theta": 10000000.0, "tie_word_embeddings": true,
    "vocab_size": 49155})");
  ModelSpec s = parse(c);
  EXPECT_EQ(s.num_experts, 40);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.moe_intermediate_size, 512);
  EXPECT_TRUE(s.norm_topk_prob);  // the softmax of the top-k logits
  EXPECT_TRUE(s.fused_experts);
  EXPECT_FALSE(s.router_sigmoid);
  EXPECT_EQ(s.shared_expert_intermediate_size, 0);
  EXPECT_TRUE(s.is_moe_layer(0));
  EXPECT_DOUBLE_EQ(s.residual_multiplier, 0.22);
  EXPECT_DOUBLE_EQ(s.logits_scaling, 6.0);
  const std::vector<abl::model::WeightSlot> slots = abl::model::layer_slots(s, 0);
  EXPECT_EQ(abl::model::weight_name(slots.at(6), 0), "model.layers.0.block_sparse_moe.router.layer.weight");
  int64_t blocks = 0;
  for (const auto& slot : slots) {
    if (slot.expert < 0) continue;
    ++blocks;
    const bool down = slot.role == abl::model::WeightRole::expert_down_proj;
    EXPECT_EQ(abl::model::weight_name(slot, 0), down ? "model.layers.0.block_sparse_moe.output_linear.weight"
                                                     : "model.layers.0.block_sparse_moe.input_linear.weight");
    EXPECT_EQ(slot.file_shape, down ? (std::vector<int64_t>{40, 1536, 512}) : (std::vector<int64_t>{40, 1024, 1536}));
    const int64_t e = slot.expert;
    const int64_t want = down ? e * 1536 * 512
                              : e * 1024 * 1536 + (slot.role == abl::model::WeightRole::expert_up_proj ? 512 * 1536 : 0);
    EXPECT_EQ(slot.file_offset, want) << abl::model::role_name(slot.role) << " of expert " << e;
  }
  EXPECT_EQ(blocks, 3 * 40);

  c["architectures"] = {"GraniteMoeSharedForCausalLM"};
  c["shared_intermediate_size"] = 1024;
  s = parse(c);
  EXPECT_EQ(s.shared_expert_intermediate_size, 1024);
  EXPECT_FALSE(s.shared_expert_gated);
  std::vector<std::string> shared;
  for (const auto& slot : abl::model::layer_slots(s, 0)) {
    if (slot.role == abl::model::WeightRole::shared_gate_proj || slot.role == abl::model::WeightRole::shared_up_proj ||
        slot.role == abl::model::WeightRole::shared_down_proj) {
      shared.push_back(abl::model::weight_name(slot, 0) + "@" + std::to_string(slot.file_offset));
    }
  }
  EXPECT_EQ(shared, (std::vector<std::string>{"model.layers.0.shared_mlp.input_linear.weight@0",
                                              "model.layers.0.shared_mlp.input_linear.weight@1572864",
                                              "model.layers.0.shared_mlp.output_linear.weight@0"}));
  EXPECT_NE(abl::model::describe(s).find("ungated shared expert 1024"), std::string::npos);
}

// granite-4.0-micro's config.json (the published numbers, written for this test; its mamba_* keys left
// out): GraniteMoeHybrid with every layer attention, RoPE, no experts, so the whole MLP is shared_mlp of
// shared_intermediate_size (input_linear gate rows then up rows, output_linear); Granite's multipliers.
nlohmann::json granite4_micro() {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["GraniteMoeHybridForCausalLM"],
    "attention_bias": false, "attention_multiplier": 0.0078125, "bos_token_id": 100257, "embedding_multiplier": 12,
    "eos_token_id": 100257, "hidden_act": "silu", "hidden_size": 2560, "intermediate_size": 8192,
    "logits_scaling": 10, "max_position_embeddings": 131072, "model_type": "granitemoehybrid",
    "num_attention_heads": 40, "num_experts_per_tok": 0, "num_hidden_layers": 40, "num_key_value_heads": 8,
    "num_local_experts": 0, "pad_token_id": 100256, "position_embedding_type": "rope", "residual_multiplier": 0.22,
    "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000000, "shared_intermediate_size": 8192,
    "tie_word_embeddings": true, "torch_dtype": "bfloat16", "vocab_size": 100352})");
  c["layer_types"] = std::vector<std::string>(40, "attention");
  return c;
}

TEST(ModelSpecGranite4, AttentionOnlyDenseAndMoe) {
  nlohmann::json c = granite4_micro();
  ModelSpec s = parse(c);
  EXPECT_EQ(s.num_experts, 0);
  EXPECT_EQ(s.intermediate_size, 8192);
  EXPECT_TRUE(s.nope_layers.empty());
  EXPECT_TRUE(s.uses_rope(0));
  EXPECT_DOUBLE_EQ(s.embed_scale, 12.0);
  EXPECT_DOUBLE_EQ(s.attention_scale(), 0.0078125);
  EXPECT_DOUBLE_EQ(s.residual_multiplier, 0.22);
  EXPECT_DOUBLE_EQ(s.logits_scaling, 10.0);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{3402836480});
  std::vector<std::string> mlp;
  for (const auto& slot : abl::model::layer_slots(s, 3)) {
    if (slot.role == abl::model::WeightRole::gate_proj || slot.role == abl::model::WeightRole::up_proj ||
        slot.role == abl::model::WeightRole::down_proj) {
      mlp.push_back(abl::model::weight_name(slot, 3) + "@" + std::to_string(slot.file_offset));
    }
  }
  EXPECT_EQ(mlp, (std::vector<std::string>{"model.layers.3.shared_mlp.input_linear.weight@0",
                                           "model.layers.3.shared_mlp.input_linear.weight@20971520",
                                           "model.layers.3.shared_mlp.output_linear.weight@0"}));

  // The experts' width is intermediate_size, shared_mlp's shared_intermediate_size beside them, ungated.
  c["num_local_experts"] = 4;
  c["num_experts_per_tok"] = 2;
  c["intermediate_size"] = 512;
  c["shared_intermediate_size"] = 1024;
  c["position_embedding_type"] = nullptr;
  s = parse(c);
  EXPECT_EQ(s.num_experts, 4);
  EXPECT_EQ(s.moe_intermediate_size, 512);
  EXPECT_EQ(s.shared_expert_intermediate_size, 1024);
  EXPECT_FALSE(s.shared_expert_gated);
  EXPECT_TRUE(s.fused_experts);
  EXPECT_TRUE(s.is_moe_layer(0));
  for (int64_t l = 0; l < 40; ++l) EXPECT_FALSE(s.uses_rope(l)) << l;  // no positional embedding at all
  c["position_embedding_type"] = "nope";  // the Granite 4.0-H configs' spelling
  EXPECT_EQ(parse(c).nope_layers, s.nope_layers);
  EXPECT_NE(abl::model::describe(s).find("ungated shared expert 1024"), std::string::npos);

  c["layer_types"][5] = "linear";
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "layer_types", "'linear' is not a layer type"}));
  c = granite4_micro();
  c["position_embedding_type"] = "alibi";
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"position_embedding_type", "'alibi'"}));
}

// granite-4.0-h-micro's geometry (its published config.json: 40 layers, attention on 5, 15, 25, 35 and Mamba-2
// on the rest, 64 Mamba heads of 64 in one group of state 128, conv of 4; the multipliers written for this
// test as granite-4.0-micro's): the Mamba-2 layers' tensors under mamba.*, in_proj split into z, x|B|C, dt.
TEST(ModelSpecGranite4, HybridMamba2Layers) {
  nlohmann::json c = granite4_micro();
  c["hidden_size"] = 2048;
  c["num_attention_heads"] = 32;
  c["shared_intermediate_size"] = 8192;
  c["position_embedding_type"] = "nope";
  c.update(nlohmann::json::parse(R"({"mamba_chunk_size": 256, "mamba_conv_bias": true, "mamba_d_conv": 4,
    "mamba_d_head": 64, "mamba_d_state": 128, "mamba_expand": 2, "mamba_n_groups": 1, "mamba_n_heads": 64,
    "mamba_proj_bias": false})"));
  for (int l = 0; l < 40; ++l) c["layer_types"][static_cast<size_t>(l)] = l % 10 == 5 ? "attention" : "mamba";
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.mamba2());
  EXPECT_EQ(s.attention_layers(), 4);
  for (int64_t l = 0; l < 40; ++l) EXPECT_EQ(s.is_linear_layer(l), l % 10 != 5) << l;
  EXPECT_EQ(s.linear_num_value_heads, 64);
  EXPECT_EQ(s.linear_value_head_dim, 64);
  EXPECT_EQ(s.linear_num_key_heads, 1);
  EXPECT_EQ(s.linear_key_head_dim, 128);
  EXPECT_EQ(s.linear_conv_kernel, 4);
  EXPECT_EQ(s.linear_conv_dim(), 4096 + 256);
  EXPECT_EQ(s.mamba_in_proj_rows(), 8512);
  EXPECT_TRUE(s.linear_conv_bias);
  EXPECT_EQ(s.mamba_dt_min, 0.0);
  EXPECT_TRUE(std::isinf(s.mamba_dt_max));
  // per sequence: 36 layers of conv inputs (4352 channels x 3) and states (64 heads x 128 x 64)
  EXPECT_EQ(s.linear_state_floats(), 36 * (4352 * 3 + 64 * 128 * 64));
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{3191396096});  // 3.19 B
  std::vector<std::string> got;
  for (const auto& slot : abl::model::layer_slots(s, 0)) {
    got.push_back(abl::model::weight_name(slot, 0) + "@" + std::to_string(slot.file_offset) + " " +
                  std::string(abl::model::role_name(slot.role)));
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "model.layers.0.input_layernorm.weight@0 attn_norm",
                     "model.layers.0.mamba.in_proj.weight@0 linear_z",
                     "model.layers.0.mamba.in_proj.weight@8388608 mamba_xbc",
                     "model.layers.0.mamba.in_proj.weight@17301504 mamba_dt",
                     "model.layers.0.mamba.conv1d.weight@0 linear_conv",
                     "model.layers.0.mamba.conv1d.bias@0 linear_conv_bias",
                     "model.layers.0.mamba.A_log@0 linear_a_log",
                     "model.layers.0.mamba.dt_bias@0 linear_dt_bias",
                     "model.layers.0.mamba.D@0 mamba_d",
                     "model.layers.0.mamba.norm.weight@0 linear_norm",
                     "model.layers.0.mamba.out_proj.weight@0 o_proj",
                     "model.layers.0.post_attention_layernorm.weight@0 mlp_norm",
                     "model.layers.0.shared_mlp.input_linear.weight@0 gate_proj",
                     "model.layers.0.shared_mlp.input_linear.weight@16777216 up_proj",
                     "model.layers.0.shared_mlp.output_linear.weight@0 down_proj",
                 }));
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s),
                                         {"Mamba-2 on 36/40 layers (64 heads of 64, 1 groups of state 128, conv 4 with bias)"}))
      << abl::model::describe(s);

  // mamba_d_head "auto" (GraniteMoeHybridConfig's default) is mamba_expand * hidden_size / mamba_n_heads; no
  // layer_types makes every layer Mamba-2; a time_step_limit clamps dt; no conv bias drops the tensor.
  c["mamba_d_head"] = "auto";
  EXPECT_EQ(parse(c).linear_value_head_dim, 64);
  nlohmann::json all = c;
  all.erase("layer_types");
  EXPECT_EQ(parse(all).attention_layers(), 0);
  c["time_step_limit"] = {0.001, 100.0};
  c["mamba_conv_bias"] = false;
  s = parse(c);
  EXPECT_DOUBLE_EQ(s.mamba_dt_min, 0.001);
  EXPECT_DOUBLE_EQ(s.mamba_dt_max, 100.0);
  EXPECT_FALSE(s.linear_conv_bias);
  for (const auto& slot : abl::model::layer_slots(s, 0)) EXPECT_NE(slot.role, abl::model::WeightRole::linear_conv_bias);
  // refusals name the key
  nlohmann::json bad = c;
  bad["mamba_d_head"] = 48;
  EXPECT_ABL_ERROR(parse(bad), "my/config.json", "mamba_d_head", "64 heads of 48", "4096");
  bad = c;
  bad["mamba_d_head"] = "half";
  EXPECT_ABL_ERROR(parse(bad), "mamba_d_head", "'half'");
  bad = c;
  bad["mamba_n_groups"] = 3;
  EXPECT_ABL_ERROR(parse(bad), "mamba_n_heads", "multiple of mamba_n_groups 3");
  bad = c;
  bad["mamba_proj_bias"] = true;
  EXPECT_ABL_ERROR(parse(bad), "mamba_proj_bias", "not supported");
  bad = c;
  bad["hidden_act"] = "gelu_pytorch_tanh";
  EXPECT_ABL_ERROR(parse(bad), "hidden_act", "silu");
  bad = c;
  bad["time_step_limit"] = {0.5, 0.1};
  EXPECT_ABL_ERROR(parse(bad), "time_step_limit", "0 <= min < max");
}

// In the shape of Nemotron-H-8B's config.json (written for this test, in the release's spelling): 52 layers, each
// one block of hybrid_override_pattern — 24 Mamba-2, 24 relu² MLPs, 4 attention layers without RoPE.
nlohmann::json nemotron_h_8b() {
  return nlohmann::json::parse(R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "attention_bias": false, "attention_head_dim": 128, "bos_token_id": 1, "chunk_size": 128, "conv_kernel": 4,
    "eos_token_id": 2, "expand": 2, "hidden_size": 4096,
    "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-", "intermediate_size": 21504,
    "layer_norm_epsilon": 1e-05, "mamba_head_dim": 64, "mamba_hidden_act": "silu", "mamba_num_heads": 128,
    "mamba_proj_bias": false, "max_position_embeddings": 8192, "mlp_bias": false, "mlp_hidden_act": "relu2",
    "n_groups": 8, "num_attention_heads": 32, "num_hidden_layers": 52, "num_key_value_heads": 8, "pad_token_id": 0,
    "rescale_prenorm_residual": true, "residual_in_fp32": false, "rms_norm_eps": 1e-05, "sliding_window": null,
    "ssm_state_size": 128, "tie_word_embeddings": false, "time_step_floor": 0.0001, "time_step_limit": [0.0, 1e308],
    "time_step_max": 0.1, "time_step_min": 0.001, "torch_dtype": "bfloat16", "use_bias": false,
    "use_conv_bias": true, "vocab_size": 131072})");
}

TEST(ModelSpecNemotronH, OneBlockPerLayer) {
  nlohmann::json c = nemotron_h_8b();
  ModelSpec s = parse(c);
  EXPECT_EQ(s.num_layers, 52);
  EXPECT_TRUE(s.has_mixer(0) && !s.has_mlp(0) && s.is_linear_layer(0));     // 'M'
  EXPECT_TRUE(!s.has_mixer(1) && s.has_mlp(1) && !s.is_linear_layer(1));    // '-'
  EXPECT_TRUE(s.is_attention_layer(7) && !s.has_mlp(7) && !s.uses_rope(7));  // '*', no RoPE
  EXPECT_EQ(s.attention_layers(), 4);
  EXPECT_FALSE(s.same_layer_kind(1, 7));
  EXPECT_EQ(s.activation, abl::model::Activation::relu2);
  EXPECT_EQ(s.head_dim, 128);  // attention_head_dim
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-5);
  EXPECT_TRUE(s.mamba2() && s.mamba_norm_per_group && s.linear_conv_bias);
  EXPECT_EQ(s.linear_num_value_heads, 128);
  EXPECT_EQ(s.linear_value_head_dim, 64);
  EXPECT_EQ(s.linear_num_key_heads, 8);
  EXPECT_EQ(s.linear_key_head_dim, 128);
  EXPECT_DOUBLE_EQ(s.mamba_dt_min, 0.001);  // Zamba2MambaMixer floors dt at time_step_min ...
  EXPECT_TRUE(std::isinf(s.mamba_dt_max));  // ... and ignores time_step_limit
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_EQ(s.linear_state_floats(), 24 * (10240 * 3 + 128 * 128 * 64));
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{8100852736});  // 8.1 B
  const auto names = [&](int64_t l) {
    std::vector<std::string> got;
    for (const auto& slot : abl::model::layer_slots(s, l)) {
      const std::string name = abl::model::weight_name(slot, l);
      const size_t layer_at = name.find("layers.") + 7;  // after "backbone.layers.<l>."
      got.push_back(name.substr(name.find('.', layer_at) + 1) + " " + std::string(abl::model::role_name(slot.role)));
    }
    return got;
  };
  EXPECT_EQ(names(0), (std::vector<std::string>{"norm.weight attn_norm", "mixer.in_proj.weight linear_z",
                                                "mixer.in_proj.weight mamba_xbc", "mixer.in_proj.weight mamba_dt",
                                                "mixer.conv1d.weight linear_conv", "mixer.conv1d.bias linear_conv_bias",
                                                "mixer.A_log linear_a_log", "mixer.dt_bias linear_dt_bias",
                                                "mixer.D mamba_d", "mixer.norm.weight linear_norm",
                                                "mixer.out_proj.weight o_proj"}));
  EXPECT_EQ(names(1), (std::vector<std::string>{"norm.weight mlp_norm", "mixer.up_proj.weight up_proj",
                                                "mixer.down_proj.weight down_proj"}));
  EXPECT_EQ(names(7), (std::vector<std::string>{"norm.weight attn_norm", "mixer.q_proj.weight q_proj",
                                                "mixer.k_proj.weight k_proj", "mixer.v_proj.weight v_proj",
                                                "mixer.o_proj.weight o_proj"}));
  EXPECT_EQ(abl::model::weight_name(abl::model::layer_slots(s, 1)[0], 1), "backbone.layers.1.norm.weight");
  std::vector<std::string> globals;
  for (const auto& slot : abl::model::global_slots(s)) globals.push_back(slot.pattern);
  EXPECT_EQ(globals, (std::vector<std::string>{"backbone.embeddings.weight", "backbone.norm_f.weight", "lm_head.weight"}));
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s),
                                         {"one block per layer M-M-M-M*-", "Mamba-2 on 24/52 layers", "gated norm per group",
                                          "relu² MLP (ungated)"}))
      << abl::model::describe(s);

  // transformers 5's spelling: layers_block_type (its names) and head_dim; the pattern decides the layer count;
  // the old mamba_* key names
  nlohmann::json v5 = c;
  v5.erase("hybrid_override_pattern");
  v5.erase("attention_head_dim");
  v5["head_dim"] = 64;
  v5["layers_block_type"] = {"mamba", "mlp", "attention", "mlp", "linear_attention", "full_attention"};
  v5.erase("n_groups");
  v5["mamba_n_groups"] = 4;
  v5.erase("time_step_min");
  v5["mamba_dt_min"] = 0.01;
  s = parse(v5);
  EXPECT_EQ(s.num_layers, 6);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_TRUE(s.is_linear_layer(4) && s.is_attention_layer(5) && s.has_mlp(3));
  EXPECT_EQ(s.linear_num_key_heads, 4);
  EXPECT_DOUBLE_EQ(s.mamba_dt_min, 0.01);
  // without any Mamba layer: no linear layers at all
  v5["layers_block_type"] = {"attention", "mlp"};
  s = parse(v5);
  EXPECT_TRUE(s.linear_layers.empty());
  EXPECT_EQ(s.attention_layers(), 1);
  // refusals name the key
  nlohmann::json bad = c;
  bad["hybrid_override_pattern"] = "M-X*";
  EXPECT_ABL_ERROR(parse(bad), "hybrid_override_pattern", "'X' is not a layer");
  bad = c;
  bad["mlp_hidden_act"] = "silu";
  EXPECT_ABL_ERROR(parse(bad), "mlp_hidden_act", "relu2");
  bad = c;
  bad["use_bias"] = true;
  EXPECT_ABL_ERROR(parse(bad), "use_bias", "not supported");
  bad = c;
  bad["sliding_window"] = 4096;
  EXPECT_ABL_ERROR(parse(bad), "sliding_window");
  bad = c;
  bad["n_groups"] = 3;
  EXPECT_ABL_ERROR(parse(bad), "mamba_num_heads", "multiple of n_groups 3");
  bad = c;
  bad["mamba_hidden_act"] = "gelu";
  EXPECT_ABL_ERROR(parse(bad), "mamba_hidden_act", "silu");
  // relu2 is an ungated MLP's (Arcee, Nemotron-H): a gated family's hidden_act relu2 is refused
  nlohmann::json llama = nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
    "hidden_act": "relu2"})");
  EXPECT_ABL_ERROR(parse(llama), "hidden_act", "relu2");
  nlohmann::json gemma = nlohmann::json::parse(R"({"architectures": ["Gemma2ForCausalLM"], "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "head_dim": 16, "vocab_size": 100,
    "hidden_activation": "relu2"})");
  EXPECT_ABL_ERROR(parse(gemma), "hidden_activation", "ungated");
}

// ArceeForCausalLM (AFM-4.5B; models/arcee ArceeConfig, ArceeMLP = NemotronMLP): Llama with down(relu(up(x))²), no
// gate_proj in the files. A config naming the architecture and a vocabulary takes ArceeConfig's other defaults (its
// default vocab_size 32000 cannot hold its default bos_token_id 128000): 4.51 B parameters.
TEST(ModelSpecArcee, UngatedReluSquaredMlpAndDefaults) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["ArceeForCausalLM"], "model_type": "arcee",
    "vocab_size": 128004})");
  ModelSpec s = parse(c);
  EXPECT_EQ(s.activation, abl::model::Activation::relu2);
  EXPECT_EQ(s.hidden_size, 2560);
  EXPECT_EQ(s.head_dim, 80);
  EXPECT_EQ(s.num_kv_heads, 32);
  EXPECT_EQ(s.max_position_embeddings, 4096);
  EXPECT_EQ(s.bos_token_id, 128000);
  EXPECT_FALSE(s.tied_embeddings || s.mlp_bias || s.qkv_bias || s.qk_norm);
  // 2·V·H + 32 × (4·H² + 2·H·F + 2·H) + H
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{4514306560});
  std::vector<std::string> names;
  for (const auto& slot : abl::model::layer_slots(s, 0)) names.push_back(slot.pattern);
  EXPECT_EQ(std::count(names.begin(), names.end(), "model.layers.{}.mlp.gate_proj.weight"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "model.layers.{}.mlp.up_proj.weight"), 1);
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"ArceeForCausalLM", "relu² MLP (ungated)"}))
      << abl::model::describe(s);
  // mlp_bias: ArceeMLP's up and down biases (no gate to carry one)
  c["mlp_bias"] = true;
  s = parse(c);
  names.clear();
  for (const auto& slot : abl::model::layer_slots(s, 0)) names.push_back(slot.pattern);
  EXPECT_EQ(std::count(names.begin(), names.end(), "model.layers.{}.mlp.up_proj.bias"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "model.layers.{}.mlp.down_proj.bias"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "model.layers.{}.mlp.gate_proj.bias"), 0);
  // another activation is run as written: ArceeMLP applies ACT2FN[hidden_act] ungated, which we do not
  c["hidden_act"] = "silu";
  EXPECT_ABL_ERROR(parse(c), "hidden_act");
}

// swiss-ai/Apertus-8B-2509's config.json in its shape (written for this test): Llama with per-head q/k norms before
// RoPE, the norms attention_layernorm / feedforward_layernorm, the ungated MLP down(xIELU(up(x))) with four scalars per
// layer (mlp.act_fn.*), llama3 RoPE: 8.05 B parameters.
nlohmann::json apertus_8b() {
  return nlohmann::json::parse(R"({"architectures": ["ApertusForCausalLM"], "model_type": "apertus",
    "vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 21504, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "xielu", "max_position_embeddings": 65536,
    "rms_norm_eps": 1e-05, "rope_theta": 12000000, "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0,
    "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "qk_norm": true,
    "post_norm": false, "mlp_bias": false, "attention_bias": false, "tie_word_embeddings": false,
    "bos_token_id": 1, "eos_token_id": 68, "pad_token_id": 3, "torch_dtype": "bfloat16"})");
}

TEST(ModelSpecApertus, XieluMlpNormNamesAndRope) {
  ModelSpec s = parse(apertus_8b());
  EXPECT_EQ(s.activation, abl::model::Activation::xielu);
  EXPECT_TRUE(s.qk_norm && s.apertus_names);
  EXPECT_FALSE(s.qk_norm_after_rope || s.qk_norm_per_head || s.qkv_bias || s.mlp_bias || s.tied_embeddings);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::llama3);
  EXPECT_EQ(s.rope_scaling.factor, 8.0);
  EXPECT_EQ(s.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(s.rope_theta, 12000000.0);
  // 2·V·H + H + 32 × (2·H·NH·HD + 2·H·NKV·HD + 2·HD + 2·H + 2·H·F + 4)
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{8053338240});
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& slot : abl::model::layer_slots(s, 0)) shapes[slot.pattern] = slot.shape;
  EXPECT_EQ(shapes.count("model.layers.{}.mlp.gate_proj.weight"), 0u);
  EXPECT_EQ(shapes.count("model.layers.{}.input_layernorm.weight"), 0u);
  EXPECT_EQ(shapes.at("model.layers.{}.attention_layernorm.weight"), std::vector<int64_t>{4096});
  EXPECT_EQ(shapes.at("model.layers.{}.feedforward_layernorm.weight"), std::vector<int64_t>{4096});
  EXPECT_EQ(shapes.at("model.layers.{}.self_attn.q_norm.weight"), std::vector<int64_t>{128});
  EXPECT_EQ(shapes.at("model.layers.{}.mlp.up_proj.weight"), (std::vector<int64_t>{21504, 4096}));
  EXPECT_EQ(shapes.at("model.layers.{}.mlp.act_fn.alpha_p"), std::vector<int64_t>{1});
  EXPECT_EQ(shapes.at("model.layers.{}.mlp.act_fn.alpha_n"), std::vector<int64_t>{1});
  EXPECT_EQ(shapes.at("model.layers.{}.mlp.act_fn.beta"), std::vector<int64_t>{});
  EXPECT_EQ(shapes.at("model.layers.{}.mlp.act_fn.eps"), std::vector<int64_t>{});
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"ApertusForCausalLM", "xIELU MLP"}))
      << abl::model::describe(s);
  // ApertusConfig's defaults: MHA, intermediate 14336, llama3 RoPE on base 1.2e7 (rope_parameters' default)
  s = parse(nlohmann::json::parse(R"({"architectures": ["ApertusForCausalLM"]})"));
  EXPECT_EQ(s.num_kv_heads, 32);
  EXPECT_EQ(s.intermediate_size, 14336);
  EXPECT_EQ(s.max_position_embeddings, 65536);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::llama3);
  EXPECT_EQ(s.rope_scaling.factor, 8.0);
  EXPECT_EQ(s.rope_theta, 12000000.0);
  EXPECT_EQ(s.bos_token_id, 1);
  // transformers 5's spelling: rope_parameters holding the base
  nlohmann::json c = apertus_8b();
  c.erase("rope_theta");
  c.erase("rope_scaling");
  c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 500000.0}};
  s = parse(c);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_EQ(s.rope_theta, 500000.0);
  // a rope_scaling written null: plain RoPE (transformers 4.56 passes the null over ApertusConfig's default)
  c = apertus_8b();
  c["rope_scaling"] = nullptr;
  s = parse(c);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_EQ(s.rope_theta, 12000000.0);
  // the release's keys transformers does not read, where they would contradict it
  c = apertus_8b();
  c["qk_norm"] = false;
  EXPECT_ABL_ERROR(parse(c), "qk_norm");
  c = apertus_8b();
  c["post_norm"] = true;
  EXPECT_ABL_ERROR(parse(c), "post_norm");
  // ApertusMLP runs xIELU and has no biases; xielu is Apertus' alone
  c = apertus_8b();
  c["hidden_act"] = "silu";
  EXPECT_ABL_ERROR(parse(c), "hidden_act", "xielu");
  c = apertus_8b();
  c["mlp_bias"] = true;
  EXPECT_ABL_ERROR(parse(c), "mlp_bias");
  nlohmann::json llama = nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
    "hidden_act": "xielu"})");
  EXPECT_ABL_ERROR(parse(llama), "hidden_act", "ApertusForCausalLM");
}

// GLM-4.7-Flash (Glm4MoeLiteForCausalLM): DeepSeek-V3's latent attention and sigmoid router under GLM's keys. Which
// layers are MoE: mlp_layer_types, by default all but layer 0; first_k_dense_replace (the release writes 1, transformers
// does not read it) must agree. A rope_scaling dict holding rope_theta is read as rope_parameters, the base with it.
TEST(ModelSpecGlm4MoeLite, LatentAttentionLayerTypesAndRopeBase) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Glm4MoeLiteForCausalLM"], "vocab_size": 1000,
    "hidden_size": 64, "intermediate_size": 96, "moe_intermediate_size": 32, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 4, "n_routed_experts": 8, "num_experts_per_tok": 2,
    "q_lora_rank": 24, "kv_lora_rank": 16, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 12,
    "num_nextn_predict_layers": 1, "topk_method": "noaux_tc",
    "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.mla && s.router_sigmoid && s.router_bias && s.norm_topk_prob && s.rope_interleaved);
  EXPECT_EQ(s.head_dim, 24);
  EXPECT_EQ(s.partial_rotary_dim, 8);
  EXPECT_EQ(s.routed_scaling_factor, 1.8);
  EXPECT_EQ(s.shared_expert_intermediate_size, 32);
  EXPECT_EQ(s.mtp_layers, 1);
  EXPECT_EQ(s.rope_theta, 1000000.0);
  EXPECT_NEAR(s.attn_scale, 1.0 / std::sqrt(24.0), 1e-12);
  EXPECT_EQ(s.moe_layers, (std::vector<uint8_t>{0, 1, 1, 1}));
  c["mlp_layer_types"] = {"dense", "sparse", "dense", "sparse"};
  EXPECT_EQ(parse(c).moe_layers, (std::vector<uint8_t>{0, 1, 0, 1}));
  c["first_k_dense_replace"] = 1;  // disagrees with layer 2
  EXPECT_ABL_ERROR(parse(c), "mlp_layer_types", "first_k_dense_replace");
  c["mlp_layer_types"] = {"dense", "sparse", "sparse", "sparse"};
  EXPECT_EQ(parse(c).moe_layers, (std::vector<uint8_t>{0, 1, 1, 1}));
  c["mlp_layer_types"] = {"dense", "moe", "sparse", "sparse"};
  EXPECT_ABL_ERROR(parse(c), "mlp_layer_types", "moe");
  c.erase("mlp_layer_types");
  c["first_k_dense_replace"] = 2;  // transformers would build layer 1 as MoE
  EXPECT_ABL_ERROR(parse(c), "first_k_dense_replace", "mlp_layer_types");
  c["first_k_dense_replace"] = 1;
  c["partial_rotary_factor"] = 0.5;
  EXPECT_ABL_ERROR(parse(c), "partial_rotary_factor");
  c["partial_rotary_factor"] = 1.0;
  c["head_dim"] = 16;
  EXPECT_ABL_ERROR(parse(c), "head_dim", "qk_rope_head_dim");
  c["head_dim"] = 8;
  EXPECT_NO_THROW(parse(c));
  c["topk_method"] = "greedy";
  EXPECT_ABL_ERROR(parse(c), "topk_method", "noaux_tc");
  // the base inside a rope_scaling dict (transformers 5 reads it as rope_parameters)
  c["topk_method"] = "noaux_tc";
  c.erase("rope_parameters");
  c["rope_scaling"] = {{"rope_theta", 500000.0}, {"rope_type", "default"}};
  s = parse(c);
  EXPECT_EQ(s.rope_theta, 500000.0);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  c["rope_theta"] = 20000.0;  // a top-level base wins
  EXPECT_EQ(parse(c).rope_theta, 20000.0);
}

// Generic multimodal wrappers: LLaVA and InternVL run the language model of text_config's model_type with that
// family's rules and its config class's defaults (LLaVA-1.5's text_config lists only a few keys: LlamaConfig gives the
// rest); the spec keeps the wrapper's name and is multimodal (export copies the vision tower).
TEST(ModelSpecWrappers, LlavaAndInternVLRunTheirTextFamily) {
  // llava-hf/llava-1.5-7b-hf's config.json (its vision_config left out)
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["LlavaForConditionalGeneration"],
    "ignore_index": -100, "image_token_index": 32000, "model_type": "llava", "pad_token_id": 32001,
    "projector_hidden_act": "gelu", "text_config": {"_name_or_path": "lmsys/vicuna-7b-v1.5",
    "architectures": ["LlamaForCausalLM"], "max_position_embeddings": 4096, "model_type": "llama",
    "rms_norm_eps": 1e-05, "torch_dtype": "float16", "vocab_size": 32064}, "tie_word_embeddings": false,
    "torch_dtype": "float16", "vision_feature_layer": -2, "vision_feature_select_strategy": "default",
    "vocab_size": 32064})");
  ModelSpec s = parse(c);
  EXPECT_EQ(s.architecture, "LlavaForConditionalGeneration");
  EXPECT_TRUE(s.multimodal);
  EXPECT_EQ(s.weight_prefix, "language_model.model.");
  EXPECT_EQ(s.lm_head_name, "language_model.lm_head.weight");
  EXPECT_EQ(s.hidden_size, 4096);
  EXPECT_EQ(s.intermediate_size, 11008);
  EXPECT_EQ(s.num_kv_heads, 32);
  EXPECT_EQ(s.max_position_embeddings, 4096);
  EXPECT_EQ(s.vocab_size, 32064);
  EXPECT_FALSE(s.qkv_bias || s.qk_norm || s.tied_embeddings);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{6738939904});  // Vicuna-7B with 64 more tokens
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"LlavaForConditionalGeneration"}))
      << abl::model::describe(s);
  // a text_config without model_type is LlavaConfig's default llama
  c["text_config"].erase("model_type");
  EXPECT_EQ(parse(c).intermediate_size, 11008);
  // Pixtral's: a mistral text model (MistralConfig's defaults under it, its window null)
  c["text_config"] = {{"model_type", "mistral"}, {"hidden_size", 5120}, {"head_dim", 128}, {"num_hidden_layers", 40},
                      {"num_key_value_heads", 8}, {"vocab_size", 131072}, {"rope_theta", 1000000000.0},
                      {"sliding_window", nullptr}};
  s = parse(c);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.num_heads, 32);
  EXPECT_EQ(s.intermediate_size, 14336);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(s.rope_theta, 1e9);
  // InternVL3-1B-hf's shape: a qwen2 text model (q/k/v biases), tied
  c = nlohmann::json::parse(R"({"architectures": ["InternVLForConditionalGeneration"], "model_type": "internvl",
    "image_token_id": 151667, "text_config": {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151674,
    "rope_theta": 1000000.0, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "tie_word_embeddings": true,
    "use_sliding_window": false, "sliding_window": 32768, "max_window_layers": 70}})");
  s = parse(c);
  EXPECT_EQ(s.architecture, "InternVLForConditionalGeneration");
  EXPECT_TRUE(s.multimodal && s.qkv_bias && s.tied_embeddings);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_EQ(s.sliding_window, 0);
  // InternVL3.5-30B-A3B's shape: a qwen3_moe text model (Qwen3-MoE's rules: per-head q/k norms, 128 experts top-8)
  nlohmann::json moe = c;
  moe["text_config"] = {{"model_type", "qwen3_moe"}, {"hidden_size", 2048}, {"intermediate_size", 6144},
                        {"moe_intermediate_size", 768}, {"num_hidden_layers", 48}, {"num_attention_heads", 32},
                        {"num_key_value_heads", 4}, {"head_dim", 128}, {"num_experts", 128},
                        {"num_experts_per_tok", 8}, {"norm_topk_prob", true}, {"vocab_size", 151936},
                        {"rope_theta", 1000000.0}, {"tie_word_embeddings", false}};
  s = parse(moe);
  EXPECT_EQ(s.architecture, "InternVLForConditionalGeneration");
  EXPECT_TRUE(s.qk_norm && s.norm_topk_prob && s.multimodal);
  EXPECT_EQ(s.num_experts, 128);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.expert_names, ModelSpec::ExpertNames::qwen);
  EXPECT_EQ(std::count(s.moe_layers.begin(), s.moe_layers.end(), 1), 48);
  // the text model types the wrappers run
  c["text_config"]["model_type"] = "gemma";
  EXPECT_ABL_ERROR(parse(c), "text_config.model_type", "'gemma'", "llama, mistral, qwen2, qwen3, qwen3_moe");
  c["text_config"] = "qwen2";
  EXPECT_ABL_ERROR(parse(c), "text_config", "object");
}

// dots.llm1.inst's config.json in its shape (written for this test): Qwen3's attention, DeepSeek-V3's sigmoid router
// with n_group / topk_group null as released, 128 experts top-6 and 2 shared after one dense layer: 142.8 B, 14.0 B
// active.
nlohmann::json dots_llm1() {
  return nlohmann::json::parse(R"({"architectures": ["Dots1ForCausalLM"], "model_type": "dots1", "vocab_size": 152064,
    "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 62, "num_attention_heads": 32,
    "num_key_value_heads": 32, "n_routed_experts": 128, "n_shared_experts": 2, "num_experts_per_tok": 6,
    "moe_intermediate_size": 1408, "norm_topk_prob": true, "n_group": null, "topk_group": null,
    "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "first_k_dense_replace": 1,
    "max_position_embeddings": 32768, "rms_norm_eps": 1e-05, "rope_theta": 10000000, "attention_bias": false,
    "tie_word_embeddings": false, "eos_token_id": 151649, "torch_dtype": "bfloat16"})");
}

// Hunyuan-A13B-Instruct's config.json in its shape (written for this test, in the release's spelling: per-layer lists,
// attention_head_dim, no head_dim): HunYuan dense's attention, 64 experts top-8 and a shared MLP, all 3072 wide.
nlohmann::json hunyuan_a13b() {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["HunYuanMoEV1ForCausalLM"],
    "model_type": "hunyuan_v1_moe", "vocab_size": 128167, "hidden_size": 4096, "intermediate_size": 3072,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "attention_head_dim": 128,
    "num_experts": 64, "use_mixed_mlp_moe": true, "use_qk_norm": true, "use_cla": false, "cla_share_factor": 2,
    "max_position_embeddings": 32768, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
    "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
      "mscale_all_dim": 1.0, "type": "dynamic"},
    "tie_word_embeddings": true, "bos_token_id": 1, "eos_token_id": 127960, "pad_token_id": 127961})");
  c["moe_topk"] = std::vector<int>(32, 8);
  c["moe_intermediate_size"] = std::vector<int>(32, 3072);
  c["num_shared_expert"] = std::vector<int>(32, 1);
  return c;
}

TEST(ModelSpecHunyuanMoe, ReleasedConfigListsAndRefusals) {
  nlohmann::json c = hunyuan_a13b();
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.qk_norm && s.qk_norm_after_rope && s.norm_topk_prob && s.tied_embeddings);
  EXPECT_FALSE(s.router_sigmoid || s.router_bias || s.shared_expert_gated || s.qkv_bias);
  EXPECT_EQ(s.head_dim, 128);  // attention_head_dim
  EXPECT_EQ(s.num_experts, 64);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.moe_intermediate_size, 3072);
  EXPECT_EQ(s.shared_expert_intermediate_size, 3072);
  for (int64_t l = 0; l < 32; ++l) EXPECT_TRUE(s.is_moe_layer(l)) << l;
  EXPECT_NEAR(s.rope_theta, 10000.0 * std::pow(1000.0, 128.0 / 126.0), 1e-3);  // alpha raises the base
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{80393183232});
  EXPECT_EQ(abl::model::active_parameter_count(s), int64_t{12747448320});
  std::vector<std::pair<std::string, std::vector<int64_t>>> got;
  for (const auto& slot : abl::model::layer_slots(s, 0)) got.emplace_back(slot.pattern, slot.shape);
  const auto has = [&](const std::string& n, std::vector<int64_t> shape) {
    return std::find(got.begin(), got.end(), std::make_pair("model.layers.{}." + n, shape)) != got.end();
  };
  EXPECT_TRUE(has("mlp.gate.wg.weight", {64, 4096}));
  EXPECT_TRUE(has("mlp.experts.63.down_proj.weight", {4096, 3072}));
  EXPECT_TRUE(has("mlp.shared_mlp.gate_proj.weight", {3072, 4096}));
  EXPECT_TRUE(has("self_attn.query_layernorm.weight", {128}));
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"HunYuanMoEV1ForCausalLM", "MoE 64x3072 top-8"}))
      << abl::model::describe(s);
  // head_dim wins over attention_head_dim; plain numbers as transformers 5 writes them
  c["head_dim"] = 128;
  c["attention_head_dim"] = 64;
  c["moe_topk"] = 8;
  c["moe_intermediate_size"] = 3072;
  c["num_shared_expert"] = 1;
  s = parse(c);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.experts_per_token, 8);
  // what transformers would run differently from the release's code, or not at all, is refused naming the key
  const auto refused = [&](const char* key, nlohmann::json value, const char* words) {
    nlohmann::json bad = hunyuan_a13b();
    bad[key] = std::move(value);
    EXPECT_ABL_ERROR(parse(bad), "my/config.json", key, words);
  };
  std::vector<int> mixed(32, 8);
  mixed[5] = 4;
  refused("moe_topk", mixed, "the same");
  refused("moe_topk", std::vector<int>(31, 8), "31 values for 32 layers");
  refused("moe_intermediate_size", 1536, "intermediate_size 3072");
  refused("num_shared_expert", std::vector<int>(32, 2), "one shared MLP");
  refused("use_mixed_mlp_moe", false, "shared MLP");
  refused("use_cla", true, "shared across layers");
  nlohmann::json bad = hunyuan_a13b();
  bad.erase("num_experts");
  bad["num_experts"] = nullptr;
  EXPECT_ABL_ERROR(parse(bad), "num_experts");
}

TEST(ModelSpecDots1, ReleasedShapeRouterAndWindow) {
  nlohmann::json c = dots_llm1();
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.qk_norm && s.router_sigmoid && s.router_bias && s.norm_topk_prob);
  EXPECT_FALSE(s.qk_norm_after_rope || s.shared_expert_gated || s.qkv_bias || s.o_bias || s.tied_embeddings);
  EXPECT_EQ(s.activation, abl::model::Activation::silu);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.expert_groups, 1);  // null: one group, no group limit
  EXPECT_EQ(s.topk_groups, 1);
  EXPECT_DOUBLE_EQ(s.routed_scaling_factor, 2.5);
  EXPECT_EQ(s.shared_expert_intermediate_size, 2 * 1408);
  EXPECT_FALSE(s.is_moe_layer(0));
  for (int64_t l = 1; l < 62; ++l) EXPECT_TRUE(s.is_moe_layer(l)) << l;
  EXPECT_EQ(sliding_count(s), 0);  // sliding_window 4096 from layer max_window_layers = 62 on: none
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{142774381696});
  EXPECT_EQ(abl::model::active_parameter_count(s), int64_t{14016588928});
  std::vector<std::pair<std::string, std::vector<int64_t>>> got;
  for (const auto& slot : abl::model::layer_slots(s, 1)) got.emplace_back(slot.pattern, slot.shape);
  const auto has = [&](const std::string& n, std::vector<int64_t> shape) {
    return std::find(got.begin(), got.end(), std::make_pair("model.layers.{}." + n, shape)) != got.end();
  };
  EXPECT_TRUE(has("self_attn.q_norm.weight", {128}));
  EXPECT_TRUE(has("mlp.gate.weight", {128, 4096}));
  EXPECT_TRUE(has("mlp.gate.e_score_correction_bias", {128}));
  EXPECT_TRUE(has("mlp.experts.127.down_proj.weight", {4096, 1408}));
  EXPECT_TRUE(has("mlp.shared_experts.gate_proj.weight", {2816, 4096}));
  // the sliding layers: from max_window_layers on, or as layer_types lists them
  c["sliding_window"] = 512;
  c["max_window_layers"] = 60;
  s = parse(c);
  EXPECT_EQ(s.sliding_window, 512);
  EXPECT_EQ(sliding_count(s), 2);
  EXPECT_TRUE(s.uses_sliding_window(61) && !s.uses_sliding_window(59));
  c["layer_types"] = nlohmann::json::array();
  for (int l = 0; l < 62; ++l) c["layer_types"].push_back(l % 2 ? "full_attention" : "sliding_attention");
  EXPECT_EQ(sliding_count(parse(c)), 31);
  c = dots_llm1();
  c["sliding_window"] = nullptr;
  EXPECT_EQ(sliding_count(parse(c)), 0);
  c["layer_types"] = std::vector<std::string>(62, "full_attention");
  c["layer_types"][61] = "sliding_attention";  // a sliding layer without a window: transformers refuses it
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "layer_types", "sliding_window null");
  // groups as DeepSeek-V3's when given; other routing refused naming the key
  c = dots_llm1();
  c["n_group"] = 8;
  c["topk_group"] = 4;
  s = parse(c);
  EXPECT_EQ(s.expert_groups, 8);
  EXPECT_EQ(s.topk_groups, 4);
  c["topk_group"] = nullptr;  // one key null beside a real grouping
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "topk_group", "n_group 8");
  c["topk_group"] = 4;
  c["scoring_func"] = "softmax";
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "scoring_func", "sigmoid");
  c = dots_llm1();
  c.erase("n_routed_experts");  // None in Dots1Config: a config must give it
  EXPECT_ABL_ERROR(parse(c), "n_routed_experts");
}

// Nemotron-H's MoE blocks ('E', as NVIDIA-Nemotron-3-Nano-30B-A3B has them; config written for this test): DeepSeek-V3's
// sigmoid router with its correction bias, ungated relu² experts, an ungated shared expert; a dense '-' layer beside.
// Nemotron-H-8B's config with MoE blocks on layers 1 and 4 of the pattern MEM*E-: E experts of Fm, top-k, a
// shared expert of Fs, the sigmoid router's keys, no latent.
nlohmann::json nemotron_h_moe(int64_t E, int64_t k, int64_t Fm, int64_t Fs, double scale) {
  nlohmann::json c = nemotron_h_8b();
  c["hybrid_override_pattern"] = "MEM*E-";
  c["n_routed_experts"] = E;
  c["num_experts_per_tok"] = k;
  c["moe_intermediate_size"] = Fm;
  c["moe_shared_expert_intermediate_size"] = Fs;
  c["n_group"] = 1;
  c["topk_group"] = 1;
  c["norm_topk_prob"] = true;
  c["routed_scaling_factor"] = scale;
  c["moe_latent_size"] = nullptr;
  return c;
}

TEST(ModelSpecNemotronH, MoeBlocks) {
  const nlohmann::json c = nemotron_h_moe(128, 6, 1856, 3712, 2.5);
  ModelSpec s = parse(c);
  EXPECT_EQ(s.num_layers, 6);
  EXPECT_TRUE(s.is_moe_layer(1) && s.has_mlp(1) && !s.has_mixer(1));
  EXPECT_TRUE(!s.is_moe_layer(5) && s.has_mlp(5));  // the dense relu² MLP
  EXPECT_EQ(s.dense_mlp_width(), 21504);
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"one block per layer MEM*E-"})) << abl::model::describe(s);
  EXPECT_EQ(s.num_experts, 128);
  EXPECT_EQ(s.experts_per_token, 6);
  EXPECT_TRUE(s.router_sigmoid && s.router_bias && s.norm_topk_prob);
  EXPECT_DOUBLE_EQ(s.routed_scaling_factor, 2.5);
  EXPECT_EQ(s.shared_expert_intermediate_size, 3712);
  EXPECT_FALSE(s.shared_expert_gated);
  EXPECT_FALSE(s.same_layer_kind(1, 5));
  const auto slots = abl::model::layer_slots(s, 1);
  ASSERT_EQ(slots.size(), 1u + 2u + 2u * 128u + 2u);
  std::vector<std::string> head;
  for (size_t i = 0; i < 5; ++i) {
    head.push_back(abl::model::weight_name(slots[i], 1) + " " + std::string(abl::model::role_name(slots[i].role)));
  }
  EXPECT_EQ(head, (std::vector<std::string>{"backbone.layers.1.norm.weight mlp_norm",
                                            "backbone.layers.1.mixer.gate.weight router",
                                            "backbone.layers.1.mixer.gate.e_score_correction_bias router_bias",
                                            "backbone.layers.1.mixer.experts.0.up_proj.weight expert_up_proj",
                                            "backbone.layers.1.mixer.experts.0.down_proj.weight expert_down_proj"}));
  EXPECT_EQ(slots[4 + 2 * 127].expert, 127);
  EXPECT_EQ(abl::model::weight_name(slots.back(), 1), "backbone.layers.1.mixer.shared_experts.down_proj.weight");
  // active: 6 of 128 experts of up and down
  EXPECT_EQ(abl::model::parameter_count(s) - abl::model::active_parameter_count(s), int64_t{2} * 122 * 2 * 1856 * 4096);
  // transformers 5's stacked experts: expert e a block of mixer.experts.up_proj (E, Fm, H) / down_proj (E, H, Fm)
  s.fused_experts = true;
  const auto stacked = abl::model::layer_slots(s, 1);
  EXPECT_EQ(abl::model::weight_name(stacked[5], 1), "backbone.layers.1.mixer.experts.up_proj");
  EXPECT_EQ(stacked[5].file_shape, (std::vector<int64_t>{128, 1856, 4096}));
  EXPECT_EQ(stacked[5].file_offset, int64_t{1856} * 4096);
  EXPECT_EQ(stacked[6].file_shape, (std::vector<int64_t>{128, 4096, 1856}));
  EXPECT_EQ(stacked[6].file_offset, int64_t{4096} * 1856);
  // every MLP block MoE (as Nemotron 3 Nano): no dense MLP to plan buffers for
  nlohmann::json all_moe = c;
  all_moe["hybrid_override_pattern"] = "MEM*E";
  EXPECT_EQ(parse(all_moe).dense_mlp_width(), 0);
  // refusals name the key
  nlohmann::json bad = c;
  bad["moe_latent_size"] = 8192;
  EXPECT_ABL_ERROR(parse(bad), "my/config.json", "moe_latent_size", "wider than hidden_size");
  bad["moe_latent_size"] = 0;
  EXPECT_ABL_ERROR(parse(bad), "my/config.json", "moe_latent_size");
  bad = c;
  bad["num_experts_per_tok"] = 200;
  EXPECT_ABL_ERROR(parse(bad), "num_experts_per_tok");
  bad = c;
  bad["n_group"] = 3;
  EXPECT_ABL_ERROR(parse(bad), "n_group");
}

// Nemotron 3 Super's LatentMoE (NemotronHMoE with moe_latent_size; config written for this test with the MoE sizes
// NVIDIA's Megatron bridge lists for the Super model: 512 experts of 2688, top-22 x5.0, a shared expert of 5376, latent
// 1024): the router and the shared expert on the 4096-wide input, the experts' up (Fm, D) and down (D, Fm) inside
// mixer.fc1_latent_proj (D, H) and mixer.fc2_latent_proj (H, D); fc2 is the routed experts' writer, so it is the
// mlp.down_proj the ablation rewrites, not the experts' latent down projections.
TEST(ModelSpecNemotronH, LatentMoeBlocks) {
  nlohmann::json c = nemotron_h_moe(512, 22, 2688, 5376, 5.0);
  c["moe_latent_size"] = 1024;
  ModelSpec s = parse(c);
  EXPECT_EQ(s.moe_latent_size, 1024);
  EXPECT_EQ(s.expert_width(), 1024);
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"routed experts in a latent of 1024"}))
      << abl::model::describe(s);
  const auto slots = abl::model::layer_slots(s, 1);
  ASSERT_EQ(slots.size(), 1u + 2u + 1u + 2u * 512u + 1u + 2u);
  EXPECT_EQ(abl::model::weight_name(slots[3], 1), "backbone.layers.1.mixer.fc1_latent_proj.weight");
  EXPECT_EQ(slots[3].role, abl::model::WeightRole::latent_in_proj);
  EXPECT_EQ(slots[3].shape, (std::vector<int64_t>{1024, 4096}));
  EXPECT_EQ(slots[4].shape, (std::vector<int64_t>{2688, 1024}));  // experts.0.up_proj
  EXPECT_EQ(slots[5].shape, (std::vector<int64_t>{1024, 2688}));  // experts.0.down_proj
  EXPECT_EQ(slots[5].shape_doc, "(moe_latent_size, moe_intermediate_size)");
  const auto& fc2 = slots[4 + 2 * 512];
  EXPECT_EQ(abl::model::weight_name(fc2, 1), "backbone.layers.1.mixer.fc2_latent_proj.weight");
  EXPECT_EQ(fc2.shape, (std::vector<int64_t>{4096, 1024}));
  EXPECT_EQ(abl::model::weight_name(slots.back(), 1), "backbone.layers.1.mixer.shared_experts.down_proj.weight");
  EXPECT_EQ(slots.back().shape, (std::vector<int64_t>{4096, 5376}));
  // what mlp.down_proj ablates: fc2, the shared expert's down, not the experts' latent ones
  using abl::model::WeightRole;
  EXPECT_TRUE(abl::model::is_down_projection(s, WeightRole::latent_out_proj));
  EXPECT_TRUE(abl::model::is_routed_down_projection(s, WeightRole::latent_out_proj));
  EXPECT_FALSE(abl::model::is_down_projection(s, WeightRole::expert_down_proj));
  EXPECT_TRUE(abl::model::is_down_projection(s, WeightRole::shared_down_proj));
  EXPECT_FALSE(abl::model::is_down_projection(s, WeightRole::latent_in_proj));
  // active: 22 of 512 experts, each up and down over the latent
  EXPECT_EQ(abl::model::parameter_count(s) - abl::model::active_parameter_count(s),
            int64_t{2} * (512 - 22) * 2 * 2688 * 1024);
  // transformers 5's stacked experts: (E, Fm, D) / (E, D, Fm)
  s.fused_experts = true;
  const auto stacked = abl::model::layer_slots(s, 1);
  EXPECT_EQ(stacked[6].file_shape, (std::vector<int64_t>{512, 2688, 1024}));
  EXPECT_EQ(stacked[6].file_offset, int64_t{2688} * 1024);
  EXPECT_EQ(stacked[7].file_shape, (std::vector<int64_t>{512, 1024, 2688}));
  // without a latent the experts' down projections are the routed writers, as before
  c["moe_latent_size"] = nullptr;
  const ModelSpec plain = parse(c);
  EXPECT_TRUE(abl::model::is_routed_down_projection(plain, WeightRole::expert_down_proj));
  EXPECT_FALSE(abl::model::is_down_projection(plain, WeightRole::latent_out_proj));
}

// In the shape of LFM2-1.2B's config.json (written for this test, with the original keys LFM2 ships beside
// transformers' ones): 10 short-conv and 6 attention layers, per-head q/k norms, the MLP's width adjusted from
// block_ff_dim 12288 to 8192, tied.
nlohmann::json lfm2_1_2b() {
  return nlohmann::json::parse(R"({"architectures": ["Lfm2ForCausalLM"], "block_auto_adjust_ff_dim": true,
    "block_dim": 2048, "block_ff_dim": 12288, "block_ffn_dim_multiplier": 1.0, "block_multiple_of": 256,
    "bos_token_id": 1, "conv_L_cache": 3, "conv_bias": false, "conv_dim": 2048, "eos_token_id": 7,
    "hidden_size": 2048, "intermediate_size": 12288, "layer_types": ["conv", "conv", "full_attention", "conv", "conv",
    "full_attention", "conv", "conv", "full_attention", "conv", "full_attention", "conv", "full_attention", "conv",
    "full_attention", "conv"], "max_position_embeddings": 128000, "model_type": "lfm2", "norm_eps": 1e-05,
    "num_attention_heads": 32, "num_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8, "pad_token_id": 0,
    "rope_theta": 1000000.0, "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 65536})");
}

TEST(ModelSpecLfm2, ShortConvLayersBesideAttention) {
  nlohmann::json c = lfm2_1_2b();
  ModelSpec s = parse(c);
  EXPECT_EQ(s.linear_mixer, ModelSpec::LinearMixer::short_conv);
  EXPECT_EQ(s.attention_layers(), 6);
  EXPECT_TRUE(s.is_linear_layer(0) && !s.is_linear_layer(2) && s.is_linear_layer(15));
  EXPECT_EQ(s.intermediate_size, 8192);  // int(2 * 12288 / 3), rounded up to 256
  EXPECT_EQ(s.linear_conv_kernel, 3);
  EXPECT_EQ(s.linear_conv_dim(), 2048);
  EXPECT_EQ(s.linear_in_dim(), 3 * 2048);
  EXPECT_EQ(s.linear_state_floats(), 10 * 2048 * 2);  // the conv's last two inputs, no recurrent state
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
  EXPECT_TRUE(s.qk_norm);
  EXPECT_TRUE(s.tied_embeddings);  // Lfm2Config's default
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{1170340608});  // LFM2-1.2B: 1.17 B
  const auto names = [&](int64_t l) {
    std::vector<std::string> got;
    for (const auto& slot : abl::model::layer_slots(s, l)) {
      got.push_back(abl::model::weight_name(slot, l).substr(15) + " " + std::string(abl::model::role_name(slot.role)));
    }
    return got;
  };
  EXPECT_EQ(names(0), (std::vector<std::string>{"operator_norm.weight attn_norm", "conv.in_proj.weight short_conv_in",
                                                "conv.conv.weight linear_conv", "conv.out_proj.weight o_proj",
                                                "ffn_norm.weight mlp_norm", "feed_forward.w1.weight gate_proj",
                                                "feed_forward.w3.weight up_proj", "feed_forward.w2.weight down_proj"}));
  EXPECT_EQ(names(2), (std::vector<std::string>{"operator_norm.weight attn_norm", "self_attn.q_proj.weight q_proj",
                                                "self_attn.k_proj.weight k_proj", "self_attn.v_proj.weight v_proj",
                                                "self_attn.q_layernorm.weight q_norm", "self_attn.k_layernorm.weight k_norm",
                                                "self_attn.out_proj.weight o_proj", "ffn_norm.weight mlp_norm",
                                                "feed_forward.w1.weight gate_proj", "feed_forward.w3.weight up_proj",
                                                "feed_forward.w2.weight down_proj"}));
  bool final_norm = false;
  for (const auto& slot : abl::model::global_slots(s)) final_norm |= slot.pattern == "model.embedding_norm.weight";
  EXPECT_TRUE(final_norm);

  // full_attn_idxs instead of layer_types; "theta" and "tie_embedding" (the original keys) win; the multiplier
  c.erase("layer_types");
  c["full_attn_idxs"] = {2, 5, 8, 10, 12, 14};
  c["theta"] = 500000.0;
  c["tie_embedding"] = false;
  c["block_ffn_dim_multiplier"] = 1.5;
  s = parse(c);
  EXPECT_EQ(s.attention_layers(), 6);
  EXPECT_FALSE(s.is_linear_layer(14));
  EXPECT_DOUBLE_EQ(s.rope_theta, 500000.0);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_EQ(s.intermediate_size, 12288);  // int(1.5 * 8192) = 12288, a multiple of 256
  // a null multiplier: 2/3 of block_ff_dim, not rounded (Lfm2MLP rounds only with a multiplier)
  c["block_ff_dim"] = 201;
  c["block_ffn_dim_multiplier"] = nullptr;
  EXPECT_EQ(parse(c).intermediate_size, 134);
  // neither: every layer attention (Lfm2Config's default)
  c.erase("full_attn_idxs");
  EXPECT_EQ(parse(c).attention_layers(), 16);
  // refusals name the key
  c = lfm2_1_2b();
  c["conv_bias"] = true;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "conv_bias", "not supported");
  c = lfm2_1_2b();
  c["layer_types"][3] = "mamba";
  EXPECT_ABL_ERROR(parse(c), "layer_types", "'mamba' is not a layer type");
  c = lfm2_1_2b();
  c["conv_L_cache"] = 0;
  EXPECT_ABL_ERROR(parse(c), "conv_L_cache");
}

// In the shape of LFM2-8B-A1B's config.json (written for this test): LFM2's layers, the first two MLPs dense of
// intermediate_size, then 32 experts of 1792, 4 per token, chosen by a sigmoid router with a correction bias.
TEST(ModelSpecLfm2, MoeAfterDenseLayers) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Lfm2MoeForCausalLM"], "model_type": "lfm2_moe",
    "hidden_size": 2048, "intermediate_size": 7168, "moe_intermediate_size": 1792, "num_hidden_layers": 24,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_experts": 32, "num_experts_per_tok": 4,
    "num_dense_layers": 2, "use_expert_bias": true, "norm_topk_prob": true, "routed_scaling_factor": 1.0,
    "conv_L_cache": 3, "conv_bias": false, "norm_eps": 1e-05, "rope_theta": 1000000.0, "vocab_size": 65536,
    "max_position_embeddings": 128000, "tie_embedding": true, "bos_token_id": 1, "eos_token_id": 7,
    "pad_token_id": 0})");
  c["layer_types"] = nlohmann::json::array();
  for (int l = 0; l < 24; ++l) c["layer_types"].push_back(l % 4 == 2 && l < 23 ? "full_attention" : "conv");
  ModelSpec s = parse(c);
  EXPECT_EQ(s.linear_mixer, ModelSpec::LinearMixer::short_conv);
  EXPECT_EQ(s.attention_layers(), 6);
  EXPECT_EQ(s.intermediate_size, 7168);  // the dense layers' width, not adjusted
  EXPECT_FALSE(s.is_moe_layer(1));
  EXPECT_TRUE(s.is_moe_layer(2));
  EXPECT_EQ(s.num_experts, 32);
  EXPECT_EQ(s.experts_per_token, 4);
  EXPECT_TRUE(s.router_sigmoid && s.router_bias && s.norm_topk_prob);
  EXPECT_DOUBLE_EQ(s.router_norm_eps, 1e-6);
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{8339930560});  // "8.3B"
  std::vector<std::string> moe;
  for (const auto& slot : abl::model::layer_slots(s, 3)) {
    if (slot.expert <= 0 && slot.role != abl::model::WeightRole::attn_norm && slot.role != abl::model::WeightRole::mlp_norm) {
      moe.push_back(abl::model::weight_name(slot, 3).substr(15));
    }
  }
  EXPECT_EQ(moe, (std::vector<std::string>{"conv.in_proj.weight", "conv.conv.weight", "conv.out_proj.weight",
                                           "feed_forward.gate.weight", "feed_forward.expert_bias",
                                           "feed_forward.experts.0.w1.weight", "feed_forward.experts.0.w3.weight",
                                           "feed_forward.experts.0.w2.weight"}));
  c["use_expert_bias"] = false;
  EXPECT_FALSE(parse(c).router_bias);
  c["num_dense_layers"] = -1;
  EXPECT_ABL_ERROR(parse(c), "num_dense_layers", "negative");
}

// In the shape of Hunyuan-7B-Instruct's config.json (written for this test): Llama's layers with per-head
// q/k norms after RoPE under HunYuan's names, the dynamic rope_scaling's alpha raising the base.
TEST(ModelSpecHunyuan, DenseQkNormAfterRopeAndAlphaBase) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["HunYuanDenseV1ForCausalLM"],
    "attention_bias": false, "bos_token_id": 1, "eos_token_id": 127960, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768, "mlp_bias": false,
    "model_type": "hunyuan_v1_dense", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "pad_token_id": 127961, "rms_norm_eps": 1e-05, "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1,
    "factor": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"}, "rope_theta": 10000.0,
    "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_qk_norm": true, "vocab_size": 128167})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.qk_norm);
  EXPECT_TRUE(s.qk_norm_after_rope);
  EXPECT_FALSE(s.qk_norm_per_head || s.qk_norm_full);
  EXPECT_NEAR(s.rope_theta, 10000.0 * std::pow(1000.0, 128.0 / 126.0), 1e-6);  // 1.1159e7
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_NEAR(abl::model::parameter_count(s) / 1e9, 7.50, 0.01);
  std::vector<std::string> norms;
  for (const auto& slot : abl::model::layer_slots(s, 2)) {
    if (slot.role == abl::model::WeightRole::q_norm || slot.role == abl::model::WeightRole::k_norm) {
      norms.push_back(abl::model::weight_name(slot, 2));
    }
  }
  EXPECT_EQ(norms, (std::vector<std::string>{"model.layers.2.self_attn.query_layernorm.weight",
                                             "model.layers.2.self_attn.key_layernorm.weight"}));
  EXPECT_NE(abl::model::describe(s).find("q/k norm after RoPE"), std::string::npos) << abl::model::describe(s);
  // transformers 5's rope_parameters; alpha without factor (HunYuanDenseV1Config accepts either)
  c.erase("rope_scaling");
  c.erase("rope_theta");
  c["rope_parameters"] = {{"rope_type", "dynamic"}, {"alpha", 50.0}, {"rope_theta", 10000.0}};
  EXPECT_NEAR(parse(c).rope_theta, 10000.0 * std::pow(50.0, 128.0 / 126.0), 1e-6);
  // Without alpha, dynamic NTK is the default RoPE within the context (rope_theta unchanged)
  c["rope_parameters"] = {{"rope_type", "dynamic"}, {"factor", 2.0}, {"rope_theta", 10000.0}};
  EXPECT_DOUBLE_EQ(parse(c).rope_theta, 10000.0);
  c["rope_parameters"] = {{"rope_type", "dynamic"}, {"alpha", -3.0}, {"rope_theta", 10000.0}};
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "rope_scaling.alpha", "-3"}));
}

// gpt-oss-20b's config.json (the published numbers, written for this test; its quantization_config
// left out): q/k/v/o biases, sinks, alternate sliding layers, yarn x32 without truncation, 32 biased
// experts top-4 stacked transposed with gate and up interleaved, the clamped SwiGLU.
TEST(ModelSpecGptOss, PublishedConfigAndStridedExpertViews) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["GptOssForCausalLM"], "attention_bias": true,
    "eos_token_id": 200002, "experts_per_token": 4, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2880,
    "initial_context_length": 4096, "intermediate_size": 2880, "max_position_embeddings": 131072,
    "model_type": "gpt_oss", "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24,
    "num_key_value_heads": 8, "num_local_experts": 32, "pad_token_id": 199999, "rms_norm_eps": 1e-05,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
    "rope_type": "yarn", "truncate": false}, "rope_theta": 150000, "sliding_window": 128, "swiglu_limit": 7.0,
    "tie_word_embeddings": false, "vocab_size": 201088})");
  nlohmann::json types = nlohmann::json::array();
  for (int l = 0; l < 24; ++l) types.push_back(l % 2 == 0 ? "sliding_attention" : "full_attention");
  c["layer_types"] = types;
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.qkv_bias && s.o_bias && s.attn_sinks && s.expert_bias && s.router_logit_bias);
  EXPECT_EQ(s.num_experts, 32);
  EXPECT_EQ(s.experts_per_token, 4);
  EXPECT_EQ(s.moe_intermediate_size, 2880);
  EXPECT_TRUE(s.norm_topk_prob);  // the softmax of the top-4 logits
  EXPECT_TRUE(s.fused_experts);
  EXPECT_EQ(s.activation, abl::model::Activation::swiglu_clamped);
  EXPECT_DOUBLE_EQ(s.swiglu_alpha, 1.702);
  EXPECT_DOUBLE_EQ(s.swiglu_limit, 7.0);
  EXPECT_EQ(s.sliding_window, 128);
  EXPECT_EQ(sliding_count(s), 12);
  EXPECT_TRUE(s.uses_sliding_window(0));
  EXPECT_FALSE(s.uses_sliding_window(1));
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::yarn);
  EXPECT_FALSE(s.rope_scaling.truncate);
  EXPECT_DOUBLE_EQ(s.rope_scaling.factor, 32.0);
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s),
                                         {"GptOssForCausalLM", "o_proj bias", "attention sinks", "clamped SwiGLU",
                                          "router bias", "biased experts", "sliding window 128 on 12/24 layers"}));

  // The expert views: gate (f, h) at e*H*2F + h*2F + 2f of gate_up_proj (E, H, 2F), up one further,
  // down (h, f) at e*F*H + f*H + h of down_proj (E, F, H); the biases likewise.
  const int64_t H = 2880, F = 2880;
  std::vector<abl::model::ExpectedWeight> layer1;
  for (const auto& w : abl::model::expected_weights(s)) {
    if (w.layer == 1) layer1.push_back(w);
  }
  auto find = [&](abl::model::WeightRole role, int32_t e) -> const abl::model::ExpectedWeight& {
    for (const auto& w : layer1) {
      if (w.role == role && w.expert == e) return w;
    }
    throw std::runtime_error("no such slot");
  };
  using R = abl::model::WeightRole;
  const auto& gate = find(R::expert_gate_proj, 5);
  EXPECT_EQ(gate.name, "model.layers.1.mlp.experts.gate_up_proj");
  EXPECT_EQ(gate.file_shape, (std::vector<int64_t>{32, H, 2 * F}));
  EXPECT_EQ(abl::model::file_index(gate, 7 * H + 11), 5 * H * 2 * F + 11 * 2 * F + 2 * 7);
  EXPECT_EQ(abl::model::file_index(find(R::expert_up_proj, 5), 7 * H + 11), 5 * H * 2 * F + 11 * 2 * F + 2 * 7 + 1);
  const auto& down = find(R::expert_down_proj, 31);
  EXPECT_EQ(down.name, "model.layers.1.mlp.experts.down_proj");
  EXPECT_EQ(abl::model::file_index(down, 3 * F + 9), 31 * F * H + 9 * H + 3);
  EXPECT_TRUE(abl::model::is_transposed(down));
  EXPECT_FALSE(abl::model::is_transposed(gate));
  EXPECT_EQ(abl::model::file_index(find(R::expert_gate_bias, 2), 10), 2 * 2 * F + 20);
  EXPECT_EQ(abl::model::file_index(find(R::expert_up_bias, 2), 10), 2 * 2 * F + 21);
  EXPECT_EQ(abl::model::file_index(find(R::expert_down_bias, 2), 10), 2 * H + 10);
  EXPECT_EQ(find(R::router_logit_bias, -1).name, "model.layers.1.mlp.router.bias");
  EXPECT_EQ(find(R::attn_sinks, -1).shape, (std::vector<int64_t>{64}));
  EXPECT_EQ(find(R::o_bias, -1).name, "model.layers.1.self_attn.o_proj.bias");

  // GptOssConfig's defaults for absent keys: even layers slide, the yarn rope, the SwiGLU constants.
  for (const char* key : {"layer_types", "rope_scaling", "swiglu_limit"}) c.erase(key);
  s = parse(c);
  EXPECT_EQ(sliding_count(s), 12);
  EXPECT_TRUE(s.uses_sliding_window(22));
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::yarn);
  EXPECT_EQ(s.rope_scaling.original_max_position_embeddings, 4096);
  EXPECT_FALSE(s.rope_scaling.truncate);
  EXPECT_DOUBLE_EQ(s.swiglu_limit, 7.0);
  c["attention_bias"] = false;
  s = parse(c);
  EXPECT_FALSE(s.qkv_bias || s.o_bias);
  c["swiglu_limit"] = 0;
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "swiglu_limit", "positive"}));
}

// c4ai-command-r-v01's and c4ai-command-r7b-12-2024's config.json (the published numbers, written for
// this test): LayerNorms (layer_norm_eps), the parallel block, RoPE over whole heads in adjacent pairs,
// logits × logit_scale, tied; Cohere2 slides on 3 of 4 layers and runs the 4th without RoPE.
TEST(ModelSpecCohere, CommandRAndR7B) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["CohereForCausalLM"], "attention_bias": false,
    "bos_token_id": 5, "eos_token_id": 255001, "hidden_act": "silu", "hidden_size": 8192, "intermediate_size": 22528,
    "layer_norm_eps": 1e-05, "logit_scale": 0.0625, "max_position_embeddings": 8192, "model_type": "cohere",
    "num_attention_heads": 64, "num_hidden_layers": 40, "num_key_value_heads": 64, "pad_token_id": 0,
    "rope_theta": 8000000.0, "torch_dtype": "float16", "use_qk_norm": false, "vocab_size": 256000})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.norm_centered && s.parallel_block && s.rope_interleaved && s.tied_embeddings);
  EXPECT_FALSE(s.qkv_bias || s.o_bias || s.qk_norm);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.rotary_dim(), 128);
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(1.0 / s.logits_scaling, 0.0625);
  EXPECT_TRUE(s.nope_layers.empty());
  EXPECT_EQ(sliding_count(s), 0);
  std::vector<std::string> names;
  for (const auto& slot : abl::model::layer_slots(s, 0)) names.push_back(slot.pattern);
  EXPECT_EQ(std::count(names.begin(), names.end(), "model.layers.{}.post_attention_layernorm.weight"), 0);
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"CohereForCausalLM", "LayerNorms (no bias)",
                                                                    "parallel attention and MLP", "interleaved"}));
  // ~35 B as published (35.0 B with the tied embedding counted once)
  EXPECT_NEAR(abl::model::parameter_count(s) / 1e9, 34.98, 0.01);

  nlohmann::json c2 = nlohmann::json::parse(R"({"architectures": ["Cohere2ForCausalLM"], "attention_bias": false,
    "bos_token_id": 5, "eos_token_id": 255001, "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336,
    "layer_norm_eps": 1e-05, "logit_scale": 0.25, "max_position_embeddings": 8192, "model_type": "cohere2",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "pad_token_id": 0,
    "rope_theta": 50000, "sliding_window": 4096, "sliding_window_pattern": 4, "torch_dtype": "bfloat16",
    "vocab_size": 256000})");
  s = parse(c2);
  EXPECT_EQ(s.sliding_window, 4096);
  EXPECT_EQ(sliding_count(s), 24);
  for (int64_t l = 0; l < s.num_layers; ++l) {
    EXPECT_EQ(s.uses_sliding_window(l), (l + 1) % 4 != 0) << l;
    EXPECT_EQ(s.uses_rope(l), (l + 1) % 4 != 0) << l;  // the full layers take no RoPE
  }
  EXPECT_NEAR(abl::model::parameter_count(s) / 1e9, 8.03, 0.01);
  // layer_types, when given, decide both
  nlohmann::json types = nlohmann::json::array();
  for (int l = 0; l < 32; ++l) types.push_back(l == 5 ? "full_attention" : "sliding_attention");
  c2["layer_types"] = types;
  s = parse(c2);
  EXPECT_EQ(sliding_count(s), 31);
  EXPECT_FALSE(s.uses_rope(5));
  EXPECT_TRUE(s.uses_rope(3));

  c2["use_qk_norm"] = true;  // not a Cohere2Config key: Cohere2Attention has no q/k norm
  EXPECT_FALSE(parse(c2).qk_norm);
  c["logit_scale"] = 0;
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "logit_scale", "positive"}));
  c["logit_scale"] = 0.0625;
  c["attention_bias"] = true;
  s = parse(c);
  EXPECT_TRUE(s.qkv_bias && s.o_bias);
}

// c4ai-command-r-plus's config.json (the published numbers, written for this test): use_qk_norm puts
// a LayerNorm on every q and k head with its own weight row, (num_attention_heads, head_dim) and
// (num_key_value_heads, head_dim) (CohereAttention.__init__'s CohereLayerNorm((heads, head_dim))).
TEST(ModelSpecCohere, CommandRPlusPerHeadQkNorm) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["CohereForCausalLM"], "attention_bias": false,
    "bos_token_id": 5, "eos_token_id": 255001, "hidden_act": "silu", "hidden_size": 12288,
    "intermediate_size": 33792, "layer_norm_eps": 1e-05, "logit_scale": 0.8333333333333334,
    "max_position_embeddings": 8192, "model_type": "cohere", "num_attention_heads": 96, "num_hidden_layers": 64,
    "num_key_value_heads": 8, "pad_token_id": 0, "rope_theta": 75000000.0, "torch_dtype": "float16",
    "use_qk_norm": true, "vocab_size": 256000})");
  const ModelSpec s = parse(c);
  EXPECT_TRUE(s.qk_norm && s.qk_norm_per_head && s.norm_centered);
  EXPECT_EQ(s.head_dim, 128);
  const auto slots = abl::model::layer_slots(s, 0);
  const auto find = [&](abl::model::WeightRole role) {
    return *std::find_if(slots.begin(), slots.end(), [&](const auto& x) { return x.role == role; });
  };
  EXPECT_EQ(find(abl::model::WeightRole::q_norm).pattern, "model.layers.{}.self_attn.q_norm.weight");
  EXPECT_EQ(find(abl::model::WeightRole::q_norm).shape, (std::vector<int64_t>{96, 128}));
  EXPECT_EQ(find(abl::model::WeightRole::k_norm).shape, (std::vector<int64_t>{8, 128}));
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"q/k norm per head", "LayerNorms (no bias)"}));
  // 103.8 B (published: 104 B): 64 layers of 1,572,889,600 (the q/k norms 13,312 each) and the tied embedding
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{103810674688});
}

// Seed-OSS-36B-Instruct's config.json (the published numbers, written for this test): Llama with
// q/k/v biases (attention_bias, SeedOssConfig's default true) and none on o_proj (attention_out_bias
// false), head_dim 128 beside hidden 5120 / 80 heads; 36.15 B parameters ("36B").
TEST(ModelSpecSeedOss, PublishedConfigAndItsTwoBiasKeys) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["SeedOssForCausalLM"], "attention_bias": true,
    "attention_dropout": 0.1, "attention_out_bias": false, "bos_token_id": 0, "eos_token_id": 2, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 5120, "intermediate_size": 27648, "max_position_embeddings": 524288,
    "mlp_bias": false, "model_type": "seed_oss", "num_attention_heads": 80, "num_hidden_layers": 64,
    "num_key_value_heads": 8, "pad_token_id": 1, "residual_dropout": 0.1, "rms_norm_eps": 1e-06,
    "rope_scaling": {"rope_type": "default"}, "rope_theta": 10000000.0, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16", "vocab_size": 155136})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_FALSE(s.o_bias || s.mlp_bias || s.tied_embeddings);
  EXPECT_EQ(s.q_dim(), 10240);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e7);
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{36151104512});
  c.erase("attention_bias");  // SeedOssConfig's default: true
  c["attention_out_bias"] = true;
  c["mlp_bias"] = true;
  s = parse(c);
  EXPECT_TRUE(s.qkv_bias && s.o_bias && s.mlp_bias);
  c["attention_bias"] = false;
  s = parse(c);
  EXPECT_FALSE(s.qkv_bias);
  EXPECT_TRUE(s.o_bias);
}

// Llama's attention_bias (q/k/v_proj and o_proj, LlamaAttention) and mlp_bias (gate/up/down_proj,
// LlamaMLP) load as biases; families whose MLP has no biases refuse mlp_bias naming the key and the
// architectures that take it.
TEST(ModelSpecBiases, LlamaAttentionAndMlpBiases) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "vocab_size": 256, "attention_bias": true, "mlp_bias": true})");
  const ModelSpec s = parse(c);
  EXPECT_TRUE(s.qkv_bias && s.o_bias && s.mlp_bias);
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& slot : abl::model::layer_slots(s, 0)) {
    names.push_back(slot.pattern);
    shapes.push_back(slot.shape);
  }
  for (const char* name : {"q_proj.bias", "k_proj.bias", "v_proj.bias", "o_proj.bias"}) {
    EXPECT_EQ(std::count(names.begin(), names.end(), std::string("model.layers.{}.self_attn.") + name), 1) << name;
  }
  const auto at = [&](const std::string& n) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), n) - names.begin());
  };
  ASSERT_LT(at("model.layers.{}.mlp.down_proj.bias"), names.size());
  EXPECT_EQ(shapes[at("model.layers.{}.mlp.gate_proj.bias")], std::vector<int64_t>{96});
  EXPECT_EQ(shapes[at("model.layers.{}.mlp.up_proj.bias")], std::vector<int64_t>{96});
  EXPECT_EQ(shapes[at("model.layers.{}.mlp.down_proj.bias")], std::vector<int64_t>{64});
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"qkv bias", "o_proj bias", "MLP biases"}));

  nlohmann::json m = c;
  m["architectures"] = {"MistralForCausalLM"};
  EXPECT_TRUE(abl::testing::contains_all(error_of(m), {"my/config.json", "'mlp_bias'", "MistralForCausalLM",
                                                       "LlamaForCausalLM"}));
  m.erase("mlp_bias");
  EXPECT_FALSE(parse(m).qkv_bias);  // MistralAttention has no biases whatever attention_bias says
}

// Qwen2.5-VL's released config is flat (no text_config) with rope_scaling type "mrope"; Qwen3-VL's
// has a text_config whose rope_scaling is "default" with interleaved mrope sections. For text both
// are the plain RoPE (all three position rows equal); the shapes are the published 7B/8B ones.
TEST(ModelSpecQwenVl, FlatAndNestedConfigsAndTheirRope) {
  nlohmann::json q25 = nlohmann::json::parse(R"({"architectures": ["Qwen2_5_VLForConditionalGeneration"],
    "bos_token_id": 151643, "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 3584,
    "intermediate_size": 18944, "max_position_embeddings": 128000, "max_window_layers": 28,
    "model_type": "qwen2_5_vl", "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16", "use_sliding_window": false, "vocab_size": 152064,
    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
    "vision_config": {"depth": 32, "hidden_size": 1280, "out_hidden_size": 3584}})");
  ModelSpec s = parse(q25);
  EXPECT_TRUE(s.multimodal);
  EXPECT_EQ(s.num_layers, 28);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(s.max_position_embeddings, 128000);
  EXPECT_EQ(abl::model::parameter_count(s), 7615616512);  // the language model of Qwen2.5-VL-7B (= Qwen2.5-7B)

  nlohmann::json q3 = nlohmann::json::parse(R"({"architectures": ["Qwen3VLForConditionalGeneration"],
    "model_type": "qwen3_vl", "tie_word_embeddings": false, "text_config": {"attention_bias": false,
    "bos_token_id": 151643, "dtype": "bfloat16", "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "intermediate_size": 12288, "max_position_embeddings": 262144,
    "model_type": "qwen3_vl_text", "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06, "rope_scaling": {"mrope_interleaved": true, "mrope_section": [24, 20, 20],
    "rope_type": "default"}, "rope_theta": 5000000, "vocab_size": 151936}})");
  s = parse(q3);
  EXPECT_TRUE(s.qk_norm);
  EXPECT_FALSE(s.qkv_bias);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_DOUBLE_EQ(s.rope_theta, 5e6);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_EQ(s.eos_token_ids, std::vector<int64_t>{151645});
  q3["text_config"]["attention_bias"] = true;  // Qwen3VLTextAttention: q/k/v and o_proj biases
  s = parse(q3);
  EXPECT_TRUE(s.qkv_bias && s.o_bias);
}

// SmolLM3: no_rope_layers as listed (the released config lists all 36), else a NoPE layer every
// no_rope_layer_interval-th; with use_sliding_window and a window, the NoPE layers slide.
TEST(ModelSpecSmolLM3, NopeLayersListedOrByInterval) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["SmolLM3ForCausalLM"], "hidden_size": 2048,
    "intermediate_size": 11008, "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 4,
    "vocab_size": 128256})");
  ModelSpec s = parse(c);
  EXPECT_DOUBLE_EQ(s.rope_theta, 2e6);
  EXPECT_TRUE(s.tied_embeddings);
  for (int64_t l = 0; l < 8; ++l) EXPECT_EQ(s.uses_rope(l), (l + 1) % 4 != 0) << l;
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_NE(abl::model::describe(s).find("(no RoPE on 2/8 layers)"), std::string::npos) << abl::model::describe(s);
  c["no_rope_layers"] = {1, 0, 1, 1, 1, 1, 1, 1, 0};  // longer than L is allowed, as in transformers
  s = parse(c);
  EXPECT_FALSE(s.uses_rope(1));
  EXPECT_TRUE(s.uses_rope(3));
  EXPECT_TRUE(s.uses_rope(7));
  c["use_sliding_window"] = true;
  c["sliding_window"] = 64;
  s = parse(c);
  EXPECT_EQ(s.sliding_window, 64);
  for (int64_t l = 0; l < 8; ++l) EXPECT_EQ(s.uses_sliding_window(l), l == 1) << l;
  c["no_rope_layers"] = {1, 0};
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"my/config.json", "no_rope_layers", "2 layers", "8"}));
  c["attention_bias"] = true;  // SmolLM3Attention and SmolLM3MLP are Llama's: biases on all seven
  c["mlp_bias"] = true;
  c.erase("no_rope_layers");
  s = parse(c);
  EXPECT_TRUE(s.qkv_bias && s.o_bias && s.mlp_bias);
}

TEST(ModelSpecFamilies, RefusedOptionsNameTheKey) {
  nlohmann::json gemma = fixture_config("gemma-2-2b-it");
  gemma["hidden_activation"] = "gelu";
  EXPECT_TRUE(abl::testing::contains_all(error_of(gemma), {"my/config.json", "'hidden_activation'", "'gelu'"}));
  gemma = fixture_config("gemma-2-2b-it");
  gemma["layer_types"] = {"sliding_attention"};
  EXPECT_TRUE(abl::testing::contains_all(error_of(gemma), {"my/config.json", "layer_types", "26 layers"}));
  nlohmann::json g3 = gemma3_text();
  g3["sliding_window_pattern"] = 0;
  EXPECT_TRUE(abl::testing::contains_all(error_of(g3), {"my/config.json", "sliding_window_pattern"}));
}

TEST(ModelSpecFamilies, DescribeNamesTheFeatures) {
  const std::string d = abl::model::describe(parse(fixture_config("gemma-2-2b-it")));
  EXPECT_TRUE(abl::testing::contains_all(
      d, {"Gemma2ForCausalLM", "(1+w) norms", "sandwich norms", "GeGLU", "softcap 50/30", "13/26 layers"}))
      << d;
}

// DeepSeek-V3's config.json as released (tests/fixtures/configs/DeepSeek-V3.json, without its
// quantization_config; models/deepseek_v3: DeepseekV3Config, DeepseekV3Attention): latent attention with
// q/k heads of 128 + 64 and value heads of 128, the score scale 192^-0.5 times
// yarn_get_mscale(40, mscale_all_dim 1)² = 0.135234, GLM-4.5's sigmoid router, 3 dense layers.
nlohmann::json deepseek_v3() { return fixture_config("DeepSeek-V3"); }

TEST(ModelSpecDeepseek, V3PublishedConfig) {
  const ModelSpec s = parse(deepseek_v3());
  EXPECT_TRUE(s.mla);
  EXPECT_EQ(s.head_dim, 192);
  EXPECT_EQ(s.partial_rotary_dim, 64);
  EXPECT_EQ(s.v_head(), 128);
  EXPECT_EQ(s.o_dim(), 128 * 128);
  EXPECT_EQ(s.q_lora_rank, 1536);
  EXPECT_EQ(s.kv_lora_rank, 512);
  EXPECT_TRUE(s.rope_interleaved);
  EXPECT_DOUBLE_EQ(s.latent_norm_eps, 1e-6);
  EXPECT_NEAR(s.attention_scale(), 0.135234, 5e-7);
  EXPECT_DOUBLE_EQ(s.rope_scaling.attention_factor, 1.0);  // mscale(40, 1) / mscale(40, 1)
  EXPECT_TRUE(s.router_sigmoid);
  EXPECT_EQ(s.expert_groups, 8);
  EXPECT_EQ(s.topk_groups, 4);
  EXPECT_EQ(s.shared_expert_intermediate_size, 2048);
  EXPECT_FALSE(s.shared_expert_gated);
  EXPECT_EQ(s.mtp_layers, 1);
  EXPECT_FALSE(s.is_moe_layer(2));
  EXPECT_TRUE(s.is_moe_layer(3));
  // The attention's tensors, in module order, with their shapes.
  std::vector<std::pair<std::string, std::vector<int64_t>>> attn;
  for (const auto& slot : abl::model::layer_slots(s, 0)) {
    if (slot.pattern.find("self_attn.") != std::string::npos) attn.emplace_back(slot.pattern, slot.shape);
  }
  const std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
      {"model.layers.{}.self_attn.q_a_proj.weight", {1536, 7168}},
      {"model.layers.{}.self_attn.q_a_layernorm.weight", {1536}},
      {"model.layers.{}.self_attn.q_b_proj.weight", {128 * 192, 1536}},
      {"model.layers.{}.self_attn.kv_a_proj_with_mqa.weight", {576, 7168}},
      {"model.layers.{}.self_attn.kv_a_layernorm.weight", {512}},
      {"model.layers.{}.self_attn.kv_b_proj.weight", {128 * 256, 512}},
      {"model.layers.{}.self_attn.o_proj.weight", {7168, 128 * 128}}};
  EXPECT_EQ(attn, want);
  const std::string d = abl::model::describe(s);
  EXPECT_TRUE(abl::testing::contains_all(d, {"DeepseekV3ForCausalLM", "latent attention (q rank 1536, kv rank 512, "
                                                                      "value heads 128)",
                                             "on the last 64/192 head dims", "best 4 of 8 groups"}))
      << d;
}

// Absent keys take DeepseekV3Config's defaults; a null q_lora_rank is a plain q_proj (Moonlight,
// DeepSeek-V2-Lite); a head_dim key (transformers writes qk_rope_head_dim there) is not the q/k head;
// an unscaled rope keeps 192^-0.5; rope_interleave false pairs (i, i + R/2).
TEST(ModelSpecDeepseek, DefaultsQProjAndHeadDimKey) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["DeepseekV3ForCausalLM"]})");
  ModelSpec s = parse(c);
  EXPECT_EQ(s.hidden_size, 7168);
  EXPECT_EQ(s.num_kv_heads, 128);
  EXPECT_EQ(s.num_experts, 256);
  EXPECT_EQ(s.head_dim, 192);
  EXPECT_NEAR(s.attention_scale(), 1.0 / std::sqrt(192.0), 1e-15);
  c["q_lora_rank"] = nullptr;
  c["head_dim"] = 64;
  c["rope_interleave"] = false;
  c["hidden_size"] = 2048;
  c["num_attention_heads"] = 16;
  c["num_key_value_heads"] = 16;
  s = parse(c);
  EXPECT_EQ(s.q_lora_rank, 0);
  EXPECT_EQ(s.head_dim, 192);
  EXPECT_FALSE(s.rope_interleaved);
  const auto slots = abl::model::layer_slots(s, 0);
  EXPECT_EQ(slots[1].pattern, "model.layers.{}.self_attn.q_proj.weight");
  EXPECT_EQ(slots[1].shape, (std::vector<int64_t>{16 * 192, 2048}));
  // transformers 5 spelling: rope_parameters; a default rope type leaves the scale alone
  c["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 32.0}, {"mscale_all_dim", 1.0}, {"mscale", 1.0},
                          {"beta_fast", 1.0}, {"beta_slow", 1.0}, {"original_max_position_embeddings", 4096},
                          {"rope_theta", 50000.0}};
  s = parse(c);
  EXPECT_NEAR(s.attention_scale(), std::pow(0.1 * std::log(32.0) + 1.0, 2) / std::sqrt(192.0), 1e-12);
  EXPECT_DOUBLE_EQ(s.rope_theta, 50000.0);
  c["rope_parameters"] = {{"rope_type", "default"}, {"mscale_all_dim", 1.0}, {"rope_theta", 50000.0}};
  EXPECT_NEAR(parse(c).attention_scale(), 1.0 / std::sqrt(192.0), 1e-15);
}

// What latent attention cannot be, or what transformers would run differently from what the config
// says, is refused naming the key.
TEST(ModelSpecDeepseek, RefusalsNameTheKey) {
  nlohmann::json c = deepseek_v3();
  c["num_key_value_heads"] = 8;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "num_key_value_heads", "8 differs from num_attention_heads 128");
  c = deepseek_v3();
  c["attention_bias"] = true;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "attention_bias");
  c = deepseek_v3();
  c["topk_method"] = "group_limited_greedy";
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "topk_method", "group_limited_greedy", "noaux_tc");
  c = deepseek_v3();
  c["scoring_func"] = "softmax";
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "scoring_func", "softmax");
  c = deepseek_v3();
  c["moe_layer_freq"] = 2;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "moe_layer_freq");
  c = deepseek_v3();
  c["qk_rope_head_dim"] = 7;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "qk_rope_head_dim", "even");
  c = deepseek_v3();
  c["kv_lora_rank"] = 0;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "kv_lora_rank");
}

// DeepSeek-V3/R1 and Kimi-K2 ship FP8 (quantization_config quant_method fp8, e4m3, blocks of 128 x 128):
// the block size is taken; another format or no block size is refused naming the key; other methods are
// left to the weight check (gpt-oss's mxfp4 has its own reader).
TEST(ModelSpecDeepseek, Fp8QuantizationConfig) {
  nlohmann::json c = deepseek_v3();
  c["quantization_config"] = {{"activation_scheme", "dynamic"}, {"fmt", "e4m3"}, {"quant_method", "fp8"},
                              {"weight_block_size", {128, 128}}};
  ModelSpec s = parse(c);
  EXPECT_EQ(s.fp8_block_rows, 128);
  EXPECT_EQ(s.fp8_block_cols, 128);
  c["quantization_config"]["fmt"] = "e5m2";
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "quantization_config.fmt", "e5m2");
  c["quantization_config"]["fmt"] = "e4m3";
  c["quantization_config"].erase("weight_block_size");
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "quantization_config", "weight_block_size");
  c["quantization_config"]["weight_block_size"] = {128};
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "weight_block_size", "two positive block sizes");
  c["quantization_config"] = {{"quant_method", "mxfp4"}};
  EXPECT_EQ(parse(c).fp8_block_rows, 0);
}

// OLMo 2 (models/olmo2 Olmo2DecoderLayer, Olmo2Attention): a config as OLMo-2-1124-7B's (recalled,
// not checked against the Hub) loads with no input norms, the two output norms, and q/k norms over
// the whole projection; Olmo2Config's defaults fill absent keys (rms_norm_eps 1e-5).
TEST(ModelSpecOlmo2, PostNormsAndFullWidthQkNorms) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Olmo2ForCausalLM"], "attention_bias": false,
    "attention_dropout": 0.0, "eos_token_id": 100257, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 11008, "max_position_embeddings": 4096, "model_type": "olmo2",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32, "pad_token_id": 100277,
    "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 500000, "tie_word_embeddings": false,
    "torch_dtype": "float32", "use_cache": true, "vocab_size": 100352})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.sandwich_norms && s.qk_norm && s.qk_norm_full);
  EXPECT_FALSE(s.input_norms || s.qkv_bias || s.o_bias || s.tied_embeddings || s.qk_norm_per_head);
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{7298617344});
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& slot : abl::model::layer_slots(s, 0)) {
    names.push_back(slot.pattern);
    shapes.push_back(slot.shape);
  }
  const auto shape_of = [&](const std::string& n) {
    const auto it = std::find(names.begin(), names.end(), "model.layers.{}." + n);
    return it == names.end() ? std::vector<int64_t>{-1} : shapes[static_cast<size_t>(it - names.begin())];
  };
  EXPECT_EQ(shape_of("self_attn.q_norm.weight"), std::vector<int64_t>{4096});
  EXPECT_EQ(shape_of("self_attn.k_norm.weight"), std::vector<int64_t>{4096});
  EXPECT_EQ(shape_of("post_attention_layernorm.weight"), std::vector<int64_t>{4096});
  EXPECT_EQ(shape_of("post_feedforward_layernorm.weight"), std::vector<int64_t>{4096});
  EXPECT_EQ(shape_of("input_layernorm.weight"), std::vector<int64_t>{-1});
  EXPECT_EQ(shape_of("pre_feedforward_layernorm.weight"), std::vector<int64_t>{-1});
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s),
                                         {"q/k norm over all heads", "output norms only (no input norms)"}));
  // OLMo-2-0325-32B's GQA: the k norm is as wide as k_proj's output.
  c["num_key_value_heads"] = 8;
  c["hidden_size"] = 5120;
  c["num_attention_heads"] = 40;
  s = parse(c);
  names.clear();
  shapes.clear();
  for (const auto& slot : abl::model::layer_slots(s, 0)) {
    names.push_back(slot.pattern);
    shapes.push_back(slot.shape);
  }
  EXPECT_EQ(shape_of("self_attn.k_norm.weight"), std::vector<int64_t>{1024});
  c.erase("rms_norm_eps");
  c["attention_bias"] = true;
  s = parse(c);
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-5);
  EXPECT_TRUE(s.qkv_bias && s.o_bias);
}

// OLMo 3 (models/olmo3 Olmo3Config, Olmo3Attention, Olmo3Model): a config as Olmo-3-1025-7B's
// (recalled, not checked against the Hub; the legacy rope_theta / rope_scaling spelling that
// transformers 4.57 writes). OLMo 2's layers; 3 of 4 layers slide; YaRN on the full-attention
// layers only: the sliding ones rotate with the default RoPE at rope_theta (uses_local_rope).
TEST(ModelSpecOlmo3, SlidingLayersTakeUnscaledRope) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Olmo3ForCausalLM"], "attention_bias": false,
    "attention_dropout": 0.0, "eos_token_id": 100257, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 11008, "max_position_embeddings": 65536, "model_type": "olmo3",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32, "pad_token_id": 100277,
    "rms_norm_eps": 1e-06, "rope_scaling": {"attention_factor": 1.2079441541679836, "beta_fast": 32,
    "beta_slow": 1, "factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "yarn"},
    "rope_theta": 500000, "sliding_window": 4096, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
    "use_cache": true, "vocab_size": 100278})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.sandwich_norms && s.qk_norm && s.qk_norm_full);
  EXPECT_FALSE(s.input_norms || s.qkv_bias || s.o_bias || s.tied_embeddings);
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{7298011136});
  EXPECT_EQ(s.rope_scaling.type, abl::model::RopeScaling::Type::yarn);
  EXPECT_DOUBLE_EQ(s.rope_scaling.attention_factor, 1.2079441541679836);
  EXPECT_EQ(s.sliding_window, 4096);
  ASSERT_EQ(s.sliding_layers.size(), 32u);
  for (int64_t l = 0; l < 32; ++l) {
    const bool slides = (l + 1) % 4 != 0;
    EXPECT_EQ(s.uses_sliding_window(l), slides) << l;
    EXPECT_EQ(s.uses_local_rope(l), slides) << l;
  }
  EXPECT_DOUBLE_EQ(s.rope_local_theta, 500000.0);
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s),
                                         {"yarn x8", "local layers theta 500000", "sliding window 4096 on 24/32 layers"}));
  // layer_types as listed wins over the pattern.
  c["num_hidden_layers"] = 4;
  c["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "sliding_attention"};
  s = parse(c);
  EXPECT_TRUE(!s.uses_local_rope(0) && s.uses_local_rope(1) && !s.uses_local_rope(2) && s.uses_local_rope(3));
  c["layer_types"] = {"full_attention", "sliding_attention"};
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "layer_types", "one type per layer");
  c.erase("layer_types");
  // transformers 5's spelling: rope_parameters per layer type, the sliding base its own; absent keys
  // take Olmo3Config's defaults (rope_theta 5e5, sliding_window 4096, rms_norm_eps 1e-5).
  c.erase("rope_scaling");
  c.erase("rope_theta");
  c.erase("sliding_window");
  c.erase("rms_norm_eps");
  c["rope_parameters"] = {{"full_attention", {{"rope_type", "yarn"}, {"factor", 4.0}, {"rope_theta", 1e6},
                                              {"original_max_position_embeddings", 4096}}},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 1e4}}}};
  s = parse(c);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(s.rope_local_theta, 1e4);
  EXPECT_EQ(s.sliding_window, 4096);
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-5);
  EXPECT_NEAR(s.rope_scaling.attention_factor, 0.1 * std::log(4.0) + 1.0, 1e-12);
  // a sliding entry without a base takes the model's (Olmo3Config's default 5e5 here)
  c["rope_parameters"]["sliding_attention"].erase("rope_theta");
  EXPECT_DOUBLE_EQ(parse(c).rope_local_theta, 500000.0);
  // scaling on the sliding layers is what OLMo 3 does not do: refused, naming the key
  c["rope_parameters"]["sliding_attention"] = {{"rope_type", "yarn"}, {"factor", 4.0},
                                                {"original_max_position_embeddings", 4096}};
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "sliding_attention", "default one");
  // a single rope_parameters block (no per-type split) scales the full-attention layers only
  c["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"rope_theta", 1e6},
                          {"original_max_position_embeddings", 4096}};
  s = parse(c);
  EXPECT_EQ(s.rope_scaling.type, abl::model::RopeScaling::Type::yarn);
  EXPECT_DOUBLE_EQ(s.rope_local_theta, 1e6);
  // sliding_window null: no window, the sliding layers still rotate unscaled
  c["sliding_window"] = nullptr;
  s = parse(c);
  EXPECT_FALSE(s.uses_sliding_window(0));
  EXPECT_TRUE(s.uses_local_rope(0));
}

// DeepSeek-V2-Lite's config.json (recalled, not checked against the Hub; models/deepseek_v2
// DeepseekV2Config, DeepseekV2Attention, DeepseekV2Moe): V3's latent attention with a plain q_proj, the
// rotated dims in adjacent pairs, yarn x40 with mscale = mscale_all_dim 0.707 (cos/sin x1, scores x
// 192^-0.5 x mscale(40, 0.707)²); a softmax router, greedy top-6 of 64, not renormalised, 2 shared experts.
nlohmann::json deepseek_v2_lite() {
  return nlohmann::json::parse(R"({"architectures": ["DeepseekV2ForCausalLM"], "attention_bias": false,
    "attention_dropout": 0.0, "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV2Config",
    "AutoModel": "modeling_deepseek.DeepseekV2Model", "AutoModelForCausalLM": "modeling_deepseek.DeepseekV2ForCausalLM"},
    "aux_loss_alpha": 0.001, "bos_token_id": 100000, "eos_token_id": 100001, "first_k_dense_replace": 1,
    "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 10944,
    "kv_lora_rank": 512, "max_position_embeddings": 163840, "model_type": "deepseek_v2", "moe_intermediate_size": 1408,
    "moe_layer_freq": 1, "n_group": 1, "n_routed_experts": 64, "n_shared_experts": 2, "norm_topk_prob": false,
    "num_attention_heads": 16, "num_experts_per_tok": 6, "num_hidden_layers": 27, "num_key_value_heads": 16,
    "pretraining_tp": 1, "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-06,
    "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707,
    "original_max_position_embeddings": 4096, "type": "yarn"}, "rope_theta": 10000, "routed_scaling_factor": 1.0,
    "scoring_func": "softmax", "seq_aux": true, "tie_word_embeddings": false, "topk_group": 1, "topk_method": "greedy",
    "torch_dtype": "bfloat16", "transformers_version": "4.33.1", "use_cache": true, "v_head_dim": 128,
    "vocab_size": 102400})");
}

TEST(ModelSpecDeepseek, V2LiteSoftmaxRouter) {
  nlohmann::json c = deepseek_v2_lite();
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.mla && s.rope_interleaved);
  EXPECT_EQ(s.q_lora_rank, 0);
  EXPECT_EQ(s.head_dim, 192);
  EXPECT_EQ(s.v_head(), 128);
  const double mscale = 0.1 * 0.707 * std::log(40.0) + 1.0;
  EXPECT_NEAR(s.attention_scale(), mscale * mscale / std::sqrt(192.0), 1e-12);
  EXPECT_DOUBLE_EQ(s.rope_scaling.attention_factor, 1.0);
  EXPECT_FALSE(s.router_sigmoid || s.norm_topk_prob || s.router_group_max);
  EXPECT_EQ(s.expert_groups, 1);
  EXPECT_EQ(s.num_experts, 64);
  EXPECT_EQ(s.experts_per_token, 6);
  EXPECT_EQ(s.shared_expert_intermediate_size, 2 * 1408);
  EXPECT_FALSE(s.shared_expert_gated);
  EXPECT_FALSE(s.is_moe_layer(0));
  EXPECT_TRUE(s.is_moe_layer(1));
  // no e_score_correction_bias: the router is mlp.gate.weight alone
  for (const auto& slot : abl::model::layer_slots(s, 1)) {
    EXPECT_EQ(slot.pattern.find("e_score_correction_bias"), std::string::npos) << slot.pattern;
  }
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{15706484224});
  // DeepSeek-V2 / V2.5: q rank 1536, group_limited_greedy (8 groups, the best 3 by their best expert) x16
  c["q_lora_rank"] = 1536;
  c["topk_method"] = "group_limited_greedy";
  c["n_group"] = 8;
  c["topk_group"] = 3;
  c["n_routed_experts"] = 160;
  c["routed_scaling_factor"] = 16.0;
  s = parse(c);
  EXPECT_TRUE(s.router_group_max);
  EXPECT_EQ(s.expert_groups, 8);
  EXPECT_EQ(s.topk_groups, 3);
  EXPECT_DOUBLE_EQ(s.routed_scaling_factor, 16.0);
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s),
                                         {"DeepseekV2ForCausalLM", "softmax router (best 3 of 8 groups by their best expert) x16",
                                          "latent attention (q rank 1536"}))
      << abl::model::describe(s);
  // refusals name the key
  c = deepseek_v2_lite();
  c["norm_topk_prob"] = true;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "norm_topk_prob", "renormalises");
  c = deepseek_v2_lite();
  c["topk_method"] = "noaux_tc";
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "topk_method", "noaux_tc", "greedy or group_limited_greedy");
  c = deepseek_v2_lite();
  c["scoring_func"] = "sigmoid";
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "scoring_func", "sigmoid");
  c = deepseek_v2_lite();
  c["topk_method"] = "group_limited_greedy";
  c["n_group"] = 3;  // 64 experts do not split into 3 groups
  c["topk_group"] = 1;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "n_group", "3 groups of 64 experts");
  c = deepseek_v2_lite();
  c.erase("num_experts_per_tok");  // DeepseekV2Config's default None would fail in transformers' topk
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "num_experts_per_tok");
  c = deepseek_v2_lite();
  c["num_key_value_heads"] = 8;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "num_key_value_heads");
}

// OLMoE-1B-7B-0924 (models/olmoe OlmoeAttention, OlmoeSparseMoeBlock; config recalled, not checked against
// the Hub): Llama's input norms kept, q/k norms over the whole projections, every layer MoE with a softmax
// router, top-8 of 64 not renormalised, experts as wide as intermediate_size. 6.92 B parameters, 1.28 B
// active: the paper's "6.9B total, 1.3B active".
TEST(ModelSpecOlmoe, PreNormLayersFullWidthQkNormsAndExperts) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["OlmoeForCausalLM"], "attention_bias": false,
    "attention_dropout": 0.0, "clip_qkv": null, "eos_token_id": 50279, "hidden_act": "silu", "hidden_size": 2048,
    "initializer_range": 0.02, "intermediate_size": 1024, "max_position_embeddings": 4096, "model_type": "olmoe",
    "norm_topk_prob": false, "num_attention_heads": 16, "num_experts": 64, "num_experts_per_tok": 8,
    "num_hidden_layers": 16, "num_key_value_heads": 16, "output_router_logits": false, "pad_token_id": 1,
    "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000, "router_aux_loss_coef": 0.01,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 50304})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.input_norms && s.qk_norm && s.qk_norm_full);
  EXPECT_FALSE(s.sandwich_norms || s.router_sigmoid || s.norm_topk_prob);
  EXPECT_EQ(s.num_experts, 64);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.moe_intermediate_size, 1024);
  EXPECT_EQ(s.shared_expert_intermediate_size, 0);
  for (int64_t l = 0; l < 16; ++l) EXPECT_TRUE(s.is_moe_layer(l)) << l;
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{6919161856});
  EXPECT_EQ(abl::model::active_parameter_count(s), int64_t{1282017280});
  std::vector<std::pair<std::string, std::vector<int64_t>>> got;
  for (const auto& slot : abl::model::layer_slots(s, 0)) got.emplace_back(slot.pattern, slot.shape);
  const auto has = [&](const std::string& n, std::vector<int64_t> shape) {
    return std::find(got.begin(), got.end(), std::make_pair("model.layers.{}." + n, shape)) != got.end();
  };
  EXPECT_TRUE(has("input_layernorm.weight", {2048}));
  EXPECT_TRUE(has("self_attn.q_norm.weight", {2048}));
  EXPECT_TRUE(has("self_attn.k_norm.weight", {2048}));
  EXPECT_TRUE(has("mlp.gate.weight", {64, 2048}));
  // GQA: k_norm as wide as k_proj's output; absent keys take OlmoeConfig's defaults
  c["num_key_value_heads"] = 4;
  c.erase("num_experts");
  c.erase("norm_topk_prob");
  s = parse(c);
  EXPECT_EQ(s.num_experts, 64);
  for (const auto& slot : abl::model::layer_slots(s, 0)) {
    if (slot.pattern == "model.layers.{}.self_attn.k_norm.weight") {
      EXPECT_EQ(slot.shape, std::vector<int64_t>{512});
    }
  }
  c["norm_topk_prob"] = true;
  EXPECT_TRUE(parse(c).norm_topk_prob);
  c["clip_qkv"] = 8.0;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "clip_qkv", "not supported");
  c["clip_qkv"] = nullptr;
  c["head_dim"] = 64;  // q_norm is hidden_size wide: a q_proj of 16 x 64 would not fit it
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "head_dim", "hidden_size 2048");
}

// MiniMax-M2 (models/minimax_m2; config.json as a stored copy of MiniMaxAI/MiniMax-M2's, its FP8
// quantization_config aside): Mixtral's layers and experts with OLMo 2's whole-projection q/k norms,
// RoPE on rotary_dim 64 of each 128-dim head, a sigmoid router picking by score + correction bias and
// renormalising. 228.7 B parameters, 11.0 B active (9.8 B without the embeddings: the published
// "230B total, 10B activated").
nlohmann::json minimax_m2() {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["MiniMaxM2ForCausalLM"],
    "auto_map": {"AutoConfig": "configuration_minimax_m2.MiniMaxM2Config",
                 "AutoModelForCausalLM": "modeling_minimax_m2.MiniMaxM2ForCausalLM"},
    "head_dim": 128, "hidden_act": "silu", "hidden_size": 3072, "intermediate_size": 1536,
    "max_position_embeddings": 196608, "model_type": "minimax_m2", "mtp_transformer_layers": 1,
    "num_attention_heads": 48, "num_experts_per_tok": 8, "num_hidden_layers": 62, "num_key_value_heads": 8,
    "num_local_experts": 256, "num_mtp_modules": 3, "qk_norm_type": "per_layer", "rms_norm_eps": 1e-06,
    "rope_theta": 5000000, "rotary_dim": 64, "scoring_func": "sigmoid", "shared_intermediate_size": 0,
    "tie_word_embeddings": false, "transformers_version": "4.46.1", "use_cache": true, "use_mtp": true,
    "use_qk_norm": true, "use_routing_bias": true, "vocab_size": 200064, "torch_dtype": "bfloat16"})");
  c["attn_type_list"] = std::vector<int>(62, 1);
  return c;
}

TEST(ModelSpecMiniMaxM2, ReleasedConfig) {
  nlohmann::json c = minimax_m2();
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.input_norms && s.qk_norm && s.qk_norm_full && s.router_sigmoid && s.norm_topk_prob);
  EXPECT_FALSE(s.qkv_bias || s.o_bias || s.rope_interleaved || s.sandwich_norms || s.qk_norm_per_head);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.q_dim(), 6144);
  EXPECT_EQ(s.rotary_dim(), 64);
  EXPECT_DOUBLE_EQ(s.rope_theta, 5e6);
  EXPECT_EQ(s.num_experts, 256);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.moe_intermediate_size, 1536);
  EXPECT_EQ(s.shared_expert_intermediate_size, 0);
  EXPECT_EQ(s.expert_groups, 1);
  EXPECT_DOUBLE_EQ(s.routed_scaling_factor, 1.0);
  for (int64_t l = 0; l < 62; ++l) EXPECT_TRUE(s.is_moe_layer(l)) << l;
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{228689764864});
  EXPECT_EQ(abl::model::active_parameter_count(s), int64_t{11030553088});
  std::vector<std::pair<std::string, std::vector<int64_t>>> got;
  for (const auto& slot : abl::model::layer_slots(s, 0)) got.emplace_back(slot.pattern, slot.shape);
  const auto has = [&](const std::string& n, std::vector<int64_t> shape) {
    return std::find(got.begin(), got.end(), std::make_pair("model.layers.{}." + n, shape)) != got.end();
  };
  EXPECT_TRUE(has("self_attn.q_norm.weight", {6144}));
  EXPECT_TRUE(has("self_attn.k_norm.weight", {1024}));
  EXPECT_TRUE(has("block_sparse_moe.gate.weight", {256, 3072}));
  EXPECT_TRUE(has("block_sparse_moe.e_score_correction_bias", {256}));
  EXPECT_TRUE(has("block_sparse_moe.experts.255.w2.weight", {3072, 1536}));
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"MiniMaxM2ForCausalLM", "q/k norm over all heads"}))
      << abl::model::describe(s);
  // transformers 5 writes partial_rotary_factor beside rotary_dim (and in rope_parameters); absent keys
  // take MiniMaxM2Config's defaults
  c["partial_rotary_factor"] = 0.5;
  EXPECT_EQ(parse(c).rotary_dim(), 64);
  c.erase("rotary_dim");
  c.erase("rope_theta");
  c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 5000000.0}, {"partial_rotary_factor", 0.25}};
  c.erase("partial_rotary_factor");
  c.erase("num_local_experts");
  s = parse(c);
  EXPECT_EQ(s.rotary_dim(), 32);
  EXPECT_DOUBLE_EQ(s.rope_theta, 5e6);
  EXPECT_EQ(s.num_experts, 256);
  // no rotary_dim and no factor: half of each head, MiniMaxM2Config's rotary_dim default (head_dim // 2)
  c = minimax_m2();
  c.erase("rotary_dim");
  EXPECT_EQ(parse(c).rotary_dim(), 64);
  c["rotary_dim"] = 128;
  EXPECT_EQ(parse(c).rotary_dim(), 128);
  // refusals name the key
  const std::vector<std::tuple<std::string, nlohmann::json, std::string>> refused = {
      {"use_qk_norm", false, "always applies"},
      {"qk_norm_type", "per_head", "per_layer"},
      {"scoring_func", "softmax", "sigmoid"},
      {"use_routing_bias", false, "e_score_correction_bias"},
      {"shared_intermediate_size", 1536, "no shared expert"},
      {"routed_scaling_factor", 2.5, "does not scale"},
      {"use_grouped_topk", true, "groups"},
      {"attn_window_size", 4096, "whole context"},
      {"rotary_dim", 63, "even"},
  };
  for (const auto& [key, value, says] : refused) {
    c = minimax_m2();
    c[key] = value;
    EXPECT_ABL_ERROR(parse(c), "my/config.json", key, says);
  }
  c = minimax_m2();
  c["attn_type_list"][7] = 0;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "attn_type_list", "layer 7", "lightning");
  c = minimax_m2();
  c["partial_rotary_factor"] = 0.25;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "rotary_dim", "disagrees", "rotates 32");
}

// MiniMax-M2's config.json has no token ids: generation stops at generation_config.json's eos, as in
// transformers' generate(), which takes that file's over config.json's wherever it gives one.
TEST(ModelSpecMiniMaxM2, EosFromGenerationConfig) {
  EXPECT_TRUE(parse(minimax_m2()).eos_token_ids.empty());
  const std::string golden = std::string(ABL_FIXTURE_DIR) + "/golden/";
  EXPECT_EQ(abl::model::load_model_spec(golden + "minimax-m2").eos_token_ids, std::vector<int64_t>{458});
  abl::testing::TempDir tmp;
  const std::string dir = tmp.file("m");
  nlohmann::json c = minimax_m2();
  c["vocab_size"] = 1000;
  const auto write = [&](const std::string& name, const nlohmann::json& j) { tmp.write("m/" + name, j.dump()); };
  write("config.json", c);
  write("generation_config.json", {{"eos_token_id", {7, 9}}});
  EXPECT_EQ(abl::model::load_model_spec(dir).eos_token_ids, (std::vector<int64_t>{7, 9}));
  write("generation_config.json", {{"eos_token_id", 1000}});
  EXPECT_ABL_ERROR(abl::model::load_model_spec(dir), "generation_config.json", "eos_token_id", "1000",
                   "vocab_size 1000");
  c["eos_token_id"] = 5;
  write("config.json", c);
  write("generation_config.json", {{"eos_token_id", {7, 9}}});
  EXPECT_EQ(abl::model::load_model_spec(dir).eos_token_ids, (std::vector<int64_t>{7, 9}));
  write("generation_config.json", {{"do_sample", false}});
  EXPECT_EQ(abl::model::load_model_spec(dir).eos_token_ids, std::vector<int64_t>{5});
}

// EXAONE-4.0-32B (models/exaone4 Exaone4Config, Exaone4Attention, Exaone4DecoderLayer = Olmo2DecoderLayer;
// config recalled, not checked against the Hub): OLMo 2's post-norm layers with per-head q/k norms, the
// string pattern "LLLG" (3 sliding layers with RoPE, then a full one without), llama3 RoPE scaling.
nlohmann::json exaone4_32b() {
  return nlohmann::json::parse(R"({"architectures": ["Exaone4ForCausalLM"], "attention_dropout": 0.0,
    "bos_token_id": 1, "eos_token_id": 361, "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120,
    "initializer_range": 0.02, "intermediate_size": 27392, "max_position_embeddings": 131072,
    "model_type": "exaone4", "num_attention_heads": 40, "num_hidden_layers": 64, "num_key_value_heads": 8,
    "pad_token_id": 0, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 16.0, "high_freq_factor": 4.0,
    "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 1000000, "sliding_window": 4096, "sliding_window_pattern": "LLLG", "tie_word_embeddings": false,
    "torch_dtype": "bfloat16", "transformers_version": "4.54.0", "use_cache": true, "vocab_size": 102400})");
}

TEST(ModelSpecExaone4, HybridAttentionWithGlobalNoPE) {
  nlohmann::json c = exaone4_32b();
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.sandwich_norms && s.qk_norm);
  EXPECT_FALSE(s.input_norms || s.qk_norm_full || s.qk_norm_per_head || s.qkv_bias || s.o_bias);
  EXPECT_EQ(s.sliding_window, 4096);
  for (int64_t l = 0; l < 64; ++l) {
    const bool local = l % 4 != 3;
    EXPECT_EQ(s.uses_sliding_window(l), local) << l;
    EXPECT_EQ(s.uses_rope(l), local) << l;
  }
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{32003216384});
  std::vector<std::pair<std::string, std::vector<int64_t>>> got;
  for (const auto& slot : abl::model::layer_slots(s, 0)) got.emplace_back(slot.pattern, slot.shape);
  const auto has = [&](const std::string& n, std::vector<int64_t> shape) {
    return std::find(got.begin(), got.end(), std::make_pair("model.layers.{}." + n, shape)) != got.end();
  };
  EXPECT_TRUE(has("self_attn.q_norm.weight", {128}));
  EXPECT_TRUE(has("post_attention_layernorm.weight", {5120}));
  EXPECT_TRUE(has("post_feedforward_layernorm.weight", {5120}));
  EXPECT_FALSE(has("input_layernorm.weight", {5120}));
  // layer_types wins over the pattern; an integer pattern as Exaone4Config.__post_init__; the last layer of
  // a string pattern is global whatever the pattern says
  c["layer_types"] = std::vector<std::string>(64, "full_attention");
  c["layer_types"][5] = "sliding_attention";
  s = parse(c);
  for (int64_t l = 0; l < 64; ++l) EXPECT_EQ(s.uses_rope(l), l == 5) << l;
  c.erase("layer_types");
  c["sliding_window_pattern"] = 2;
  s = parse(c);
  EXPECT_TRUE(s.uses_rope(0) && !s.uses_rope(1) && s.uses_rope(62) && !s.uses_rope(63));
  c["num_hidden_layers"] = 6;
  c["sliding_window_pattern"] = "L";
  s = parse(c);
  for (int64_t l = 0; l < 6; ++l) EXPECT_EQ(s.uses_sliding_window(l), l != 5) << l;
  // EXAONE-4.0-1.2B: no window, so every layer is full and rotates
  c = exaone4_32b();
  c["sliding_window"] = nullptr;
  c["sliding_window_pattern"] = nullptr;
  s = parse(c);
  for (int64_t l = 0; l < 64; ++l) EXPECT_TRUE(s.uses_rope(l) && !s.uses_sliding_window(l)) << l;
  // refusals name the key
  c = exaone4_32b();
  c["sliding_window_pattern"] = "LLXG";
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "sliding_window_pattern", "L (local) and G (global)");
  c["sliding_window_pattern"] = 0;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "sliding_window_pattern", "positive");
  c["sliding_window_pattern"] = nullptr;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "sliding_window_pattern", "layer_types");
  c = exaone4_32b();
  c["layer_types"] = std::vector<std::string>(64, "chunked_attention");
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "layer_types", "chunked_attention");
}

// ERNIE-4.5-21B-A3B-PT (models/ernie4_5_moe Ernie4_5_MoeConfig, Ernie4_5_MoeSparseMoeBlock; config recalled,
// not checked against the Hub): interleaved RoPE, a dense layer 0, then 64 experts top-6 chosen by softmax p +
// moe_statics.e_score_correction_bias (1, 64) with 2 shared experts. 21.83 B parameters, 3.35 B active.
nlohmann::json ernie45_21b() {
  return nlohmann::json::parse(R"({"architectures": ["Ernie4_5_MoeForCausalLM"], "bos_token_id": 1,
    "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 2560, "intermediate_size": 12288,
    "max_position_embeddings": 131072, "model_type": "ernie4_5_moe", "num_attention_heads": 20,
    "num_key_value_heads": 4, "num_hidden_layers": 28, "pad_token_id": 0, "rms_norm_eps": 1e-05, "use_cache": false,
    "vocab_size": 103424, "rope_theta": 500000, "use_bias": false, "moe_num_experts": 64,
    "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_intermediate_size": 1536,
    "moe_capacity": [64, 64, 64], "moe_gate": "topk", "moe_k": 6, "moe_layer_interval": 1,
    "moe_use_aux_free": true, "tie_word_embeddings": true, "torch_dtype": "bfloat16"})");
}

TEST(ModelSpecErnie45, MoeSoftmaxRouterWithCorrectionBias) {
  nlohmann::json c = ernie45_21b();
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.rope_interleaved && s.router_bias && s.norm_topk_prob && s.tied_embeddings);
  EXPECT_FALSE(s.router_sigmoid || s.shared_expert_gated || s.qkv_bias || s.o_bias || s.mlp_bias || s.qk_norm);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.num_experts, 64);
  EXPECT_EQ(s.experts_per_token, 6);
  EXPECT_EQ(s.shared_expert_intermediate_size, 2 * 1536);
  EXPECT_FALSE(s.is_moe_layer(0));
  for (int64_t l = 1; l < 28; ++l) EXPECT_TRUE(s.is_moe_layer(l)) << l;
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{21825437888});
  EXPECT_EQ(abl::model::active_parameter_count(s), int64_t{3352150208});
  std::vector<std::pair<std::string, std::vector<int64_t>>> got;
  for (const auto& slot : abl::model::layer_slots(s, 1)) got.emplace_back(slot.pattern, slot.shape);
  const auto has = [&](const std::string& n, std::vector<int64_t> shape) {
    return std::find(got.begin(), got.end(), std::make_pair("model.layers.{}." + n, shape)) != got.end();
  };
  EXPECT_TRUE(has("mlp.gate.weight", {64, 2560}));
  EXPECT_TRUE(has("mlp.moe_statics.e_score_correction_bias", {1, 64}));
  EXPECT_TRUE(has("mlp.shared_experts.down_proj.weight", {2560, 3072}));
  EXPECT_TRUE(has("mlp.experts.63.down_proj.weight", {2560, 1536}));
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"Ernie4_5_MoeForCausalLM", "softmax router with bias"}))
      << abl::model::describe(s);
  // the MoE-layer rule: every moe_layer_interval-th layer between the start and the end index
  c["moe_layer_start_index"] = 0;
  c["moe_layer_interval"] = 2;
  c["moe_layer_end_index"] = 20;
  s = parse(c);
  for (int64_t l = 0; l < 28; ++l) EXPECT_EQ(s.is_moe_layer(l), l % 2 == 1 && l <= 20) << l;
  // moe_use_aux_free false: no correction bias in the files (transformers' zeros)
  c = ernie45_21b();
  c["moe_use_aux_free"] = false;
  s = parse(c);
  EXPECT_FALSE(s.router_bias);
  for (const auto& slot : abl::model::layer_slots(s, 1)) {
    EXPECT_EQ(slot.pattern.find("e_score_correction_bias"), std::string::npos) << slot.pattern;
  }
  // refusals name the key
  c = ernie45_21b();
  c["use_bias"] = true;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "use_bias", "lm_head");
  c = ernie45_21b();
  c["moe_num_experts"] = {64, 64};
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "moe_num_experts", "ERNIE-4.5-VL");
  c = ernie45_21b();
  c["moe_layer_interval"] = 0;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "moe_layer_interval", "positive");
}

// ERNIE-4.5-0.3B-PT (models/ernie4_5 Ernie4_5Config): Llama with interleaved RoPE, head_dim 128, tied; use_bias
// puts biases on q/k/v/o and the MLP. 0.36 B parameters.
TEST(ModelSpecErnie45, Dense) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Ernie4_5ForCausalLM"], "bos_token_id": 1,
    "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 3072,
    "max_position_embeddings": 131072, "model_type": "ernie4_5", "num_attention_heads": 16,
    "num_key_value_heads": 2, "head_dim": 128, "num_hidden_layers": 18, "pad_token_id": 0, "rms_norm_eps": 1e-05,
    "use_cache": false, "vocab_size": 103424, "rope_theta": 500000, "tie_word_embeddings": true,
    "use_bias": false, "torch_dtype": "bfloat16"})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.rope_interleaved && s.tied_embeddings);
  EXPECT_FALSE(s.qkv_bias || s.o_bias || s.mlp_bias);
  EXPECT_DOUBLE_EQ(s.rope_theta, 5e5);
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{360748032});
  c["use_bias"] = true;
  c.erase("head_dim");  // Ernie4_5Config's default, 128
  c["hidden_size"] = 512;
  s = parse(c);
  EXPECT_TRUE(s.qkv_bias && s.o_bias && s.mlp_bias);
  EXPECT_EQ(s.head_dim, 128);
}

// Qwen3-Next-80B-A3B-Instruct's config.json (models/qwen3_next Qwen3NextConfig): no layer_types, so every
// 4th layer (full_attention_interval) is full attention and the others a gated delta rule; experts
// per expert in the files. 79.67 B parameters without the MTP layer.
nlohmann::json qwen3_next_80b() {
  return nlohmann::json::parse(R"({"architectures": ["Qwen3NextForCausalLM"], "attention_bias": false,
    "attention_dropout": 0.0, "bos_token_id": 151643, "decoder_sparse_step": 1, "eos_token_id": 151645,
    "full_attention_interval": 4, "head_dim": 256, "hidden_act": "silu", "hidden_size": 2048,
    "initializer_range": 0.02, "intermediate_size": 5120, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
    "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_value_head_dim": 128,
    "max_position_embeddings": 262144, "mlp_only_layers": [], "model_type": "qwen3_next",
    "moe_intermediate_size": 512, "norm_topk_prob": true, "num_attention_heads": 16, "num_experts": 512,
    "num_experts_per_tok": 10, "num_hidden_layers": 48, "num_key_value_heads": 2, "output_router_logits": false,
    "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 10000000,
    "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": 512, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16", "transformers_version": "4.57.0.dev0", "use_cache": true, "use_sliding_window": false,
    "vocab_size": 151936})");
}

TEST(ModelSpecQwen3Next, HybridLinearAttentionMoe) {
  nlohmann::json c = qwen3_next_80b();
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.norm_plus_one && s.qk_norm && s.attn_output_gate && s.linear_fused_projections && s.norm_topk_prob);
  EXPECT_TRUE(s.shared_expert_gated);
  EXPECT_FALSE(s.qk_norm_per_head || s.qk_norm_full || s.qkv_bias || s.tied_embeddings || s.multimodal);
  EXPECT_EQ(s.partial_rotary_dim, 64);
  for (int64_t l = 0; l < 48; ++l) {
    EXPECT_EQ(s.is_linear_layer(l), (l + 1) % 4 != 0) << l;
    EXPECT_TRUE(s.is_moe_layer(l)) << l;
  }
  EXPECT_EQ(s.attention_layers(), 12);
  EXPECT_EQ(s.linear_conv_dim(), 2 * 16 * 128 + 32 * 128);
  EXPECT_EQ(s.o_in(0), 32 * 128);
  EXPECT_EQ(s.o_in(3), 16 * 256);
  // per sequence: 36 layers of conv rows (3 x 8192) and S (32 x 128 x 128)
  EXPECT_EQ(s.linear_state_floats(), 36 * (3 * 8192 + 32 * 128 * 128));
  EXPECT_EQ(abl::model::parameter_count(s), int64_t{79674391296});
  EXPECT_EQ(abl::model::active_parameter_count(s), int64_t{3874929408});
  std::vector<std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>, int64_t>> got;
  for (const auto& slot : abl::model::layer_slots(s, 0)) {
    got.emplace_back(slot.pattern, slot.shape, slot.file_shape, slot.file_offset);
  }
  const auto has = [&](const std::string& n, std::vector<int64_t> shape, std::vector<int64_t> file_shape = {},
                       int64_t offset = 0) {
    return std::find(got.begin(), got.end(), std::make_tuple("model.layers.{}." + n, shape, file_shape, offset)) !=
           got.end();
  };
  // in_proj_qkvz per key head: [q 128, k 128, v 2x128, z 2x128] rows
  EXPECT_TRUE(has("linear_attn.in_proj_qkvz.weight", {16, 128, 2048}, {16 * 768, 2048}, 0));
  EXPECT_TRUE(has("linear_attn.in_proj_qkvz.weight", {16, 128, 2048}, {16 * 768, 2048}, 128 * 2048));
  EXPECT_TRUE(has("linear_attn.in_proj_qkvz.weight", {16, 256, 2048}, {16 * 768, 2048}, 256 * 2048));
  EXPECT_TRUE(has("linear_attn.in_proj_qkvz.weight", {16, 256, 2048}, {16 * 768, 2048}, 512 * 2048));
  EXPECT_TRUE(has("linear_attn.in_proj_ba.weight", {16, 2, 2048}, {64, 2048}, 2 * 2048));
  EXPECT_TRUE(has("linear_attn.conv1d.weight", {8192, 1, 4}));
  EXPECT_TRUE(has("linear_attn.A_log", {32}));
  EXPECT_TRUE(has("linear_attn.dt_bias", {32}));
  EXPECT_TRUE(has("linear_attn.norm.weight", {128}));
  EXPECT_TRUE(has("linear_attn.out_proj.weight", {2048, 4096}));
  EXPECT_TRUE(has("mlp.experts.511.down_proj.weight", {2048, 512}));
  EXPECT_TRUE(has("mlp.shared_expert_gate.weight", {1, 2048}));
  EXPECT_FALSE(has("self_attn.o_proj.weight", {2048, 4096}));
  got.clear();
  for (const auto& slot : abl::model::layer_slots(s, 3)) {
    got.emplace_back(slot.pattern, slot.shape, slot.file_shape, slot.file_offset);
  }
  // the gated q_proj: each head's 256 q rows, then its 256 gate rows
  EXPECT_TRUE(has("self_attn.q_proj.weight", {16, 256, 2048}, {16 * 512, 2048}, 0));
  EXPECT_TRUE(has("self_attn.q_proj.weight", {16, 256, 2048}, {16 * 512, 2048}, 256 * 2048));
  EXPECT_TRUE(has("self_attn.q_norm.weight", {256}));
  EXPECT_TRUE(has("self_attn.o_proj.weight", {2048, 4096}));
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"gated delta rule on 36/48 layers", "in_proj_qkvz"}))
      << abl::model::describe(s);
  // layer_types, with the legacy names, win over the interval
  c["layer_types"] = nlohmann::json::array();
  for (int l = 0; l < 48; ++l) c["layer_types"].push_back(l % 2 ? "attention" : "mamba");
  s = parse(c);
  for (int64_t l = 0; l < 48; ++l) EXPECT_EQ(s.is_linear_layer(l), l % 2 == 0) << l;
  // decoder_sparse_step / mlp_only_layers as Qwen2-MoE's
  c = qwen3_next_80b();
  c["mlp_only_layers"] = {0, 5};
  s = parse(c);
  for (int64_t l = 0; l < 48; ++l) EXPECT_EQ(s.is_moe_layer(l), l != 0 && l != 5) << l;
  // absent keys take Qwen3NextConfig's defaults (partial_rotary_factor 0.25, interval 4)
  c = qwen3_next_80b();
  for (const char* key : {"partial_rotary_factor", "full_attention_interval", "norm_topk_prob", "head_dim"}) c.erase(key);
  s = parse(c);
  EXPECT_EQ(s.partial_rotary_dim, 64);
  EXPECT_TRUE(s.norm_topk_prob);
  EXPECT_FALSE(s.is_linear_layer(3));
  // refusals name the key
  c = qwen3_next_80b();
  c["linear_num_value_heads"] = 24;
  c["linear_num_key_heads"] = 16;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "linear_num_value_heads", "multiple");
  c = qwen3_next_80b();
  c["layer_types"] = std::vector<std::string>(48, "sliding_attention");
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "sliding_attention", "linear_attention");
  c = qwen3_next_80b();
  c["full_attention_interval"] = 0;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "full_attention_interval", "positive");
  c = qwen3_next_80b();
  c["linear_conv_kernel_dim"] = 0;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "linear_conv_kernel_dim");
}

// Qwen3.5 (models/qwen3_5, models/qwen3_5_moe): the language model of Qwen3_5(Moe)ForConditionalGeneration under
// text_config, transformers 5's rope_parameters with the multimodal sections (the plain RoPE for text),
// separate in_proj_qkv / in_proj_z / in_proj_b / in_proj_a; the MoE one has no decoder_sparse_step,
// mlp_only_layers nor norm_topk_prob.
TEST(ModelSpecQwen35, ConditionalGenerationDenseAndMoe) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Qwen3_5MoeForConditionalGeneration"],
    "model_type": "qwen3_5_moe", "image_token_id": 248056, "tie_word_embeddings": false,
    "text_config": {"attn_output_gate": true, "dtype": "bfloat16", "eos_token_id": 248044,
      "full_attention_interval": 4, "head_dim": 256, "hidden_act": "silu", "hidden_size": 2048,
      "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"],
      "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
      "linear_num_value_heads": 32, "linear_value_head_dim": 128, "max_position_embeddings": 262144,
      "model_type": "qwen3_5_moe_text", "moe_intermediate_size": 512, "num_attention_heads": 16,
      "num_experts": 256, "num_experts_per_tok": 8, "num_hidden_layers": 4, "num_key_value_heads": 2,
      "rms_norm_eps": 1e-06, "shared_expert_intermediate_size": 512, "vocab_size": 248320,
      "rope_parameters": {"mrope_interleaved": true, "mrope_section": [11, 11, 10], "rope_type": "default",
        "rope_theta": 10000000, "partial_rotary_factor": 0.25}},
    "vision_config": {"depth": 27, "hidden_size": 1152}})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.multimodal && s.attn_output_gate && s.norm_topk_prob && s.norm_plus_one);
  EXPECT_FALSE(s.linear_fused_projections || s.tied_embeddings);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e7);
  EXPECT_EQ(s.partial_rotary_dim, 64);
  EXPECT_EQ(s.eos_token_ids, std::vector<int64_t>{248044});
  for (int64_t l = 0; l < 4; ++l) {
    EXPECT_EQ(s.is_linear_layer(l), l < 3) << l;
    EXPECT_TRUE(s.is_moe_layer(l)) << l;
  }
  std::vector<std::tuple<std::string, std::vector<int64_t>, int64_t>> got;
  for (const auto& slot : abl::model::layer_slots(s, 0)) got.emplace_back(slot.pattern, slot.shape, slot.file_offset);
  const std::string p = "language_model.model.layers.{}.linear_attn.";
  const auto has = [&](const std::string& n, std::vector<int64_t> shape, int64_t offset = 0) {
    return std::find(got.begin(), got.end(), std::make_tuple(p + n, shape, offset)) != got.end();
  };
  EXPECT_TRUE(has("in_proj_qkv.weight", {4096, 2048}, 2 * 2048 * 2048));  // v after q and k
  EXPECT_TRUE(has("in_proj_z.weight", {4096, 2048}));
  EXPECT_TRUE(has("in_proj_b.weight", {32, 2048}));
  EXPECT_TRUE(has("in_proj_a.weight", {32, 2048}));
  // keys Qwen3.5-MoE does not read
  c["text_config"]["norm_topk_prob"] = false;
  c["text_config"]["mlp_only_layers"] = {0};
  s = parse(c);
  EXPECT_TRUE(s.norm_topk_prob && s.is_moe_layer(0));
  c["text_config"]["attn_output_gate"] = false;
  EXPECT_ABL_ERROR(parse(c), "my/config.json", "attn_output_gate", "always gates");

  // Qwen3.5-27B's shape, dense; its layer types left to the interval
  c = nlohmann::json::parse(R"({"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
    "text_config": {"hidden_size": 5120, "intermediate_size": 17408, "num_hidden_layers": 64,
      "num_attention_heads": 24, "num_key_value_heads": 4, "linear_num_value_heads": 48, "model_type": "qwen3_5_text",
      "rope_parameters": {"rope_type": "default", "rope_theta": 10000000, "partial_rotary_factor": 0.25,
        "mrope_section": [11, 11, 10], "mrope_interleaved": true}}})");
  s = parse(c);
  EXPECT_EQ(s.num_experts, 0);
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_EQ(s.vocab_size, 248320);
  EXPECT_EQ(s.linear_num_key_heads, 16);
  EXPECT_EQ(s.attention_layers(), 16);
  EXPECT_EQ(abl::model::layer_slots(s, 0).back().pattern, "language_model.model.layers.{}.mlp.down_proj.weight");
}

// Qwen3-VL-MoE in the shape of the published Qwen3-VL-30B-A3B-Instruct config (written for this
// test): Qwen3-MoE's layers under text_config, the top-k renormalised whatever norm_topk_prob says,
// and — with its stacks found in the files — expert views transposed for x @ W.
TEST(ModelSpecQwenVl, Qwen3VlMoeReleasedConfigAndTransposedExperts) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Qwen3VLMoeForConditionalGeneration"],
    "image_token_id": 151655, "model_type": "qwen3_vl_moe", "tie_word_embeddings": false,
    "text_config": {"attention_bias": false, "bos_token_id": 151643, "decoder_sparse_step": 1,
    "dtype": "bfloat16", "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu", "hidden_size": 2048,
    "intermediate_size": 6144, "max_position_embeddings": 262144, "mlp_only_layers": [],
    "model_type": "qwen3_vl_moe_text", "moe_intermediate_size": 768, "norm_topk_prob": true,
    "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
    "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_scaling": {"mrope_interleaved": true,
    "mrope_section": [24, 20, 20], "rope_type": "default"}, "rope_theta": 5000000, "vocab_size": 151936},
    "vision_config": {"depth": 27, "hidden_size": 1152, "out_hidden_size": 2048}})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.multimodal);
  EXPECT_TRUE(s.qk_norm);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_EQ(s.num_experts, 128);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.moe_intermediate_size, 768);
  EXPECT_TRUE(s.norm_topk_prob);
  EXPECT_EQ(std::count(s.moe_layers.begin(), s.moe_layers.end(), 1), 48);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_DOUBLE_EQ(s.rope_theta, 5e6);
  EXPECT_FALSE(s.fused_experts || s.transposed_experts);  // the files decide (load_model_spec)
  // The language model of Qwen3-VL-30B-A3B is Qwen3-30B-A3B's.
  EXPECT_EQ(abl::model::parameter_count(s), 30532122624);
  c["text_config"]["norm_topk_prob"] = false;  // Qwen3VLMoeTextTopKRouter renormalises regardless
  c["text_config"]["mlp_only_layers"] = {0, 47};
  s = parse(c);
  EXPECT_TRUE(s.norm_topk_prob);
  EXPECT_FALSE(s.is_moe_layer(0) || s.is_moe_layer(47));
  EXPECT_TRUE(s.is_moe_layer(1));

  // As released: gate_up_proj (E, H, 2F), gate (f, h) at e*H*2F + h*2F + f, up Fm further; down (h, f)
  // at e*F*H + f*H + h of down_proj (E, F, H).
  s.fused_experts = s.transposed_experts = true;
  s.weight_prefix = "model.language_model.";  // the released spelling, which load_model_spec finds
  const int64_t H = 2048, F = 768, E = 128;
  int checked = 0;
  for (const auto& w : abl::model::expected_weights(s)) {
    if (w.layer != 1 || w.expert != 5) continue;
    using R = abl::model::WeightRole;
    if (w.role == R::expert_gate_proj || w.role == R::expert_up_proj) {
      EXPECT_EQ(w.name, "model.language_model.layers.1.mlp.experts.gate_up_proj");
      EXPECT_EQ(w.file_shape, (std::vector<int64_t>{E, H, 2 * F}));
      EXPECT_EQ(w.shape, (std::vector<int64_t>{F, H}));
      EXPECT_EQ(abl::model::file_index(w, 3 * H + 7), 5 * H * 2 * F + 7 * 2 * F + 3 + (w.role == R::expert_up_proj ? F : 0));
      ++checked;
    } else if (w.role == R::expert_down_proj) {
      EXPECT_EQ(w.name, "model.language_model.layers.1.mlp.experts.down_proj");
      EXPECT_EQ(w.file_shape, (std::vector<int64_t>{E, F, H}));
      EXPECT_EQ(abl::model::file_index(w, 7 * F + 3), 5 * F * H + 3 * H + 7);
      EXPECT_TRUE(abl::model::is_transposed(w));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3);
  EXPECT_NE(abl::model::describe(s).find("experts fused (E,H,2*Fm)+(E,Fm,H)"), std::string::npos);
}

// Gemma 1 in the shape of the published gemma-7b-it and gemma-2b-it configs (written for this test):
// Llama's two norms per layer with (1 + w), the bf16-rounded sqrt(H) embedding scale, head_dim 256
// beside hidden/heads 192, tied embeddings; "hidden_act": "gelu" is ignored for gelu_pytorch_tanh.
TEST(ModelSpecGemma, PublishedConfigsAndTheirActivation) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["GemmaForCausalLM"], "attention_bias": false,
    "attention_dropout": 0.0, "bos_token_id": 2, "eos_token_id": 1, "head_dim": 256, "hidden_act": "gelu",
    "hidden_size": 3072, "initializer_range": 0.02, "intermediate_size": 24576, "max_position_embeddings": 8192,
    "model_type": "gemma", "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 16,
    "pad_token_id": 0, "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 10000.0,
    "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 256000})");
  ModelSpec s = parse(c);
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_EQ(s.q_dim(), 4096);
  EXPECT_TRUE(s.norm_plus_one);
  EXPECT_FALSE(s.sandwich_norms);
  EXPECT_FALSE(s.qk_norm || s.qkv_bias);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_EQ(s.activation, abl::model::Activation::gelu_tanh);
  EXPECT_DOUBLE_EQ(s.embed_scale, 55.5);  // sqrt(3072) = 55.4256 in bf16
  EXPECT_DOUBLE_EQ(s.attention_scale(), 1.0 / 16);
  EXPECT_DOUBLE_EQ(s.attn_softcap, 0.0);
  EXPECT_DOUBLE_EQ(s.final_softcap, 0.0);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(s.eos_token_ids, std::vector<int64_t>{1});
  EXPECT_EQ(abl::model::parameter_count(s), 8537680896);
  std::vector<std::string> names;
  for (const auto& w : abl::model::expected_weights(s)) {
    if (w.layer == 0) names.push_back(w.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "model.layers.0.input_layernorm.weight", "model.layers.0.self_attn.q_proj.weight",
                       "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight",
                       "model.layers.0.self_attn.o_proj.weight", "model.layers.0.post_attention_layernorm.weight",
                       "model.layers.0.mlp.gate_proj.weight", "model.layers.0.mlp.up_proj.weight",
                       "model.layers.0.mlp.down_proj.weight"}));
  c["hidden_activation"] = nullptr;  // null: the same
  EXPECT_EQ(parse(c).activation, abl::model::Activation::gelu_tanh);
  c["hidden_activation"] = "gelu_pytorch_tanh";
  EXPECT_EQ(parse(c).activation, abl::model::Activation::gelu_tanh);
  c["hidden_activation"] = "relu";
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"hidden_activation", "relu"})) << error_of(c);
  c.erase("hidden_activation");
  c["attention_bias"] = true;
  EXPECT_TRUE(parse(c).qkv_bias);

  // gemma-2b-it: multi-query attention.
  c = nlohmann::json::parse(R"({"architectures": ["GemmaForCausalLM"], "bos_token_id": 2, "eos_token_id": 1,
    "head_dim": 256, "hidden_act": "gelu", "hidden_size": 2048, "intermediate_size": 16384,
    "max_position_embeddings": 8192, "model_type": "gemma", "num_attention_heads": 8, "num_hidden_layers": 18,
    "num_key_value_heads": 1, "pad_token_id": 0, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
    "torch_dtype": "bfloat16", "vocab_size": 256000})");
  s = parse(c);
  EXPECT_EQ(s.num_kv_heads, 1);
  EXPECT_DOUBLE_EQ(s.embed_scale, 45.25);  // sqrt(2048) = 45.2548 in bf16
  EXPECT_EQ(abl::model::parameter_count(s), 2506172416);
  c["use_bidirectional_attention"] = true;
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"use_bidirectional_attention"})) << error_of(c);
}

// Ministral 3 in the shape of the published Ministral-3-8B-Instruct-2512 (BF16) config (written for
// this test): a Mistral 3 checkpoint whose text_config is a Ministral3Config — YaRN in rope_parameters
// and the queries scaled by 1 + 0.1·log(1 + ⌊pos/16384⌋); a text model of model_type "mistral" is not.
TEST(ModelSpecMinistral3, QueryScalingYarnAndDefaults) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Mistral3ForConditionalGeneration"],
    "image_token_index": 10, "model_type": "mistral3", "multimodal_projector_bias": false,
    "projector_hidden_act": "gelu", "spatial_merge_size": 2, "vision_feature_layer": -1, "dtype": "bfloat16",
    "text_config": {"attention_dropout": 0.0, "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 262144, "model_type": "ministral3",
    "num_attention_heads": 32, "num_hidden_layers": 34, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
    "rope_parameters": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 16.0, "llama_4_scaling_beta": 0.1,
    "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 16384, "rope_theta": 1000000000.0,
    "rope_type": "yarn", "type": "yarn"}, "sliding_window": null, "tie_word_embeddings": false,
    "use_cache": true, "vocab_size": 131072},
    "vision_config": {"hidden_size": 1024, "model_type": "pixtral"}})");
  ModelSpec s = parse(c);
  EXPECT_DOUBLE_EQ(s.query_log_scale_beta, 0.1);
  EXPECT_EQ(s.query_log_scale_period, 16384);
  EXPECT_TRUE(s.query_log_scale_in_dtype);  // the factor cast to the query's dtype, unlike Llama 4's
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::yarn);
  EXPECT_DOUBLE_EQ(s.rope_scaling.factor, 16.0);
  EXPECT_EQ(s.rope_scaling.original_max_position_embeddings, 16384);
  EXPECT_DOUBLE_EQ(s.rope_scaling.attention_factor, 1.0);  // mscale = mscale_all_dim
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e9);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"queries x(1 + 0.1·log(1 + ⌊pos/16384⌋))"}))
      << abl::model::describe(s);
  // Absent keys take Ministral3Config's defaults (not MistralConfig's 4096 window).
  c["text_config"].erase("sliding_window");
  c["text_config"].erase("head_dim");
  c["text_config"].erase("rope_parameters");
  s = parse(c);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_DOUBLE_EQ(s.query_log_scale_beta, 0.1);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::yarn);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
  // Mistral Small's text_config (model_type "mistral"): no query scaling, whatever its rope keys say.
  c["text_config"]["model_type"] = "mistral";
  c["text_config"]["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 1e9}, {"llama_4_scaling_beta", 0.1}};
  s = parse(c);
  EXPECT_DOUBLE_EQ(s.query_log_scale_beta, 0.0);
  EXPECT_EQ(s.sliding_window, 4096);  // MistralConfig's default
  // Ministral3ForCausalLM: the same keys at the top level.
  nlohmann::json t = c["text_config"];
  t["model_type"] = "ministral3";
  t["architectures"] = {"Ministral3ForCausalLM"};
  t["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 1e9}, {"factor", 16.0},
                          {"original_max_position_embeddings", 16384}, {"llama_4_scaling_beta", 0.25}};
  s = parse(t);
  EXPECT_DOUBLE_EQ(s.query_log_scale_beta, 0.25);
  EXPECT_EQ(s.query_log_scale_period, 16384);
  t["rope_parameters"].erase("original_max_position_embeddings");
  EXPECT_TRUE(abl::testing::contains_all(error_of(t), {"llama_4_scaling_beta", "original_max_position_embeddings"}))
      << error_of(t);
  t["rope_parameters"].erase("llama_4_scaling_beta");
  EXPECT_TRUE(abl::testing::contains_all(error_of(t), {"ministral3", "llama_4_scaling_beta"})) << error_of(t);
}

// GLM-4.1V-9B-Thinking and GLM-4.5V in the shape of their published configs (written for this test):
// GLM-4-0414's and GLM-4.5-Air's language models under text_config — the dense one with its four norms,
// q/k/v biases whatever attention_bias says and RoPE on half of each head in adjacent pairs; the MoE one
// with rotate-half pairs, q/k/v biases by default and never a q/k norm; mrope is the plain RoPE for text.
TEST(ModelSpecGlm, Glm4vDenseAndMoeLanguageModels) {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["Glm4vForConditionalGeneration"],
    "model_type": "glm4v", "image_token_id": 151343, "video_token_id": 151344,
    "text_config": {"model_type": "glm4v_text", "vocab_size": 151552, "hidden_size": 4096,
    "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2,
    "partial_rotary_factor": 0.5, "rope_theta": 10000, "rope_scaling": {"type": "default",
    "mrope_section": [8, 12, 12]}, "max_position_embeddings": 65536, "rms_norm_eps": 1e-05,
    "attention_bias": true, "hidden_act": "silu", "eos_token_id": [151329, 151336, 151338],
    "pad_token_id": 151329, "torch_dtype": "bfloat16"},
    "vision_config": {"hidden_size": 1536, "model_type": "glm4v"}})");
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.multimodal);
  EXPECT_EQ(s.head_dim, 128);  // hidden / heads: no head_dim key
  EXPECT_EQ(s.partial_rotary_dim, 64);
  EXPECT_TRUE(s.rope_interleaved);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_FALSE(s.o_bias);
  EXPECT_TRUE(s.sandwich_norms);
  EXPECT_TRUE(s.fused_gate_up);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_EQ(s.eos_token_ids, (std::vector<int64_t>{151329, 151336, 151338}));
  // The language model is GLM-4-9B-0414's.
  EXPECT_EQ(abl::model::parameter_count(s),
            abl::model::parameter_count(abl::model::synthetic_model_spec("glm-4-9b-0414")));
  c["text_config"]["attention_bias"] = false;  // not a Glm4vTextConfig key: the biases stay
  EXPECT_TRUE(parse(c).qkv_bias);
  c["text_config"]["head_dim"] = 96;  // not read by Glm4vTextAttention
  EXPECT_EQ(parse(c).head_dim, 128);
  c["text_config"].erase("partial_rotary_factor");  // transformers cannot run it without one
  EXPECT_TRUE(abl::testing::contains_all(error_of(c), {"partial_rotary_factor", "0.5"})) << error_of(c);

  nlohmann::json m = nlohmann::json::parse(R"({"architectures": ["Glm4vMoeForConditionalGeneration"],
    "model_type": "glm4v_moe", "text_config": {"model_type": "glm4v_moe_text", "vocab_size": 151424,
    "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46, "num_attention_heads": 96,
    "num_key_value_heads": 8, "head_dim": 128, "partial_rotary_factor": 0.5, "n_routed_experts": 128,
    "n_shared_experts": 1, "num_experts_per_tok": 8, "moe_intermediate_size": 1408, "norm_topk_prob": true,
    "n_group": 1, "topk_group": 1, "routed_scaling_factor": 1.0, "first_k_dense_replace": 1,
    "max_position_embeddings": 65536, "rms_norm_eps": 1e-05, "rope_theta": 10000,
    "rope_scaling": {"rope_type": "default", "mrope_section": [8, 12, 12]}, "use_qk_norm": true,
    "eos_token_id": [151329, 151336, 151338], "torch_dtype": "bfloat16"}, "vision_config": {"hidden_size": 1536}})");
  s = parse(m);
  EXPECT_TRUE(s.multimodal);
  EXPECT_TRUE(s.qkv_bias);   // Glm4vMoeTextConfig's attention_bias default
  EXPECT_FALSE(s.qk_norm);   // not a Glm4vMoeTextConfig key
  EXPECT_FALSE(s.rope_interleaved);
  EXPECT_EQ(s.partial_rotary_dim, 64);
  EXPECT_TRUE(s.router_sigmoid);
  EXPECT_EQ(s.num_experts, 128);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.shared_expert_intermediate_size, 1408);
  EXPECT_FALSE(s.is_moe_layer(0));
  EXPECT_TRUE(s.is_moe_layer(1));
  EXPECT_EQ(s.mtp_layers, 0);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
}

// Phi-3.5-MoE-instruct's config.json as released (the remote-code class name PhiMoEForCausalLM; the 64
// LongRoPE factors of each list shortened to ones here): Mixtral's experts behind the sparsemixer,
// LayerNorms with biases, q/k/v/o and lm_head biases, cos/sin scaled by the config's mscale.
nlohmann::json phi35_moe() {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["PhiMoEForCausalLM"],
    "auto_map": {"AutoConfig": "configuration_phimoe.PhiMoEConfig", "AutoModelForCausalLM": "modeling_phimoe.PhiMoEForCausalLM"},
    "attention_bias": true, "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 32000, "hidden_act": "silu",
    "hidden_dropout": 0.0, "hidden_size": 4096, "initializer_range": 0.02, "input_jitter_noise": 0.01,
    "intermediate_size": 6400, "lm_head_bias": true, "max_position_embeddings": 131072, "model_type": "phimoe",
    "num_attention_heads": 32, "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "num_local_experts": 16, "original_max_position_embeddings": 4096, "output_router_logits": false,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "router_aux_loss_coef": 0.0, "router_jitter_noise": 0.01,
    "sliding_window": 131072, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
    "transformers_version": "4.43.3", "use_cache": true, "vocab_size": 32064})");
  c["rope_scaling"] = {{"long_factor", std::vector<double>(64, 1.0)}, {"long_mscale", 1.243163121016122},
                       {"original_max_position_embeddings", 4096}, {"short_factor", std::vector<double>(64, 1.0)},
                       {"short_mscale", 1.243163121016122}, {"type", "longrope"}};
  return c;
}

TEST(ModelSpecPhimoe, ReleasedConfig) {
  nlohmann::json c = phi35_moe();
  ModelSpec s = parse(c);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_TRUE(s.o_bias);
  EXPECT_TRUE(s.norm_centered);
  EXPECT_TRUE(s.norm_bias);
  EXPECT_TRUE(s.lm_head_bias);
  EXPECT_FALSE(s.parallel_block);
  EXPECT_EQ(s.num_experts, 16);
  EXPECT_EQ(s.experts_per_token, 2);
  EXPECT_EQ(s.moe_intermediate_size, 6400);
  EXPECT_TRUE(s.router_sparsemixer);
  EXPECT_DOUBLE_EQ(s.router_jitter_eps, 0.01);
  EXPECT_EQ(s.expert_names, ModelSpec::ExpertNames::mixtral);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::longrope);
  EXPECT_DOUBLE_EQ(s.rope_scaling.attention_factor, 1.243163121016122);  // the config's mscale, not 1.19
  EXPECT_EQ(s.long_rope_after(), 4096);
  EXPECT_EQ(s.sliding_window, 131072);
  EXPECT_EQ(sliding_count(s), 32);
  // 41.9B parameters, 6.6B active, as published
  EXPECT_EQ(abl::model::parameter_count(s), 41873153344);
  EXPECT_EQ(abl::model::active_parameter_count(s), 6640999744);
  using abl::model::weight_name;
  const std::vector<std::string> names = layer_tensor_names(s);
  const std::vector<std::string> want_head = {
      "model.layers.0.input_layernorm.weight", "model.layers.0.input_layernorm.bias",
      "model.layers.0.self_attn.q_proj.weight"};
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3), want_head);
  EXPECT_NE(std::find(names.begin(), names.end(), "model.layers.0.post_attention_layernorm.bias"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "model.layers.0.block_sparse_moe.experts.15.w2.weight"),
            names.end());
  std::vector<std::string> globals;
  for (const auto& g : abl::model::global_slots(s)) globals.push_back(weight_name(g, -1));
  EXPECT_EQ(globals, (std::vector<std::string>{"model.embed_tokens.weight", "model.norm.weight", "model.norm.bias",
                                               "lm_head.bias", "lm_head.weight"}));
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"sparsemixer router", "LayerNorms", "lm_head bias"}));

  // transformers' own class name and PhimoeConfig's defaults (no biases, no rope scaling, theta 1e6)
  nlohmann::json d = {{"architectures", {"PhimoeForCausalLM"}}, {"model_type", "phimoe"}};
  s = parse(d);
  EXPECT_EQ(s.num_experts, 16);
  EXPECT_FALSE(s.qkv_bias);
  EXPECT_FALSE(s.lm_head_bias);
  EXPECT_TRUE(s.norm_bias);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(s.router_jitter_eps, 0.01);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);

  // refused, naming the key: other than top-2, mscales missing or unequal
  nlohmann::json bad = c;
  bad["num_experts_per_tok"] = 4;
  EXPECT_TRUE(abl::testing::contains_all(error_of(bad), {"my/config.json", "num_experts_per_tok", "2"}));
  bad = c;
  bad["rope_scaling"].erase("short_mscale");
  EXPECT_TRUE(abl::testing::contains_all(error_of(bad), {"my/config.json", "short_mscale"}));
  bad = c;
  bad["rope_scaling"]["long_mscale"] = 1.3;
  EXPECT_TRUE(abl::testing::contains_all(error_of(bad), {"my/config.json", "long_mscale", "differ"}));
}

// Llama-4-Scout-17B-16E-Instruct's config.json in the shape released (the vision_config shortened): a
// text_config of model_type llama4_text with every layer MoE, NoPE on every 4th layer, chunked attention,
// llama3 RoPE scaling with low_freq_factor = high_freq_factor, and attn_temperature_tuning written as 4.
nlohmann::json llama4_scout() {
  nlohmann::json text = nlohmann::json::parse(R"({"attention_bias": false, "attention_chunk_size": 8192,
    "attention_dropout": 0.0, "attn_scale": 0.1, "attn_temperature_tuning": 4, "bos_token_id": 200000,
    "eos_token_id": [200001, 200007, 200008], "floor_scale": 8192, "for_llm_compressor": false, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 5120, "initializer_range": 0.02, "interleave_moe_layer_step": 1,
    "intermediate_size": 8192, "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760,
    "model_type": "llama4_text", "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48,
    "num_key_value_heads": 8, "num_local_experts": 16, "output_router_logits": false, "pad_token_id": 200018,
    "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "rope_theta": 500000.0,
    "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0, "torch_dtype": "bfloat16", "use_cache": true,
    "use_qk_norm": true, "vocab_size": 202048})");
  std::vector<int> rope;
  for (int l = 0; l < 48; ++l) rope.push_back((l + 1) % 4 != 0);
  text["no_rope_layers"] = rope;
  std::vector<int> moe(48);
  for (int l = 0; l < 48; ++l) moe[static_cast<size_t>(l)] = l;
  text["moe_layers"] = moe;
  return {{"architectures", {"Llama4ForConditionalGeneration"}}, {"model_type", "llama4"},
          {"boi_token_index", 200080}, {"eoi_token_index", 200081}, {"image_token_index", 200092},
          {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}, {"transformers_version", "4.51.0.dev0"},
          {"text_config", text}, {"vision_config", {{"model_type", "llama4_vision_model"}, {"hidden_size", 1408}}}};
}

TEST(ModelSpecLlama4, ScoutAndMaverickConfigs) {
  nlohmann::json c = llama4_scout();
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.multimodal);
  EXPECT_EQ(s.weight_prefix, "language_model.model.");
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_TRUE(s.rope_interleaved);
  EXPECT_TRUE(s.uses_rope(0));
  EXPECT_FALSE(s.uses_rope(3));
  EXPECT_EQ(std::count(s.nope_layers.begin(), s.nope_layers.end(), 1), 12);
  EXPECT_TRUE(s.qk_l2_norm);
  EXPECT_FALSE(s.qk_norm);
  EXPECT_DOUBLE_EQ(s.query_log_scale_beta, 0.1);
  EXPECT_EQ(s.query_log_scale_period, 8192);
  EXPECT_EQ(s.query_log_scale_offset, 1);
  EXPECT_FALSE(s.query_log_scale_in_dtype);  // the fp32 factor times the query, rounded once
  EXPECT_TRUE(s.query_scaled_in(3));
  EXPECT_FALSE(s.query_scaled_in(2));
  EXPECT_EQ(s.attention_chunk, 8192);
  EXPECT_EQ(s.context_length(), 8192);  // within one chunk
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::llama3);
  EXPECT_DOUBLE_EQ(s.rope_scaling.low_freq_factor, s.rope_scaling.high_freq_factor);
  EXPECT_EQ(s.num_experts, 16);
  EXPECT_EQ(s.experts_per_token, 1);
  EXPECT_EQ(s.moe_intermediate_size, 8192);
  EXPECT_EQ(s.intermediate_size, 16384);
  EXPECT_EQ(s.shared_expert_intermediate_size, 8192);
  EXPECT_FALSE(s.shared_expert_gated);
  EXPECT_TRUE(s.router_sigmoid);
  EXPECT_FALSE(s.norm_topk_prob);
  EXPECT_TRUE(s.moe_scale_input);
  EXPECT_TRUE(s.fused_experts);
  EXPECT_TRUE(s.transposed_experts);
  EXPECT_EQ(std::count(s.moe_layers.begin(), s.moe_layers.end(), 1), 48);
  EXPECT_EQ(s.eos_token_ids, (std::vector<int64_t>{200001, 200007, 200008}));
  // 107.8B in the language model (109B with the vision tower), 17.2B active
  EXPECT_EQ(abl::model::parameter_count(s), 107769861120);
  EXPECT_EQ(abl::model::active_parameter_count(s), 17172894720);
  const std::vector<std::string> names = layer_tensor_names(s);
  for (const char* want : {"language_model.model.layers.0.feed_forward.router.weight",
                           "language_model.model.layers.0.feed_forward.experts.gate_up_proj",
                           "language_model.model.layers.0.feed_forward.experts.down_proj",
                           "language_model.model.layers.0.feed_forward.shared_expert.down_proj.weight"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(s), {"q/k L2 norm after RoPE", "attention chunks of 8192",
                                                                   "router weights scale the expert inputs"}));

  // Maverick's shape: 128 experts on every other layer, dense layers of intermediate_size_mlp, no q/k norm
  c["text_config"]["num_local_experts"] = 128;
  c["text_config"]["interleave_moe_layer_step"] = 2;
  c["text_config"].erase("moe_layers");
  c["text_config"]["use_qk_norm"] = false;
  c["text_config"]["attn_temperature_tuning"] = false;
  s = parse(c);
  EXPECT_FALSE(s.is_moe_layer(0));
  EXPECT_TRUE(s.is_moe_layer(1));
  EXPECT_EQ(std::count(s.moe_layers.begin(), s.moe_layers.end(), 1), 24);
  EXPECT_FALSE(s.qk_l2_norm);
  EXPECT_DOUBLE_EQ(s.query_log_scale_beta, 0.0);
  bool dense_names = false;
  for (const auto& slot : abl::model::layer_slots(s, 0)) {
    dense_names = dense_names || abl::model::weight_name(slot, 0) == "language_model.model.layers.0.feed_forward.gate_proj.weight";
  }
  EXPECT_TRUE(dense_names);

  // Llama4ForCausalLM (the text model alone) takes Llama4TextConfig's defaults
  nlohmann::json d = {{"architectures", {"Llama4ForCausalLM"}}, {"model_type", "llama4_text"}};
  s = parse(d);
  EXPECT_EQ(s.weight_prefix, "model.");
  EXPECT_EQ(s.num_experts, 16);
  EXPECT_TRUE(s.qk_l2_norm);
  EXPECT_EQ(std::count(s.nope_layers.begin(), s.nope_layers.end(), 1), 12);
  EXPECT_DOUBLE_EQ(s.rope_theta, 500000.0);
}
