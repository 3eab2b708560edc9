// `export` writes what the epilogue applies: the exported folder run without an epilogue gives the
// logits of the original model run with the epilogue (fp32 export: to rounding; bf16 export: to
// bf16 rounding), for every row-normalisation mode. Untouched tensors keep their bytes, shards
// and their index follow ShardedSafetensorsWriter, and failures leave nothing that looks complete.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "abl/engine/cpu/weights.h"
#include "abl/engine/cpu/ablation_epilogue.h"
#include "abl/ablation/export.h"
#include "abl/engine/cpu/engine.h"
#include "abl/io/safetensors.h"
#include "abl/model/weights.h"
#include "common/temp_dir.h"
#include "io/fused_experts_test_util.h"
#include "io/mxfp4_test_util.h"
#include "io/safetensors_test_util.h"
#include "common/unit_vector.h"

using namespace abl;
using engine::RowNorm;
namespace fs = std::filesystem;

namespace {

using abl::testing::unit_vector;

const fs::path kFixtures(ABL_FIXTURE_DIR);
const std::string kOrganism = (kFixtures / "organism").string();
const std::string kTiny = (kFixtures / "tiny-llama").string();
const std::string kTinySharded = (kFixtures / "tiny-llama-sharded").string();

std::vector<std::vector<float>> directions(const model::ModelSpec& spec) {
  const int64_t H = spec.hidden_size;
  return {unit_vector(H, 11), unit_vector(H, 12), unit_vector(H, 13)};
}

// Different directions and λ per layer, negative and > 1 ones, and λ = 0 for layer 0's down_proj
// and for the last layer's o_proj (those tensors must come out untouched).
engine::TrialAblation make_trial(const model::ModelSpec& spec, engine::RowNorm mode) {
  engine::TrialAblation t;
  t.mode = mode;
  const float attn[] = {0.9f, 1.3f, 0.6f, 1.1f}, mlp[] = {0.0f, 0.7f, -0.2f, 1.4f};
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    t.direction.push_back(static_cast<int32_t>((l * 2 + 1) % 3));
    t.lambda[0].push_back(l == spec.num_layers - 1 ? 0.0f : attn[l % 4]);
    t.lambda[1].push_back(mlp[l % 4]);
  }
  return t;
}

std::vector<int32_t> tokens(int64_t n, int32_t seed, int64_t vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    t[static_cast<size_t>(i)] = static_cast<int32_t>((seed * 71 + i * 29 + i * i * 7) % vocab);
  }
  return t;
}

// Logits at every token of three sequences, optionally with trial 0 of `epi` on all of them.
std::vector<float> run(engine::WeightSource& w, engine::AblationEpilogue* epi) {
  const model::ModelSpec& spec = w.spec();
  engine::Engine eng(w, {64, 8});
  engine::KvCache cache(spec, 64);
  engine::Batch b;
  const int64_t len = 11;
  for (int s = 0; s < 3; ++s) {
    const auto t = tokens(len, s + 1, spec.vocab_size);
    b.add(t.data(), len, s * 16, 0, epi ? 0 : -1);
  }
  std::vector<float> logits(static_cast<size_t>(b.num_tokens() * spec.vocab_size));
  engine::Outputs o;
  o.all_logits = logits.data();
  eng.forward(b, cache, o, epi);
  return logits;
}

float max_abs(const std::vector<float>& a) {
  float m = 0;
  for (float x : a) m = std::max(m, std::fabs(x));
  return m;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string raw_bytes(const io::SafetensorsReader& r, const std::string& name) {
  const io::TensorInfo& t = r.tensor(name);
  std::string s(t.nbytes(), '\0');
  r.read_bytes(t, 0, t.nbytes(), s.data());
  return s;
}

// The original model with the trial's epilogue: what every export is compared against.
std::vector<float> reference_logits(const std::string& model, const engine::TrialAblation& trial,
                                    const std::vector<std::vector<float>>& dirs) {
  auto base = engine::HostWeights::load(model);
  engine::AblationEpilogue epi(base->spec(), dirs, {trial});
  return run(*base, &epi);
}

ablation::ExportOptions options(const std::string& out) {
  ablation::ExportOptions o;
  o.out_dir = out;
  return o;
}

}  // namespace

class ExportModes : public ::testing::TestWithParam<engine::RowNorm> {};

