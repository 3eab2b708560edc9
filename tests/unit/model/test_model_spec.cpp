// ModelSpec from config.json: the fixture configs of each family parse to their published
// numbers; unsupported architectures and bad values are refused naming the file and the key.
#include <gtest/gtest.h>

#include <fstream>

#include "abl/io/json_file.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"
#include "common/temp_dir.h"
#include "io/safetensors_test_util.h"

namespace {

using abl::model::ModelSpec;
using abl::model::RopeScaling;

std::string config_path(const std::string& name) {
  return std::string(ABL_FIXTURE_DIR) + "/configs/" + name + ".json";
}
ModelSpec load(const std::string& name) { return abl::model::load_model_spec(config_path(name)); }

// The Llama 3.1 8B config with one key replaced (or removed when `value` is "<erase>").
nlohmann::json llama8b() {
  return abl::io::read_json_file(config_path("Llama-3.1-8B-Instruct")).json();
}
std::string spec_error(const nlohmann::json& config) {
  return abl::testing::thrown_error_of(
      [&] { abl::model::parse_model_spec(abl::io::parse_json(config.dump(), "my/config.json")); });
}
std::string error_with(const std::string& key, const nlohmann::json& value) {
  nlohmann::json c = llama8b();
  if (value.is_string() && value == "<erase>") {
    c.erase(key);
  } else {
    c[key] = value;
  }
  return spec_error(c);
}

TEST(ModelSpec, Llama31_8B) {
  ModelSpec s = load("Llama-3.1-8B-Instruct");
  EXPECT_EQ(s.architecture, "LlamaForCausalLM");
  EXPECT_EQ(s.model_type, "llama");
  EXPECT_EQ(s.num_layers, 32);
  EXPECT_EQ(s.hidden_size, 4096);
  EXPECT_EQ(s.intermediate_size, 14336);
  EXPECT_EQ(s.num_heads, 32);
  EXPECT_EQ(s.num_kv_heads, 8);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.group_size(), 4);
  EXPECT_EQ(s.vocab_size, 128256);
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(s.rope_theta, 500000.0);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::llama3);
  EXPECT_DOUBLE_EQ(s.rope_scaling.factor, 8.0);
  EXPECT_DOUBLE_EQ(s.rope_scaling.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(s.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(s.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(s.max_position_embeddings, 131072);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_FALSE(s.qkv_bias);
  EXPECT_FALSE(s.qk_norm);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(s.bos_token_id, 128000);
  EXPECT_EQ(s.eos_token_ids, (std::vector<int64_t>{128001, 128008, 128009}));
  EXPECT_EQ(s.torch_dtype, abl::DType::bf16);
  EXPECT_EQ(abl::model::parameter_count(s), 8030261248);
  EXPECT_EQ(s.source, config_path("Llama-3.1-8B-Instruct"));
}

TEST(ModelSpec, Llama32_1B) {
  ModelSpec s = load("Llama-3.2-1B-Instruct");
  EXPECT_EQ(s.num_layers, 16);
  EXPECT_EQ(s.hidden_size, 2048);
  EXPECT_EQ(s.intermediate_size, 8192);
  EXPECT_EQ(s.num_heads, 32);
  EXPECT_EQ(s.num_kv_heads, 8);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_DOUBLE_EQ(s.rope_scaling.factor, 32.0);
  EXPECT_EQ(abl::model::parameter_count(s), 1235814400);
}

TEST(ModelSpec, Mistral7B_v03) {
  ModelSpec s = load("Mistral-7B-Instruct-v0.3");
  EXPECT_EQ(s.architecture, "MistralForCausalLM");
  EXPECT_EQ(s.vocab_size, 32768);
  EXPECT_EQ(s.num_layers, 32);
  EXPECT_EQ(s.num_kv_heads, 8);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_EQ(s.sliding_window, 0);  // null in v0.3
  EXPECT_EQ(s.bos_token_id, 1);
  EXPECT_EQ(s.eos_token_ids, std::vector<int64_t>{2});
  EXPECT_EQ(abl::model::parameter_count(s), 7248023552);
}

TEST(ModelSpec, MistralSlidingWindow) {
  nlohmann::json c = abl::io::read_json_file(config_path("Mistral-7B-Instruct-v0.3")).json();
  c["sliding_window"] = 4096;  // v0.1
  ModelSpec s = abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "c.json"));
  EXPECT_EQ(s.sliding_window, 4096);
  EXPECT_TRUE(s.uses_sliding_window(0));
  c.erase("sliding_window");  // absent: MistralConfig's default
  EXPECT_EQ(abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "c.json")).sliding_window, 4096);
}

