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
#include <string_view>
#include <vector>

namespace abl::engine {

enum class RowNorm { none, pre, full };
RowNorm parse_row_norm(std::string_view name);  // "none", "pre", "full"; errors name the value
std::string_view row_norm_name(RowNorm m);

// One trial as the engine applies it: for every layer, the direction (an index into the
// epilogue's direction table) and λ of each component (0 = not ablated).
struct TrialAblation {
  RowNorm mode = RowNorm::full;
  // MoE layers: mlp.down_proj ablates every routed expert's down projection too (a LatentMoE: fc2_latent_proj,
  // their writer to the residual stream; false: only the shared expert's and dense MLPs', as tools that skip
  // fused expert tensors do; for comparison).
  bool routed_experts = true;
  std::vector<int32_t> direction;                  // (L)
  std::array<std::vector<float>, 2> lambda;        // [Component][L]
};

// The epilogue's input for a batch of trials: a table of unit directions (length H) and one
// TrialAblation per trial (a batch's trial id indexes `ablations`). ablation/trial.h builds it
// from trial parameters.
struct AblationTable {
  std::vector<std::vector<float>> directions;
  std::vector<TrialAblation> ablations;
};

}  // namespace abl::engine
