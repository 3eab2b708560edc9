// The weight table per family and check_weights against real (tiny) files: it passes on the
// fixture, and lists every missing tensor, wrong shape and wrong dtype with file and tensor names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "abl/io/json_file.h"
#include "abl/io/safetensors.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"
#include "common/error_of.h"
#include "common/temp_dir.h"
#include "io/fused_experts_test_util.h"
#include "io/safetensors_test_util.h"

namespace {

namespace fs = std::filesystem;
using abl::model::ModelSpec;
using abl::model::WeightRole;
using abl::testing::RawTensor;

const std::string kTiny = std::string(ABL_FIXTURE_DIR) + "/tiny-llama";
const std::string kTinySharded = std::string(ABL_FIXTURE_DIR) + "/tiny-llama-sharded";

ModelSpec config_spec(const std::string& name) {
  return abl::model::load_model_spec(std::string(ABL_FIXTURE_DIR) + "/configs/" + name + ".json");
}

std::vector<std::string> names_of(const std::vector<abl::model::WeightSlot>& slots, int64_t layer) {
  std::vector<std::string> v;
  for (const auto& s : slots) v.push_back(abl::model::weight_name(s, layer));
  return v;
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(WeightTable, LlamaLayerSlotsInUnitOrder) {
  ModelSpec s = config_spec("Llama-3.1-8B-Instruct");
  std::vector<std::string> names = names_of(abl::model::layer_slots(s), 7);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "model.layers.7.input_layernorm.weight",
                       "model.layers.7.self_attn.q_proj.weight",
                       "model.layers.7.self_attn.k_proj.weight",
                       "model.layers.7.self_attn.v_proj.weight",
                       "model.layers.7.self_attn.o_proj.weight",
                       "model.layers.7.post_attention_layernorm.weight",
                       "model.layers.7.mlp.gate_proj.weight",
                       "model.layers.7.mlp.up_proj.weight",
                       "model.layers.7.mlp.down_proj.weight",
                   }));
  auto slots = abl::model::layer_slots(s);
  EXPECT_EQ(slots[1].shape, (std::vector<int64_t>{4096, 4096}));
  EXPECT_EQ(slots[2].shape, (std::vector<int64_t>{1024, 4096}));
  EXPECT_EQ(slots[4].shape, (std::vector<int64_t>{4096, 4096}));
  EXPECT_EQ(slots[8].shape, (std::vector<int64_t>{4096, 14336}));
  auto globals = abl::model::global_slots(s);
  ASSERT_EQ(globals.size(), 3u);
  EXPECT_EQ(globals[2].pattern, "lm_head.weight");
  EXPECT_EQ(globals[2].need, abl::model::Need::required);
  EXPECT_FALSE(globals[2].tied_to.has_value());
  EXPECT_EQ(globals[0].shape, (std::vector<int64_t>{128256, 4096}));
}

TEST(WeightTable, FamilyFlagsAddSlots) {
  ModelSpec qwen2 = config_spec("Qwen2.5-0.5B-Instruct");
  std::vector<std::string> q2 = names_of(abl::model::layer_slots(qwen2), 0);
  EXPECT_TRUE(has(q2, "model.layers.0.self_attn.q_proj.bias"));
  EXPECT_TRUE(has(q2, "model.layers.0.self_attn.k_proj.bias"));
  EXPECT_TRUE(has(q2, "model.layers.0.self_attn.v_proj.bias"));
  EXPECT_FALSE(has(q2, "model.layers.0.self_attn.o_proj.bias"));
  EXPECT_FALSE(has(q2, "model.layers.0.self_attn.q_norm.weight"));
  auto lm = abl::model::global_slots(qwen2)[2];
  EXPECT_EQ(lm.need, abl::model::Need::optional);  // tied
  EXPECT_EQ(lm.tied_to, WeightRole::embed);

  ModelSpec qwen3 = config_spec("Qwen3-0.6B");
  auto q3slots = abl::model::layer_slots(qwen3);
  std::vector<std::string> q3 = names_of(q3slots, 3);
  EXPECT_TRUE(has(q3, "model.layers.3.self_attn.q_norm.weight"));
  EXPECT_TRUE(has(q3, "model.layers.3.self_attn.k_norm.weight"));
  EXPECT_FALSE(has(q3, "model.layers.3.self_attn.q_proj.bias"));
  for (const auto& slot : q3slots) {
    if (slot.role == WeightRole::q_proj) {
      EXPECT_EQ(slot.shape, (std::vector<int64_t>{2048, 1024}));
    }
    if (slot.role == WeightRole::o_proj) {
      EXPECT_EQ(slot.shape, (std::vector<int64_t>{1024, 2048}));
    }
    if (slot.role == WeightRole::q_norm) {
      EXPECT_EQ(slot.shape, (std::vector<int64_t>{128}));
    }
  }
  // Expanded list: embed, L * slots, norm, lm_head.
  auto all = abl::model::expected_weights(qwen3);
  EXPECT_EQ(all.size(), 1 + 28 * q3slots.size() + 2);
  EXPECT_EQ(all.front().name, "model.embed_tokens.weight");
  EXPECT_EQ(all.back().name, "lm_head.weight");
  EXPECT_EQ(all[1].layer, 0);
}