TEST(ModelSpec, Qwen25_05B) {
  ModelSpec s = load("Qwen2.5-0.5B-Instruct");
  EXPECT_EQ(s.architecture, "Qwen2ForCausalLM");
  EXPECT_EQ(s.vocab_size, 151936);
  EXPECT_EQ(s.hidden_size, 896);
  EXPECT_EQ(s.intermediate_size, 4864);
  EXPECT_EQ(s.num_layers, 24);
  EXPECT_EQ(s.num_heads, 14);
  EXPECT_EQ(s.num_kv_heads, 2);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_FALSE(s.qk_norm);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_EQ(s.sliding_window, 0);  // use_sliding_window: false
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-6);
  EXPECT_EQ(s.eos_token_ids, std::vector<int64_t>{151645});
  EXPECT_EQ(abl::model::parameter_count(s), 494032768);
}

TEST(ModelSpec, Qwen25_7B) {
  ModelSpec s = load("Qwen2.5-7B-Instruct");
  EXPECT_EQ(s.vocab_size, 152064);
  EXPECT_EQ(s.hidden_size, 3584);
  EXPECT_EQ(s.intermediate_size, 18944);
  EXPECT_EQ(s.num_layers, 28);
  EXPECT_EQ(s.num_heads, 28);
  EXPECT_EQ(s.num_kv_heads, 4);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_EQ(abl::model::parameter_count(s), 7615616512);
}

TEST(ModelSpec, QwenSlidingWindowSwitch) {
  nlohmann::json c = abl::io::read_json_file(config_path("Qwen2.5-7B-Instruct")).json();
  c["use_sliding_window"] = true;
  ModelSpec s = abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "c.json"));
  EXPECT_EQ(s.sliding_window, 131072);
  ASSERT_EQ(s.sliding_layers.size(), 28u);  // max_window_layers 28 of 28 layers: none slides
  EXPECT_FALSE(s.uses_sliding_window(27));
  EXPECT_FALSE(s.uses_sliding_window(0));
  c["max_window_layers"] = 20;
  s = abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "c.json"));
  EXPECT_FALSE(s.uses_sliding_window(19));
  EXPECT_TRUE(s.uses_sliding_window(20));
  EXPECT_TRUE(s.uses_sliding_window(27));
}

TEST(ModelSpec, Qwen3_06B) {
  ModelSpec s = load("Qwen3-0.6B");
  EXPECT_EQ(s.architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(s.hidden_size, 1024);
  EXPECT_EQ(s.num_heads, 16);
  EXPECT_EQ(s.num_kv_heads, 8);
  EXPECT_EQ(s.head_dim, 128);  // explicit, and NH * HD != H
  EXPECT_EQ(s.q_dim(), 2048);
  EXPECT_EQ(s.kv_dim(), 1024);
  EXPECT_FALSE(s.qkv_bias);
  EXPECT_TRUE(s.qk_norm);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_EQ(s.max_position_embeddings, 40960);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_EQ(abl::model::parameter_count(s), 596049920);
  // Absent head_dim: Qwen3Config's default is 128, not hidden / heads.
  nlohmann::json c = abl::io::read_json_file(config_path("Qwen3-0.6B")).json();
  c.erase("head_dim");
  EXPECT_EQ(abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "c.json")).head_dim, 128);
}

