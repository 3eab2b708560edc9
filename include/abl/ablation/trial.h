// Trial parameters (DESIGN.md §1.3) and how they become what the epilogue applies: a table of
// unit directions plus, per trial, a direction index and λ for each layer and component.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "abl/engine/ablation_table.h"

namespace abl::ablation {

enum class DirectionScope { global = 0, per_layer = 1 };
DirectionScope parse_direction_scope(std::string_view name);  // "global", "per_layer"
std::string_view direction_scope_name(DirectionScope s);

// Weight kernel of one component (attn.o_proj or mlp.down_proj) over the layers.
struct ComponentParams {
  double max_weight = 1.0;
  double max_weight_position = 0.0;  // layer (fractional) where λ = max_weight
  double min_weight = 1.0;           // λ at distance min_weight_distance
  double min_weight_distance = 1.0;  // > 0; layers further away are not ablated
};

struct TrialParams {
  DirectionScope scope = DirectionScope::global;
  double direction_index = 0.0;         // global: v = lerp(r[⌊d⌋+1], r[⌊d⌋+2], frac d)
  std::array<ComponentParams, 2> comp;  // indexed by engine::Component (attn_o, mlp_down)
};

// The parameter names used by grid files, trials.h5 and report, in this order.
inline constexpr std::array<const char*, 10> kParamNames = {
    "direction_scope",          "direction_index",         "attn.max_weight",
    "attn.max_weight_position", "attn.min_weight",         "attn.min_weight_distance",
    "mlp.max_weight",           "mlp.max_weight_position", "mlp.min_weight",
    "mlp.min_weight_distance"};
// Values in kParamNames order (direction_scope as 0/1) and back.
std::array<double, kParamNames.size()> param_values(const TrialParams& p);
TrialParams params_from_values(const std::array<double, kParamNames.size()>& v);
// "global d=2.31 attn(1.20@2.5, 0.60, 1.8) mlp(...)": one line for logs and report.
std::string describe(const TrialParams& p);

// λ of layer `layer`: max_weight + (dist/min_weight_distance)(min_weight − max_weight) with
// dist = |layer − max_weight_position|; 0 when dist > min_weight_distance.
float layer_weight(const ComponentParams& c, int64_t layer);

// Directions r (depths = L+1 rows of H, unit length or zero) → the epilogue's direction table
// and one engine::TrialAblation per trial. Table rows 0..L are r itself (per_layer trials use r[l+1]);
// each global trial appends its interpolated, renormalized direction. Errors name the trial
// whose direction_index is outside [0, L-1] (it needs r[⌊d⌋+1] and r[⌊d⌋+2]).
// routed_experts: TrialAblation::routed_experts of every trial.
engine::AblationTable build_trial_table(const std::vector<TrialParams>& trials,
                             const std::vector<std::vector<float>>& r, engine::RowNorm mode,
                             bool routed_experts = true);

// The direction a global trial uses (unit length), for export and tests.
std::vector<float> global_direction(const std::vector<std::vector<float>>& r, double direction_index);

}  // namespace abl::ablation
