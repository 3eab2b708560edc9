// ModelSpec for Gemma 4 (models/gemma4; docs/gemma4.md): the 31B text config as transformers' converter writes it
// (convert_gemma4_weights.py _VARIANTS; the Hub file itself not seen) parses to its per-layer geometry and parameter
// total, the later per_layer_config spelling gives the same spec, absent keys take Gemma4TextConfig's defaults (the
// last layer forced to full attention), the RoPE comes from rope_parameters alone, and what is not supported yet or
// not a causal LM is refused naming the key.
#include <gtest/gtest.h>

#include <functional>

#include "abl/io/json_file.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"
#include "common/error_of.h"
#include "io/safetensors_test_util.h"

namespace {

using abl::model::ModelSpec;
using abl::model::RopeScaling;
using abl::model::WeightRole;

ModelSpec parse(const nlohmann::json& c) {
  return abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "my/config.json"));
}
std::string error_of(const nlohmann::json& c) {
  return abl::testing::thrown_error_of([&] { parse(c); });
}

// Gemma 4 31B's text config in the flat spelling (global_head_dim, num_global_key_value_heads), inside
// Gemma4ForConditionalGeneration's top level.
nlohmann::json gemma4_31b() {
  return nlohmann::json::parse(R"({"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
    "text_config": {"model_type": "gemma4_text", "vocab_size": 262144, "hidden_size": 5376,
      "intermediate_size": 21504, "num_hidden_layers": 60, "num_attention_heads": 32, "num_key_value_heads": 16,
      "head_dim": 256, "global_head_dim": 512, "num_global_key_value_heads": 4, "attention_k_eq_v": true,
      "hidden_size_per_layer_input": 0, "num_kv_shared_layers": 0, "sliding_window": 1024,
      "max_position_embeddings": 262144, "final_logit_softcapping": 30.0, "use_bidirectional_attention": "vision",
      "rms_norm_eps": 1e-06, "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": true,
      "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                          "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                             "rope_theta": 1000000.0}}},
    "vision_config": {"model_type": "gemma4_vision"}, "eos_token_id": [1, 106], "torch_dtype": "bfloat16"})");
}

// The (rows, cols) of `role` in layer l, or {} when the layer has none.
std::vector<int64_t> slot_shape(const ModelSpec& s, int64_t l, WeightRole role) {
  for (const auto& slot : abl::model::layer_slots(s, l)) {
    if (slot.role == role) return slot.shape;
  }
  return {};
}

}  // namespace

