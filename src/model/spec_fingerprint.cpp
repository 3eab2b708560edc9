// fingerprint(ModelSpec): every field of the spec as text, so that ranks which derived their spec
// each from their own read of config.json and the weight files can check they hold the same one
// before any collective depends on its shapes. A field added to ModelSpec belongs here too (the
// unit test changes each field and expects a different fingerprint).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "abl/model/model_spec.h"

namespace abl::model {

std::string fingerprint(const ModelSpec& s) {
  const RopeScaling& r = s.rope_scaling;
  std::string out = fmt::format("{}|{}|V{} H{} F{} L{} NH{} NKV{} HD{} R{}|eps {:a}|rope {:a} {} {:a} {:a} {:a} {} "
                                "[{:a}] [{:a}] {:a} yarn {:a} {:a} {}",
                                s.architecture, s.model_type, s.vocab_size, s.hidden_size, s.intermediate_size,
                                s.num_layers, s.num_heads, s.num_kv_heads, s.head_dim, s.partial_rotary_dim,
                                s.rms_norm_eps, s.rope_theta,
                                static_cast<int>(r.type), r.factor, r.low_freq_factor, r.high_freq_factor,
                                r.original_max_position_embeddings, fmt::join(r.short_factor, " "),
                                fmt::join(r.long_factor, " "), r.attention_factor, r.beta_fast, r.beta_slow,
                                r.truncate);
  out += fmt::format("|local {:a} max {} window {} [{}]|tied {} bias {} qknorm {} plus1 {} sandwich {}",
                     s.rope_local_theta, s.max_position_embeddings, s.sliding_window,
                     fmt::join(s.sliding_layers, ""), s.tied_embeddings, s.qkv_bias, s.qk_norm, s.norm_plus_one,
                     s.sandwich_norms);
  out += fmt::format("|embed {:a} scale {:a} caps {:a} {:a} act {}|names {} {} fused {} {}", s.embed_scale,
                     s.attn_scale, s.attn_softcap, s.final_softcap, static_cast<int>(s.activation), s.weight_prefix,
                     s.lm_head_name, s.fused_qkv, s.fused_gate_up);
  out += fmt::format("|moe E{} k{} Fm{} Fs{} norm {} [{}] names {} fused {}", s.num_experts, s.experts_per_token,
                     s.moe_intermediate_size, s.shared_expert_intermediate_size, s.norm_topk_prob,
                     fmt::join(s.moe_layers, ""), static_cast<int>(s.expert_names), s.fused_experts);
  out += fmt::format("|tokens bos {} eos [{}] pad {} dtype {}", s.bos_token_id ? *s.bos_token_id : -1,
                     fmt::join(s.eos_token_ids, " "), s.pad_token_id ? *s.pad_token_id : -1,
                     s.torch_dtype ? static_cast<int>(*s.torch_dtype) : -1);
  return out;
}

}  // namespace abl::model