TEST(WeightTable, Bytes) {
  ModelSpec s = config_spec("Llama-3.1-8B-Instruct");
  EXPECT_EQ(abl::model::weight_bytes(s, abl::DType::bf16), 2u * 8030261248u);
  EXPECT_EQ(abl::model::weight_bytes(s, abl::DType::f32), 4u * 8030261248u);
}

TEST(CheckWeights, PassesOnTheTinyFixture) {
  for (const std::string& dir : {kTiny, kTinySharded}) {
    ModelSpec spec = abl::model::load_model_spec(dir);
    abl::io::SafetensorsReader reader(dir);
    abl::model::WeightCheck c = abl::model::inspect_weights(spec, reader);
    EXPECT_TRUE(c.problems.empty()) << dir << ": " << (c.problems.empty() ? "" : c.problems[0]);
    EXPECT_TRUE(c.unexpected.empty()) << dir;
    EXPECT_NO_THROW(abl::model::check_weights(spec, reader)) << dir;
    EXPECT_EQ(abl::model::parameter_count(spec), abl::model::summarize_files(reader).num_params);
  }
}

// A copy of the tiny model in a temp folder, with edits applied to its tensors.
class BrokenTiny : public ::testing::Test {
 protected:
  void SetUp() override {
    abl::io::SafetensorsReader r(kTiny);
    for (const abl::io::TensorInfo& t : r.tensors()) {
      std::string bytes(t.nbytes(), '\0');
      r.read_bytes(t, 0, t.nbytes(), bytes.data());
      tensors_.push_back({t.name, t.dtype_name, t.shape, bytes});
    }
    fs::copy_file(kTiny + "/config.json", dir_.file("config.json"));
    spec_ = abl::model::load_model_spec(dir_.path().string());
  }
  RawTensor& get(const std::string& name) {
    for (RawTensor& t : tensors_) {
      if (t.name == name) return t;
    }
    throw std::runtime_error("no " + name);
  }
  void drop(const std::string& name) {
    tensors_.erase(std::remove_if(tensors_.begin(), tensors_.end(),
                                  [&](const RawTensor& t) { return t.name == name; }),
                   tensors_.end());
  }
  std::string write() {
    std::string path = dir_.file("model.safetensors");
    std::ofstream(path, std::ios::binary) << abl::testing::encode_safetensors(tensors_);
    return path;
  }
  std::string check_error() {
    write();
    abl::io::SafetensorsReader r(dir_.path().string());
    return abl::testing::thrown_error_of([&] { abl::model::check_weights(spec_, r); });
  }
  abl::testing::TempDir dir_;
  std::vector<RawTensor> tensors_;
  ModelSpec spec_;
};

TEST_F(BrokenTiny, MissingTensor) {
  drop("model.layers.1.mlp.up_proj.weight");
  std::string msg = check_error();
  EXPECT_TRUE(abl::testing::contains_all(
      msg, {dir_.file("model.safetensors"), "1 problem with the weights", "LlamaForCausalLM",
            "config.json", "missing tensor 'model.layers.1.mlp.up_proj.weight'"}));
}

TEST_F(BrokenTiny, WrongShape) {
  RawTensor& t = get("model.layers.0.self_attn.k_proj.weight");  // (32, 64) BF16
  t.shape = {64, 32};  // same byte count, transposed
  std::string msg = check_error();
  EXPECT_TRUE(abl::testing::contains_all(
      msg, {"'model.layers.0.self_attn.k_proj.weight' in " + dir_.file("model.safetensors"),
            "shape [64, 32], expected [32, 64]", "(num_key_value_heads*head_dim, hidden_size)"}));
}

TEST_F(BrokenTiny, WrongDtype) {
  RawTensor& t = get("model.norm.weight");  // F32 (64)
  t.dtype = "I8";
  t.bytes.resize(64);
  std::string msg = check_error();
  EXPECT_TRUE(abl::testing::contains_all(
      msg, {"'model.norm.weight' in " + dir_.file("model.safetensors"), "dtype I8 is unsupported",
            "F32, F16, BF16"}));
}

