// fingerprint(ModelSpec) tells every field apart: the ranks of a job compare fingerprints to know
// they derived the same spec, so a field it left out would let two ranks disagree unseen.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "abl/model/model_spec.h"

namespace {

using abl::model::ModelSpec;

TEST(SpecFingerprint, EveryFieldChangesIt) {
  const ModelSpec base = abl::model::synthetic_model_spec("qwen2.5-7b");
  using Change = std::function<void(ModelSpec&)>;
  const std::vector<Change> changes = {
      [](ModelSpec& s) { s.source = "elsewhere/config.json"; },  // the one field left out: where it was read
      [](ModelSpec& s) { s.architecture = "LlamaForCausalLM"; },
      [](ModelSpec& s) { s.model_type = "llama"; },
      [](ModelSpec& s) { s.vocab_size += 1; },
      [](ModelSpec& s) { s.hidden_size += 1; },
      [](ModelSpec& s) { s.intermediate_size += 1; },
      [](ModelSpec& s) { s.num_layers += 1; },
      [](ModelSpec& s) { s.num_heads += 1; },
      [](ModelSpec& s) { s.num_kv_heads += 1; },
      [](ModelSpec& s) { s.head_dim += 1; },
      [](ModelSpec& s) { s.partial_rotary_dim = 2; },
      [](ModelSpec& s) { s.rope_interleaved = true; },
      [](ModelSpec& s) { s.nope_layers.assign(static_cast<size_t>(s.num_layers), 0); },
      [](ModelSpec& s) { s.rms_norm_eps *= 1.0000001; },
      [](ModelSpec& s) { s.rope_theta += 1; },
      [](ModelSpec& s) { s.rope_scaling.type = abl::model::RopeScaling::Type::linear; },
      [](ModelSpec& s) { s.rope_scaling.factor = 2; },
      [](ModelSpec& s) { s.rope_scaling.low_freq_factor = 2; },
      [](ModelSpec& s) { s.rope_scaling.high_freq_factor = 2; },
      [](ModelSpec& s) { s.rope_scaling.original_max_position_embeddings = 4096; },
      [](ModelSpec& s) { s.rope_scaling.short_factor = {1.0}; },
      [](ModelSpec& s) { s.rope_scaling.long_factor = {1.0}; },
      [](ModelSpec& s) { s.rope_scaling.attention_factor = 1.1; },
      [](ModelSpec& s) { s.rope_scaling.beta_fast = 16; },
      [](ModelSpec& s) { s.rope_scaling.beta_slow = 2; },
      [](ModelSpec& s) { s.rope_scaling.truncate = false; },
      [](ModelSpec& s) { s.rope_local_theta = 10000; },
      [](ModelSpec& s) { s.max_position_embeddings += 1; },
      [](ModelSpec& s) { s.sliding_window = 4096; },
      [](ModelSpec& s) { s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 1); },
      [](ModelSpec& s) { s.tied_embeddings = !s.tied_embeddings; },
      [](ModelSpec& s) { s.qkv_bias = !s.qkv_bias; },
      [](ModelSpec& s) { s.qk_norm = !s.qk_norm; },
      [](ModelSpec& s) { s.norm_plus_one = !s.norm_plus_one; },
      [](ModelSpec& s) { s.sandwich_norms = !s.sandwich_norms; },
      [](ModelSpec& s) { s.sandwich_names = ModelSpec::SandwichNames::glm4; },
      [](ModelSpec& s) { s.embed_scale = 2; },
      [](ModelSpec& s) { s.attn_scale = 0.1; },
      [](ModelSpec& s) { s.attn_softcap = 50; },
      [](ModelSpec& s) { s.final_softcap = 30; },
      [](ModelSpec& s) { s.activation = abl::model::Activation::gelu_tanh; },
      [](ModelSpec& s) { s.weight_prefix = "language_model.model."; },
      [](ModelSpec& s) { s.lm_head_name = "language_model.lm_head.weight"; },
      [](ModelSpec& s) { s.multimodal = true; },
      [](ModelSpec& s) { s.fused_qkv = !s.fused_qkv; },
      [](ModelSpec& s) { s.fused_gate_up = !s.fused_gate_up; },
      [](ModelSpec& s) { s.num_experts = 8; },
      [](ModelSpec& s) { s.experts_per_token = 2; },
      [](ModelSpec& s) { s.moe_intermediate_size = 64; },
      [](ModelSpec& s) { s.moe_latent_size = 16; },
      [](ModelSpec& s) { s.shared_expert_intermediate_size = 64; },
      [](ModelSpec& s) { s.norm_topk_prob = !s.norm_topk_prob; },
      [](ModelSpec& s) { s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1); },
      [](ModelSpec& s) { s.expert_names = ModelSpec::ExpertNames::mixtral; },
      [](ModelSpec& s) { s.fused_experts = !s.fused_experts; },
      [](ModelSpec& s) { s.router_sigmoid = !s.router_sigmoid; },
      [](ModelSpec& s) { s.router_bias = !s.router_bias; },
      [](ModelSpec& s) { s.router_group_max = !s.router_group_max; },
      [](ModelSpec& s) { s.expert_groups = 4; },
      [](ModelSpec& s) { s.topk_groups = 2; },
      [](ModelSpec& s) { s.routed_scaling_factor = 2.5; },
      [](ModelSpec& s) { s.shared_expert_gated = !s.shared_expert_gated; },
      [](ModelSpec& s) { s.mtp_layers = 1; },
      [](ModelSpec& s) { s.residual_multiplier = 0.22; },
      [](ModelSpec& s) { s.logits_scaling = 8.0; },
      [](ModelSpec& s) { s.o_bias = true; },
      [](ModelSpec& s) { s.attn_sinks = true; },
      [](ModelSpec& s) { s.swiglu_alpha = 1.5; },
      [](ModelSpec& s) { s.swiglu_limit = 5.0; },
      [](ModelSpec& s) { s.expert_bias = true; },
      [](ModelSpec& s) { s.router_logit_bias = true; },
      [](ModelSpec& s) { s.mxfp4_experts = true; },
      [](ModelSpec& s) { s.transposed_experts = true; },
      [](ModelSpec& s) { s.query_log_scale_beta = 0.1; },
      [](ModelSpec& s) { s.query_log_scale_period = 16384; },
      [](ModelSpec& s) { s.norm_centered = true; },
      [](ModelSpec& s) { s.parallel_block = true; },
      [](ModelSpec& s) { s.qk_norm_per_head = true; },
      [](ModelSpec& s) { s.mlp_bias = true; },
      [](ModelSpec& s) { s.norm_bias = true; },
      [](ModelSpec& s) { s.lm_head_bias = true; },
      [](ModelSpec& s) { s.router_sparsemixer = true; },
      [](ModelSpec& s) { s.router_jitter_eps = 0.01; },
      [](ModelSpec& s) { s.query_log_scale_offset = 1; },
      [](ModelSpec& s) { s.query_log_scale_nope_only = true; },
      [](ModelSpec& s) { s.query_log_scale_in_dtype = true; },
      [](ModelSpec& s) { s.qk_norm_after_rope = true; },
      [](ModelSpec& s) { s.qk_norm_names = ModelSpec::QkNormNames::query_layernorm; },
      [](ModelSpec& s) { s.qk_l2_norm = true; },
      [](ModelSpec& s) { s.attention_chunk = 8192; },
      [](ModelSpec& s) { s.moe_scale_input = true; },
      [](ModelSpec& s) { s.mla = true; },
      [](ModelSpec& s) { s.q_lora_rank = 24; },
      [](ModelSpec& s) { s.kv_lora_rank = 16; },
      [](ModelSpec& s) { s.qk_nope_head_dim = 8; },
      [](ModelSpec& s) { s.v_head_dim = 12; },
      [](ModelSpec& s) { s.latent_norm_eps = 1e-5; },
      [](ModelSpec& s) { s.input_norms = false; },
      [](ModelSpec& s) { s.qk_norm_full = true; },
      [](ModelSpec& s) { s.fp8_block_rows = 128; },
      [](ModelSpec& s) { s.fp8_block_cols = 128; },
      [](ModelSpec& s) { s.linear_layers.assign(static_cast<size_t>(s.num_layers), 1); },
      [](ModelSpec& s) { s.linear_num_key_heads = 2; },
      [](ModelSpec& s) { s.linear_num_value_heads = 4; },
      [](ModelSpec& s) { s.linear_key_head_dim = 16; },
      [](ModelSpec& s) { s.linear_value_head_dim = 24; },
      [](ModelSpec& s) { s.linear_conv_kernel = 4; },
      [](ModelSpec& s) { s.linear_fused_projections = true; },
      [](ModelSpec& s) { s.linear_mixer = ModelSpec::LinearMixer::mamba2; },
      [](ModelSpec& s) { s.linear_mixer = ModelSpec::LinearMixer::short_conv; },
      [](ModelSpec& s) { s.lfm2_names = true; },
      [](ModelSpec& s) { s.router_norm_eps = 1e-6; },
      [](ModelSpec& s) { s.expert_names = ModelSpec::ExpertNames::lfm2; },
      [](ModelSpec& s) { s.qk_norm_names = ModelSpec::QkNormNames::q_layernorm; },
      [](ModelSpec& s) { s.linear_conv_bias = true; },
      [](ModelSpec& s) { s.mamba_dt_min = 0.001; },
      [](ModelSpec& s) { s.mamba_dt_max = 100.0; },
      [](ModelSpec& s) { s.mamba_norm_per_group = true; },
      [](ModelSpec& s) { s.layer_blocks = {1, 2}; },
      [](ModelSpec& s) { s.nemotron_h_names = true; },
      [](ModelSpec& s) { s.embed_name = "embeddings.weight"; },
      [](ModelSpec& s) { s.activation = abl::model::Activation::relu2; },
      [](ModelSpec& s) { s.activation = abl::model::Activation::xielu; },
      [](ModelSpec& s) { s.apertus_names = true; },
      [](ModelSpec& s) { s.attn_output_gate = true; },
      [](ModelSpec& s) { s.bos_token_id = 7; },
      [](ModelSpec& s) { s.eos_token_ids.push_back(9); },
      [](ModelSpec& s) { s.pad_token_id = 11; },
      [](ModelSpec& s) { s.torch_dtype = abl::DType::f16; },
  };
  const std::string same = abl::model::fingerprint(base);
  EXPECT_EQ(abl::model::fingerprint(ModelSpec(base)), same);
  std::set<std::string> seen = {same};
  for (size_t i = 1; i < changes.size(); ++i) {
    ModelSpec changed = base;
    changes[i](changed);
    EXPECT_TRUE(seen.insert(abl::model::fingerprint(changed)).second) << "change " << i << " left it unchanged";
  }
  ModelSpec moved = base;
  changes[0](moved);
  EXPECT_EQ(abl::model::fingerprint(moved), same);  // the same spec read from another path is the same spec
}

}  // namespace