TEST(ModelSpecGemma4, Released31BGeometry) {
  const ModelSpec s = parse(gemma4_31b());
  EXPECT_EQ(s.architecture, "Gemma4ForConditionalGeneration");
  EXPECT_TRUE(s.multimodal);
  EXPECT_EQ(s.weight_prefix, "language_model.model.");  // (load_model_spec takes the files' spelling)
  EXPECT_TRUE(s.qk_norm && s.v_norm && s.layer_scalar && s.sandwich_norms && s.k_eq_v);
  EXPECT_FALSE(s.norm_plus_one);  // Gemma4RMSNorm scales by w
  EXPECT_DOUBLE_EQ(s.attention_scale(), 1.0);
  EXPECT_DOUBLE_EQ(s.embed_scale, 73.5);  // bf16(√5376 = 73.32)
  EXPECT_DOUBLE_EQ(s.final_softcap, 30.0);
  EXPECT_EQ(s.activation, abl::model::Activation::gelu_tanh);
  // (5 sliding, 1 full) × 10 with their own RoPE: default θ 1e4 on the sliding, proportional θ 1e6 on the full
  EXPECT_EQ(s.sliding_window, 1024);
  for (int64_t l = 0; l < 60; ++l) {
    const bool full = (l + 1) % 6 == 0;
    ASSERT_EQ(s.is_full_attention_layer(l), full) << l;
    EXPECT_EQ(s.uses_local_rope(l), !full) << l;
    EXPECT_EQ(s.head_dim_of(l), full ? 512 : 256) << l;
    EXPECT_EQ(s.kv_heads_of(l), full ? 4 : 16) << l;
    EXPECT_EQ(s.values_are_keys(l), full) << l;
  }
  EXPECT_DOUBLE_EQ(s.rope_local_theta, 1e4);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::proportional);
  EXPECT_DOUBLE_EQ(s.rope_scaling.rotary_fraction, 0.25);
  // buffers take the widest layer; o_proj's input is each layer's own
  EXPECT_EQ(s.q_dim(), 32 * 512);
  EXPECT_EQ(s.kv_dim(), 16 * 256);  // the sliding layers' 4096 rows beat the full ones' 4 × 512
  EXPECT_EQ(s.o_in(0), 8192);
  EXPECT_EQ(s.o_in(5), 16384);
  EXPECT_EQ(s.kv_cache_row_floats(), 50 * 2 * 4096 + 10 * 2 * 2048);

  // the full layers: 512-wide heads, 4 kv heads, no v_proj; the sliding ones as Gemma 3's
  EXPECT_EQ(slot_shape(s, 5, WeightRole::q_proj), (std::vector<int64_t>{16384, 5376}));
  EXPECT_EQ(slot_shape(s, 5, WeightRole::k_proj), (std::vector<int64_t>{2048, 5376}));
  EXPECT_TRUE(slot_shape(s, 5, WeightRole::v_proj).empty());
  EXPECT_EQ(slot_shape(s, 5, WeightRole::q_norm), (std::vector<int64_t>{512}));
  EXPECT_EQ(slot_shape(s, 5, WeightRole::o_proj), (std::vector<int64_t>{5376, 16384}));
  EXPECT_EQ(slot_shape(s, 4, WeightRole::v_proj), (std::vector<int64_t>{4096, 5376}));
  EXPECT_EQ(slot_shape(s, 4, WeightRole::o_proj), (std::vector<int64_t>{5376, 8192}));
  EXPECT_EQ(slot_shape(s, 4, WeightRole::layer_scalar), (std::vector<int64_t>{1}));
  const std::vector<abl::model::WeightSlot> l5 = abl::model::layer_slots(s, 5);
  EXPECT_EQ(l5.back().pattern, "language_model.model.layers.{}.layer_scalar");
  // our slot arithmetic (docs/gemma4.md §1): 30.697 B, the embedding tied
  EXPECT_EQ(abl::model::parameter_count(s), 30697345340);

  const std::string d = abl::model::describe(s);
  EXPECT_TRUE(abl::testing::contains_all(d, {"full-attention layers HD=512 NKV=4", "values = keys", "v norm",
                                             "layer scalars", "proportional 0.25", "50/60 layers", "softcap 0/30"}))
      << d;
}

// transformers' later Gemma4TextConfig writes per_layer_config {layer: {head_dim, num_key_value_heads}} for the full
// layers instead of the flat keys; it wins over them when both are there.
TEST(ModelSpecGemma4, PerLayerConfigEqualsTheFlatKeys) {
  const ModelSpec flat = parse(gemma4_31b());
  nlohmann::json c = gemma4_31b();
  nlohmann::json& t = c["text_config"];
  t.erase("global_head_dim");
  t.erase("num_global_key_value_heads");
  t["per_layer_config"] = nlohmann::json::object();
  for (int l = 5; l < 60; l += 6) t["per_layer_config"][std::to_string(l)] = {{"head_dim", 512}, {"num_key_value_heads", 4}};
  EXPECT_EQ(abl::model::fingerprint(parse(c)), abl::model::fingerprint(flat));
  t["global_head_dim"] = 128;  // ignored beside per_layer_config, as in transformers
  EXPECT_EQ(parse(c).full_head_dim, 512);

  nlohmann::json bad = c;
  bad["text_config"]["per_layer_config"]["4"] = {{"head_dim", 512}};
  EXPECT_TRUE(abl::testing::contains_all(error_of(bad), {"my/config.json", "per_layer_config", "sliding layer"}));
  bad = c;
  bad["text_config"]["per_layer_config"].erase("11");
  EXPECT_TRUE(abl::testing::contains_all(error_of(bad), {"per_layer_config", "full-attention layer 11"}));
  bad = c;
  bad["text_config"]["per_layer_config"]["17"]["head_dim"] = 256;
  EXPECT_TRUE(abl::testing::contains_all(error_of(bad), {"per_layer_config", "differs"}));
  bad = c;
  bad["text_config"]["per_layer_config"]["17"]["sliding_window"] = 8;
  EXPECT_TRUE(abl::testing::contains_all(error_of(bad), {"per_layer_config", "'sliding_window'"}));
  bad = c;
  bad["text_config"]["per_layer_config"]["full_attention"] = {{"head_dim", 512}};
  EXPECT_TRUE(abl::testing::contains_all(error_of(bad), {"per_layer_config", "'full_attention' is not a layer index"}));
}

