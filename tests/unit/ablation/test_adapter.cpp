// The adapter export (ablation/adapter.h): base + B·A (or DoRA's rescaling, for row normalization
// full) equals the merged ablation; the approximate LoRA of `full` reports its error correctly and
// the error falls with the rank toward the best a rank-R matrix can do; the adapter folder has
// PEFT's names and a config that targets exactly the ablated modules; every export lists its files
// in SHA256SUMS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include <Eigen/Dense>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "abl/ablation/adapter.h"
#include "abl/ablation/export.h"
#include "abl/core/error.h"
#include "abl/core/sha256.h"
#include "abl/io/safetensors.h"
#include "abl/model/model_spec.h"
#include "common/error_of.h"
#include "common/temp_dir.h"
#include "io/fused_experts_test_util.h"
#include "io/safetensors_test_util.h"
#include "common/unit_vector.h"

using namespace abl;
using engine::RowNorm;
namespace fs = std::filesystem;

namespace {

using abl::testing::unit_vector;

const fs::path kFixtures(ABL_FIXTURE_DIR);
const std::string kOrganism = (kFixtures / "organism").string();
const std::string kMoe = (kFixtures / "organism-moe").string();

// A weight (out, in) with rows of very different norms, as trained projections have.
std::vector<float> random_weight(int64_t out, int64_t in, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> w(static_cast<size_t>(out * in));
  for (int64_t i = 0; i < out; ++i) {
    const float scale = 0.05f + 0.1f * static_cast<float>(i % 7);
    for (int64_t j = 0; j < in; ++j) w[static_cast<size_t>(i * in + j)] = scale * d(rng);
  }
  return w;
}

// W + B·A and, with a magnitude, m ⊙ (W + B·A) / ‖W + B·A‖_row: written here from the definition.
std::vector<double> peft_weight(const std::vector<float>& w, const ablation::AdapterFactors& f) {
  std::vector<double> e(w.size());
  for (int64_t i = 0; i < f.out; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < f.in; ++j) {
      double x = w[static_cast<size_t>(i * f.in + j)];
      for (int64_t c = 0; c < f.rank; ++c) {
        x += static_cast<double>(f.b[static_cast<size_t>(i * f.rank + c)]) * f.a[static_cast<size_t>(c * f.in + j)];
      }
      e[static_cast<size_t>(i * f.in + j)] = x;
      ss += x * x;
    }
    if (!f.magnitude.empty()) {
      for (int64_t j = 0; j < f.in; ++j) e[static_cast<size_t>(i * f.in + j)] *= f.magnitude[static_cast<size_t>(i)] / std::sqrt(ss);
    }
  }
  return e;
}

double max_abs(const std::vector<float>& a) {
  double m = 0;
  for (float x : a) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

}  // namespace

class AdapterModes : public ::testing::TestWithParam<RowNorm> {};