// The acceptance criterion: fp32 export run plainly == original run with the epilogue.
TEST_P(ExportModes, Float32ExportEqualsTheEpilogue) {
  const model::ModelSpec spec = model::load_model_spec(kOrganism);
  const auto dirs = directions(spec);
  const engine::TrialAblation trial = make_trial(spec, GetParam());
  abl::testing::TempDir tmp;
  const std::string out = tmp.file("exported");
  ablation::ExportOptions opts = options(out);
  opts.dtype = DType::f32;
  ablation::export_model(kOrganism, dirs, trial, opts, nullptr);

  EXPECT_TRUE(fs::exists(fs::path(out) / "model.safetensors"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "model.safetensors.index.json"));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  io::SafetensorsReader r(out);
  for (const io::TensorInfo& t : r.tensors()) EXPECT_EQ(t.dtype, DType::f32) << t.name;

  const std::vector<float> want = reference_logits(kOrganism, trial, dirs);
  auto exported = engine::HostWeights::load(out);
  const std::vector<float> got = run(*exported, nullptr);
  const float scale = max_abs(want), err = max_abs_diff(got, want);
  std::printf("[ export %s f32 ] max |logit| %.4g, max abs diff %.3g (relative %.3g)\n",
              std::string(engine::row_norm_name(GetParam())).c_str(), scale, err, err / scale);
  EXPECT_LE(err, 1e-4f * scale);

  // Not vacuous: the ablation moves the logits far more than the tolerance.
  auto original = engine::HostWeights::load(kOrganism);
  const float moved = max_abs_diff(run(*original, nullptr), want);
  std::printf("[ export %s f32 ] the ablation itself moves the logits by up to %.3g\n",
              std::string(engine::row_norm_name(GetParam())).c_str(), moved);
  EXPECT_GT(moved, 1e-2f * scale);

  // config.json: the dtype follows the export, every other key (and the key order) is kept.
  const auto src_cfg = nlohmann::ordered_json::parse(slurp(fs::path(kOrganism) / "config.json"));
  auto out_cfg = nlohmann::ordered_json::parse(slurp(fs::path(out) / "config.json"));
  EXPECT_EQ(out_cfg["torch_dtype"], "float32");
  out_cfg["torch_dtype"] = src_cfg["torch_dtype"];
  EXPECT_EQ(out_cfg.dump(), src_cfg.dump());
}

INSTANTIATE_TEST_SUITE_P(Modes, ExportModes, ::testing::Values(engine::RowNorm::none, engine::RowNorm::pre, engine::RowNorm::full),
                         [](const auto& p) { return std::string(engine::row_norm_name(p.param)); });

TEST(Export, DefaultKeepsDtypesAndUntouchedBytes) {
  const model::ModelSpec spec = model::load_model_spec(kOrganism);
  const auto dirs = directions(spec);
  const engine::TrialAblation trial = make_trial(spec, engine::RowNorm::full);
  abl::testing::TempDir tmp;
  const std::string out = tmp.file("exported");
  ablation::export_model(kOrganism, dirs, trial, options(out), nullptr);

  io::SafetensorsReader src(kOrganism), dst(out);
  ASSERT_EQ(dst.tensors().size(), src.tensors().size());
  size_t ablated = 0, untouched = 0;
  for (const model::ExpectedWeight& w : model::expected_weights(spec)) {
    const io::TensorInfo* s = src.find(w.name);
    if (!s) continue;
    const io::TensorInfo& d = dst.tensor(w.name);
    EXPECT_EQ(d.dtype, s->dtype) << w.name;
    EXPECT_EQ(d.shape, s->shape) << w.name;
    const int c = w.role == model::WeightRole::o_proj ? 0 : w.role == model::WeightRole::down_proj ? 1 : -1;
    const float lambda = c < 0 ? 0.0f : trial.lambda[static_cast<size_t>(c)][static_cast<size_t>(w.layer)];
    if (lambda == 0.0f) {
      EXPECT_EQ(raw_bytes(dst, w.name), raw_bytes(src, w.name)) << w.name << " changed";
      ++untouched;
      continue;
    }
    // W' computed in fp32 from the source values, rounded once to bf16.
    std::vector<float> wf = src.read_f32(w.name);
    const float* v = dirs[static_cast<size_t>(trial.direction[static_cast<size_t>(w.layer)])].data();
    ablation::ablate_weight(wf.data(), s->shape[0], s->shape[1], v, lambda, trial.mode);
    std::string want(wf.size() * dtype_size(*s->dtype), '\0');
    convert_from_f32(wf.data(), *s->dtype, want.data(), wf.size());
    EXPECT_EQ(raw_bytes(dst, w.name), want) << w.name;
    EXPECT_NE(raw_bytes(dst, w.name), raw_bytes(src, w.name)) << w.name;
    ++ablated;
  }
  EXPECT_EQ(ablated, static_cast<size_t>(2 * spec.num_layers - 2));
  EXPECT_GT(untouched, 20u);
  EXPECT_EQ(dst.file(0).metadata().at("format"), "pt");

  // config.json and the tokenizer files are the source's, byte for byte.
  for (const char* name :
       {"config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json"}) {
    ASSERT_TRUE(fs::exists(fs::path(out) / name)) << name;
    EXPECT_EQ(slurp(fs::path(out) / name), slurp(fs::path(kOrganism) / name)) << name;
  }
  for (const char* name : {"golden.json", "golden.safetensors", "training_report.json", "prompts"}) {
    EXPECT_FALSE(fs::exists(fs::path(out) / name)) << name << " is not part of a model folder";
  }

  const std::vector<float> want = reference_logits(kOrganism, trial, dirs);
  auto exported = engine::HostWeights::load(out);
  const float scale = max_abs(want), err = max_abs_diff(run(*exported, nullptr), want);
  std::printf("[ export full bf16 ] max |logit| %.4g, max abs diff %.3g (relative %.3g)\n", scale, err,
              err / scale);
  EXPECT_LE(err, 2e-2f * scale);
}