TEST(ModelSpec, UnsupportedArchitecturesAreRefusedWithTheList) {
  EXPECT_TRUE(abl::testing::contains_all(
      error_with("architectures", {"GPT2LMHeadModel"}),
      {"my/config.json", "'GPT2LMHeadModel'", "is not supported", "LlamaForCausalLM", "MistralForCausalLM",
       "Qwen2ForCausalLM", "Qwen3ForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM",
       "Gemma3ForConditionalGeneration", "Phi3ForCausalLM"}));
  EXPECT_TRUE(abl::testing::contains_all(error_with("architectures", "<erase>"),
                                         {"my/config.json", "'architectures' is missing",
                                          "LlamaForCausalLM"}));
  EXPECT_TRUE(abl::testing::contains_all(error_with("architectures", nlohmann::json::array()),
                                         {"my/config.json", "key 'architectures'", "non-empty"}));
}

TEST(ModelSpec, BadValuesNameTheFileAndKey) {
  struct Case {
    const char* key;
    nlohmann::json value;
    std::vector<std::string> expect;
  };
  const std::vector<Case> cases = {
      {"vocab_size", "<erase>", {"key 'vocab_size' is missing"}},
      {"hidden_size", "4096", {"key 'hidden_size'", "must be an integer, found string"}},
      {"hidden_size", -4096, {"key 'hidden_size'", "must be positive"}},
      {"intermediate_size", 0, {"key 'intermediate_size'", "must be positive"}},
      {"num_hidden_layers", 1.5, {"key 'num_hidden_layers'", "must be an integer"}},
      {"num_attention_heads", 0, {"key 'num_attention_heads'", "must be positive"}},
      {"num_key_value_heads", 5, {"key 'num_key_value_heads'", "5 does not divide num_attention_heads 32"}},
      {"num_key_value_heads", 0, {"key 'num_key_value_heads'", "must be positive"}},
      {"head_dim", 127, {"key 'head_dim'", "even"}},
      {"vocab_size", int64_t{1} << 40, {"key 'vocab_size'", "implausibly large"}},
      {"rms_norm_eps", 0, {"key 'rms_norm_eps'", "positive"}},
      {"rms_norm_eps", "small", {"key 'rms_norm_eps'", "must be a number"}},
      {"rope_theta", -1.0, {"key 'rope_theta'", "positive"}},
      {"max_position_embeddings", 0, {"key 'max_position_embeddings'", "positive"}},
      {"tie_word_embeddings", 1, {"key 'tie_word_embeddings'", "true or false"}},
      {"eos_token_id", 128256, {"key 'eos_token_id'", "outside the vocabulary [0, 128256)"}},
      {"eos_token_id", {1, "2"}, {"key 'eos_token_id[1]'", "must be an integer"}},
      {"bos_token_id", -1, {"key 'bos_token_id'", "outside the vocabulary"}},
      {"hidden_act", "gelu", {"key 'hidden_act'", "'gelu' is not supported"}},
      {"rope_scaling", {{"type", "ntk-by-parts"}, {"factor", 2.0}},
       {"key 'rope_scaling'", "rope type 'ntk-by-parts' is not supported",
        "(supported: default, linear, dynamic, llama3, longrope, yarn, proportional)"}},
      {"rope_scaling", {{"type", "dynamic"}}, {"key 'rope_scaling.factor' is missing"}},
      {"rope_scaling", {{"rope_type", "yarn"}, {"original_max_position_embeddings", 8192}},
       {"key 'rope_scaling.factor' is missing"}},
      {"rope_scaling", {{"factor", 2.0}}, {"key 'rope_scaling'", "has no 'rope_type'"}},
      {"rope_scaling", 8, {"key 'rope_scaling'", "must be an object or null"}},
      {"rope_scaling",
       {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0}},
       {"key 'rope_scaling.original_max_position_embeddings' is missing"}},
      {"rope_scaling",
       {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 4.0}, {"high_freq_factor", 2.0},
        {"original_max_position_embeddings", 8192}},
       {"key 'rope_scaling.high_freq_factor'", "must not be below low_freq_factor"}},
      {"rope_scaling",
       {{"rope_type", "llama3"}, {"factor", "8"}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
        {"original_max_position_embeddings", 8192}},
       {"key 'rope_scaling.factor'", "must be a number"}},
  };
  for (const Case& c : cases) {
    std::string msg = error_with(c.key, c.value);
    EXPECT_TRUE(abl::testing::contains_all(msg, {"my/config.json"})) << c.key << " " << c.value;
    for (const std::string& e : c.expect) {
      EXPECT_TRUE(abl::testing::contains_all(msg, {e})) << c.key << " " << c.value;
    }
  }
}

