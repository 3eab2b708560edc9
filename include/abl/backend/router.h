// How the router of a mixture-of-experts layer turns its logits into the k experts of a token and
// their weights; the argument of both twins of router_topk (cpu/ops.h, cuda/ops.h).
//
// softmax (Mixtral, Qwen2-MoE, Qwen3-MoE): p = softmax(logits); the k largest p, renormalised over
// the k when `renormalize`. With a bias (ERNIE 4.5's moe_statics) the choice ranks c = p + bias and
// the weights stay p.
// sigmoid (GLM-4.5/4.6, DeepSeek-V3's router; transformers' Glm4MoeTopkRouter and
// route_tokens_to_experts): s = sigmoid(logits); the choice ranks c = s + bias. The k largest c
// are chosen; their weights are s (without the bias), divided by (their sum + norm_eps, 1e-20) when
// `renormalize`; then every weight is multiplied by `scale`. Without a bias the choice ranks the
// logits themselves (Llama 4's Llama4Router: topk of the logits, then their sigmoid), the same order
// but without the ties of sigmoids that round to 1.
// Groups (either scoring; softmax: DeepSeek-V2's group_limited_greedy, whose c is p): with
// groups > 1 the E experts form `groups` equal groups, each scored by the sum of its two largest c
// (V3's noaux_tc) or, with `group_max`, by its largest c (V2), and only the `topk_groups` best
// groups stay; the others' c become 0 (not −∞: transformers masks with 0.0, so a negative c of a
// kept group can lose to a dropped expert, and so it does here).
// sparsemixer (Phi-3.5-MoE: transformers 4.x models/phimoe sparsemixer with training=False; k = 2):
// the first expert is the one with the largest logit m; its weight is its softmax probability over the
// experts e with (m − x_e) / max(|x_e|, m) <= 2·jitter_eps (the others masked to −∞). The second is the
// largest logit m2 among the rest; its weight is its probability over the rest with
// (m2 − x_e) / max(|x_e|, m2) <= 2·jitter_eps. No renormalisation, no scale.
// expert_scale (Gemma 4's Gemma4TextRouter): each chosen weight times its expert's per_expert_scale, last.
// Either way the chosen ids come in descending order, the lower expert id first on equal values.
#pragma once
#include <cstdint>

#include "abl/core/error.h"

namespace abl {

struct RouterConfig {
  bool sigmoid = false;         // sigmoid scores, else softmax
  const float* bias = nullptr;  // (E) e_score_correction_bias added to the scores for the choice; null = none
  int64_t groups = 1;           // n_group
  int64_t topk_groups = 1;      // topk_group
  bool group_max = false;       // a group scores its best expert (V2), else the sum of its two best
  bool renormalize = false;     // norm_topk_prob
  float scale = 1.0f;           // routed_scaling_factor
  float norm_eps = 1e-20f;      // sigmoid: renormalised by (sum + norm_eps) (LFM2-MoE: 1e-6)
  bool sparsemixer = false;     // Phi-3.5-MoE's router (above); the fields before do not apply
  float jitter_eps = 0.0f;      // its router_jitter_noise
  // (E) Gemma 4's router.per_expert_scale: each chosen weight, after the renormalisation and `scale`, times the
  // chosen expert's entry; null = none. Memory of the op's side (host or device), as `bias`.
  const float* expert_scale = nullptr;
};

// The extents a router can run: k of E experts, E in `groups` groups (of at least two where a group
// is scored by its two best), `topk_groups` of them holding at least k experts.
inline void check_router(int64_t E, int64_t k, const RouterConfig& r) {
  ABL_CHECK(E > 0 && k > 0 && k <= E, "router: k = {} of E = {} experts", k, E);
  ABL_CHECK(!r.sparsemixer || k == 2, "router: the sparsemixer picks 2 experts, not k = {}", k);
  if (r.groups <= 1) return;
  ABL_CHECK(E % r.groups == 0 && E / r.groups >= (r.group_max ? 1 : 2) && r.topk_groups >= 1 &&
                r.topk_groups <= r.groups &&
                k <= r.topk_groups * (E / r.groups),
            "router: {} experts in {} groups, the best {} of them, k = {}", E, r.groups, r.topk_groups, k);
}

}  // namespace abl
