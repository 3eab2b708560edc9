// The unit layout of a decoder layer's tensors and the views carved from a unit (weights.h).
#include "abl/engine/weights.h"

#include "abl/core/error.h"

namespace abl::engine {

size_t UnitLayout::index_of(model::WeightRole role, int32_t expert) const {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].role == role && slots[i].expert == expert) return i;
  }
  fail("the layer has no {} tensor{}", model::role_name(role),
       expert >= 0 ? fmt::format(" for expert {}", expert) : std::string());
}

UnitLayout layer_unit_layout(const model::ModelSpec& spec, int64_t layer) {
  UnitLayout u;
  u.slots = model::layer_slots(spec, layer);
  for (const auto& slot : u.slots) {
    u.offsets.push_back(u.total);
    u.sizes.push_back(model::element_count(slot.shape));
    u.total += u.sizes.back();
  }
  return u;
}

std::vector<UnitLayout> layer_unit_layouts(const model::ModelSpec& spec) {
  std::vector<UnitLayout> out;
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    if (l > 0 && spec.same_layer_kind(l, l - 1)) {
      out.push_back(out.back());  // the same slots as the layer before
    } else {
      out.push_back(layer_unit_layout(spec, l));
    }
  }
  return out;
}

LayerWeights layer_views(const model::ModelSpec& spec, const UnitLayout& layout, const float* unit) {
  LayerWeights w;
  if (spec.num_experts > 0) w.experts.resize(static_cast<size_t>(spec.num_experts));
  for (size_t i = 0; i < layout.slots.size(); ++i) {
    const float* p = unit + layout.offsets[i];
    const int32_t e = layout.slots[i].expert;
    switch (layout.slots[i].role) {
      case model::WeightRole::attn_norm: w.attn_norm = p; break;
      case model::WeightRole::attn_norm_bias: w.attn_norm_bias = p; break;
      case model::WeightRole::q_proj: w.wq = p; break;
      case model::WeightRole::k_proj: w.wk = p; break;
      case model::WeightRole::v_proj: w.wv = p; break;
      case model::WeightRole::q_bias: w.bq = p; break;
      case model::WeightRole::k_bias: w.bk = p; break;
      case model::WeightRole::v_bias: w.bv = p; break;
      case model::WeightRole::q_norm: w.q_norm = p; break;
      case model::WeightRole::k_norm: w.k_norm = p; break;
      case model::WeightRole::q_a_proj: w.wq_a = p; break;
      case model::WeightRole::q_a_norm: w.q_a_norm = p; break;
      case model::WeightRole::q_b_proj: w.wq_b = p; break;
      case model::WeightRole::kv_a_proj: w.wkv_a = p; break;
      case model::WeightRole::kv_a_norm: w.kv_a_norm = p; break;
      case model::WeightRole::kv_b_proj: w.wkv_b = p; break;
      case model::WeightRole::q_gate_proj: w.wq_gate = p; break;
      case model::WeightRole::linear_q: w.lin_q = p; break;
      case model::WeightRole::linear_k: w.lin_k = p; break;
      case model::WeightRole::linear_v: w.lin_v = p; break;
      case model::WeightRole::linear_z: w.lin_z = p; break;
      case model::WeightRole::linear_b: w.lin_b = p; break;
      case model::WeightRole::linear_a: w.lin_a = p; break;
      case model::WeightRole::linear_conv: w.lin_conv = p; break;
      case model::WeightRole::linear_a_log: w.lin_a_log = p; break;
      case model::WeightRole::linear_dt_bias: w.lin_dt_bias = p; break;
      case model::WeightRole::linear_norm: w.lin_norm = p; break;
      case model::WeightRole::mamba_xbc: w.mamba_xbc = p; break;
      case model::WeightRole::mamba_dt: w.mamba_dt = p; break;
      case model::WeightRole::linear_conv_bias: w.lin_conv_bias = p; break;
      case model::WeightRole::mamba_d: w.mamba_d = p; break;
      case model::WeightRole::short_conv_in: w.short_conv_in = p; break;
      case model::WeightRole::o_proj: w.wo = p; break;
      case model::WeightRole::o_bias: w.bo = p; break;
      case model::WeightRole::attn_sinks: w.sinks = p; break;
      case model::WeightRole::post_attn_norm: w.post_attn_norm = p; break;
      case model::WeightRole::mlp_norm: w.mlp_norm = p; break;
      case model::WeightRole::mlp_norm_bias: w.mlp_norm_bias = p; break;
      case model::WeightRole::gate_proj: w.w_gate = p; break;
      case model::WeightRole::up_proj: w.w_up = p; break;
      case model::WeightRole::down_proj: w.w_down = p; break;
      case model::WeightRole::gate_bias: w.b_gate = p; break;
      case model::WeightRole::up_bias: w.b_up = p; break;
      case model::WeightRole::down_bias: w.b_down = p; break;
      case model::WeightRole::post_mlp_norm: w.post_mlp_norm = p; break;
      case model::WeightRole::layer_scalar: w.layer_scalar = p; break;
      case model::WeightRole::dense_post_norm: w.dense_post_norm = p; break;
      case model::WeightRole::moe_norm: w.moe_norm = p; break;
      case model::WeightRole::moe_post_norm: w.moe_post_norm = p; break;
      case model::WeightRole::router_scale: w.router_scale = p; break;
      case model::WeightRole::router_expert_scale: w.router_expert_scale = p; break;
      case model::WeightRole::ple_gate: w.ple_gate = p; break;
      case model::WeightRole::ple_proj: w.ple_proj = p; break;
      case model::WeightRole::ple_post_norm: w.ple_post_norm = p; break;
      case model::WeightRole::ple_embed: w.ple_embed = p; break;
      case model::WeightRole::ple_model_proj: w.ple_model_proj = p; break;
      case model::WeightRole::ple_proj_norm: w.ple_proj_norm = p; break;
      case model::WeightRole::xielu_alpha_p: w.xielu.alpha_p = p; break;
      case model::WeightRole::xielu_alpha_n: w.xielu.alpha_n = p; break;
      case model::WeightRole::xielu_beta: w.xielu.beta = p; break;
      case model::WeightRole::xielu_eps: w.xielu.eps = p; break;
      case model::WeightRole::router: w.router = p; break;
      case model::WeightRole::router_bias: w.router_bias = p; break;
      case model::WeightRole::router_logit_bias: w.router_logit_bias = p; break;
      case model::WeightRole::expert_gate_proj: w.experts.at(static_cast<size_t>(e)).w_gate = p; break;
      case model::WeightRole::expert_up_proj: w.experts.at(static_cast<size_t>(e)).w_up = p; break;
      case model::WeightRole::expert_down_proj: w.experts.at(static_cast<size_t>(e)).w_down = p; break;
      case model::WeightRole::expert_gate_bias: w.experts.at(static_cast<size_t>(e)).b_gate = p; break;
      case model::WeightRole::expert_up_bias: w.experts.at(static_cast<size_t>(e)).b_up = p; break;
      case model::WeightRole::expert_down_bias: w.experts.at(static_cast<size_t>(e)).b_down = p; break;
      case model::WeightRole::shared_gate_proj: w.shared.w_gate = p; break;
      case model::WeightRole::shared_up_proj: w.shared.w_up = p; break;
      case model::WeightRole::shared_down_proj: w.shared.w_down = p; break;
      case model::WeightRole::shared_expert_gate: w.shared_expert_gate = p; break;
      case model::WeightRole::latent_in_proj: w.latent_in = p; break;
      case model::WeightRole::latent_out_proj: w.latent_out = p; break;
      default: fail("weight role {} is not a layer tensor", model::role_name(layout.slots[i].role));
    }
  }
  if (!w.router) w.experts.clear();  // a dense layer of an MoE model
  return w;
}

RouterConfig router_config(const model::ModelSpec& spec, const float* bias, const float* expert_scale) {
  RouterConfig r;
  r.sigmoid = spec.router_sigmoid;
  r.bias = spec.router_bias ? bias : nullptr;
  r.groups = spec.expert_groups;
  r.topk_groups = spec.topk_groups;
  r.group_max = spec.router_group_max;
  r.renormalize = spec.norm_topk_prob;
  r.scale = static_cast<float>(spec.routed_scaling_factor);
  r.norm_eps = static_cast<float>(spec.router_norm_eps);
  r.sparsemixer = spec.router_sparsemixer;
  r.jitter_eps = static_cast<float>(spec.router_jitter_eps);
  r.expert_scale = expert_scale;
  return r;
}

}  // namespace abl::engine