TEST_F(BrokenTiny, AllProblemsAreListedUpToACap) {
  drop("lm_head.weight");
  drop("model.layers.0.input_layernorm.weight");
  get("model.layers.1.self_attn.o_proj.weight").shape = {32, 128};
  get("model.embed_tokens.weight").dtype = "U16";
  std::string msg = check_error();
  EXPECT_TRUE(abl::testing::contains_all(
      msg, {"4 problems", "missing tensor 'lm_head.weight'",
            "missing tensor 'model.layers.0.input_layernorm.weight'",
            "'model.layers.1.self_attn.o_proj.weight'", "shape [32, 128], expected [64, 64]",
            "'model.embed_tokens.weight'", "dtype U16"}));
  write();
  abl::io::SafetensorsReader r(dir_.path().string());
  msg = abl::testing::thrown_error_of([&] { abl::model::check_weights(spec_, r, 2); });
  EXPECT_TRUE(abl::testing::contains_all(msg, {"4 problems", "... and 2 more"}));
}

TEST_F(BrokenTiny, ExtrasAreReportedNotFatal) {
  tensors_.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", "F32", {8}, std::string(32, '\0')});
  tensors_.push_back({"vision_tower.proj.weight", "F32", {2}, std::string(8, '\0')});
  write();
  abl::io::SafetensorsReader r(dir_.path().string());
  abl::model::WeightCheck c = abl::model::inspect_weights(spec_, r);
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.unexpected, std::vector<std::string>{"vision_tower.proj.weight"});
  EXPECT_EQ(c.ignored, std::vector<std::string>{"model.layers.0.self_attn.rotary_emb.inv_freq"});
  EXPECT_NO_THROW(abl::model::check_weights(spec_, r));
}

TEST_F(BrokenTiny, TiedModelNeedsNoHead) {
  nlohmann::json config = abl::io::read_json_file(dir_.file("config.json")).json();
  config["tie_word_embeddings"] = true;
  abl::io::write_json_file(dir_.file("config.json"), config);
  spec_ = abl::model::load_model_spec(dir_.path().string());
  // A stored head is ignored, as transformers does.
  write();
  abl::io::SafetensorsReader with_head(dir_.path().string());
  abl::model::WeightCheck c = abl::model::inspect_weights(spec_, with_head);
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.ignored, std::vector<std::string>{"lm_head.weight"});
  drop("lm_head.weight");
  write();
  abl::io::SafetensorsReader without(dir_.path().string());
  EXPECT_NO_THROW(abl::model::check_weights(spec_, without));
  EXPECT_EQ(abl::model::parameter_count(spec_), abl::model::summarize_files(without).num_params);
}

TEST(InfoHelpers, SummaryAndTable) {
  abl::io::SafetensorsReader r(kTinySharded);
  abl::model::FileSummary s = abl::model::summarize_files(r);
  EXPECT_EQ(s.num_tensors, 21);
  EXPECT_EQ(s.tensors_by_dtype.at("F32"), 5);  // 2 norms per layer + the final norm
  EXPECT_EQ(s.tensors_by_dtype.at("BF16"), 16);
  EXPECT_EQ(s.bytes_by_dtype.at("F32"), 5u * 64 * 4);
  EXPECT_EQ(s.total_bytes, s.bytes_by_dtype.at("F32") + s.bytes_by_dtype.at("BF16"));
  std::string table = abl::model::format_tensor_table(r);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 21);
  EXPECT_NE(table.find("model.norm.weight"), std::string::npos);
  EXPECT_NE(table.find("model-00003-of-00003.safetensors"), std::string::npos);
  EXPECT_NE(table.find("[64, 128]"), std::string::npos);
}

}  // namespace

// The golden fixtures of the other families, rewritten: Gemma 3's multimodal checkpoint in the
// newer spelling (model.language_model.*, lm_head.weight) is recognised from its tensor names and
// its vision tower is ignored, not reported.
namespace {

std::vector<RawTensor> raw_tensors(const std::string& dir) {
  abl::io::SafetensorsReader r(dir);
  std::vector<RawTensor> out;
  for (const abl::io::TensorInfo& t : r.tensors()) {
    std::string bytes(t.nbytes(), '\0');
    r.read_bytes(t, 0, t.nbytes(), bytes.data());
    out.push_back({t.name, t.dtype_name, t.shape, bytes});
  }
  return out;
}

void write_folder(const abl::testing::TempDir& dir, const std::string& from, const std::vector<RawTensor>& tensors) {
  fs::copy_file(from + "/config.json", dir.file("config.json"));
  std::ofstream(dir.file("model.safetensors"), std::ios::binary) << abl::testing::encode_safetensors(tensors);
}

// `tensors` (a multimodal model renamed to transformers >= 4.52's spelling: model.language_model.*,
// lm_head.weight) written beside `src`'s config load with that spelling, `vision` tensors ignored.
void expect_newer_spelling_loads(const std::string& src, const std::vector<RawTensor>& tensors, size_t vision) {
  abl::testing::TempDir dir;
  write_folder(dir, src, tensors);
  const ModelSpec newer = abl::model::load_model_spec(dir.path().string());
  EXPECT_EQ(newer.weight_prefix, "model.language_model.");
  EXPECT_EQ(newer.lm_head_name, "lm_head.weight");
  abl::io::SafetensorsReader nr(dir.path().string());
  const abl::model::WeightCheck nc = abl::model::inspect_weights(newer, nr);
  EXPECT_TRUE(nc.problems.empty()) << (nc.problems.empty() ? "" : nc.problems[0]);
  EXPECT_EQ(nc.ignored.size(), vision);
}

}  // namespace