TEST(Export, ShardsMatchTheSingleFileExport) {
  const model::ModelSpec spec = model::load_model_spec(kOrganism);
  const auto dirs = directions(spec);
  const engine::TrialAblation trial = make_trial(spec, engine::RowNorm::pre);
  abl::testing::TempDir tmp;
  const std::string single = tmp.file("single"), sharded = tmp.file("sharded");
  ablation::export_model(kOrganism, dirs, trial, options(single), nullptr);
  ablation::ExportOptions opts = options(sharded);
  opts.max_shard_bytes = 400'000;  // the organism is ~2.1 MB of bf16/f32
  opts.metadata = {{"abliterated_from", "organism"}};
  ablation::export_model(kOrganism, dirs, trial, opts, nullptr);

  const fs::path index = fs::path(sharded) / "model.safetensors.index.json";
  ASSERT_TRUE(fs::exists(index));
  EXPECT_FALSE(fs::exists(fs::path(sharded) / "model.safetensors"));
  io::SafetensorsReader a(single), b(sharded);
  EXPECT_GE(b.num_files(), 3u);
  EXPECT_EQ(b.index_path(), index.string());
  const std::string first = fmt::format("model-00001-of-{:05d}.safetensors", b.num_files());
  EXPECT_EQ(fs::path(b.file(0).path()).filename(), first);
  const auto idx = nlohmann::json::parse(slurp(index));
  uint64_t total = 0;
  for (const io::TensorInfo& t : a.tensors()) total += t.nbytes();
  EXPECT_EQ(idx["metadata"]["total_size"].get<uint64_t>(), total);
  EXPECT_EQ(idx["weight_map"].size(), a.tensors().size());
  // The same shard plan as ShardedSafetensorsWriter, layers in order: the embedding first.
  EXPECT_EQ(idx["weight_map"]["model.embed_tokens.weight"], first);
  for (size_t i = 0; i < b.num_files(); ++i) {
    EXPECT_EQ(b.file(i).metadata().at("format"), "pt");
    EXPECT_EQ(b.file(i).metadata().at("abliterated_from"), "organism");
  }
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const io::TensorInfo& t : a.tensors()) EXPECT_EQ(raw_bytes(b, t.name), raw_bytes(a, t.name)) << t.name;
  EXPECT_FALSE(fs::exists(sharded + ".partial"));

  auto wa = engine::HostWeights::load(single), wb = engine::HostWeights::load(sharded);
  EXPECT_EQ(run(*wa, nullptr), run(*wb, nullptr));
}

TEST(Export, ShardedSourceGivesTheSameModel) {
  const model::ModelSpec spec = model::load_model_spec(kTiny);
  const auto dirs = directions(spec);
  const engine::TrialAblation trial = make_trial(spec, engine::RowNorm::none);
  abl::testing::TempDir tmp;
  ablation::ExportOptions opts = options(tmp.file("from-single"));
  opts.dtype = DType::f16;
  ablation::export_model(kTiny, dirs, trial, opts, nullptr);
  opts.out_dir = tmp.file("from-sharded");
  ablation::export_model(kTinySharded, dirs, trial, opts, nullptr);
  io::SafetensorsReader a(tmp.file("from-single")), b(tmp.file("from-sharded")), src(kTinySharded);
  ASSERT_EQ(a.tensors().size(), src.tensors().size());
  for (const io::TensorInfo& t : a.tensors()) {
    EXPECT_EQ(t.dtype, DType::f16) << t.name;
    EXPECT_EQ(raw_bytes(b, t.name), raw_bytes(a, t.name)) << t.name;
  }
  const auto cfg = nlohmann::json::parse(slurp(fs::path(tmp.file("from-sharded")) / "config.json"));
  EXPECT_EQ(cfg["torch_dtype"], "float16");
  EXPECT_FALSE(fs::exists(fs::path(tmp.file("from-sharded")) / "tokenizer.json"));  // the source has none
  EXPECT_TRUE(fs::exists(fs::path(tmp.file("from-single")) / "tokenizer.json"));
}

// A Kimi-K2-style folder: tiktoken.model and the remote code (*.py, which config.json's and
// tokenizer_config.json's auto_map name) travel with the weights, byte for byte.
TEST(Export, CopiesTiktokenAndRemoteCode) {
  const model::ModelSpec spec = model::load_model_spec(kTiny);
  abl::testing::TempDir tmp;
  const fs::path src = tmp.path() / "kimi-like";
  fs::create_directories(src);
  for (const fs::directory_entry& e : fs::directory_iterator(kTiny)) {
    if (e.path().filename() != "tokenizer.json") fs::copy_file(e.path(), src / e.path().filename());
  }
  const fs::path tiktoken = fs::path(ABL_FIXTURE_DIR) / "tiktoken";
  for (const char* name : {"tiktoken.model", "tokenization_kimi.py", "tokenizer_config.json"}) {
    fs::copy_file(tiktoken / name, src / name, fs::copy_options::overwrite_existing);
  }
  tmp.write("kimi-like/modeling_deepseek.py", "# remote modeling code\n");
  tmp.write("kimi-like/sub/not_copied.py", "# not at the top level\n");
  const std::string out = tmp.file("exported");
  ablation::export_model(src.string(), directions(spec), make_trial(spec, engine::RowNorm::none), options(out), nullptr);
  for (const char* name : {"tiktoken.model", "tokenization_kimi.py", "tokenizer_config.json", "modeling_deepseek.py"}) {
    ASSERT_TRUE(fs::exists(fs::path(out) / name)) << name;
    EXPECT_EQ(slurp(fs::path(out) / name), slurp(src / name)) << name;
  }
  EXPECT_FALSE(fs::exists(fs::path(out) / "tokenizer.json"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "sub"));
}

