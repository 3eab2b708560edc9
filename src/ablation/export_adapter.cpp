// The adapter format of export: the ablation of each o_proj/down_proj module as PEFT LoRA (or DoRA)
// factors of the base weight, with the adapter_config.json that targets exactly those modules and a
// report of how far what PEFT computes is from the merged ablation.
#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "abl/ablation/adapter.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/io/json_file.h"
#include "export_parts.h"

namespace abl::ablation::export_parts {

namespace fs = std::filesystem;

namespace {

constexpr const char* kAdapterWeights = "adapter_model.safetensors";
constexpr const char* kAdapterConfig = "adapter_config.json";
constexpr const char* kAdapterReport = "abliterate_adapter.json";

// "model.layers.3.self_attn.o_proj.weight" -> "model.layers.3.self_attn.o_proj"
std::string module_path(const std::string& tensor) {
  constexpr std::string_view kSuffix = ".weight";
  ABL_CHECK(tensor.size() > kSuffix.size() && tensor.compare(tensor.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0,
            "export --format adapter: tensor '{}' is not a module's .weight", tensor);
  return tensor.substr(0, tensor.size() - kSuffix.size());
}

std::string leaf_name(const std::string& module) {
  const size_t dot = module.rfind('.');
  return dot == std::string::npos ? module : module.substr(dot + 1);
}

// The name of the module list that holds the layers ("layers" in "model.layers.3.mlp.down_proj"):
// the path segment before the layer index, the same for every ablated module, else "".
std::string layers_container(const Job& job) {
  std::string found;
  for (const std::string& name : job.ablated) {
    const std::string index = std::to_string(job.items.at(name).layer);
    std::string previous, container;
    size_t start = 0;
    while (start <= name.size()) {
      const size_t dot = std::min(name.find('.', start), name.size());
      const std::string segment = name.substr(start, dot - start);
      if (segment == index && !previous.empty()) {
        container = previous;
        break;
      }
      previous = segment;
      start = dot + 1;
    }
    if (container.empty() || (!found.empty() && container != found)) return "";
    found = container;
  }
  return found;
}

// PEFT's target_modules, layers_to_transform and layers_pattern for exactly the ablated modules.
// The short form (the modules' own names, e.g. ["o_proj", "down_proj"], which PEFT matches as a
// suffix of the module path, plus layers_to_transform when not every layer is ablated) when it
// matches exactly the ablated modules among the model's weights; otherwise (e.g. experts left alone
// by ablate_experts = false, or a layer with only one component ablated) the full module paths,
// which PEFT matches exactly. layers_pattern names the layer list: without it PEFT takes the last
// ".<name>.<number>." of a path as the layer, which in "layers.3.mlp.experts.5.down_proj" is the
// expert.
void target_modules(const Job& job, nlohmann::ordered_json& config) {
  std::set<std::string> leaves, ablated;
  std::set<int64_t> layers;
  for (const std::string& name : job.ablated) {
    const std::string m = module_path(name);
    ablated.insert(m);
    leaves.insert(leaf_name(m));
    layers.insert(job.items.at(name).layer);
  }
  std::set<int64_t> all_layers;
  for (int64_t l = 0; l < job.spec.num_layers; ++l) all_layers.insert(l);
  const bool some_layers = layers != all_layers;
  const std::string container = some_layers ? layers_container(job) : std::string();
  std::set<std::string> covered;
  for (const auto& [name, layer] : job.weights) {
    constexpr std::string_view kSuffix = ".weight";
    if (name.size() <= kSuffix.size() || name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) continue;
    const std::string m = name.substr(0, name.size() - kSuffix.size());
    if (!leaves.count(leaf_name(m))) continue;
    if (some_layers && (layer < 0 || !layers.count(layer))) continue;
    covered.insert(m);
  }
  if (covered == ablated && (!some_layers || !container.empty())) {
    // Leaf names in the order the model has them (o_proj before down_proj).
    std::vector<std::string> names;
    for (const std::string& name : job.ablated) {
      const std::string leaf = leaf_name(module_path(name));
      if (std::find(names.begin(), names.end(), leaf) == names.end()) names.push_back(leaf);
    }
    config["target_modules"] = names;
    if (some_layers) {
      config["layers_to_transform"] = std::vector<int64_t>(layers.begin(), layers.end());
      config["layers_pattern"] = container;
    } else {
      config["layers_to_transform"] = nullptr;
      config["layers_pattern"] = nullptr;
    }
  } else {
    std::vector<std::string> names;
    for (const std::string& name : job.ablated) names.push_back(module_path(name));
    config["target_modules"] = names;
    config["layers_to_transform"] = nullptr;
    config["layers_pattern"] = nullptr;
  }
}

}  // namespace

ExportResult write_adapter(const Job& job, const std::vector<std::vector<float>>& directions,
                           const engine::TrialAblation& trial, const ExportOptions& opts, const fs::path& partial,
                           const std::map<std::string, std::string>& metadata) {
  ABL_CHECK(!job.ablated.empty(), "export --format adapter: the trial ablates no o_proj/down_proj tensor, so there "
            "is no adapter to write (export it merged)");
  const DType dtype = opts.dtype.value_or(DType::f32);
  const bool dora = trial.mode == engine::RowNorm::full && opts.adapter_rank == 0;
  const int64_t rank = trial.mode == engine::RowNorm::full && opts.adapter_rank > 0 ? opts.adapter_rank : 1;
  if (opts.adapter_rank > 0 && trial.mode != engine::RowNorm::full) {
    log::info("export: row normalization {} is exactly rank 1: --adapter-rank {} is not needed, writing rank 1",
              engine::row_norm_name(trial.mode), opts.adapter_rank);
  }
  // Stored values: the factors rounded to the output dtype; the error is that of what is stored.
  auto round_trip = [&](std::vector<float>& x, std::vector<unsigned char>& bytes) {
    bytes.resize(x.size() * dtype_size(dtype));
    convert_from_f32(x.data(), dtype, bytes.data(), x.size());
    convert_to_f32(dtype, bytes.data(), x.data(), x.size());
  };
  std::vector<io::TensorSpec> specs;
  std::vector<std::vector<unsigned char>> data;
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  AdapterError total;
  for (const std::string& name : job.ablated) {
    const Item& it = job.items.at(name);
    const io::TensorInfo& t = *it.src;
    const int64_t rows = t.shape[0], cols = t.numel / std::max<int64_t>(rows, 1);
    std::vector<float> w(static_cast<size_t>(t.numel));
    job.reader->read_f32(t, 0, t.numel, w.data());
    const size_t l = static_cast<size_t>(it.layer);
    const float* v = directions[static_cast<size_t>(trial.direction[l])].data();
    const float lambda = trial.lambda[static_cast<size_t>(it.component)][l];
    AdapterFactors f = adapter_factors(w.data(), rows, cols, v, lambda, trial.mode, opts.adapter_rank);
    const std::string prefix = "base_model.model." + module_path(name);
    std::vector<unsigned char> bytes;
    round_trip(f.a, bytes);
    specs.push_back(io::TensorSpec{prefix + ".lora_A.weight", dtype, {f.rank, cols}});
    data.push_back(bytes);
    round_trip(f.b, bytes);
    specs.push_back(io::TensorSpec{prefix + ".lora_B.weight", dtype, {rows, f.rank}});
    data.push_back(bytes);
    if (!f.magnitude.empty()) {
      round_trip(f.magnitude, bytes);
      specs.push_back(io::TensorSpec{prefix + ".lora_magnitude_vector", dtype, {rows}});
      data.push_back(bytes);
      for (float m : f.magnitude) {
        if (m == 0.0f) {
          log::warn("export: {} has a zero row: DoRA divides by its norm (0/0 in PEFT); the merged export keeps it zero",
                    name);
          break;
        }
      }
    }
    std::vector<float> ablated = w;
    ablate_weight(ablated.data(), rows, cols, v, lambda, trial.mode);
    const AdapterError e = adapter_error(w.data(), ablated.data(), f);
    total.add(e);
    modules.push_back({{"module", module_path(name)}, {"layer", it.layer}, {"lambda", lambda},
                       {"relative_error", e.rel_fro()}, {"max_abs_error", e.max_abs},
                       {"delta_frobenius", std::sqrt(e.delta_sq)}});
    log::debug("export: adapter {}: relative error {:.3e}, max abs error {:.3e}", module_path(name), e.rel_fro(),
               e.max_abs);
  }
  {
    io::SafetensorsWriter w((partial / kAdapterWeights).string(), specs, metadata);
    for (size_t i = 0; i < specs.size(); ++i) w.write(specs[i].name, data[i].data(), data[i].size());
    w.finish();
  }

  nlohmann::ordered_json config;
  config["peft_type"] = "LORA";
  config["task_type"] = "CAUSAL_LM";
  config["base_model_name_or_path"] = opts.base_model_name;
  config["r"] = rank;
  config["lora_alpha"] = rank;  // scaling = lora_alpha / r = 1
  config["use_rslora"] = false;
  config["use_dora"] = dora;
  config["lora_dropout"] = 0.0;
  config["bias"] = "none";
  config["fan_in_fan_out"] = false;
  target_modules(job, config);
  config["modules_to_save"] = nullptr;
  config["init_lora_weights"] = true;
  config["inference_mode"] = true;
  io::write_json_file((partial / kAdapterConfig).string(), config, 2);

  ExportResult result;
  result.adapter_rel_error = total.rel_fro();
  result.adapter_max_abs_error = total.max_abs;
  nlohmann::ordered_json report;
  report["format"] = dora ? "dora" : "lora";
  report["row_normalization"] = engine::row_norm_name(trial.mode);
  report["rank"] = rank;
  report["exact"] = trial.mode != engine::RowNorm::full || dora;
  report["dtype"] = dtype_name(dtype);
  report["error_definition"] =
      "relative_error = ||W' - W_eff||_F / ||W' - W||_F, max_abs_error = max |W' - W_eff|, where W' is the ablated "
      "weight in fp32 (before the merged export rounds it to its dtype) and W_eff what PEFT computes from the base "
      "weight W and the stored factors";
  report["relative_error"] = result.adapter_rel_error;
  report["max_abs_error"] = result.adapter_max_abs_error;
  report["modules"] = modules;
  io::write_json_file((partial / kAdapterReport).string(), report, 2);
  log::info("export: adapter ({}, rank {}, {}) of {} modules: relative error {:.3e}, max abs error {:.3e}",
            dora ? "DoRA" : "LoRA", rank, dtype_name(dtype), job.ablated.size(), result.adapter_rel_error,
            result.adapter_max_abs_error);
  return result;
}


}  // namespace abl::ablation::export_parts
