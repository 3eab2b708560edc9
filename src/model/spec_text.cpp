// The spec as text. describe(ModelSpec): one line for people (info, logs) with what sets the model
// apart. fingerprint(ModelSpec): every field, so that ranks which derived their spec each from
// their own read of config.json and the weight files can check they hold the same one before any
// collective depends on its shapes. A field added to ModelSpec belongs in the fingerprint too (the
// unit test changes each field and expects a different fingerprint).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "abl/model/model_spec.h"
#include "rope_config.h"

namespace abl::model {

std::string describe(const ModelSpec& s) {
  std::string rope = fmt::format("rope theta {}", s.rope_theta);
  if (s.mla) {
    rope += fmt::format(" on the last {}/{} head dims", s.partial_rotary_dim, s.head_dim);
  } else if (s.partial_rotary_dim > 0) {
    rope += fmt::format(" on {}/{} head dims", s.partial_rotary_dim, s.head_dim);
  }
  if (s.rope_interleaved) rope += " (interleaved pairs)";
  if (!s.nope_layers.empty()) {
    rope += fmt::format(" (no RoPE on {}/{} layers)", std::count(s.nope_layers.begin(), s.nope_layers.end(), 1),
                        s.num_layers);
  }
  rope += describe_rope_scaling(s.rope_scaling);
  if (s.rope_local_theta > 0) rope += fmt::format(", local layers theta {}", s.rope_local_theta);
  if (s.query_log_scale_beta != 0.0) {
    const std::string pos = s.query_log_scale_offset ? fmt::format("(pos + {})", s.query_log_scale_offset) : "pos";
    rope += fmt::format(", queries x(1 + {:g}·log(1 + ⌊{}/{}⌋)){}", s.query_log_scale_beta, pos,
                        s.query_log_scale_period, s.query_log_scale_nope_only ? " on the NoPE layers" : "");
  }
  std::string flags;
  if (s.multimodal) flags += ", the language model of a multimodal checkpoint";
  if (s.fp8_block_rows > 0) flags += fmt::format(", FP8 weights in {}x{} blocks", s.fp8_block_rows, s.fp8_block_cols);
  if (s.mla) {
    flags += fmt::format(", latent attention ({}kv rank {}, value heads {})",
                         s.q_lora_rank > 0 ? fmt::format("q rank {}, ", s.q_lora_rank) : std::string(),
                         s.kv_lora_rank, s.v_head_dim);
  }
  const auto linear_layers = std::count(s.linear_layers.begin(), s.linear_layers.end(), 1);
  if (!s.layer_blocks.empty()) {
    std::string pattern;  // hybrid_override_pattern's spelling
    for (int64_t l = 0; l < s.num_layers; ++l) {
      pattern += s.is_moe_layer(l) ? 'E' : !s.has_mixer(l) ? '-' : s.is_linear_layer(l) ? 'M' : '*';
    }
    flags += fmt::format(", one block per layer {}", pattern);
  }
  if (!s.linear_layers.empty() && s.mamba2()) {
    flags += fmt::format(", Mamba-2 on {}/{} layers ({} heads of {}, {} groups of state {}, conv {}{}{}{})",
                         linear_layers, s.num_layers, s.linear_num_value_heads,
                         s.linear_value_head_dim, s.linear_num_key_heads, s.linear_key_head_dim, s.linear_conv_kernel,
                         s.linear_conv_bias ? " with bias" : "",
                         s.mamba_dt_min > 0 || std::isfinite(s.mamba_dt_max)
                             ? fmt::format(", dt in [{}, {}]", s.mamba_dt_min, s.mamba_dt_max)
                             : std::string(),
                         s.mamba_norm_per_group ? ", gated norm per group" : "");
  } else if (!s.linear_layers.empty() && s.linear_mixer == ModelSpec::LinearMixer::short_conv) {
    flags += fmt::format(", short conv on {}/{} layers (conv {})", linear_layers, s.num_layers,
                         s.linear_conv_kernel);
  } else if (!s.linear_layers.empty()) {
    flags += fmt::format(", gated delta rule on {}/{} layers (key heads {}x{}, value heads {}x{}, conv {}{})",
                         linear_layers, s.num_layers, s.linear_num_key_heads,
                         s.linear_key_head_dim, s.linear_num_value_heads, s.linear_value_head_dim, s.linear_conv_kernel,
                         s.linear_fused_projections ? ", in_proj_qkvz/ba" : "");
  }
  if (s.per_layer_geometry()) {
    flags += fmt::format(", full-attention layers HD={} NKV={}", s.full_head_dim, s.full_kv_heads);
  }
  if (s.k_eq_v) flags += ", values = keys on full-attention layers";
  if (s.v_norm) flags += ", v norm";
  if (s.layer_scalar) flags += ", layer scalars";
  if (s.ple_dim > 0) flags += fmt::format(", per-layer embeddings of {}", s.ple_dim);
  if (s.kv_shared_layers > 0) {
    flags += fmt::format(", the last {} layers share keys and values{}", s.kv_shared_layers,
                         s.double_wide_shared_mlp ? " (their MLPs double-wide)" : "");
  }
  if (s.attn_output_gate) flags += ", gated attention output";
  if (s.qkv_bias) flags += ", qkv bias";
  if (s.qk_norm) flags += s.qk_norm_per_head ? ", q/k norm per head" : s.qk_norm_full ? ", q/k norm over all heads" : ", q/k norm";
  if (s.qk_norm && s.qk_norm_after_rope) flags += " after RoPE";
  if (s.o_bias) flags += ", o_proj bias";
  if (s.mlp_bias) flags += ", MLP biases";
  if (s.attn_sinks) flags += ", attention sinks";
  if (s.fused_qkv || s.fused_gate_up) flags += s.fused_qkv ? ", fused qkv/gate_up" : ", fused gate_up";
  if (s.norm_plus_one) flags += ", (1+w) norms";
  if (s.norm_centered) flags += s.norm_bias ? ", LayerNorms" : ", LayerNorms (no bias)";
  if (s.lm_head_bias) flags += ", lm_head bias";
  if (s.qk_l2_norm) flags += ", q/k L2 norm after RoPE";
  if (s.attention_chunk > 0) flags += fmt::format(", attention chunks of {}", s.attention_chunk);
  if (s.parallel_block) flags += ", parallel attention and MLP";
  if (s.sandwich_norms) {
    flags += !s.input_norms ? ", output norms only (no input norms)"
             : s.sandwich_names == ModelSpec::SandwichNames::glm4 ? ", post norms (GLM-4)"
                                                                   : ", sandwich norms";
  }
  if (s.activation == Activation::gelu_tanh) flags += ", GeGLU (tanh)";
  if (s.activation == Activation::relu2) flags += ", relu² MLP (ungated)";
  if (s.activation == Activation::xielu) flags += ", xIELU MLP (ungated, learned per layer)";
  if (s.activation == Activation::swiglu_clamped) {
    flags += fmt::format(", clamped SwiGLU (alpha {:g}, limit {:g})", s.swiglu_alpha, s.swiglu_limit);
  }
  if (s.embed_scale != 1.0) flags += fmt::format(", embeddings x{:.6g}", s.embed_scale);
  if (s.attn_scale > 0) flags += fmt::format(", score scale {:.6g}", s.attn_scale);
  if (s.residual_multiplier != 1.0) flags += fmt::format(", branches x{:.6g}", s.residual_multiplier);
  if (s.logits_scaling != 1.0) flags += fmt::format(", logits /{:.6g}", s.logits_scaling);
  if (s.attn_softcap > 0 || s.final_softcap > 0) {
    flags += fmt::format(", softcap {:g}/{:g}", s.attn_softcap, s.final_softcap);
  }
  if (s.num_experts > 0) {
    const int64_t moe = std::count(s.moe_layers.begin(), s.moe_layers.end(), 1);
    flags += fmt::format(", MoE {}x{} top-{}{} on {}/{} layers", s.num_experts, s.moe_intermediate_size,
                         s.experts_per_token, s.norm_topk_prob ? " (renormalised)" : "", moe, s.num_layers);
    if (s.router_sparsemixer) flags += fmt::format(", sparsemixer router (jitter eps {:g})", s.router_jitter_eps);
    if (s.moe_scale_input) flags += ", router weights scale the expert inputs";
    if (s.moe_beside_dense) flags += fmt::format(", beside the dense MLP {} (own norms, scaled router)", s.intermediate_size);
    if (s.router_sigmoid || s.router_bias || s.expert_groups > 1 || s.routed_scaling_factor != 1.0) {
      flags += s.router_sigmoid ? ", sigmoid router" : ", softmax router";
      if (s.router_bias) flags += " with bias";
      if (s.expert_groups > 1) {
        flags += fmt::format(" (best {} of {} groups{})", s.topk_groups, s.expert_groups,
                             s.router_group_max ? " by their best expert" : "");
      }
      if (s.routed_scaling_factor != 1.0) flags += fmt::format(" x{:g}", s.routed_scaling_factor);
    }
    if (s.shared_expert_intermediate_size > 0) {
      flags += fmt::format(" + {}shared expert {}", s.shared_expert_gated ? "" : "ungated ",
                           s.shared_expert_intermediate_size);
    }
    if (s.moe_latent_size > 0) flags += fmt::format(", routed experts in a latent of {}", s.moe_latent_size);
    if (s.mtp_layers > 0) flags += fmt::format(", {} MTP layer{} not run", s.mtp_layers, s.mtp_layers == 1 ? "" : "s");
    if (s.router_logit_bias) flags += ", router bias";
    if (s.expert_bias) flags += ", biased experts";
    if (s.mxfp4_experts) {
      flags += ", experts MXFP4 (E,2*Fm interleaved,H)+(E,H,Fm)";
    } else if (s.expert_names == ModelSpec::ExpertNames::gpt_oss) {
      flags += ", experts fused (E,H,2*Fm interleaved)+(E,Fm,H)";
    } else if (s.transposed_experts) {
      flags += ", experts fused (E,H,2*Fm)+(E,Fm,H)";
    } else if (s.fused_experts && !gated_activation(s.activation)) {
      flags += s.moe_latent_size > 0 ? ", experts fused (E,Fm,D)+(E,D,Fm)" : ", experts fused (E,Fm,H)+(E,H,Fm)";
    } else if (s.fused_experts) {
      flags += ", experts fused (E,2*Fm,H)+(E,H,Fm)";
    }
  }
  if (s.sliding_window) {
    int64_t n = s.num_layers;
    if (!s.sliding_layers.empty()) n = std::count(s.sliding_layers.begin(), s.sliding_layers.end(), 1);
    flags += fmt::format(", sliding window {} on {}/{} layers", s.sliding_window, n, s.num_layers);
  }
  return fmt::format("{}: L={} H={} F={} NH={} NKV={} HD={} V={}, {}, {}{}", s.architecture,
                     s.num_layers, s.hidden_size, s.intermediate_size, s.num_heads, s.num_kv_heads,
                     s.head_dim, s.vocab_size, rope, s.tied_embeddings ? "tied" : "untied", flags);
}


std::string fingerprint(const ModelSpec& s) {
  const RopeScaling& r = s.rope_scaling;
  std::string out = fmt::format("{}|{}|V{} H{} F{} L{} NH{} NKV{} HD{} R{} {} nope [{}]|eps {:a}|rope {:a} {} {:a} {:a} {:a} {} "
                                "[{:a}] [{:a}] {:a} yarn {:a} {:a} {}",
                                s.architecture, s.model_type, s.vocab_size, s.hidden_size, s.intermediate_size,
                                s.num_layers, s.num_heads, s.num_kv_heads, s.head_dim, s.partial_rotary_dim,
                                s.rope_interleaved, fmt::join(s.nope_layers, ""), s.rms_norm_eps, s.rope_theta,
                                static_cast<int>(r.type), r.factor, r.low_freq_factor, r.high_freq_factor,
                                r.original_max_position_embeddings, fmt::join(r.short_factor, " "),
                                fmt::join(r.long_factor, " "), r.attention_factor, r.beta_fast, r.beta_slow,
                                r.truncate);
  out += fmt::format("|local {:a} max {} window {} [{}]|tied {} bias {} qknorm {} plus1 {} sandwich {} {}",
                     s.rope_local_theta, s.max_position_embeddings, s.sliding_window,
                     fmt::join(s.sliding_layers, ""), s.tied_embeddings, s.qkv_bias, s.qk_norm, s.norm_plus_one,
                     s.sandwich_norms, static_cast<int>(s.sandwich_names));
  out += fmt::format("|embed {:a} scale {:a} caps {:a} {:a} act {}|names {} {} mm {} fused {} {}", s.embed_scale,
                     s.attn_scale, s.attn_softcap, s.final_softcap, static_cast<int>(s.activation), s.weight_prefix,
                     s.lm_head_name, s.multimodal, s.fused_qkv, s.fused_gate_up);
  out += fmt::format("|moe E{} k{} Fm{} Fs{} norm {} [{}] names {} fused {}", s.num_experts, s.experts_per_token,
                     s.moe_intermediate_size, s.shared_expert_intermediate_size, s.norm_topk_prob,
                     fmt::join(s.moe_layers, ""), static_cast<int>(s.expert_names), s.fused_experts);
  if (s.moe_latent_size > 0) out += fmt::format("|moe latent {}", s.moe_latent_size);
  out += fmt::format("|granite {:a} {:a}", s.residual_multiplier, s.logits_scaling);
  out += fmt::format("|gpt-oss obias {} sinks {} swiglu {:a} {:a} expert bias {} router bias {}", s.o_bias,
                     s.attn_sinks, s.swiglu_alpha, s.swiglu_limit, s.expert_bias, s.router_logit_bias);
  out += fmt::format(" mxfp4 {} transposed {}", s.mxfp4_experts, s.transposed_experts);
  out += fmt::format("|cohere centered {} parallel {} qknorm per head {} after rope {} names {}", s.norm_centered,
                     s.parallel_block, s.qk_norm_per_head, s.qk_norm_after_rope, static_cast<int>(s.qk_norm_names));
  out += fmt::format("|mlp bias {} norm bias {} lm_head bias {}", s.mlp_bias, s.norm_bias, s.lm_head_bias);
  out += fmt::format("|sparsemixer {} {:a}", s.router_sparsemixer, s.router_jitter_eps);
  out += fmt::format("|query log scale {:a} {} {} {} {}", s.query_log_scale_beta, s.query_log_scale_period,
                     s.query_log_scale_offset, s.query_log_scale_nope_only, s.query_log_scale_in_dtype);
  out += fmt::format("|llama4 l2 {} chunk {} scale input {}", s.qk_l2_norm, s.attention_chunk, s.moe_scale_input);
  out += fmt::format("|mla {} q {} kv {} nope {} v {} eps {:a}", s.mla, s.q_lora_rank, s.kv_lora_rank,
                     s.qk_nope_head_dim, s.v_head_dim, s.latent_norm_eps);
  out += fmt::format("|fp8 {} {}", s.fp8_block_rows, s.fp8_block_cols);
  out += fmt::format("|olmo2 input norms {} qk norm full {}", s.input_norms, s.qk_norm_full);
  out += fmt::format("|router sigmoid {} bias {} groups {} {} max {} scale {:a} eps {:a} shared gated {} mtp {}",
                     s.router_sigmoid, s.router_bias, s.expert_groups, s.topk_groups, s.router_group_max,
                     s.routed_scaling_factor, s.router_norm_eps, s.shared_expert_gated, s.mtp_layers);
  out += fmt::format("|linear [{}] NK{} NV{} DK{} DV{} K{} fused {} gate {}", fmt::join(s.linear_layers, ""),
                     s.linear_num_key_heads, s.linear_num_value_heads, s.linear_key_head_dim, s.linear_value_head_dim,
                     s.linear_conv_kernel, s.linear_fused_projections, s.attn_output_gate);
  out += fmt::format("|mixer {} conv bias {} dt {:a} {:a} lfm2 names {}", static_cast<int>(s.linear_mixer),
                     s.linear_conv_bias, s.mamba_dt_min, s.mamba_dt_max, s.lfm2_names);
  out += fmt::format("|nemotron-h blocks [{}] names {} norm per group {} embed {}", fmt::join(s.layer_blocks, ""),
                     s.nemotron_h_names, s.mamba_norm_per_group, s.embed_name);
  out += fmt::format("|apertus names {}", s.apertus_names);
  out += fmt::format("|gemma4 full HD{} NKV{} k=v {} v norm {} layer scalar {} rotary {:a}", s.full_head_dim,
                     s.full_kv_heads, s.k_eq_v, s.v_norm, s.layer_scalar, r.rotary_fraction);
  out += fmt::format(" moe beside dense {} ple {} {:a} kv shared {} double wide {}", s.moe_beside_dense, s.ple_dim,
                     s.ple_embed_scale, s.kv_shared_layers, s.double_wide_shared_mlp);
  out += fmt::format("|tokens bos {} eos [{}] pad {} dtype {}", s.bos_token_id ? *s.bos_token_id : -1,
                     fmt::join(s.eos_token_ids, " "), s.pad_token_id ? *s.pad_token_id : -1,
                     s.torch_dtype ? static_cast<int>(*s.torch_dtype) : -1);
  return out;
}

}  // namespace abl::model
