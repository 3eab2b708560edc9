// How the router of a mixture-of-experts layer turns its logits into the k experts of a token and
// their weights; the argument of both twins of router_topk (cpu/ops.h, cuda/ops.h).
//
// softmax (Mixtral, Qwen2-MoE, Qwen3-MoE): p = softmax(logits); the k largest p, renormalised over
// the k when `renormalize`.
// sigmoid (GLM-4.5/4.6, DeepSeek-V3's router; transformers' Glm4MoeTopkRouter and
// route_tokens_to_experts): s = sigmoid(logits); the choice ranks c = s + bias. With groups > 1 the
// E experts form `groups` equal groups, each scored by the sum of its two largest c, and only the
// `topk_groups` best groups stay; the others' c become 0 (not −∞: transformers masks with 0.0, so a
// negative c of a kept group can lose to a dropped expert, and so it does here). The k largest c
// are chosen; their weights are s (without the bias), divided by (their sum + 1e-20) when
// `renormalize`; then every weight is multiplied by `scale`.
// Either way the chosen ids come in descending order, the lower expert id first on equal values.
#pragma once
#include <cstdint>

#include "abl/core/error.h"

namespace abl {

struct RouterConfig {
  bool sigmoid = false;         // sigmoid scores, else softmax
  const float* bias = nullptr;  // (E) e_score_correction_bias, sigmoid only; null = none
  int64_t groups = 1;           // n_group (sigmoid only)
  int64_t topk_groups = 1;      // topk_group
  bool renormalize = false;     // norm_topk_prob
  float scale = 1.0f;           // routed_scaling_factor
};

// The extents a router can run: k of E experts, E in `groups` groups of at least two (each group is
// scored by its two best), `topk_groups` of them holding at least k experts.
inline void check_router(int64_t E, int64_t k, const RouterConfig& r) {
  ABL_CHECK(E > 0 && k > 0 && k <= E, "router: k = {} of E = {} experts", k, E);
  if (!r.sigmoid || r.groups <= 1) return;
  ABL_CHECK(E % r.groups == 0 && E / r.groups >= 2 && r.topk_groups >= 1 && r.topk_groups <= r.groups &&
                k <= r.topk_groups * (E / r.groups),
            "router: {} experts in {} groups, the best {} of them, k = {}", E, r.groups, r.topk_groups, k);
}

}  // namespace abl