// Absent keys take Gemma4TextConfig's defaults: global_head_dim 512, the 5:1 pattern with the last layer forced
// full (also when layer_types lists it sliding), rope_parameters' two entries, no soft-cap.
TEST(ModelSpecGemma4, DefaultsAndTheForcedLastFullLayer) {
  nlohmann::json c = {{"architectures", {"Gemma4ForCausalLM"}}, {"model_type", "gemma4_text"},
                      {"hidden_size", 256}, {"num_hidden_layers", 8}, {"intermediate_size", 512},
                      {"hidden_size_per_layer_input", 0}, {"vocab_size", 1000}};
  ModelSpec s = parse(c);
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_EQ(s.full_head_dim, 512);
  EXPECT_EQ(s.full_kv_heads, 4);  // without attention_k_eq_v the full layers keep num_key_value_heads
  EXPECT_FALSE(s.k_eq_v);
  EXPECT_EQ(s.sliding_layers, (std::vector<uint8_t>{1, 1, 1, 1, 1, 0, 1, 0}));
  EXPECT_EQ(s.sliding_window, 512);
  EXPECT_DOUBLE_EQ(s.final_softcap, 0.0);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::proportional);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_EQ(s.eos_token_ids, (std::vector<int64_t>{1}));
  EXPECT_FALSE(slot_shape(s, 7, WeightRole::v_proj).empty());  // values are v_proj's without k_eq_v

  c["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "sliding_attention",
                      "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention"};
  EXPECT_EQ(parse(c).sliding_layers, (std::vector<uint8_t>{1, 0, 1, 1, 1, 1, 1, 0}));

  // rope_parameters alone: a top-level rope_theta is not read by Gemma4TextConfig
  c["rope_theta"] = 123.0;
  c["rope_parameters"] = {{"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 2e4}}},
                          {"full_attention", {{"rope_type", "default"}, {"rope_theta", 5e5}}}};
  s = parse(c);
  EXPECT_DOUBLE_EQ(s.rope_theta, 5e5);
  EXPECT_DOUBLE_EQ(s.rope_local_theta, 2e4);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
}