// A multimodal golden model as released (language_model.model.*, language_model.lm_head.weight)
// and renamed as transformers >= 4.52 saves it (model.language_model.*, lm_head.weight, the vision
// tensors under model.): both load, and the `vision` tensors are ignored either way.
void check_both_multimodal_spellings(const char* fixture, size_t vision) {
  const std::string src = std::string(ABL_FIXTURE_DIR) + "/golden/" + fixture;
  const ModelSpec legacy = abl::model::load_model_spec(src);
  EXPECT_EQ(legacy.weight_prefix, "language_model.model.");
  EXPECT_EQ(legacy.lm_head_name, "language_model.lm_head.weight");
  abl::io::SafetensorsReader lr(src);
  const abl::model::WeightCheck lc = abl::model::inspect_weights(legacy, lr);
  EXPECT_TRUE(lc.problems.empty()) << (lc.problems.empty() ? "" : lc.problems[0]);
  EXPECT_TRUE(lc.unexpected.empty());
  EXPECT_EQ(lc.ignored.size(), vision);

  std::vector<RawTensor> tensors = raw_tensors(src);
  for (RawTensor& t : tensors) {
    if (t.name.rfind("language_model.model.", 0) == 0) {
      t.name = "model.language_model." + t.name.substr(21);
    } else if (t.name == "language_model.lm_head.weight") {
      t.name = "lm_head.weight";
    } else {
      t.name = "model." + t.name;  // model.vision_tower.*, model.multi_modal_projector.*
    }
  }
  expect_newer_spelling_loads(src, tensors, vision);
}

TEST(CheckWeights, Gemma3MultimodalBothSpellings) {
  check_both_multimodal_spellings("gemma3-mm", 3);  // tied: no head tensor
}

// Mistral 3 (Mistral Small 3.1/3.2) has an untied head: language_model.lm_head.weight in the
// released spelling, lm_head.weight in the newer one; five Pixtral tower and projector tensors.
TEST(CheckWeights, Mistral3MultimodalBothSpellingsAndItsHead) {
  const ModelSpec s = abl::model::load_model_spec(std::string(ABL_FIXTURE_DIR) + "/golden/mistral3-mm");
  EXPECT_EQ(s.architecture, "Mistral3ForConditionalGeneration");
  EXPECT_EQ(s.head_dim, 24);
  EXPECT_EQ(s.sliding_window, 0);
  EXPECT_DOUBLE_EQ(s.rms_norm_eps, 1e-6);  // MistralConfig's default: the text_config leaves it out
  EXPECT_FALSE(s.tied_embeddings);
  check_both_multimodal_spellings("mistral3-mm", 5);
}

// Qwen2.5-VL as released: the language model under model.* (as a text model's), the vision tower
// under visual.*, the head lm_head.weight; renamed as transformers >= 4.52 saves it
// (model.language_model.*, model.visual.*) it loads the same tensors. Qwen3-VL ships the newer one.
TEST(CheckWeights, QwenVlBothSpellings) {
  const std::string src = std::string(ABL_FIXTURE_DIR) + "/golden/qwen2.5-vl-legacy";
  const ModelSpec legacy = abl::model::load_model_spec(src);
  EXPECT_TRUE(legacy.multimodal);
  EXPECT_EQ(legacy.weight_prefix, "model.");
  EXPECT_EQ(legacy.lm_head_name, "lm_head.weight");
  EXPECT_TRUE(legacy.qkv_bias);
  abl::io::SafetensorsReader lr(src);
  const abl::model::WeightCheck lc = abl::model::inspect_weights(legacy, lr);
  EXPECT_TRUE(lc.problems.empty()) << (lc.problems.empty() ? "" : lc.problems[0]);
  EXPECT_TRUE(lc.unexpected.empty()) << (lc.unexpected.empty() ? "" : lc.unexpected[0]);
  EXPECT_EQ(lc.ignored.size(), 3u);  // visual.*

  std::vector<RawTensor> tensors = raw_tensors(src);
  for (RawTensor& t : tensors) {
    if (t.name.rfind("model.", 0) == 0) t.name = "model.language_model." + t.name.substr(6);
    if (t.name.rfind("visual.", 0) == 0) t.name = "model." + t.name;
  }
  expect_newer_spelling_loads(src, tensors, 3);  // model.visual.*

  const ModelSpec q3 = abl::model::load_model_spec(std::string(ABL_FIXTURE_DIR) + "/golden/qwen3-vl-mm");
  EXPECT_EQ(q3.weight_prefix, "model.language_model.");
  EXPECT_TRUE(q3.qk_norm);
  EXPECT_TRUE(q3.tied_embeddings);  // only at the top level of its config
}

