// Model weights as the forward pass sees them: one decoder layer's tensors at a time, through a
// small interface, so that the distributed runtime can put its all-gathers behind layer().
// A unit is one layer's tensors in layer_slots() order in one
// flat buffer — the same layout the sharded runtime splits across ranks.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "abl/backend/router.h"
#include "abl/backend/xielu.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"

namespace abl::engine {

// One expert of an MoE layer: a SwiGLU MLP of width Fm.
struct ExpertWeights {
  const float* w_gate = nullptr;  // (Fm, H)
  const float* w_up = nullptr;    // (Fm, H)
  const float* w_down = nullptr;  // (H, Fm)
  const float* b_gate = nullptr;  // (Fm) expert_bias (gpt-oss)
  const float* b_up = nullptr;    // (Fm)
  const float* b_down = nullptr;  // (H)
  XieluParams xielu;              // the dense MLP's xIELU scalars (Activation::xielu), else null
};

// Views of one decoder layer's weights (fp32). Optional tensors are nullptr when absent.
struct LayerWeights {
  const float* attn_norm = nullptr;  // (H)
  const float* attn_norm_bias = nullptr;  // (H)  norm_bias
  const float* wq = nullptr;         // (NH*HD, H)
  const float* wk = nullptr;         // (NKV*HD, H)
  const float* wv = nullptr;         // (NKV*HD, H)
  const float* bq = nullptr;         // (NH*HD)  qkv_bias
  const float* bk = nullptr;         // (NKV*HD)
  const float* bv = nullptr;         // (NKV*HD)
  const float* q_norm = nullptr;     // (HD)     qk_norm; (NH, HD) qk_norm_per_head
  const float* k_norm = nullptr;     // (HD)     (NKV, HD)
  // Latent attention (ModelSpec::mla; wq is its q_proj without a q_lora_rank, wk/wv are null):
  const float* wq_a = nullptr;       // (q_lora_rank, H)
  const float* q_a_norm = nullptr;   // (q_lora_rank)
  const float* wq_b = nullptr;       // (NH*HD, q_lora_rank)
  const float* wkv_a = nullptr;      // (C + R, H) kv_a_proj_with_mqa
  const float* kv_a_norm = nullptr;  // (C)
  const float* wkv_b = nullptr;      // (NH*(nope + HDv), C)
  const float* wq_gate = nullptr;    // (NH*HD, H) attn_output_gate: σ(h·wq_gate) scales the attention output
  // Linear attention (ModelSpec::is_linear_layer; the attention's tensors above are then null but wo):
  const float* lin_q = nullptr;      // (NK*DK, H); with lin_k and lin_v right after it, the conv's channels
  const float* lin_k = nullptr;      // (NK*DK, H)
  const float* lin_v = nullptr;      // (NV*DV, H)
  const float* lin_z = nullptr;      // (NV*DV, H)
  const float* lin_b = nullptr;      // (NV, H); lin_a right after it
  const float* lin_a = nullptr;      // (NV, H)
  const float* lin_conv = nullptr;   // (NK*DK*2 + NV*DV, K)
  const float* lin_a_log = nullptr;  // (NV)
  const float* lin_dt_bias = nullptr;  // (NV)
  const float* lin_norm = nullptr;   // (DV); Mamba-2: (NV*DV)
  // Mamba-2 (ModelSpec::mamba2) uses lin_z, lin_conv, lin_a_log, lin_dt_bias, lin_norm and wo, and:
  const float* mamba_xbc = nullptr;  // (NV*DV + 2*NK*DK, H) in_proj's x | B | C rows; lin_z right before it
  const float* mamba_dt = nullptr;   // (NV, H) in_proj's dt rows, right after mamba_xbc
  const float* lin_conv_bias = nullptr;  // (NV*DV + 2*NK*DK) or null
  const float* mamba_d = nullptr;    // (NV)
  const float* short_conv_in = nullptr;  // (3*H, H) LFM2's conv.in_proj (B | C | x); lin_conv and wo beside it
  const float* wo = nullptr;         // (H, NH*HD); (H, NH*HDv) with latent attention; out_proj (H, NV*DV)
  const float* bo = nullptr;         // (H)      o_bias
  const float* sinks = nullptr;      // (NH)     attn_sinks
  const float* post_attn_norm = nullptr;  // (H)  sandwich_norms
  const float* mlp_norm = nullptr;   // (H)
  const float* mlp_norm_bias = nullptr;  // (H)  norm_bias
  const float* w_gate = nullptr;     // (F, H)
  const float* w_up = nullptr;       // (F, H)
  const float* w_down = nullptr;     // (H, F)
  const float* b_gate = nullptr;     // (F)      mlp_bias
  const float* b_up = nullptr;       // (F)
  const float* b_down = nullptr;     // (H)
  const float* post_mlp_norm = nullptr;   // (H)  sandwich_norms
  const float* layer_scalar = nullptr;    // (1)  Gemma 4: the stream's factor at the end of the layer
  XieluParams xielu;                 // one value each: Activation::xielu's mlp.act_fn.*
  // MoE layers (w_gate/w_up/w_down are then null):
  const float* router = nullptr;                  // (E, H)
  const float* router_bias = nullptr;             // (E) router_bias
  const float* router_logit_bias = nullptr;       // (E) router_logit_bias
  std::vector<ExpertWeights> experts;             // (E) over expert_width() (the latent of a LatentMoE)
  ExpertWeights shared;                           // width Fs; null without a shared expert
  const float* shared_expert_gate = nullptr;      // (1, H)
  const float* latent_in = nullptr;               // (D, H) LatentMoE: fc1_latent_proj
  const float* latent_out = nullptr;              // (H, D) fc2_latent_proj
  // Gemma 4's MoE layers (moe_beside_dense): the dense MLP's post norm, the experts' input and post norms, the router's
  // input scale and per-expert scale
  const float* dense_post_norm = nullptr;         // (H)
  const float* moe_norm = nullptr;                // (H)
  const float* moe_post_norm = nullptr;           // (H)
  const float* router_scale = nullptr;            // (H)
  const float* router_expert_scale = nullptr;     // (E)
  // Gemma 4's per-layer embeddings (ple_dim P): the layer's gate, projection and its norm, and its share of the
  // model's table, projection and norm
  const float* ple_gate = nullptr;                // (P, H)
  const float* ple_proj = nullptr;                // (H, P)
  const float* ple_post_norm = nullptr;           // (H)
  const float* ple_embed = nullptr;               // (V, P)
  const float* ple_model_proj = nullptr;          // (P, H)
  const float* ple_proj_norm = nullptr;           // (P)
};

struct HeadWeights {
  const float* final_norm = nullptr;  // (H)
  const float* final_norm_bias = nullptr;  // (H) norm_bias
  const float* lm_head_bias = nullptr;     // (V) lm_head_bias
  const float* lm_head = nullptr;     // (V, H); the embedding when tied
};

// A forward pass asks for its weights in one fixed order — embedding(), layer(0) … layer(L-1),
// head() — which lets a sharded source gather the next unit while the current one computes.
// Views stay valid until the next call (a sharded source reuses its buffers).
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual const model::ModelSpec& spec() const = 0;
  virtual const float* embedding() = 0;  // (V, H)
  virtual LayerWeights layer(int64_t l) = 0;
  virtual HeadWeights head() = 0;
};

