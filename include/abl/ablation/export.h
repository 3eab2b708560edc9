// `export`: the abliterated model as a Hugging Face folder — W' = ablate(W) written explicitly
// for o_proj and down_proj of every layer (in MoE layers every expert's and the shared expert's
// down projection; all three row-normalization modes), every other tensor copied bit for bit
// (fused Phi-3 tensors, routers, a multimodal checkpoint's vision tower), config.json and the
// tokenizer and processor files copied. Each rank writes whole shard files
// of a plan every rank computes alike; rank 0 writes the index and the small files last, after
// every shard is complete, so a folder with an index is a complete folder.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "abl/engine/ablation_table.h"
#include "abl/parallel/comm.h"
#include "abl/core/dtype.h"

namespace abl::ablation {

// merged: the ablated weights W' in a full model folder. adapter: a PEFT LoRA (or, for row
// normalization full, DoRA) adapter folder whose factors reproduce W' on the base model
// (ablation/adapter.h; docs/outputs.md).
enum class ExportFormat { merged, adapter };

struct ExportResult {
  // adapter: ‖W' − W_eff‖_F / ‖W' − W‖_F over every ablated module and the largest |W' − W_eff|.
  double adapter_rel_error = 0, adapter_max_abs_error = 0;
};

struct ExportOptions {
  std::string out_dir;
  ExportFormat format = ExportFormat::merged;
  // adapter, row normalization full: 0 = the exact rank-1 DoRA adapter; R > 0 = a plain rank-R
  // LoRA from a truncated SVD of W' − W (approximate; its error is reported). Ignored otherwise.
  int64_t adapter_rank = 0;
  std::string base_model_name;  // adapter_config.json's base_model_name_or_path (adapter)
  // README.md written into the folder when not empty (the model card); every export also gets
  // SHA256SUMS, the SHA-256 of every file written (sha256sum -c format).
  // (Given the result, so that an adapter's card can state its error.)
  std::function<std::string(const ExportResult&)> model_card;
  uint64_t max_shard_bytes = 5ull << 30;  // --max-shard-size
  // Default: each tensor keeps its source dtype. Set: every tensor is written in this dtype and
  // config.json's torch_dtype (or dtype) says so. adapter: the factors' dtype (default f32).
  std::optional<DType> dtype;
  bool overwrite = false;                 // else an existing out_dir is an error
  std::vector<std::pair<std::string, std::string>> metadata;  // extra safetensors metadata
};

// model_dir: a Hugging Face model folder (model.safetensors or shards with their index).
// directions/trial as for AblationEpilogue (the trial's direction index per layer names a row of
// `directions`). Collective over comm (null: serial).
//
// What is written: o_proj/down_proj of a layer with λ ≠ 0 become ablate_weight(W) computed in
// fp32 from the source values and rounded once to the output dtype; with λ = 0 they are copied
// like every other tensor (the source bytes when the dtype is unchanged). Tensors go in the
// model's module order (embedding, layer 0, ..., norm, head, then extras by name), split into
// shards of at most max_shard_bytes as io::plan_shards does; shard i is written by rank
// i mod size. config.json is copied byte for byte unless --dtype changes its dtype; the
// tokenizer and generation files that exist are copied.
//
// Everything is written into "<out_dir>.partial/" (a stale one is replaced), which rank 0
// renames to out_dir at the very end; with overwrite an existing out_dir is only removed then.
// A failure on any rank fails every rank with that rank's message and removes the partial
// folder. Errors (checked on every rank before any tensor is read): out_dir exists without
// overwrite, out_dir is or contains model_dir, a trial or direction that does not fit the model,
// weights that do not match config.json or have a dtype other than F32/F16/BF16.
//
// adapter: rank 0 computes the factors of every ablated module (the same modules as merged) and
// writes adapter_config.json, adapter_model.safetensors and abliterate_adapter.json (the factors'
// error against W', per module and overall); the other ranks wait for its verdict.
ExportResult export_model(const std::string& model_dir, const std::vector<std::vector<float>>& directions,
                  const engine::TrialAblation& trial, const ExportOptions& opts, parallel::Comm* comm);

// The same ablation written into a weight W (out, in) in place — what `export` writes, and the
// reference the epilogue is tested against.
void ablate_weight(float* w, int64_t out, int64_t in, const float* v, float lambda, engine::RowNorm mode);


}  // namespace abl::ablation