// GLM-4.5: the router's fp32 correction bias is a slot of every MoE layer; the tensors of the MTP layer
// stored after the last decoder layer (model.layers.{L}.*) are ignored, not unexpected; a tensor of a
// layer past them still is.
TEST(CheckWeights, Glm4MoeBiasSlotAndMtpLayer) {
  const std::string src = std::string(ABL_FIXTURE_DIR) + "/golden/glm4-moe";
  const ModelSpec s = abl::model::load_model_spec(src);
  ASSERT_EQ(s.mtp_layers, 1);
  abl::io::SafetensorsReader r(src);
  const abl::model::WeightCheck c = abl::model::inspect_weights(s, r);
  EXPECT_TRUE(c.problems.empty()) << (c.problems.empty() ? "" : c.problems[0]);
  EXPECT_TRUE(c.unexpected.empty()) << (c.unexpected.empty() ? "" : c.unexpected[0]);
  EXPECT_EQ(c.ignored.size(), 4u);
  for (const std::string& name : c.ignored) EXPECT_EQ(name.rfind("model.layers.3.", 0), 0u) << name;
  int biases = 0;
  for (const abl::model::ExpectedWeight& w : abl::model::expected_weights(s)) {
    if (w.role != abl::model::WeightRole::router_bias) continue;
    ++biases;
    EXPECT_EQ(w.shape, (std::vector<int64_t>{8}));
    EXPECT_EQ(r.tensor(w.name).dtype_name, "F32");
  }
  EXPECT_EQ(biases, 2);  // layers 1 and 2; layer 0 is dense

  std::vector<RawTensor> tensors = raw_tensors(src);
  tensors.push_back({"model.layers.4.enorm.weight", "F32", {64}, std::string(64 * 4, '\0')});
  abl::testing::TempDir dir;
  write_folder(dir, src, tensors);
  abl::io::SafetensorsReader r2(dir.path().string());
  const abl::model::WeightCheck c2 = abl::model::inspect_weights(s, r2);
  EXPECT_EQ(c2.unexpected, (std::vector<std::string>{"model.layers.4.enorm.weight"}));
}

namespace {

// Every weight of `a` (read from folder `da`) equals the one of `b` in the same place, by role, expert
// and shape; returns how many of b's are 3-D blocks (stacked experts).
int64_t expect_same_weights(const ModelSpec& a, const std::string& da, const ModelSpec& b, const std::string& db) {
  abl::io::SafetensorsReader ra(da), rb(db);
  const std::vector<abl::model::ExpectedWeight> before = abl::model::expected_weights(a);
  const std::vector<abl::model::ExpectedWeight> after = abl::model::expected_weights(b);
  EXPECT_EQ(before.size(), after.size());
  int64_t blocks = 0;
  for (size_t i = 0; i < std::min(before.size(), after.size()); ++i) {
    EXPECT_EQ(before[i].role, after[i].role);
    EXPECT_EQ(before[i].expert, after[i].expert);
    EXPECT_EQ(before[i].shape, after[i].shape);
    if (before[i].shape != after[i].shape) continue;
    const int64_t n = abl::model::element_count(before[i].shape);
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    abl::model::read_weight(&ra, before[i], 0, n, x.data());
    abl::model::read_weight(&rb, after[i], 0, n, y.data());
    EXPECT_EQ(x, y) << before[i].name << " vs " << after[i].name << " at " << after[i].file_offset;
    if (after[i].expert >= 0 && after[i].file_shape.size() == 3) ++blocks;
  }
  return blocks;
}

}  // namespace

// Experts stacked as transformers 5 saves them (tests/unit/io/fused_experts_test_util.h): the
// spec takes the layout from the tensor names, every expert slot is a block of the two stacked
// tensors, and each block reads exactly the values of that expert's own tensor in the original.
class FusedExperts : public ::testing::TestWithParam<const char*> {};