TEST(Export, ExistingOutputFolderIsLeftAloneWithoutOverwrite) {
  const model::ModelSpec spec = model::load_model_spec(kTiny);
  const auto dirs = directions(spec);
  const engine::TrialAblation trial = make_trial(spec, engine::RowNorm::full);
  abl::testing::TempDir tmp;
  const std::string out = tmp.file("out");
  fs::create_directories(out);
  tmp.write("out/keep.txt", "mine");
  EXPECT_ABL_ERROR(ablation::export_model(kTiny, dirs, trial, options(out), nullptr), out,
                   "already exists", "--overwrite");
  EXPECT_EQ(slurp(fs::path(out) / "keep.txt"), "mine");
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
  EXPECT_FALSE(fs::exists(out + ".partial"));
  // A trailing separator names the same folder.
  EXPECT_ABL_ERROR(ablation::export_model(kTiny, dirs, trial, options(out + "/"), nullptr),
                   "already exists");

  ablation::ExportOptions opts = options(out);
  opts.overwrite = true;
  ablation::export_model(kTiny, dirs, trial, opts, nullptr);
  EXPECT_FALSE(fs::exists(fs::path(out) / "keep.txt"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "model.safetensors"));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  // Nothing else is left next to it (no set-aside old folder).
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);
}

TEST(Export, StalePartialFolderIsReplaced) {
  const model::ModelSpec spec = model::load_model_spec(kTiny);
  const auto dirs = directions(spec);
  abl::testing::TempDir tmp;
  const std::string out = tmp.file("out");
  fs::create_directories(out + ".partial");
  tmp.write("out.partial/model-00001-of-00002.safetensors", "half-written");
  ablation::export_model(kTiny, dirs, make_trial(spec, engine::RowNorm::full), options(out), nullptr);
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "model-00001-of-00002.safetensors"));
  EXPECT_NO_THROW(io::SafetensorsReader{out});
}

TEST(Export, RejectsBadArgumentsBeforeWriting) {
  // A copy of the fixture, so that a wrong check could not damage the committed files.
  abl::testing::TempDir tmp;
  const fs::path model = tmp.path() / "model";
  fs::create_directories(model);
  for (const auto& e : fs::directory_iterator(kTiny)) fs::copy_file(e.path(), model / e.path().filename());
  const model::ModelSpec spec = model::load_model_spec(model.string());
  const auto dirs = directions(spec);
  const engine::TrialAblation good = make_trial(spec, engine::RowNorm::full);
  const std::string out = tmp.file("out");
  auto export_to = [&](const std::string& dir, const engine::TrialAblation& t, bool overwrite = true) {
    ablation::ExportOptions o = options(dir);
    o.overwrite = overwrite;
    ablation::export_model(model.string(), dirs, t, o, nullptr);
  };

  engine::TrialAblation short_trial = good;
  short_trial.direction.pop_back();
  short_trial.lambda[0].pop_back();
  short_trial.lambda[1].pop_back();
  EXPECT_ABL_ERROR(export_to(out, short_trial), model.string(), "1 directions", "model of 2 layers");
  engine::TrialAblation bad_dir = good;
  bad_dir.direction[1] = 3;
  EXPECT_ABL_ERROR(export_to(out, bad_dir), "layer 1 names direction 3 but there are 3");
  engine::TrialAblation nan = good;
  nan.lambda[1][0] = std::nanf("");
  EXPECT_ABL_ERROR(export_to(out, nan), "layer 0 has a non-finite weight");
  EXPECT_ABL_ERROR(ablation::export_model(model.string(), {unit_vector(7, 1)}, good, options(out),
                                          nullptr),
                   "direction 0 has length 7 for hidden size 64");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));

  // The model folder itself, also spelt differently, or a folder holding it (overwrite would
  // remove the source).
  EXPECT_ABL_ERROR(export_to(model.string(), good), "is the model folder");
  EXPECT_ABL_ERROR(export_to((model / "." / "").string(), good), "is the model folder");
  EXPECT_ABL_ERROR(export_to(tmp.path().string(), good), "contains the model folder");
  ablation::ExportOptions zero = options(out);
  zero.max_shard_bytes = 0;
  EXPECT_ABL_ERROR(ablation::export_model(model.string(), dirs, good, zero, nullptr), "shard size");
  EXPECT_FALSE(fs::exists(out));

  // The source is untouched by all of it, and the same call with good arguments works.
  for (const auto& e : fs::directory_iterator(kTiny)) {
    EXPECT_EQ(slurp(model / e.path().filename()), slurp(e.path())) << e.path().filename();
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(model), fs::directory_iterator()),
            std::distance(fs::directory_iterator(kTiny), fs::directory_iterator()));
  export_to(out, good);
  EXPECT_NO_THROW(engine::HostWeights::load(out));
}