TEST(ModelSpec, HiddenNotDivisibleByHeadsWithoutHeadDim) {
  nlohmann::json c = llama8b();
  c["hidden_size"] = 4100;
  EXPECT_TRUE(abl::testing::contains_all(
      spec_error(c), {"my/config.json", "key 'hidden_size'", "not divisible by num_attention_heads 32"}));
  c["head_dim"] = 128;  // explicit head_dim: hidden need not be NH * HD
  EXPECT_EQ(abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "c.json")).head_dim, 128);
}

TEST(ModelSpec, DefaultsOfAbsentKeys) {
  nlohmann::json c = llama8b();
  for (const char* k : {"num_key_value_heads", "rope_theta", "rope_scaling", "tie_word_embeddings",
                        "rms_norm_eps", "bos_token_id", "eos_token_id", "torch_dtype",
                        "max_position_embeddings", "hidden_act"}) {
    c.erase(k);
  }
  ModelSpec s = abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "c.json"));
  EXPECT_EQ(s.num_kv_heads, 32);
  EXPECT_DOUBLE_EQ(s.rope_theta, 10000.0);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-6);
  EXPECT_FALSE(s.bos_token_id.has_value());
  EXPECT_TRUE(s.eos_token_ids.empty());
  EXPECT_FALSE(s.torch_dtype.has_value());
  EXPECT_EQ(s.max_position_embeddings, 2048);
}

TEST(ModelSpec, NewerTransformersSpellings) {
  // transformers v5 writes "dtype" and nests RoPE settings in "rope_parameters".
  nlohmann::json c = llama8b();
  c.erase("torch_dtype");
  c["dtype"] = "float16";
  nlohmann::json rope = c["rope_scaling"];
  rope["rope_theta"] = 500000.0;
  c.erase("rope_scaling");
  c.erase("rope_theta");
  c["rope_parameters"] = rope;
  ModelSpec s = abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "c.json"));
  EXPECT_EQ(s.torch_dtype, abl::DType::f16);
  EXPECT_DOUBLE_EQ(s.rope_theta, 500000.0);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::llama3);
  EXPECT_DOUBLE_EQ(s.rope_scaling.factor, 8.0);
  c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 1e6}};
  s = abl::model::parse_model_spec(abl::io::parse_json(c.dump(), "c.json"));
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::none);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
}

TEST(ModelSpec, LoadFromFolder) {
  abl::testing::TempDir dir;
  dir.write("config.json", llama8b().dump());
  ModelSpec s = abl::model::load_model_spec(dir.path().string());
  EXPECT_EQ(s.source, dir.file("config.json"));
  EXPECT_EQ(s.num_layers, 32);
  std::string empty = dir.file("empty");
  std::filesystem::create_directories(empty);
  EXPECT_ABL_ERROR(abl::model::load_model_spec(empty), empty, "no config.json");
  dir.write("broken.json", "{\"architectures\": [\"LlamaForCausalLM\"],\n \"vocab_size\": }");
  EXPECT_ABL_ERROR(abl::model::load_model_spec(dir.file("broken.json")), dir.file("broken.json") + ":2:",
                   "invalid JSON");
}

TEST(ModelSpec, Describe) {
  std::string d = abl::model::describe(load("Qwen3-0.6B"));
  EXPECT_TRUE(abl::testing::contains_all(d, {"Qwen3ForCausalLM", "L=28", "HD=128", "tied", "q/k norm"}));
}

}  // namespace