TEST_P(FusedExperts, EveryExpertSlotReadsItsOwnTensor) {
  const std::string src = std::string(ABL_FIXTURE_DIR) + "/golden/" + GetParam();
  abl::testing::TempDir dir;
  const ModelSpec per_expert = abl::model::load_model_spec(src);
  EXPECT_FALSE(per_expert.fused_experts);
  int64_t moe_layers = 0;
  for (int64_t l = 0; l < per_expert.num_layers; ++l) moe_layers += per_expert.is_moe_layer(l);
  EXPECT_EQ(abl::testing::fuse_experts(src, dir.path().string()), moe_layers);
  const ModelSpec fused = abl::model::load_model_spec(dir.path().string());
  EXPECT_TRUE(fused.fused_experts);
  EXPECT_NE(abl::model::describe(fused).find("experts fused"), std::string::npos);
  abl::io::SafetensorsReader b(dir.path().string());
  const abl::model::WeightCheck check = abl::model::inspect_weights(fused, b);
  EXPECT_TRUE(check.problems.empty()) << (check.problems.empty() ? "" : check.problems[0]);
  EXPECT_TRUE(check.unexpected.empty()) << (check.unexpected.empty() ? "" : check.unexpected[0]);
  EXPECT_EQ(expect_same_weights(per_expert, src, fused, dir.path().string()),
            3 * per_expert.num_experts * moe_layers);
}

// Qwen3-VL-MoE's experts as released (stacked and transposed for x @ W), stacked as transformers 5
// holds them, and one tensor each (as its FP8 release names them): the spec takes the layout from
// the files, and every expert slot reads the same values in all three.
TEST(TransposedExperts, Qwen3VlMoeReadsTheSameInEveryLayout) {
  const std::string src = std::string(ABL_FIXTURE_DIR) + "/golden/qwen3-vl-moe-mm";
  const ModelSpec released = abl::model::load_model_spec(src);
  EXPECT_TRUE(released.fused_experts && released.transposed_experts);
  int64_t moe_layers = 0;
  for (int64_t l = 0; l < released.num_layers; ++l) moe_layers += released.is_moe_layer(l);
  ASSERT_GT(moe_layers, 0);
  ASSERT_LT(moe_layers, released.num_layers);  // a dense layer among them (mlp_only_layers)
  abl::io::SafetensorsReader r(src);
  const abl::model::WeightCheck check = abl::model::inspect_weights(released, r);
  EXPECT_TRUE(check.problems.empty()) << (check.problems.empty() ? "" : check.problems[0]);
  EXPECT_TRUE(check.unexpected.empty()) << (check.unexpected.empty() ? "" : check.unexpected[0]);
  for (const bool per_expert : {false, true}) {
    abl::testing::TempDir dir;
    EXPECT_EQ(abl::testing::untranspose_experts(src, dir.path().string(), per_expert), moe_layers);
    const ModelSpec other = abl::model::load_model_spec(dir.path().string());
    EXPECT_EQ(other.fused_experts, !per_expert);
    EXPECT_FALSE(other.transposed_experts);
    abl::io::SafetensorsReader ro(dir.path().string());
    const abl::model::WeightCheck c = abl::model::inspect_weights(other, ro);
    EXPECT_TRUE(c.problems.empty()) << (c.problems.empty() ? "" : c.problems[0]);
    EXPECT_TRUE(c.unexpected.empty()) << (c.unexpected.empty() ? "" : c.unexpected[0]);
    EXPECT_EQ(expect_same_weights(released, src, other, dir.path().string()),
              per_expert ? 0 : 3 * released.num_experts * moe_layers);
  }
}

