// What the export steps share (export.cpp): the tensors of the output and the job that every rank
// derives in step 1; and the adapter format (export_adapter.cpp), which rank 0 writes from them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "abl/ablation/export.h"
#include "abl/core/dtype.h"
#include "abl/io/safetensors.h"
#include "abl/model/model_spec.h"

namespace abl::ablation::export_parts {

// One tensor of the output: where it comes from and, for an ablated one, what to apply.
struct Item {
  const io::TensorInfo* src = nullptr;
  DType dtype = DType::f32;  // output dtype
  int component = -1;        // 0 = o_proj, 1 = down_proj when ablated, else -1
  int64_t layer = -1;
  bool transposed = false;   // blocks stored (in, out), as gpt-oss's down_proj (E, Fm, H)
  // An MXFP4 tensor (gpt-oss as released; src is then null): its blocks and scales, the dequantized
  // (E, out, in) shape they hold, written dequantized as transformers' plain (E, in, out) tensor.
  const io::TensorInfo* mxfp4_blocks = nullptr;
  const io::TensorInfo* mxfp4_scales = nullptr;
  std::vector<int64_t> mxfp4_shape;
  // An FP8 tensor (DeepSeek-V3 as released; src is the F8_E4M3 tensor): its block scales. Written
  // dequantized (model::read_fp8), under its own name, without the scales.
  const io::TensorInfo* fp8_scale = nullptr;
};

// Everything step 1 derives; identical on every rank.
struct Job {
  model::ModelSpec spec;
  std::unique_ptr<io::SafetensorsReader> reader;
  std::map<std::string, Item> items;
  io::ShardPlan plan;
  bool dequantized = false;  // MXFP4 or FP8 tensors written dequantized: config.json loses quantization_config
  size_t num_ablated = 0;
  size_t num_ablatable = 0;  // o_proj and down projection tensors in the files
  std::vector<std::string> ablated;  // the ablated tensors in module order
  // Every weight of the model as (name, layer): what a PEFT target_modules pattern could match.
  std::vector<std::pair<std::string, int64_t>> weights;
};

// Writes the PEFT adapter of the trial (adapter_model.safetensors, adapter_config.json and the
// error report abliterate_adapter.json) into `partial`.
ExportResult write_adapter(const Job& job, const std::vector<std::vector<float>>& directions,
                           const engine::TrialAblation& trial, const ExportOptions& opts,
                           const std::filesystem::path& partial, const std::map<std::string, std::string>& metadata);

}  // namespace abl::ablation::export_parts
