// The ablation epilogue on the CPU engine (DESIGN.md §2, the math in engine/ablation_table.h): a
// trial's directional ablation of o_proj and down_proj applied to their outputs, per sequence, so
// one forward pass evaluates many trials. In MoE layers every expert's down projection (and the
// shared expert's) is ablated with the layer's λ and direction, each with its own row norms; in a LatentMoE
// fc2_latent_proj's output in the experts' place. The CUDA twin is engine/cuda/ablation_epilogue.h.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "abl/engine/ablation_table.h"
#include "abl/engine/cpu/engine.h"

namespace abl::engine {

class AblationEpilogue final : public Epilogue {
 public:
  // directions: unit vectors of length H; trials index them. Trial ids of the batch index trials.
  AblationEpilogue(const model::ModelSpec& spec, std::vector<std::vector<float>> directions,
                   std::vector<TrialAblation> trials);
  void begin_layer(int64_t layer, const LayerWeights& w) override;
  void apply(Component c, int64_t layer, float* y, const Batch& batch) override;
  void apply_expert(int64_t layer, int32_t expert, float* y, const int64_t* tokens, int64_t n,
                    const Batch& batch) override;
  int64_t num_trials() const { return static_cast<int64_t>(trials_.size()); }

 private:
  struct Vectors {
    std::vector<float> n;   // (H) row norms of W
    std::vector<float> wa;  // (H) Ŵa
    double a2 = 0;          // ‖a‖²
  };
  // The weight behind (component, layer, expert): W (H, in) of the loaded layer.
  struct Source {
    const float* w = nullptr;
    int64_t in = 0;
  };
  Source source(Component c, int32_t expert) const;
  const Vectors& vectors(Component c, int64_t layer, int32_t expert, int32_t dir);
  // y rows r < n belong to batch tokens tokens[r] (all T tokens in order when tokens is null).
  void ablate(Component c, int64_t layer, int32_t expert, float* y, const int64_t* tokens, int64_t n,
              const Batch& batch);

  model::ModelSpec spec_;
  std::vector<std::vector<float>> directions_;
  std::vector<TrialAblation> trials_;
  LayerWeights current_;  // weights of the layer in progress
  int64_t current_layer_ = -1;
  // Derived vectors per (component, layer, expert, direction), kept across passes (weights and
  // directions do not change during a sweep).
  std::map<std::tuple<int, int64_t, int32_t, int32_t>, Vectors> cache_;
};

}  // namespace abl::engine