// Offsets of each tensor of a layer inside its unit buffer (elements), in layer_slots() order.
struct UnitLayout {
  std::vector<model::WeightSlot> slots;  // layer_slots(spec, layer)
  std::vector<int64_t> offsets;      // element offset of each tensor in the unit
  std::vector<int64_t> sizes;        // elements
  int64_t total = 0;                 // elements of one unit
  // The slot of `role` (and `expert`, for expert tensors); an error when the layer has none.
  size_t index_of(model::WeightRole role, int32_t expert = -1) const;
};
UnitLayout layer_unit_layout(const model::ModelSpec& spec, int64_t layer);
// One layout per layer (layers of an MoE model with dense layers differ).
std::vector<UnitLayout> layer_unit_layouts(const model::ModelSpec& spec);
// Carves the views of one layer out of its unit buffer.
LayerWeights layer_views(const model::ModelSpec& spec, const UnitLayout& layout, const float* unit);

// The router of the spec's MoE layers as both engines' router_topk take it; `bias` is the layer's
// router_bias (host or device memory, as the op wants), null without one; `expert_scale` likewise its
// router_expert_scale (Gemma 4).
RouterConfig router_config(const model::ModelSpec& spec, const float* bias, const float* expert_scale = nullptr);

}  // namespace abl::engine