TEST(ModelSpecGemma4, RefusalsNameTheKey) {
  const auto refused = [](const std::function<void(nlohmann::json&)>& change,
                           std::initializer_list<std::string> words) {
    nlohmann::json c = gemma4_31b();
    change(c["text_config"]);
    const std::string error = error_of(c);
    EXPECT_TRUE(abl::testing::contains_all(error, words));
    EXPECT_NE(error.find("my/config.json"), std::string::npos) << error;
  };
  refused([](nlohmann::json& t) { t["num_global_key_value_heads"] = nullptr; },
          {"num_global_key_value_heads", "attention_k_eq_v"});
  refused([](nlohmann::json& t) { t["num_global_key_value_heads"] = 5; }, {"num_global_key_value_heads", "divide"});
  refused([](nlohmann::json& t) { t["use_bidirectional_attention"] = "all"; }, {"use_bidirectional_attention"});
  refused([](nlohmann::json& t) { t["attention_bias"] = true; }, {"attention_bias"});
  // per-layer embeddings (a config without the key has the class default 256) over a smaller table than the vocab
  refused([](nlohmann::json& t) { t.erase("hidden_size_per_layer_input"); t["vocab_size_per_layer_input"] = 1000; },
          {"vocab_size_per_layer_input", "1000", "262144"});
  refused([](nlohmann::json& t) { t["num_kv_shared_layers"] = 60; }, {"num_kv_shared_layers", "[0, num_hidden_layers 60)"});
  // sharing from layer 5 on: layers 0-4 all slide, so full layer 5 has no layer to take its keys from
  refused([](nlohmann::json& t) { t["num_kv_shared_layers"] = 55; },
          {"num_kv_shared_layers", "shared layer 5 is full attention"});
  refused([](nlohmann::json& t) { t["enable_moe_block"] = true; }, {"num_experts"});
  refused([](nlohmann::json& t) {
            t["enable_moe_block"] = true;
            t["num_experts"] = 4;
            t["top_k_experts"] = 8;
            t["moe_intermediate_size"] = 64;
          },
          {"top_k_experts", "[1, num_experts 4]"});
  refused([](nlohmann::json& t) { t["rope_parameters"]["full_attention"] = {{"rope_type", "linear"}, {"factor", 8.0},
                                                                            {"rope_theta", 1e6}}; },
          {"rope_parameters.full_attention", "default or the proportional"});
  refused([](nlohmann::json& t) { t["rope_parameters"]["sliding_attention"]["rope_type"] = "linear";
                                  t["rope_parameters"]["sliding_attention"]["factor"] = 2.0; },
          {"sliding_attention", "default one"});
  refused([](nlohmann::json& t) { t["rope_parameters"].erase("sliding_attention"); }, {"rope_parameters"});
  refused([](nlohmann::json& t) { t["rope_parameters"]["full_attention"]["partial_rotary_factor"] = 0.0; },
          {"partial_rotary_factor"});
  // a null global_head_dim: the attention falls back to head_dim, the proportional RoPE to H / NH (168 here)
  refused([](nlohmann::json& t) { t["global_head_dim"] = nullptr; }, {"global_head_dim", "168"});
  refused([](nlohmann::json& t) { t["sliding_window"] = nullptr; }, {"sliding_window"});
}

