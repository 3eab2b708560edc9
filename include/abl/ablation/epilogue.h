// The ablation epilogue (DESIGN.md §2): directional ablation of o_proj and down_proj applied to
// their outputs instead of their weights, per sequence, so one forward pass evaluates many trials.
// With y = W x, the three row-normalisation modes become
//   none: y' = y − λ v (vᵀy)
//   pre:  y' = y − λ (n⊙v) ((v⊘n)ᵀ y)
//   full: y' = (y − λ (n⊙v) ((v⊘n)ᵀ y)) ⊘ s,  s_i² = 1 − 2λ v_i (Ŵa)_i + λ² v_i² ‖a‖²,  a = Ŵᵀv
// where n are W's row norms and Ŵ is W with unit rows. n, Ŵa and ‖a‖² depend only on the
// weights and the direction, so they are computed once per (layer, component, direction).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "abl/engine/engine.h"

namespace abl::ablation {

enum class RowNorm { none, pre, full };
RowNorm parse_row_norm(std::string_view name);  // "none", "pre", "full"; errors name the value
std::string_view row_norm_name(RowNorm m);

// One trial as the engine applies it: for every layer, the direction (an index into the
// epilogue's direction table) and λ of each component (0 = not ablated).
struct TrialAblation {
  RowNorm mode = RowNorm::full;
  std::vector<int32_t> direction;                  // (L)
  std::array<std::vector<float>, 2> lambda;        // [Component][L]
};

class AblationEpilogue final : public engine::Epilogue {
 public:
  // directions: unit vectors of length H; trials index them. Trial ids of the batch index trials.
  AblationEpilogue(const model::ModelSpec& spec, std::vector<std::vector<float>> directions,
                   std::vector<TrialAblation> trials);
  void begin_layer(int64_t layer, const engine::LayerWeights& w) override;
  void apply(engine::Component c, int64_t layer, float* y, const engine::Batch& batch) override;
  int64_t num_trials() const { return static_cast<int64_t>(trials_.size()); }

 private:
  struct Vectors {
    std::vector<float> n;   // (H) row norms of W
    std::vector<float> wa;  // (H) Ŵa
    double a2 = 0;          // ‖a‖²
  };
  const Vectors& vectors(engine::Component c, int64_t layer, int32_t dir);

  model::ModelSpec spec_;
  std::vector<std::vector<float>> directions_;
  std::vector<TrialAblation> trials_;
  engine::LayerWeights current_;  // weights of the layer in progress
  int64_t current_layer_ = -1;
  // Derived vectors, kept across passes (weights and directions do not change during a sweep).
  std::map<std::tuple<int, int64_t, int32_t>, Vectors> cache_;
};

// The same ablation written into a weight W (out, in) in place — what `export` writes, and the
// reference the epilogue is tested against.
void ablate_weight(float* w, int64_t out, int64_t in, const float* v, float lambda, RowNorm mode);

}  // namespace abl::ablation