TEST(Export, ModelThatDoesNotMatchItsConfigIsRejected) {
  abl::testing::TempDir tmp;
  const fs::path model = tmp.path() / "model";
  fs::create_directories(model);
  for (const auto& e : fs::directory_iterator(kTiny)) fs::copy_file(e.path(), model / e.path().filename());
  // Claim a wider MLP than the weights have.
  auto cfg = nlohmann::ordered_json::parse(slurp(model / "config.json"));
  cfg["intermediate_size"] = 256;
  tmp.write("model/config.json", cfg.dump(2));
  const model::ModelSpec spec = model::load_model_spec(model.string());
  const std::string out = tmp.file("out");
  EXPECT_ABL_ERROR(ablation::export_model(model.string(), directions(spec), make_trial(spec, engine::RowNorm::full),
                                          options(out), nullptr),
                   model.string(), "cannot export", "down_proj");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

// Every family: the exported folder run plainly equals the original run with the epilogue (fp32
// export), every tensor that is not ablated keeps its bytes (fused Phi-3 tensors, routers, gates,
// a multimodal checkpoint's vision tower), and in MoE layers every expert's and the shared
// expert's down projection is rewritten — or, with routed_experts off, every routed expert kept;
// with the experts fused (transformers 5, Granite-MoE), each expert's block of the stacked down
// projection.
struct FamilyCase {
  const char* fixture;
  bool routed_experts;
  bool fused = false;  // the fixture's experts stacked as transformers 5 saves them
  bool stacked = false;  // the fixture itself holds its experts stacked (written as transformers 5 saves them)
};

class ExportFamilies : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(ExportFamilies, AblatesEveryDownProjectionAndKeepsTheRest) {
  const std::string fixture = (kFixtures / "golden" / GetParam().fixture).string();
  abl::testing::TempDir tmp;
  const std::string model = GetParam().fused ? tmp.file("fused") : fixture;
  if (GetParam().fused) {
    ASSERT_GT(abl::testing::fuse_experts(fixture, model), 0);
  }
  const model::ModelSpec spec = model::load_model_spec(model);
  // (Granite-MoE's and gpt-oss's checkpoints hold their experts stacked as released; Granite 4.0's dense
  // models have none)
  EXPECT_EQ(spec.fused_experts, GetParam().fused || GetParam().stacked ||
                                    (spec.num_experts > 0 && (spec.expert_names == model::ModelSpec::ExpertNames::granite ||
                                                              spec.expert_names == model::ModelSpec::ExpertNames::gpt_oss)));
  const auto dirs = directions(spec);
  engine::TrialAblation trial = make_trial(spec, engine::RowNorm::full);
  trial.routed_experts = GetParam().routed_experts;
  const std::string out = tmp.file("exported");
  ablation::export_model(model, dirs, trial, options(out), nullptr);

  io::SafetensorsReader src(model), dst(out);
  ASSERT_EQ(dst.tensors().size(), src.tensors().size());
  std::map<std::string, const model::ExpectedWeight*> slot_of;
  const std::vector<model::ExpectedWeight> expected = model::expected_weights(spec);
  for (const auto& w : expected) slot_of.emplace(w.name, &w);
  size_t ablated = 0, experts_ablated = 0, untouched = 0;
  for (const io::TensorInfo& t : src.tensors()) {
    const auto it = slot_of.find(t.name);
    const model::ExpectedWeight* w = it == slot_of.end() ? nullptr : it->second;
    int c = -1;
    if (w && w->role == model::WeightRole::o_proj) c = 0;
    if (w && model::is_down_projection(spec, w->role)) c = 1;
    if (w && model::is_routed_down_projection(spec, w->role) && !trial.routed_experts) c = -1;
    const float lambda = c < 0 ? 0.0f : trial.lambda[static_cast<size_t>(c)][static_cast<size_t>(w->layer)];
    if (lambda == 0.0f) {
      EXPECT_EQ(raw_bytes(dst, t.name), raw_bytes(src, t.name)) << t.name << " changed";
      ++untouched;
      continue;
    }
    std::vector<float> wf = src.read_f32(t.name);
    const float* v = dirs[static_cast<size_t>(trial.direction[static_cast<size_t>(w->layer)])].data();
    // A fused (E, H, Fm) down projection: each expert's (H, Fm) block on its own; gpt-oss's (E, Fm, H)
    // holds each block transposed: ablated as the (H, Fm) matrix it is.
    const int64_t blocks = t.shape.size() == 3 ? t.shape[0] : 1;
    const int64_t rows = t.shape[t.shape.size() - 2], cols = t.shape.back();
    for (int64_t b = 0; b < blocks; ++b) {
      float* block = wf.data() + b * rows * cols;
      if (!model::is_transposed(*w)) {
        ablation::ablate_weight(block, rows, cols, v, lambda, trial.mode);
        continue;
      }
      std::vector<float> m(static_cast<size_t>(rows * cols));
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) m[static_cast<size_t>(j * rows + i)] = block[i * cols + j];
      }
      ablation::ablate_weight(m.data(), cols, rows, v, lambda, trial.mode);
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) block[i * cols + j] = m[static_cast<size_t>(j * rows + i)];
      }
    }
    std::string want(wf.size() * dtype_size(*t.dtype), '\0');
    convert_from_f32(wf.data(), *t.dtype, want.data(), wf.size());
    EXPECT_EQ(raw_bytes(dst, t.name), want) << t.name;
    ++ablated;
    if (model::is_routed_down_projection(spec, w->role)) experts_ablated += static_cast<size_t>(blocks);
  }
  std::printf("[ export %s ] %zu tensors ablated (%zu routed experts), %zu bit-identical\n", GetParam().fixture,
              ablated, experts_ablated, untouched);
  EXPECT_GT(ablated, 0u);
  if (spec.num_experts > 0 && trial.routed_experts) {
    int64_t want = 0;  // λ ≠ 0 on mlp.down_proj: every expert of that layer (a LatentMoE: its fc2_latent_proj)
    const int64_t writers = spec.moe_latent_size > 0 ? 1 : spec.num_experts;
    for (int64_t l = 0; l < spec.num_layers; ++l) {
      if (spec.is_moe_layer(l) && trial.lambda[1][static_cast<size_t>(l)] != 0.0f) want += writers;
    }
    EXPECT_EQ(static_cast<int64_t>(experts_ablated), want);
    EXPECT_GT(want, 0);
  } else {
    EXPECT_EQ(experts_ablated, 0u);
  }
  for (const char* name : {"config.json", "tokenizer.json", "tokenizer_config.json"}) {
    EXPECT_EQ(slurp(fs::path(out) / name), slurp(fs::path(model) / name)) << name;
  }

  // The fp32 export run plainly is the original run with the epilogue. Run with the source's spec:
  // its config says float32 now, and Gemma's embedding scale follows the checkpoint dtype
  // (sqrt(H) rounded to bf16 in the source, exact in an fp32 model).
  const std::string out32 = tmp.file("exported32");
  ablation::ExportOptions o32 = options(out32);
  o32.dtype = DType::f32;
  ablation::export_model(model, dirs, trial, o32, nullptr);
  const std::vector<float> want = reference_logits(model, trial, dirs);
  auto exported = engine::HostWeights::load(spec, out32);
  const float scale = max_abs(want), err = max_abs_diff(run(*exported, nullptr), want);
  std::printf("[ export %s f32 ] max |logit| %.4g, max abs diff %.3g\n", GetParam().fixture, scale, err);
  EXPECT_LE(err, 1e-4f * scale);
  // Stacked or apart, the experts are the same model: the ablated run gives the same bits.
  if (GetParam().fused) {
    EXPECT_EQ(want, reference_logits(fixture, trial, dirs));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Families, ExportFamilies,
    ::testing::Values(FamilyCase{"gemma3-mm", true}, FamilyCase{"mistral3-mm", true}, FamilyCase{"gemma2-softcap", true},
                      FamilyCase{"phi3-longrope", true}, FamilyCase{"glm4-interleaved-rope", true},
                      FamilyCase{"qwen2.5-vl-legacy", true}, FamilyCase{"qwen3-vl-mm", true},
                      FamilyCase{"smollm3-nope", true},
                      FamilyCase{"mixtral-moe", true},
                      FamilyCase{"qwen2-moe-shared", true}, FamilyCase{"qwen2-moe-shared", false},
                      FamilyCase{"qwen3-moe", true}, FamilyCase{"mixtral-moe", true, true},
                      FamilyCase{"qwen2-moe-shared", true, true}, FamilyCase{"glm4-moe", true},
                      FamilyCase{"glm4-moe", false}, FamilyCase{"glm4-moe", true, true},
                      FamilyCase{"granite-multipliers", true}, FamilyCase{"granite-moe", true},
                      FamilyCase{"granite-moe-shared", true}, FamilyCase{"granite-moe-shared", false},
                      FamilyCase{"gpt-oss", true}, FamilyCase{"gpt-oss", false}, FamilyCase{"cohere", true},
                      FamilyCase{"cohere2", true}, FamilyCase{"cohere-qknorm", true}, FamilyCase{"llama-bias", true},
                      FamilyCase{"seed-oss", true}, FamilyCase{"deepseek-v3-mla", true},
                      FamilyCase{"deepseek-v3-mla", false}, FamilyCase{"deepseek-v3-mla", true, true},
                      FamilyCase{"deepseek-v3-qproj", true}, FamilyCase{"olmo2", true},
                      FamilyCase{"olmo2-bias", true}, FamilyCase{"olmo3", true}, FamilyCase{"olmo3-v5", true},
                      FamilyCase{"deepseek-v2-lite", true}, FamilyCase{"deepseek-v2-groups", true},
                      FamilyCase{"deepseek-v2-groups", false}, FamilyCase{"deepseek-v2-groups", true, true},
                      FamilyCase{"olmoe", true}, FamilyCase{"olmoe", true, true},
                      FamilyCase{"minimax-m2", true}, FamilyCase{"minimax-m2", true, true},
                      FamilyCase{"minimax-m2-v5", true, false, true},
                      FamilyCase{"exaone4", true}, FamilyCase{"exaone4-dense", true},
                      FamilyCase{"ernie4.5-moe", true}, FamilyCase{"ernie4.5-moe", false},
                      FamilyCase{"ernie4.5-moe", true, true}, FamilyCase{"ernie4.5-moe-interval", true},
                      FamilyCase{"ernie4.5-dense", true}, FamilyCase{"qwen3-next", true},
                      FamilyCase{"qwen3-next", false}, FamilyCase{"qwen3-next", true, true},
                      FamilyCase{"qwen3.5-mm", true}, FamilyCase{"qwen3.5-moe-mm", true, false, true},
                      FamilyCase{"qwen3.5-moe-mm", false, false, true},
                      FamilyCase{"qwen3-vl-moe-mm", true, false, true},
                      FamilyCase{"qwen3-vl-moe-mm", false, false, true}, FamilyCase{"gemma", true},
                      FamilyCase{"ministral3-mm", true}, FamilyCase{"glm4v-mm", true},
                      FamilyCase{"glm4v-moe-mm", true}, FamilyCase{"glm4v-moe-mm", false},
                      FamilyCase{"phimoe", true}, FamilyCase{"llama4-mm", true, false, true},
                      FamilyCase{"llama4-mm", false, false, true}, FamilyCase{"granite4-micro", true},
                      FamilyCase{"granite4-moe-nope", true}, FamilyCase{"granite4-moe-nope", false},
                      FamilyCase{"hunyuan-dense", true}, FamilyCase{"granite4-h", true},
                      FamilyCase{"granite4-h-moe", true}, FamilyCase{"granite4-h-moe", false},
                      FamilyCase{"lfm2", true}, FamilyCase{"lfm2-moe", true}, FamilyCase{"lfm2-moe", false},
                      FamilyCase{"nemotron-h", true}, FamilyCase{"nemotron-h-moe", true},
                      FamilyCase{"nemotron-h-moe", false}, FamilyCase{"nemotron-h-latent-moe", true},
                      FamilyCase{"nemotron-h-latent-moe", false},
                      FamilyCase{"arcee", true},
                      FamilyCase{"dots1", true}, FamilyCase{"dots1", false}, FamilyCase{"hunyuan-moe", true},
                      FamilyCase{"hunyuan-moe", false}, FamilyCase{"apertus", true},
                      FamilyCase{"glm4-moe-lite", true}, FamilyCase{"glm4-moe-lite", false},
                      FamilyCase{"glm4-moe-lite", true, true}, FamilyCase{"llava-mm", true},
                      FamilyCase{"internvl-mm", true}, FamilyCase{"gemma4-dense", true},
                      FamilyCase{"gemma4-e", true}, FamilyCase{"gemma4-moe", true, false, true},
                      FamilyCase{"gemma4-moe", false, false, true}),
    [](const auto& p) {
      std::string name = std::string(p.param.fixture) + (p.param.routed_experts ? "" : "_shared_only") +
                         (p.param.fused ? "_fused" : "");
      for (char& c : name) {
        if (c == '-' || c == '.') c = '_';
      }
      return name;
    });