INSTANTIATE_TEST_SUITE_P(MoeFixtures, FusedExperts,
                         ::testing::Values("mixtral-moe", "qwen2-moe-shared", "qwen3-moe", "glm4-moe",
                                           "deepseek-v3-mla"),
                         [](const auto& p) {
                           std::string name = p.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Nemotron-H as transformers 5 writes it (model.*, stacked experts; or backbone.embedding.weight): the spec takes
// the prefix, the embedding's name and the experts' layout from the files, and every slot reads the same values;
// also with LatentMoE blocks, whose stacked experts are (E, Fm, D) / (E, D, Fm).
class NemotronHLayouts : public ::testing::TestWithParam<const char*> {};

TEST_P(NemotronHLayouts, Transformers5FilesReadTheSameWeights) {
  const std::string src = std::string(ABL_FIXTURE_DIR) + "/golden/" + GetParam();
  const ModelSpec released = abl::model::load_model_spec(src);
  EXPECT_EQ(released.weight_prefix, "backbone.");
  EXPECT_FALSE(released.fused_experts);
  int64_t moe_layers = 0;
  for (int64_t l = 0; l < released.num_layers; ++l) moe_layers += released.is_moe_layer(l);
  ASSERT_EQ(moe_layers, 2);
  for (const bool stacked : {true, false}) {
    abl::testing::TempDir dir;
    EXPECT_EQ(abl::testing::nemotron_h_transformers5_layout(src, dir.path().string(), stacked), stacked ? 2 : 0);
    const ModelSpec other = abl::model::load_model_spec(dir.path().string());
    EXPECT_EQ(other.weight_prefix, stacked ? "model." : "backbone.");
    EXPECT_EQ(other.embed_name, stacked ? "embeddings.weight" : "embedding.weight");
    EXPECT_EQ(other.fused_experts, stacked);
    abl::io::SafetensorsReader ro(dir.path().string());
    const abl::model::WeightCheck c = abl::model::inspect_weights(other, ro);
    EXPECT_TRUE(c.problems.empty()) << (c.problems.empty() ? "" : c.problems[0]);
    EXPECT_TRUE(c.unexpected.empty()) << (c.unexpected.empty() ? "" : c.unexpected[0]);
    EXPECT_EQ(expect_same_weights(released, src, other, dir.path().string()),
              stacked ? 2 * released.num_experts * moe_layers : 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NemotronHLayouts, ::testing::Values("nemotron-h-moe", "nemotron-h-latent-moe"),
                         [](const auto& p) {
                           std::string name = p.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(CheckWeights, FusedExpertsInAnotherOrderAreRefusedNamingTheShape) {
  // gate_up_proj as (E, H, 2*Fm): Mixtral's fixture has H = 64, Fm = 64, so the shapes differ.
  const std::string src = std::string(ABL_FIXTURE_DIR) + "/golden/mixtral-moe";
  abl::testing::TempDir dir;
  abl::testing::fuse_experts(src, dir.path().string(), /*transpose_gate_up=*/true);
  const ModelSpec spec = abl::model::load_model_spec(dir.path().string());
  EXPECT_TRUE(spec.fused_experts);
  abl::io::SafetensorsReader r(dir.path().string());
  const std::string msg = abl::testing::thrown_error_of([&] { abl::model::check_weights(spec, r); });
  EXPECT_TRUE(abl::testing::contains_all(
      msg, {"model.layers.0.mlp.experts.gate_up_proj", "shape [4, 64, 128], expected [4, 128, 64]",
            "(num_local_experts, 2*intermediate_size, hidden_size)", "2 problems"}))
      << msg;
}

// Strided slots (gpt-oss's experts, stacked and transposed) read in any piece — as a rank's share of
// a unit cuts them — give the file elements file_index names, one by one.
TEST(ReadWeight, StridedSlotsInPiecesEqualTheirFileElements) {
  const std::string dir = std::string(ABL_FIXTURE_DIR) + "/golden/gpt-oss";
  const ModelSpec spec = abl::model::load_model_spec(dir);
  abl::io::SafetensorsReader reader(dir);
  int checked = 0;
  for (const abl::model::ExpectedWeight& w : abl::model::expected_weights(spec)) {
    if (w.file_strides.empty() || w.layer != 1) continue;
    const std::vector<float> file = reader.read_f32(w.name);
    const int64_t n = abl::model::element_count(w.shape);
    std::vector<float> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] = file[static_cast<size_t>(abl::model::file_index(w, i))];
    for (const int64_t piece : {n, int64_t{7}, int64_t{61}}) {
      std::vector<float> got(static_cast<size_t>(n));
      for (int64_t first = 0; first < n; first += piece) {
        abl::model::read_weight(&reader, w, first, std::min(piece, n - first), got.data() + first);
      }
      EXPECT_EQ(got, want) << w.name << " expert " << w.expert << " in pieces of " << piece;
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);  // gate, up and down of at least two experts
}

namespace {
const std::string kFp8 = std::string(ABL_FIXTURE_DIR) + "/golden/deepseek-v3-fp8";
}

// Every e4m3fn code decodes to the value of tests/fixtures/fp8/e4m3_table.json (null: NaN), written
// by tools/organism/fp8_table.py from the format's definition: bias 7, subnormals below 2^-6, no
// infinities, 0x7F/0xFF NaN, 448 the largest.
TEST(Fp8, E4m3CodesDecodeAsTheTable) {
  const abl::io::JsonValue table =
      abl::io::read_json_file(std::string(ABL_FIXTURE_DIR) + "/fp8/e4m3_table.json");
  ASSERT_EQ(table.size(), 256u);
  for (size_t i = 0; i < 256; ++i) {
    const float got = abl::model::fp8_e4m3_value(static_cast<uint8_t>(i));
    const abl::io::JsonValue want = table.at(i);
    if (want.is_null()) {
      EXPECT_TRUE(std::isnan(got)) << i;
    } else {
      EXPECT_EQ(got, static_cast<float>(want.as_double())) << "code " << i;
    }
  }
  EXPECT_EQ(abl::model::fp8_e4m3_value(0x7E), 448.0f);
  EXPECT_EQ(abl::model::fp8_e4m3_value(0x38), 1.0f);
  EXPECT_EQ(abl::model::fp8_e4m3_value(0xB8), -1.0f);
  EXPECT_EQ(abl::model::fp8_e4m3_value(0x01), std::ldexp(1.0f, -9));
}

// DeepSeek-V3 as released (golden deepseek-v3-fp8: blocks of 16 x 16, some cut short at the edges):
// the check accepts the F8_E4M3 matrices with their F32 _scale_inv and names what is wrong otherwise;
// a slot read in pieces equals the whole read, each value a code times its block's scale in bf16.
TEST(Fp8, BlockScaledWeightsCheckAndRead) {
  const ModelSpec s = abl::model::load_model_spec(kFp8);
  EXPECT_EQ(s.fp8_block_rows, 16);
  EXPECT_EQ(s.fp8_block_cols, 16);
  EXPECT_NE(abl::model::describe(s).find("FP8 weights in 16x16 blocks"), std::string::npos);
  abl::io::SafetensorsReader r(kFp8);
  const abl::model::WeightCheck c = abl::model::inspect_weights(s, r);
  EXPECT_TRUE(c.problems.empty()) << (c.problems.empty() ? "" : c.problems[0]);
  EXPECT_TRUE(c.unexpected.empty()) << (c.unexpected.empty() ? "" : c.unexpected[0]);
  int fp8 = 0;
  for (const abl::model::ExpectedWeight& w : abl::model::expected_weights(s)) {
    const abl::io::TensorInfo& t = r.tensor(w.name);
    if (!abl::model::is_fp8(t)) continue;
    ++fp8;
    const int64_t n = abl::model::element_count(w.shape);
    std::vector<float> whole(static_cast<size_t>(n)), pieces(whole.size());
    abl::model::read_weight(&r, w, 0, n, whole.data());
    for (int64_t first = 0; first < n; first += 37) {
      abl::model::read_weight(&r, w, first, std::min<int64_t>(37, n - first), pieces.data() + first);
    }
    ASSERT_EQ(whole, pieces) << w.name;
    // element (i, j) by hand: its code times the scale of block (i / 16, j / 16)
    const int64_t cols = t.shape.back(), i = t.shape[0] - 1, j = cols - 1;
    uint8_t code = 0;
    r.read_bytes(t, static_cast<uint64_t>(i * cols + j), 1, &code);
    const std::vector<float> scales = r.read_f32(abl::model::fp8_scale_name(w.name));
    const float scale = scales[static_cast<size_t>((i / 16) * ((cols + 15) / 16) + j / 16)];
    EXPECT_EQ(whole.back(), abl::bf16_to_f32(abl::f32_to_bf16(abl::model::fp8_e4m3_value(code) * scale))) << w.name;
  }
  EXPECT_GE(fp8, 60);

  // A scale missing, one of the wrong shape, and FP8 without quantization_config: each named.
  std::vector<RawTensor> tensors;
  for (RawTensor& t : raw_tensors(kFp8)) {
    if (t.name == "model.layers.1.self_attn.o_proj.weight_scale_inv") continue;
    if (t.name == "model.layers.0.self_attn.q_b_proj.weight_scale_inv") {
      t.shape = {6, 2};
      t.bytes.resize(6 * 2 * 4);
    }
    tensors.push_back(std::move(t));
  }
  abl::testing::TempDir dir;
  write_folder(dir, kFp8, tensors);
  abl::io::SafetensorsReader r2(dir.path().string());
  const abl::model::WeightCheck c2 = abl::model::inspect_weights(s, r2);
  ASSERT_EQ(c2.problems.size(), 2u);
  EXPECT_NE(c2.problems[0].find("'model.layers.0.self_attn.q_b_proj.weight_scale_inv'"), std::string::npos)
      << c2.problems[0];
  EXPECT_NE(c2.problems[0].find("expected F32 [6, 3] (blocks of 16x16 over"), std::string::npos) << c2.problems[0];
  EXPECT_NE(c2.problems[1].find("missing tensor 'model.layers.1.self_attn.o_proj.weight_scale_inv'"),
            std::string::npos)
      << c2.problems[1];
  ModelSpec plain = s;
  plain.fp8_block_rows = plain.fp8_block_cols = 0;
  const abl::model::WeightCheck c3 = abl::model::inspect_weights(plain, r);
  ASSERT_FALSE(c3.problems.empty());
  EXPECT_NE(c3.problems[0].find("dtype F8_E4M3, but config.json has no quantization_config"), std::string::npos)
      << c3.problems[0];
}
