// The forward pass of a decoder-only model over a packed batch (sequences concatenated, no
// padding) with a KV cache, on the CPU backend. One function per layer reads like the math:
// rmsnorm → qkv (+bias) → q/k norm → rope → cache append → attention → o_proj → epilogue →
// [post-norm] → add → rmsnorm → gate/up → swiglu|geglu → down_proj → epilogue → [post-norm] → add
// → capture. Family differences are flags of the ModelSpec. All buffers are sized once from the Limits and reused.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "abl/backend/cpu/ops.h"
#include "abl/engine/batch.h"
#include "abl/engine/buffer_plan.h"
#include "abl/engine/weights.h"

namespace abl::engine {

// KV cache: per layer, K and V rows (C, NKV*HD). Sequences own disjoint row ranges.
class KvCache {
 public:
  KvCache(const model::ModelSpec& spec, int64_t rows);
  int64_t rows() const { return rows_; }
  float* k(int64_t layer) { return k_[static_cast<size_t>(layer)].data(); }
  float* v(int64_t layer) { return v_[static_cast<size_t>(layer)].data(); }
  static int64_t bytes_for(const model::ModelSpec& spec, int64_t rows);

 private:
  int64_t rows_;
  std::vector<std::vector<float>> k_, v_;
};

// A hook on the outputs of o_proj and down_proj (the ablation epilogue, DESIGN.md §2).
class Epilogue {
 public:
  virtual ~Epilogue() = default;
  // Once per layer and pass, with that layer's weights (to derive per-layer vectors).
  virtual void begin_layer(int64_t layer, const LayerWeights& w) = 0;
  // y(T,H): the component's output for every token of the batch.
  virtual void apply(Component c, int64_t layer, float* y, const Batch& batch) = 0;
};

class Engine {
 public:
  Engine(WeightSource& weights, Limits limits);
  const model::ModelSpec& spec() const { return spec_; }
  const Limits& limits() const { return limits_; }
  // Activation buffers this engine holds (the KV cache and weights are planned by their owners).
  const BufferPlan& plan() const { return plan_; }
  static BufferPlan plan_for(const model::ModelSpec& spec, const Limits& limits);

  void forward(const Batch& batch, KvCache& cache, const Outputs& out, Epilogue* epilogue = nullptr);

 private:
  void layer(int64_t l, const Batch& batch, KvCache& cache, Epilogue* epilogue);
  void capture(const Batch& batch, int64_t depth, const float* rows, float* residuals) const;

  WeightSource& weights_;
  model::ModelSpec spec_;
  Limits limits_;
  BufferPlan plan_;
  std::vector<float> inv_freq_;        // (HD/2)
  std::vector<float> inv_freq_local_;  // (HD/2) of the sliding layers when they differ (Gemma 3)
  // Activations, (T, ·) each, sized for limits_.max_tokens.
  std::vector<float> x_, h_, q_, k_, v_, att_, y_, gate_, up_;
  std::vector<float> last_;  // (B, H) final-norm input/output of the last tokens
  std::vector<float> logits_;  // (B, V) only when greedy ids are asked for without logits
};

// The CPU engine's footprint for the planner: Engine::plan_for and KvCache::bytes_for, fp32.
EngineFootprint cpu_engine_footprint();

}  // namespace abl::engine