// none and pre are W + (rank 1) exactly, full is rank-1 DoRA exactly: to float rounding.
TEST_P(AdapterModes, ExactFactorsReproduceTheMergedAblation) {
  const int64_t out = 48, in = 40;
  const auto w = random_weight(out, in, 3);
  const auto v = unit_vector(out, 5);
  for (float lambda : {1.0f, 0.6f, -0.3f, 1.7f}) {
    std::vector<float> merged = w;
    ablation::ablate_weight(merged.data(), out, in, v.data(), lambda, GetParam());
    const ablation::AdapterFactors f = ablation::adapter_factors(w.data(), out, in, v.data(), lambda, GetParam(), 0);
    EXPECT_EQ(f.rank, 1);
    EXPECT_EQ(f.magnitude.empty(), GetParam() != RowNorm::full);
    const std::vector<double> e = peft_weight(w, f);
    double worst = 0;
    for (size_t i = 0; i < e.size(); ++i) worst = std::max(worst, std::fabs(e[i] - merged[i]));
    EXPECT_LT(worst, 2e-6 * max_abs(w)) << "lambda " << lambda;
    // The reported error agrees, and is at float rounding.
    const ablation::AdapterError err = ablation::adapter_error(w.data(), merged.data(), f);
    EXPECT_LT(err.max_abs, 2e-6 * max_abs(w));
    EXPECT_LT(err.rel_fro(), 1e-5);
  }
  if (GetParam() == RowNorm::none) {
    // B = −λ v, A = vᵀW.
    const float lambda = 0.8f;
    const auto f = ablation::adapter_factors(w.data(), out, in, v.data(), lambda, RowNorm::none, 0);
    for (int64_t i = 0; i < out; ++i) EXPECT_FLOAT_EQ(f.b[static_cast<size_t>(i)], -lambda * v[static_cast<size_t>(i)]);
    for (int64_t j = 0; j < in; ++j) {
      double a = 0;
      for (int64_t i = 0; i < out; ++i) a += static_cast<double>(v[static_cast<size_t>(i)]) * w[static_cast<size_t>(i * in + j)];
      EXPECT_NEAR(f.a[static_cast<size_t>(j)], a, 1e-6);
    }
  }
  // A rank asked for is ignored where the structure is exact (none, pre).
  if (GetParam() != RowNorm::full) {
    EXPECT_EQ(ablation::adapter_factors(w.data(), out, in, v.data(), 1.0f, GetParam(), 8).rank, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, AdapterModes, ::testing::Values(RowNorm::none, RowNorm::pre, RowNorm::full),
                         [](const auto& i) { return std::string(engine::row_norm_name(i.param)); });

// full as a plain LoRA: the truncated SVD's reported error is the one computed here, it falls with
// the rank, stays within a hair of the Eckart–Young optimum and reaches rounding at full rank.
TEST(Adapter, FullModeLoraErrorIsReportedAndFallsWithRank) {
  const int64_t out = 64, in = 24;
  const auto w = random_weight(out, in, 7);
  const auto v = unit_vector(out, 9);
  const float lambda = 1.2f;
  std::vector<float> merged = w;
  ablation::ablate_weight(merged.data(), out, in, v.data(), lambda, RowNorm::full);
  Eigen::MatrixXd d(out, in);
  double delta_sq = 0;
  for (int64_t i = 0; i < out; ++i) {
    for (int64_t j = 0; j < in; ++j) {
      d(i, j) = static_cast<double>(merged[static_cast<size_t>(i * in + j)]) - w[static_cast<size_t>(i * in + j)];
      delta_sq += d(i, j) * d(i, j);
    }
  }
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(d).singularValues();
  // The delta is not low rank (every row is rescaled): rank 1 leaves a visible error.
  double previous = 2.0;
  for (int64_t r : {1, 2, 4, 8, 16, 24, 32}) {
    const auto f = ablation::adapter_factors(w.data(), out, in, v.data(), lambda, RowNorm::full, r);
    ASSERT_EQ(f.rank, r);
    EXPECT_TRUE(f.magnitude.empty());
    // Independently: ‖W' − (W + B·A)‖_F / ‖W' − W‖_F and max |W' − (W + B·A)|.
    const std::vector<double> e = peft_weight(w, f);
    double err_sq = 0, worst = 0;
    for (size_t i = 0; i < e.size(); ++i) {
      const double x = merged[i] - e[i];
      err_sq += x * x;
      worst = std::max(worst, std::fabs(x));
    }
    const double rel = std::sqrt(err_sq / delta_sq);
    const ablation::AdapterError reported = ablation::adapter_error(w.data(), merged.data(), f);
    EXPECT_NEAR(reported.rel_fro(), rel, 1e-12 + 1e-9 * rel) << "rank " << r;
    EXPECT_NEAR(reported.max_abs, worst, 1e-12 + 1e-9 * worst) << "rank " << r;
    // Eckart–Young: no rank-r matrix does better than the tail of the singular values.
    double tail = 0;
    for (int64_t k = r; k < sv.size(); ++k) tail += sv(k) * sv(k);
    const double best = std::sqrt(tail / delta_sq);
    EXPECT_LE(rel, best * 1.01 + 1e-5) << "rank " << r;
    EXPECT_LE(rel, previous + 1e-7) << "rank " << r;
    if (r == 1) {
      EXPECT_GT(rel, 1e-3);
    }
    if (r >= in) {
      EXPECT_LT(rel, 1e-5);
    }
    previous = rel;
  }
  // Deterministic: the same factors twice.
  const auto f1 = ablation::adapter_factors(w.data(), out, in, v.data(), lambda, RowNorm::full, 4);
  const auto f2 = ablation::adapter_factors(w.data(), out, in, v.data(), lambda, RowNorm::full, 4);
  EXPECT_EQ(f1.a, f2.a);
  EXPECT_EQ(f1.b, f2.b);
}

namespace {

engine::TrialAblation trial_for(const model::ModelSpec& spec, RowNorm mode, const std::vector<float>& attn,
                                const std::vector<float>& mlp) {
  engine::TrialAblation t;
  t.mode = mode;
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    t.direction.push_back(static_cast<int32_t>(l % 2));
    t.lambda[0].push_back(attn[static_cast<size_t>(l) % attn.size()]);
    t.lambda[1].push_back(mlp[static_cast<size_t>(l) % mlp.size()]);
  }
  return t;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// PEFT's documented matching of a module path against LoraConfig's target_modules (a list: the
// path itself or a "."-suffix of it), layers_to_transform and layers_pattern (the layer index is
// the number after ".<layers_pattern>.", or without one after the last ".<name>.").
bool peft_targets(const nlohmann::json& config, const std::string& key) {
  bool found = false;
  for (const auto& t : config["target_modules"]) {
    const std::string target = t.get<std::string>();
    if (key == target) return true;
    found = found || (key.size() > target.size() && key.compare(key.size() - target.size(), target.size(), target) == 0 &&
                      key[key.size() - target.size() - 1] == '.');
  }
  if (!found || config["layers_to_transform"].is_null()) return found;
  const std::string pattern = config["layers_pattern"].is_null() ? "[^.]*" : config["layers_pattern"].get<std::string>();
  std::smatch m;
  if (!std::regex_match(key, m, std::regex(".*\\." + pattern + "\\.(\\d+)\\..*"))) return false;
  const int64_t layer = std::stoll(m[1].str());
  for (const auto& l : config["layers_to_transform"]) {
    if (l.get<int64_t>() == layer) return true;
  }
  return false;
}

// The modules PEFT would adapt in `model` under the adapter's config are the adapter's modules.
void expect_peft_targets_the_adapter(const std::string& model, const fs::path& adapter_dir) {
  const nlohmann::json config = read_json(adapter_dir / "adapter_config.json");
  const nlohmann::json report = read_json(adapter_dir / "abliterate_adapter.json");
  std::set<std::string> adapted, targeted;
  for (const auto& m : report["modules"]) adapted.insert(m["module"].get<std::string>());
  io::SafetensorsReader base(model);
  for (const io::TensorInfo& t : base.tensors()) {
    if (t.name.size() <= 7 || t.name.compare(t.name.size() - 7, 7, ".weight") != 0) continue;
    const std::string key = t.name.substr(0, t.name.size() - 7);
    if (peft_targets(config, key)) targeted.insert(key);
  }
  EXPECT_EQ(targeted, adapted) << adapter_dir;
}

// Every file of the folder but SHA256SUMS is listed once, with its digest.
void expect_checksums(const fs::path& dir) {
  std::ifstream in(dir / "SHA256SUMS");
  ASSERT_TRUE(in) << dir;
  std::set<std::string> listed;
  std::string line;
  while (std::getline(in, line)) {
    ASSERT_GT(line.size(), 66u);
    EXPECT_EQ(line.substr(64, 2), "  ");
    const std::string name = line.substr(66);
    EXPECT_EQ(line.substr(0, 64), sha256_file((dir / name).string())) << name;
    listed.insert(name);
  }
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(dir)) present.insert(e.path().filename().string());
  present.erase("SHA256SUMS");
  EXPECT_EQ(listed, present);
}

// Loads base + adapter for every adapted module of `out` and compares with the merged f32 export.
void expect_adapter_matches_merged(const std::string& model, const fs::path& adapter_dir, const fs::path& merged_dir,
                                   double rel_bound) {
  io::SafetensorsReader base(model), ad((adapter_dir / "adapter_model.safetensors").string()), merged(merged_dir.string());
  const nlohmann::json config = read_json(adapter_dir / "adapter_config.json");
  const nlohmann::json report = read_json(adapter_dir / "abliterate_adapter.json");
  const int64_t r = config["r"].get<int64_t>();
  const bool dora = config["use_dora"].get<bool>();
  double err_sq = 0, delta_sq = 0;
  size_t n_modules = 0;
  for (const auto& m : report["modules"]) {
    const std::string module = m["module"].get<std::string>();
    const std::string prefix = "base_model.model." + module;
    const io::TensorInfo& tw = base.tensor(module + ".weight");
    const int64_t out = tw.shape[0], in = tw.shape[1];
    std::vector<float> w(static_cast<size_t>(out * in)), wm(w.size());
    base.read_f32(tw, 0, tw.numel, w.data());
    merged.read_f32(merged.tensor(module + ".weight"), 0, tw.numel, wm.data());
    ablation::AdapterFactors f;
    f.out = out;
    f.in = in;
    f.rank = r;
    const io::TensorInfo& ta = ad.tensor(prefix + ".lora_A.weight");
    const io::TensorInfo& tb = ad.tensor(prefix + ".lora_B.weight");
    ASSERT_EQ(ta.shape, (std::vector<int64_t>{r, in}));
    ASSERT_EQ(tb.shape, (std::vector<int64_t>{out, r}));
    f.a.resize(static_cast<size_t>(ta.numel));
    f.b.resize(static_cast<size_t>(tb.numel));
    ad.read_f32(ta, 0, ta.numel, f.a.data());
    ad.read_f32(tb, 0, tb.numel, f.b.data());
    if (dora) {
      const io::TensorInfo& tm = ad.tensor(prefix + ".lora_magnitude_vector");
      ASSERT_EQ(tm.shape, (std::vector<int64_t>{out}));
      f.magnitude.resize(static_cast<size_t>(out));
      ad.read_f32(tm, 0, tm.numel, f.magnitude.data());
    }
    const std::vector<double> e = peft_weight(w, f);
    double es = 0, ds = 0;
    for (size_t i = 0; i < e.size(); ++i) {
      es += (wm[i] - e[i]) * (wm[i] - e[i]);
      ds += (static_cast<double>(wm[i]) - w[i]) * (static_cast<double>(wm[i]) - w[i]);
    }
    EXPECT_NEAR(std::sqrt(es / ds), m["relative_error"].get<double>(), 1e-12 + 1e-6 * m["relative_error"].get<double>())
        << module;
    err_sq += es;
    delta_sq += ds;
    ++n_modules;
  }
  EXPECT_GT(n_modules, 0u);
  // The adapter has nothing but the modules of the report.
  EXPECT_EQ(ad.tensors().size(), n_modules * (dora ? 3 : 2));
  EXPECT_LE(std::sqrt(err_sq / delta_sq), rel_bound);
  EXPECT_NEAR(std::sqrt(err_sq / delta_sq), report["relative_error"].get<double>(),
              1e-12 + 1e-6 * report["relative_error"].get<double>());
}

}  // namespace

// The organism's adapter (f32 factors) against its merged f32 export, every mode.
TEST_P(AdapterModes, AdapterFolderReproducesTheMergedExport) {
  const model::ModelSpec spec = model::load_model_spec(kOrganism);
  const std::vector<std::vector<float>> dirs = {unit_vector(spec.hidden_size, 21), unit_vector(spec.hidden_size, 22)};
  const auto trial = trial_for(spec, GetParam(), {0.9f, 1.3f}, {0.7f, -0.4f});
  abl::testing::TempDir tmp;
  ablation::ExportOptions m;
  m.out_dir = tmp.file("merged");
  m.dtype = DType::f32;
  ablation::export_model(kOrganism, dirs, trial, m, nullptr);
  expect_checksums(m.out_dir);
  EXPECT_FALSE(fs::exists(fs::path(m.out_dir) / "README.md"));  // no card given

  ablation::ExportOptions a;
  a.out_dir = tmp.file("adapter");
  a.format = ablation::ExportFormat::adapter;
  a.base_model_name = "org/organism";
  a.model_card = [](const ablation::ExportResult& r) { return fmt::format("card {:.3e}\n", r.adapter_rel_error); };
  const ablation::ExportResult r = ablation::export_model(kOrganism, dirs, trial, a, nullptr);
  EXPECT_LT(r.adapter_rel_error, 1e-5);
  expect_adapter_matches_merged(kOrganism, a.out_dir, m.out_dir, 1e-5);
  expect_peft_targets_the_adapter(kOrganism, a.out_dir);
  expect_checksums(a.out_dir);
  EXPECT_EQ(std::set<std::string>({"README.md", "SHA256SUMS", "adapter_config.json", "adapter_model.safetensors",
                                   "abliterate_adapter.json"}),
            [&] {
              std::set<std::string> s;
              for (const auto& e : fs::directory_iterator(a.out_dir)) s.insert(e.path().filename().string());
              return s;
            }());

  const nlohmann::json c = read_json(fs::path(a.out_dir) / "adapter_config.json");
  EXPECT_EQ(c["peft_type"], "LORA");
  EXPECT_EQ(c["task_type"], "CAUSAL_LM");
  EXPECT_EQ(c["base_model_name_or_path"], "org/organism");
  EXPECT_EQ(c["r"], 1);
  EXPECT_EQ(c["lora_alpha"], 1);
  EXPECT_EQ(c["use_dora"], GetParam() == RowNorm::full);
  EXPECT_EQ(c["fan_in_fan_out"], false);
  EXPECT_EQ(c["bias"], "none");
  EXPECT_EQ(c["lora_dropout"], 0.0);
  EXPECT_EQ(c["target_modules"], nlohmann::json({"o_proj", "down_proj"}));
  EXPECT_TRUE(c["layers_to_transform"].is_null());
}

// full as an approximate rank-R LoRA: the stated error holds and is smaller at a higher rank.
TEST(Adapter, FullModeLoraFolderStatesItsError) {
  const model::ModelSpec spec = model::load_model_spec(kOrganism);
  const std::vector<std::vector<float>> dirs = {unit_vector(spec.hidden_size, 21), unit_vector(spec.hidden_size, 22)};
  const auto trial = trial_for(spec, RowNorm::full, {0.9f, 1.3f}, {0.7f, -0.4f});
  abl::testing::TempDir tmp;
  ablation::ExportOptions m;
  m.out_dir = tmp.file("merged");
  m.dtype = DType::f32;
  ablation::export_model(kOrganism, dirs, trial, m, nullptr);
  double previous = 2;
  for (int64_t r : {1, 4, 16}) {
    ablation::ExportOptions a;
    a.out_dir = tmp.file(fmt::format("adapter{}", r));
    a.format = ablation::ExportFormat::adapter;
    a.adapter_rank = r;
    const ablation::ExportResult res = ablation::export_model(kOrganism, dirs, trial, a, nullptr);
    EXPECT_EQ(read_json(fs::path(a.out_dir) / "adapter_config.json")["r"], r);
    EXPECT_EQ(read_json(fs::path(a.out_dir) / "adapter_config.json")["use_dora"], false);
    EXPECT_EQ(read_json(fs::path(a.out_dir) / "abliterate_adapter.json")["exact"], false);
    expect_adapter_matches_merged(kOrganism, a.out_dir, m.out_dir, res.adapter_rel_error * 1.001 + 1e-6);
    EXPECT_LT(res.adapter_rel_error, previous);
    previous = res.adapter_rel_error;
  }
}

// target_modules: the short form with layers_to_transform when that names exactly the ablated
// modules, the full module paths otherwise.
TEST(Adapter, TargetModulesNameExactlyTheAblatedModules) {
  const model::ModelSpec spec = model::load_model_spec(kMoe);
  ASSERT_GE(spec.num_layers, 2);
  const std::vector<std::vector<float>> dirs = {unit_vector(spec.hidden_size, 1), unit_vector(spec.hidden_size, 2)};
  abl::testing::TempDir tmp;
  auto export_config = [&](const engine::TrialAblation& t, const std::string& name) {
    ablation::ExportOptions a;
    a.out_dir = tmp.file(name);
    a.format = ablation::ExportFormat::adapter;
    ablation::export_model(kMoe, dirs, t, a, nullptr);
    expect_peft_targets_the_adapter(kMoe, a.out_dir);
    return read_json(fs::path(a.out_dir) / "adapter_config.json");
  };
  // Every layer, experts included: "down_proj" covers mlp.experts.{e}.down_proj and the shared expert's.
  engine::TrialAblation all = trial_for(spec, RowNorm::none, {1.0f}, {1.0f});
  nlohmann::json c = export_config(all, "all");
  EXPECT_EQ(c["target_modules"], nlohmann::json({"o_proj", "down_proj"}));
  EXPECT_TRUE(c["layers_to_transform"].is_null());
  EXPECT_TRUE(c["layers_pattern"].is_null());
  // Only layer 1.
  std::vector<float> one(static_cast<size_t>(spec.num_layers), 0.0f);
  one[1] = 1.0f;
  engine::TrialAblation t1 = trial_for(spec, RowNorm::none, one, one);
  c = export_config(t1, "layer1");
  EXPECT_EQ(c["target_modules"], nlohmann::json({"o_proj", "down_proj"}));
  EXPECT_EQ(c["layers_to_transform"], nlohmann::json({1}));
  // Not PEFT's default (the last ".<name>.<n>." of a path, the expert index in an expert's path).
  EXPECT_EQ(c["layers_pattern"], "layers");
  // Routed experts left alone: "down_proj" would catch them, so the modules are listed by path.
  engine::TrialAblation shared_only = all;
  shared_only.routed_experts = false;
  c = export_config(shared_only, "shared");
  std::set<std::string> names;
  for (const auto& n : c["target_modules"]) names.insert(n.get<std::string>());
  EXPECT_TRUE(names.count("model.layers.0.self_attn.o_proj"));
  EXPECT_TRUE(names.count("model.layers.0.mlp.shared_expert.down_proj"));
  for (const std::string& n : names) EXPECT_EQ(n.find(".experts."), std::string::npos) << n;
  EXPECT_TRUE(c["layers_to_transform"].is_null());
  // Nothing ablated: no adapter.
  engine::TrialAblation none = trial_for(spec, RowNorm::none, {0.0f}, {0.0f});
  ablation::ExportOptions a;
  a.out_dir = tmp.file("nothing");
  a.format = ablation::ExportFormat::adapter;
  EXPECT_THROW(ablation::export_model(kMoe, dirs, none, a, nullptr), Error);
  EXPECT_FALSE(fs::exists(a.out_dir));
}

// MoE (Qwen2-MoE naming): every routed expert's and the shared expert's down projection get an
// adapter with the merged export's W', in every mode; with ablate_experts false only the shared one.
TEST_P(AdapterModes, MoeAdapterCoversTheExperts) {
  const model::ModelSpec spec = model::load_model_spec(kMoe);
  const std::vector<std::vector<float>> dirs = {unit_vector(spec.hidden_size, 31), unit_vector(spec.hidden_size, 32)};
  for (bool routed : {true, false}) {
    engine::TrialAblation trial = trial_for(spec, GetParam(), {1.1f, 0.7f}, {0.9f, 1.2f});
    trial.routed_experts = routed;
    abl::testing::TempDir tmp;
    ablation::ExportOptions m;
    m.out_dir = tmp.file("merged");
    m.dtype = DType::f32;
    ablation::export_model(kMoe, dirs, trial, m, nullptr);
    ablation::ExportOptions a;
    a.out_dir = tmp.file("adapter");
    a.format = ablation::ExportFormat::adapter;
    const ablation::ExportResult r = ablation::export_model(kMoe, dirs, trial, a, nullptr);
    EXPECT_LT(r.adapter_rel_error, 1e-5);
    expect_adapter_matches_merged(kMoe, a.out_dir, m.out_dir, 1e-5);
    expect_peft_targets_the_adapter(kMoe, a.out_dir);
    size_t experts = 0, shared = 0;
    const nlohmann::json report = read_json(fs::path(a.out_dir) / "abliterate_adapter.json");
    for (const auto& mod : report["modules"]) {
      const std::string name = mod["module"].get<std::string>();
      experts += name.find(".mlp.experts.") != std::string::npos;
      shared += name.find(".mlp.shared_expert.down_proj") != std::string::npos;
    }
    EXPECT_EQ(experts > 0, routed);
    EXPECT_GT(shared, 0u);
    // Every tensor the merged export changed is adapted (the helper checked the converse).
    io::SafetensorsReader base(kMoe), merged(m.out_dir);
    size_t changed = 0;
    for (const io::TensorInfo& t : merged.tensors()) {
      const std::vector<float> x = merged.read_f32(t.name), y = base.read_f32(t.name);
      changed += x != y;
    }
    EXPECT_EQ(changed, experts + shared + static_cast<size_t>(spec.num_layers));  // + every o_proj
  }
}

// Experts fused as transformers 5 saves them: no PEFT module holds one expert's down projection,
// so an adapter that would ablate them is refused, naming the tensor and the way out, before any
// file is written; without the routed experts (--ablate-experts false) the adapter is written.
TEST(Adapter, FusedExpertsAreRefusedUnlessLeftAlone) {
  abl::testing::TempDir tmp;
  const std::string fused = tmp.file("fused");
  ASSERT_GT(abl::testing::fuse_experts(kMoe, fused), 0);
  const model::ModelSpec spec = model::load_model_spec(fused);
  ASSERT_TRUE(spec.fused_experts);
  const std::vector<std::vector<float>> dirs = {unit_vector(spec.hidden_size, 31), unit_vector(spec.hidden_size, 32)};
  engine::TrialAblation trial = trial_for(spec, engine::RowNorm::full, {1.1f, 0.7f}, {0.9f, 1.2f});
  ablation::ExportOptions a;
  a.out_dir = tmp.file("adapter");
  a.format = ablation::ExportFormat::adapter;
  const std::string msg = abl::testing::thrown_error_of([&] { ablation::export_model(fused, dirs, trial, a, nullptr); });
  EXPECT_TRUE(abl::testing::contains_all(msg, {"model.layers.0.mlp.experts.down_proj", "fused", "--format merged",
                                               "--ablate-experts false"}))
      << msg;
  EXPECT_FALSE(fs::exists(a.out_dir));
  EXPECT_FALSE(fs::exists(a.out_dir + ".partial"));
  trial.routed_experts = false;
  ablation::export_model(fused, dirs, trial, a, nullptr);
  const nlohmann::json report = read_json(fs::path(a.out_dir) / "abliterate_adapter.json");
  for (const auto& mod : report["modules"]) {
    EXPECT_EQ(mod["module"].get<std::string>().find(".mlp.experts."), std::string::npos) << mod["module"];
  }
}

// The export's README.md is its model card, never the source model's own README.md; a merged
// folder's SHA256SUMS covers the shards (hashed by the rank that wrote them) and the small files.
TEST(Adapter, ModelCardReplacesTheSourceReadme) {
  abl::testing::TempDir tmp;
  const fs::path model = tmp.path() / "model";
  fs::create_directories(model);
  for (const auto& e : fs::directory_iterator(kOrganism)) {
    if (e.is_regular_file()) fs::copy_file(e.path(), model / e.path().filename());
  }
  tmp.write("model/README.md", "the source model's card\n");
  const model::ModelSpec spec = model::load_model_spec(model.string());
  const std::vector<std::vector<float>> dirs = {unit_vector(spec.hidden_size, 41)};
  engine::TrialAblation trial = trial_for(spec, RowNorm::full, {1.0f}, {0.5f});
  for (int d = 0; d < static_cast<int>(trial.direction.size()); ++d) trial.direction[static_cast<size_t>(d)] = 0;
  for (auto format : {ablation::ExportFormat::merged, ablation::ExportFormat::adapter}) {
    ablation::ExportOptions o;
    o.out_dir = tmp.file(format == ablation::ExportFormat::merged ? "merged" : "adapter");
    o.format = format;
    o.max_shard_bytes = 1 << 20;  // several shards
    o.model_card = [](const ablation::ExportResult&) { return std::string("---\nlibrary_name: x\n---\nours\n"); };
    ablation::export_model(model.string(), dirs, trial, o, nullptr);
    std::ifstream in(fs::path(o.out_dir) / "README.md");
    std::stringstream card;
    card << in.rdbuf();
    EXPECT_EQ(card.str(), "---\nlibrary_name: x\n---\nours\n");
    expect_checksums(o.out_dir);
  }
  EXPECT_TRUE(fs::exists(fs::path(tmp.file("merged")) / "model.safetensors.index.json"));
}