// The four released text models (synthetic presets after convert_gemma4_weights.py's _VARIANTS): E2B's per-layer
// embeddings, KV sharing from layer 15 and double-wide MLPs there; E4B's sharing from 24; 26B-A4B's 128 experts of
// 704 top-8 beside a dense MLP of 2112. Totals by the slot arithmetic of docs/gemma4.md §1 (the table counted once).
TEST(ModelSpecGemma4, ReleasedModelsAsPresets) {
  const ModelSpec e2b = abl::model::synthetic_model_spec("gemma-4-e2b");
  EXPECT_EQ(e2b.ple_dim, 256);
  EXPECT_DOUBLE_EQ(e2b.ple_embed_scale, 16.0);
  EXPECT_EQ(e2b.kv_shared_layers, 20);
  EXPECT_TRUE(e2b.double_wide_shared_mlp);
  EXPECT_EQ(e2b.mlp_width(14), 6144);
  EXPECT_EQ(e2b.mlp_width(15), 12288);
  EXPECT_EQ(e2b.dense_mlp_width(), 12288);
  // the sliding layers among 15-34 read layer 13, the full ones layer 14 (docs/gemma4.md §2.4)
  EXPECT_EQ(e2b.kv_source(13), 13);
  EXPECT_EQ(e2b.kv_source(15), 13);
  EXPECT_EQ(e2b.kv_source(19), 14);
  EXPECT_EQ(e2b.kv_source(34), 14);
  EXPECT_EQ(e2b.kv_cache_row_floats(), 12 * 2 * 256 + 3 * 2 * 512);  // 15 unshared layers: 12 sliding, 3 full
  EXPECT_TRUE(slot_shape(e2b, 15, WeightRole::k_proj).empty());
  EXPECT_TRUE(slot_shape(e2b, 15, WeightRole::k_norm).empty());
  EXPECT_EQ(slot_shape(e2b, 15, WeightRole::down_proj), (std::vector<int64_t>{1536, 12288}));
  EXPECT_EQ(slot_shape(e2b, 3, WeightRole::ple_embed), (std::vector<int64_t>{262144, 256}));
  EXPECT_EQ(abl::model::parameter_count(e2b), 4628569379);

  const ModelSpec e4b = abl::model::synthetic_model_spec("gemma-4-e4b");
  EXPECT_FALSE(e4b.double_wide_shared_mlp);
  EXPECT_EQ(e4b.kv_source(41), 23);
  EXPECT_EQ(e4b.kv_source(40), 22);
  EXPECT_EQ(abl::model::parameter_count(e4b), 7463013418);

  EXPECT_EQ(abl::model::parameter_count(abl::model::synthetic_model_spec("gemma-4-31b")), 30697345340);

  const ModelSpec moe = abl::model::synthetic_model_spec("gemma-4-26b-a4b");
  EXPECT_TRUE(moe.moe_beside_dense && moe.norm_topk_prob && moe.fused_experts);
  EXPECT_EQ(moe.dense_mlp_width(), 2112);
  EXPECT_EQ(slot_shape(moe, 0, WeightRole::router_expert_scale), (std::vector<int64_t>{128}));
  EXPECT_EQ(abl::model::parameter_count(moe), 25233141790);
  EXPECT_EQ(abl::model::active_parameter_count(moe), 3822530590);
  const std::string d = abl::model::describe(moe);
  EXPECT_TRUE(abl::testing::contains_all(d, {"MoE 128x704 top-8 (renormalised) on 30/30 layers",
                                             "beside the dense MLP 2112"}))
      << d;
  EXPECT_TRUE(abl::testing::contains_all(abl::model::describe(e2b), {"per-layer embeddings of 256",
                                                                     "the last 20 layers share keys and values"}));
}

// Gemma4TextMLP(config, layer_idx) is double-wide in a KV-shared layer whatever else the layer holds: in an MoE layer
// the dense MLP beside the experts is too (no release combines them; the slots, the buffers and the epilogue agree).
TEST(ModelSpecGemma4, DoubleWideDenseMlpBesideExperts) {
  nlohmann::json c = {{"architectures", {"Gemma4ForCausalLM"}}, {"hidden_size", 64}, {"num_hidden_layers", 6},
                      {"intermediate_size", 40}, {"hidden_size_per_layer_input", 0}, {"vocab_size", 100},
                      {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 16},
                      {"global_head_dim", 32}, {"enable_moe_block", true}, {"num_experts", 4},
                      {"top_k_experts", 2}, {"moe_intermediate_size", 24}, {"num_kv_shared_layers", 2},
                      {"use_double_wide_mlp", true}};
  c["layer_types"] = {"sliding_attention", "sliding_attention", "full_attention", "sliding_attention",
                      "sliding_attention", "full_attention"};
  const ModelSpec s = parse(c);
  EXPECT_EQ(s.mlp_width(3), 40);
  EXPECT_EQ(s.mlp_width(4), 80);
  EXPECT_EQ(s.dense_mlp_width(), 80);
  EXPECT_EQ(slot_shape(s, 3, WeightRole::down_proj), (std::vector<int64_t>{64, 40}));
  EXPECT_EQ(slot_shape(s, 4, WeightRole::down_proj), (std::vector<int64_t>{64, 80}));
  EXPECT_EQ(slot_shape(s, 5, WeightRole::gate_proj), (std::vector<int64_t>{80, 64}));
  EXPECT_EQ(slot_shape(s, 5, WeightRole::expert_down_proj), (std::vector<int64_t>{64, 24}));
}