// gpt-oss as released: MXFP4 experts (tests/unit/io/mxfp4_test_util.h) load as the model their values
// dequantize to, and export writes that model: every expert dequantized in the plain layout (BF16,
// exact), the ablated down projections rewritten, config.json without quantization_config; the same
// bytes as the export of the plain copy.
TEST(ExportMxfp4, LoadsAndExportsAsTheDequantizedModel) {
  abl::testing::TempDir tmp;
  const std::string mxfp4 = tmp.file("mxfp4"), plain = tmp.file("plain");
  ASSERT_EQ(abl::testing::quantize_gpt_oss_experts((kFixtures / "golden" / "gpt-oss").string(), mxfp4, plain), 6);
  const model::ModelSpec spec = model::load_model_spec(mxfp4);
  EXPECT_TRUE(spec.mxfp4_experts);
  EXPECT_FALSE(model::load_model_spec(plain).mxfp4_experts);
  EXPECT_NE(model::describe(spec).find("experts MXFP4"), std::string::npos);
  auto q = engine::HostWeights::load(mxfp4);
  auto p = engine::HostWeights::load(plain);
  const int64_t n = spec.moe_intermediate_size * spec.hidden_size;
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    for (int32_t e = 0; e < spec.num_experts; ++e) {
      for (model::WeightRole role : {model::WeightRole::expert_gate_proj, model::WeightRole::expert_up_proj,
                                     model::WeightRole::expert_down_proj}) {
        const float* a = q->layer_tensor(l, role, e);
        const float* b = p->layer_tensor(l, role, e);
        ASSERT_EQ(std::vector<float>(a, a + n), std::vector<float>(b, b + n))
            << "layer " << l << " expert " << e << " " << model::role_name(role);
      }
    }
  }
  EXPECT_EQ(run(*q, nullptr), run(*p, nullptr));

  const auto dirs = directions(spec);
  const engine::TrialAblation trial = make_trial(spec, engine::RowNorm::full);
  const std::string out_q = tmp.file("exported-mxfp4"), out_p = tmp.file("exported-plain");
  ablation::export_model(mxfp4, dirs, trial, options(out_q), nullptr);
  ablation::export_model(plain, dirs, trial, options(out_p), nullptr);
  io::SafetensorsReader a(out_q), b(out_p);
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const io::TensorInfo& t : b.tensors()) {
    ASSERT_NE(a.find(t.name), nullptr) << t.name;
    EXPECT_EQ(a.tensor(t.name).shape, t.shape) << t.name;
    EXPECT_EQ(raw_bytes(a, t.name), raw_bytes(b, t.name)) << t.name;
  }
  const nlohmann::json cq = nlohmann::json::parse(slurp(fs::path(out_q) / "config.json"));
  EXPECT_FALSE(cq.contains("quantization_config"));
  EXPECT_EQ(cq, nlohmann::json::parse(slurp(fs::path(plain) / "config.json")));
  // The export is the model the run evaluated: its logits are the MXFP4 model's with the epilogue.
  auto exported = engine::HostWeights::load(out_q);
  EXPECT_FALSE(exported->spec().mxfp4_experts);
  engine::AblationEpilogue epi(spec, dirs, {trial});
  const std::vector<float> want = run(*q, &epi);
  EXPECT_LE(max_abs_diff(run(*exported, nullptr), want), 0.05f * max_abs(want));  // bf16 rounding of o_proj/down
  // A PEFT adapter cannot target the stacked experts: refused, naming the tensor.
  ablation::ExportOptions adapter = options(tmp.file("adapter"));
  adapter.format = ablation::ExportFormat::adapter;
  EXPECT_THROW(
      {
        try {
          ablation::export_model(mxfp4, dirs, trial, adapter, nullptr);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("mlp.experts.down_proj"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

// DeepSeek-V3 as released: FP8 matrices with block scales (golden deepseek-v3-fp8). export writes the
// model the run evaluated: every FP8 tensor dequantized to BF16 (exactly the values the engine read,
// so an untouched one reloads bit for bit), the ablated ones rewritten, the scales gone, config.json
// without quantization_config, the rest of the files' bytes unchanged. An adapter is refused.
TEST(ExportFp8, WritesTheDequantizedModel) {
  abl::testing::TempDir tmp;
  const std::string src = (kFixtures / "golden" / "deepseek-v3-fp8").string();
  const model::ModelSpec spec = model::load_model_spec(src);
  ASSERT_GT(spec.fp8_block_rows, 0);
  const auto dirs = directions(spec);
  const engine::TrialAblation trial = make_trial(spec, engine::RowNorm::full);
  const std::string out = tmp.file("exported");
  ablation::export_model(src, dirs, trial, options(out), nullptr);
  io::SafetensorsReader in(src), got(out);
  size_t fp8 = 0, same = 0, ablated = 0;
  for (const io::TensorInfo& t : in.tensors()) {
    if (t.name.size() > 10 && t.name.compare(t.name.size() - 10, 10, "_scale_inv") == 0) {
      EXPECT_EQ(got.find(t.name), nullptr) << t.name;
      continue;
    }
    const io::TensorInfo& o = got.tensor(t.name);
    EXPECT_EQ(o.shape, t.shape) << t.name;
    if (!model::is_fp8(t)) {
      EXPECT_EQ(raw_bytes(got, t.name), raw_bytes(in, t.name)) << t.name;
      ++same;
      continue;
    }
    ++fp8;
    EXPECT_EQ(o.dtype_name, "BF16") << t.name;
    std::vector<float> want(static_cast<size_t>(t.numel)), have(want.size());
    model::read_fp8(in, t, 16, 16, 0, t.numel, want.data());
    got.read_f32(o, 0, o.numel, have.data());
    if (want != have) ++ablated;  // o_proj and the down projections the trial ablates
  }
  EXPECT_GE(fp8, 60u);
  EXPECT_GE(same, 20u);
  EXPECT_GT(ablated, 0u);
  const nlohmann::json config = nlohmann::json::parse(slurp(fs::path(out) / "config.json"));
  EXPECT_FALSE(config.contains("quantization_config"));
  // The export is the model the run evaluated: the FP8 model's logits with the epilogue.
  auto q = engine::HostWeights::load(src);
  auto exported = engine::HostWeights::load(out);
  EXPECT_EQ(exported->spec().fp8_block_rows, 0);
  engine::AblationEpilogue epi(spec, dirs, {trial});
  const std::vector<float> want = run(*q, &epi);
  EXPECT_LE(max_abs_diff(run(*exported, nullptr), want), 0.05f * max_abs(want));  // bf16 rounding of o_proj/down
  // Without the trial (all weights 0) the export reloads as the FP8 model, bit for bit.
  engine::TrialAblation none = trial;
  for (auto& lambdas : none.lambda) std::fill(lambdas.begin(), lambdas.end(), 0.0f);
  const std::string out0 = tmp.file("exported-none");
  ablation::export_model(src, dirs, none, options(out0), nullptr);
  auto plain = engine::HostWeights::load(out0);
  EXPECT_EQ(run(*plain, nullptr), run(*q, nullptr));
  ablation::ExportOptions adapter = options(tmp.file("adapter"));
  adapter.format = ablation::ExportFormat::adapter;
  EXPECT_ABL_ERROR(ablation::export_model(src, dirs, trial, adapter, nullptr), "is FP8 (block-scaled)",
                   "--format merged");
}

TEST(ExportMxfp4, WeightCheckNamesTheBlocksAndScales) {
  abl::testing::TempDir tmp;
  const std::string mxfp4 = tmp.file("mxfp4"), plain = tmp.file("plain");
  abl::testing::quantize_gpt_oss_experts((kFixtures / "golden" / "gpt-oss").string(), mxfp4, plain);
  // Drop layer 1's down_proj scales and give layer 2's gate_up blocks a wrong shape.
  io::SafetensorsReader r(mxfp4);
  std::vector<abl::testing::RawTensor> kept;
  for (const io::TensorInfo& t : r.tensors()) {
    if (t.name == "model.layers.1.mlp.experts.down_proj_scales") continue;
    std::vector<int64_t> shape = t.shape;
    if (t.name == "model.layers.2.mlp.experts.gate_up_proj_blocks") shape = {shape[0], shape[1] * shape[2], 16};
    kept.push_back({t.name, t.dtype_name, shape, raw_bytes(r, t.name)});
  }
  std::ofstream(fs::path(mxfp4) / "model.safetensors", std::ios::binary) << abl::testing::encode_safetensors(kept);
  const model::ModelSpec spec = model::load_model_spec(mxfp4);
  const model::WeightCheck c = model::inspect_weights(spec, io::SafetensorsReader(mxfp4));
  ASSERT_EQ(c.problems.size(), 2u);
  EXPECT_NE(c.problems[0].find("missing tensor 'model.layers.1.mlp.experts.down_proj_scales'"), std::string::npos)
      << c.problems[0];
  EXPECT_NE(c.problems[1].find("'model.layers.2.mlp.experts.gate_up_proj_blocks'"), std::string::npos) << c.problems[1];
  EXPECT_NE(c.problems[1].find("expected [4, 128, 2, 16]"), std::string::npos) << c.problems[1];
  EXPECT_TRUE(c.unexpected.empty());
}
