// The unit layout of a decoder layer's tensors and the views carved from a unit (weights.h).
#include "abl/engine/weights.h"

#include "abl/core/error.h"

namespace abl::engine {

UnitLayout layer_unit_layout(const model::ModelSpec& spec) {
  UnitLayout u;
  u.slots = model::layer_slots(spec);
  for (const auto& slot : u.slots) {
    u.offsets.push_back(u.total);
    u.sizes.push_back(model::element_count(slot.shape));
    u.total += u.sizes.back();
  }
  return u;
}

LayerWeights layer_views(const model::ModelSpec& spec, const UnitLayout& layout, const float* unit) {
  (void)spec;
  LayerWeights w;
  for (size_t i = 0; i < layout.slots.size(); ++i) {
    const float* p = unit + layout.offsets[i];
    switch (layout.slots[i].role) {
      case model::WeightRole::attn_norm: w.attn_norm = p; break;
      case model::WeightRole::q_proj: w.wq = p; break;
      case model::WeightRole::k_proj: w.wk = p; break;
      case model::WeightRole::v_proj: w.wv = p; break;
      case model::WeightRole::q_bias: w.bq = p; break;
      case model::WeightRole::k_bias: w.bk = p; break;
      case model::WeightRole::v_bias: w.bv = p; break;
      case model::WeightRole::q_norm: w.q_norm = p; break;
      case model::WeightRole::k_norm: w.k_norm = p; break;
      case model::WeightRole::o_proj: w.wo = p; break;
      case model::WeightRole::post_attn_norm: w.post_attn_norm = p; break;
      case model::WeightRole::mlp_norm: w.mlp_norm = p; break;
      case model::WeightRole::post_mlp_norm: w.post_mlp_norm = p; break;
      case model::WeightRole::gate_proj: w.w_gate = p; break;
      case model::WeightRole::up_proj: w.w_up = p; break;
      case model::WeightRole::down_proj: w.w_down = p; break;
      default: fail("weight role {} is not a layer tensor", model::role_name(layout.slots[i].role));
    }
  }
  return w;
}

}  // namespace abl::engine
