// The weight name table and the pre-load check of a model's tensors against it.
// The check collects every problem instead of stopping at the first, because a wrong config or
// a mismatched checkpoint usually breaks many tensors at once and the pattern is the diagnosis.
#include "abl/model/weights.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <utility>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/io/safetensors.h"

namespace abl::model {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

WeightSlot layer_slot(const ModelSpec& spec, WeightRole role, const std::string& name, std::vector<int64_t> shape,
                      const char* doc) {
  WeightSlot s;
  s.role = role;
  s.pattern = spec.weight_prefix + "layers.{}." + name;
  s.per_layer = true;
  s.shape = std::move(shape);
  s.shape_doc = doc;
  return s;
}

// Row blocks [begin, end) of one fused (rows, cols) file tensor, one slot per block, in order.
void fuse_rows(std::vector<WeightSlot>& slots, size_t first, size_t count, const std::string& name,
               const std::string& doc) {
  int64_t rows = 0;
  for (size_t i = first; i < first + count; ++i) rows += slots[i].shape[0];
  const int64_t cols = slots[first].shape[1];
  int64_t offset = 0;
  for (size_t i = first; i < first + count; ++i) {
    WeightSlot& s = slots[i];
    s.pattern = s.pattern.substr(0, s.pattern.find("{}") + 3) + name;
    s.file_shape = {rows, cols};
    s.file_offset = offset;
    s.shape_doc = doc;
    offset += s.shape[0] * cols;
  }
}

// gpt-oss's MoE MLP (models/gpt_oss: GptOssTopKRouter, GptOssExperts): the router with its bias,
// then per expert gate, up, down and their biases as views of the stacked tensors, which hold each
// expert transposed (x @ W) with gate and up interleaved (GptOssExperts._apply_gate: gate_up[..., ::2],
// gate_up[..., 1::2]).
void add_gpt_oss_moe_slots(const ModelSpec& s, std::vector<WeightSlot>& v) {
  const int64_t H = s.hidden_size, E = s.num_experts, Fm = s.moe_intermediate_size;
  v.push_back(layer_slot(s, WeightRole::router, "mlp.router.weight", {E, H}, "(num_local_experts, hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::router_logit_bias, "mlp.router.bias", {E}, "(num_local_experts)"));
  auto view = [&](WeightRole role, const char* name, std::vector<int64_t> shape, std::vector<int64_t> file_shape,
                  int64_t offset, std::vector<int64_t> strides, const char* doc, int64_t e) {
    WeightSlot slot = layer_slot(s, role, std::string("mlp.experts.") + name, std::move(shape), doc);
    slot.file_shape = std::move(file_shape);
    slot.file_offset = offset;
    slot.file_strides = std::move(strides);
    slot.expert = static_cast<int32_t>(e);
    v.push_back(std::move(slot));
  };
  const char* gate_up_doc = "(num_local_experts, hidden_size, 2*intermediate_size)";
  const char* bias_doc = "(num_local_experts, 2*intermediate_size)";
  for (int64_t e = 0; e < E; ++e) {
    if (s.mxfp4_experts) {
      // As released: the dequantized tensors are (E, 2*Fm, H), gate and up interleaved rows, and
      // (E, H, Fm) (transformers' dequantize transposes them into the plain layout).
      const int64_t gu = e * 2 * Fm * H;
      const char* doc = "MXFP4 (num_local_experts, 2*intermediate_size, hidden_size)";
      view(WeightRole::expert_gate_proj, "gate_up_proj", {Fm, H}, {E, 2 * Fm, H}, gu, {2 * H, 1}, doc, e);
      view(WeightRole::expert_up_proj, "gate_up_proj", {Fm, H}, {E, 2 * Fm, H}, gu + H, {2 * H, 1}, doc, e);
      view(WeightRole::expert_down_proj, "down_proj", {H, Fm}, {E, H, Fm}, e * H * Fm, {},
           "MXFP4 (num_local_experts, hidden_size, intermediate_size)", e);
      for (size_t i = v.size() - 3; i < v.size(); ++i) v[i].mxfp4 = true;
    } else {
      const int64_t gu = e * H * 2 * Fm;  // expert e's (H, 2*Fm) block: element (h, j) at gu + h*2*Fm + j
      view(WeightRole::expert_gate_proj, "gate_up_proj", {Fm, H}, {E, H, 2 * Fm}, gu, {2, 2 * Fm}, gate_up_doc, e);
      view(WeightRole::expert_up_proj, "gate_up_proj", {Fm, H}, {E, H, 2 * Fm}, gu + 1, {2, 2 * Fm}, gate_up_doc, e);
      view(WeightRole::expert_down_proj, "down_proj", {H, Fm}, {E, Fm, H}, e * Fm * H, {1, H},
           "(num_local_experts, intermediate_size, hidden_size)", e);
    }
    view(WeightRole::expert_gate_bias, "gate_up_proj_bias", {Fm}, {E, 2 * Fm}, e * 2 * Fm, {2}, bias_doc, e);
    view(WeightRole::expert_up_bias, "gate_up_proj_bias", {Fm}, {E, 2 * Fm}, e * 2 * Fm + 1, {2}, bias_doc, e);
    view(WeightRole::expert_down_bias, "down_proj_bias", {H}, {E, H}, e * H, {1}, "(num_local_experts, hidden_size)",
         e);
  }
}

// Expert e's three slots [at, at + 3) as blocks of its layer's two stacked tensors: transformers 5's
// (E, 2*Fm, H), gate rows then up rows, and (E, H, Fm) (Granite-MoE's input_linear / output_linear
// alike); or Qwen3-VL-MoE's as released, transposed for x @ W: gate the column block [0, Fm) of
// expert e's (H, 2*Fm) slab (element (j, h) at h*2*Fm + j), up the block [Fm, 2*Fm), down its (Fm, H)
// slab read transposed.
void stack_expert_slots(const ModelSpec& s, std::vector<WeightSlot>& v, size_t at, int64_t e) {
  const int64_t H = s.hidden_size, E = s.num_experts, Fm = s.moe_intermediate_size;
  const bool granite = s.expert_names == ModelSpec::ExpertNames::granite;
  const bool wide = granite || s.expert_names == ModelSpec::ExpertNames::mixtral;
  auto stack = [&](WeightSlot& slot, const char* name, std::vector<int64_t> file_shape, int64_t offset,
                   const char* doc, std::vector<int64_t> strides) {
    slot.pattern = s.weight_prefix + "layers.{}." + name;
    slot.file_shape = std::move(file_shape);
    slot.file_offset = offset;
    slot.file_strides = std::move(strides);
    slot.shape_doc = doc;
  };
  if (s.transposed_experts) {  // Qwen3-VL-MoE's mlp.experts, Llama 4's feed_forward.experts
    const bool llama4 = s.expert_names == ModelSpec::ExpertNames::llama4;
    const char* doc = llama4 ? "(num_local_experts, hidden_size, 2*intermediate_size)"
                             : "(num_experts, hidden_size, 2*moe_intermediate_size)";
    const char* gate_up = llama4 ? "feed_forward.experts.gate_up_proj" : "mlp.experts.gate_up_proj";
    const char* down = llama4 ? "feed_forward.experts.down_proj" : "mlp.experts.down_proj";
    const int64_t gu = e * H * 2 * Fm;
    stack(v[at], gate_up, {E, H, 2 * Fm}, gu, doc, {1, 2 * Fm});
    stack(v[at + 1], gate_up, {E, H, 2 * Fm}, gu + Fm, doc, {1, 2 * Fm});
    stack(v[at + 2], down, {E, Fm, H}, e * Fm * H,
          llama4 ? "(num_local_experts, intermediate_size, hidden_size)"
                 : "(num_experts, moe_intermediate_size, hidden_size)",
          {1, H});
    return;
  }
  const char* gate_up_doc = wide ? "(num_local_experts, 2*intermediate_size, hidden_size)"
                                 : "(num_experts, 2*moe_intermediate_size, hidden_size)";
  const char* down_doc = wide ? "(num_local_experts, hidden_size, intermediate_size)"
                              : "(num_experts, hidden_size, moe_intermediate_size)";
  if (s.expert_names == ModelSpec::ExpertNames::hunyuan) {
    gate_up_doc = "(num_experts, 2*intermediate_size, hidden_size)";
    down_doc = "(num_experts, hidden_size, intermediate_size)";
  }
  const bool gemma4 = s.expert_names == ModelSpec::ExpertNames::gemma4;
  const char* gate_up = granite  ? "block_sparse_moe.input_linear.weight"
                        : gemma4 ? "experts.gate_up_proj"
                                 : "mlp.experts.gate_up_proj";
  const char* down = granite ? "block_sparse_moe.output_linear.weight" : gemma4 ? "experts.down_proj" : "mlp.experts.down_proj";
  stack(v[at], gate_up, {E, 2 * Fm, H}, e * 2 * Fm * H, gate_up_doc, {});
  stack(v[at + 1], gate_up, {E, 2 * Fm, H}, e * 2 * Fm * H + Fm * H, gate_up_doc, {});
  stack(v[at + 2], down, {E, H, Fm}, e * H * Fm, down_doc, {});
}

// An MoE layer's MLP tensors, expert-major: router, then per expert gate, up, down, then the
// shared expert and its gate (models/mixtral, models/qwen2_moe, models/qwen3_moe, models/glm4_moe,
// models/granitemoe). Experts stored fused (transformers 5: conversion_mapping.py stacks them, gate
// then up along dim 1; Granite-MoE's checkpoints as released) are blocks of two file tensors, expert
// e's gate, up and down each one contiguous block.
void add_moe_slots(const ModelSpec& s, std::vector<WeightSlot>& v) {
  if (s.expert_names == ModelSpec::ExpertNames::gpt_oss) {
    add_gpt_oss_moe_slots(s, v);
    return;
  }
  const int64_t H = s.hidden_size, E = s.num_experts, Fm = s.moe_intermediate_size;
  const int64_t Fs = s.shared_expert_intermediate_size;
  const bool granite = s.expert_names == ModelSpec::ExpertNames::granite;
  const bool mixtral = s.expert_names == ModelSpec::ExpertNames::mixtral;
  const bool wide = mixtral || granite;  // experts as wide as intermediate_size (the shapes' docs say so)
  const bool llama4 = s.expert_names == ModelSpec::ExpertNames::llama4;
  const bool lfm2 = s.expert_names == ModelSpec::ExpertNames::lfm2;
  const bool hunyuan = s.expert_names == ModelSpec::ExpertNames::hunyuan;
  const bool w123 = mixtral || lfm2;  // experts' w1 / w3 / w2
  const std::string block = mixtral && !s.fused_experts ? "block_sparse_moe." : llama4 || lfm2 ? "feed_forward." : "mlp.";
  v.push_back(layer_slot(s, WeightRole::router,
                         granite   ? "block_sparse_moe.router.layer.weight"
                         : llama4  ? "feed_forward.router.weight"
                         : hunyuan ? "mlp.gate.wg.weight"  // HunYuanMoEV1Gate's wg
                                   : block + "gate.weight",
                         {E, H}, granite || llama4 ? "(num_local_experts, hidden_size)" : "(num_experts, hidden_size)"));
  if (lfm2 && s.router_bias) {
    // Lfm2MoeSparseMoeBlock's expert_bias buffer (use_expert_bias)
    v.push_back(layer_slot(s, WeightRole::router_bias, "feed_forward.expert_bias", {E}, "(num_experts)"));
  } else if (s.router_bias && !s.router_sigmoid) {
    // ERNIE 4.5's Ernie4_5_MoeStatics: one row per expert group (1)
    v.push_back(layer_slot(s, WeightRole::router_bias, "mlp.moe_statics.e_score_correction_bias", {1, E},
                           "(1, moe_num_experts)"));
  } else if (s.router_bias) {
    // GLM-4.5 / DeepSeek-V3 keep the bias in the gate (mlp.gate.e_score_correction_bias), MiniMax-M2
    // beside it (block_sparse_moe.e_score_correction_bias; mlp. in transformers 5's layout)
    v.push_back(mixtral ? layer_slot(s, WeightRole::router_bias, block + "e_score_correction_bias", {E},
                                     "(num_local_experts)")
                        : layer_slot(s, WeightRole::router_bias, "mlp.gate.e_score_correction_bias", {E},
                                     "(n_routed_experts)"));
  }
  // HunYuan-A13B's experts and shared MLP are intermediate_size wide too
  const char* fm_doc = wide || hunyuan ? "(intermediate_size, hidden_size)" : "(moe_intermediate_size, hidden_size)";
  const char* fm_down_doc =
      wide || hunyuan ? "(hidden_size, intermediate_size)" : "(hidden_size, moe_intermediate_size)";
  for (int64_t e = 0; e < E; ++e) {
    const std::string p = block + "experts." + std::to_string(e) + ".";
    const size_t at = v.size();
    v.push_back(layer_slot(s, WeightRole::expert_gate_proj, p + (w123 ? "w1.weight" : "gate_proj.weight"),
                           {Fm, H}, fm_doc));
    v.push_back(layer_slot(s, WeightRole::expert_up_proj, p + (w123 ? "w3.weight" : "up_proj.weight"), {Fm, H},
                           fm_doc));
    v.push_back(layer_slot(s, WeightRole::expert_down_proj, p + (w123 ? "w2.weight" : "down_proj.weight"),
                           {H, Fm}, fm_down_doc));
    if (s.fused_experts) stack_expert_slots(s, v, at, e);
    for (size_t i = at; i < v.size(); ++i) v[i].expert = static_cast<int32_t>(e);
  }
  if (Fs > 0 && granite) {
    // GraniteMoeSharedMLP: input_linear (gate rows, then up rows) and output_linear, ungated
    const size_t at = v.size();
    v.push_back(layer_slot(s, WeightRole::shared_gate_proj, "shared_mlp.input_linear.weight", {Fs, H}, ""));
    v.push_back(layer_slot(s, WeightRole::shared_up_proj, "shared_mlp.input_linear.weight", {Fs, H}, ""));
    fuse_rows(v, at, 2, "shared_mlp.input_linear.weight", "(2*shared_intermediate_size, hidden_size)");
    v.push_back(layer_slot(s, WeightRole::shared_down_proj, "shared_mlp.output_linear.weight", {H, Fs},
                           "(hidden_size, shared_intermediate_size)"));
  } else if (Fs > 0) {
    // Qwen2-MoE's gated mlp.shared_expert, GLM-4.5's mlp.shared_experts (n_shared_experts of them as one MLP),
    // Llama 4's ungated feed_forward.shared_expert
    const std::string p = llama4                  ? "feed_forward.shared_expert."
                          : hunyuan               ? "mlp.shared_mlp."
                          : s.shared_expert_gated ? "mlp.shared_expert."
                                                  : "mlp.shared_experts.";
    const char* doc = hunyuan                 ? fm_doc
                      : s.shared_expert_gated ? "(shared_expert_intermediate_size, hidden_size)"
                                              : "(n_shared_experts*moe_intermediate_size, hidden_size)";
    const char* down_doc = hunyuan                 ? fm_down_doc
                           : s.shared_expert_gated ? "(hidden_size, shared_expert_intermediate_size)"
                                                   : "(hidden_size, n_shared_experts*moe_intermediate_size)";
    v.push_back(layer_slot(s, WeightRole::shared_gate_proj, p + "gate_proj.weight", {Fs, H}, doc));
    v.push_back(layer_slot(s, WeightRole::shared_up_proj, p + "up_proj.weight", {Fs, H}, doc));
    v.push_back(layer_slot(s, WeightRole::shared_down_proj, p + "down_proj.weight", {H, Fs}, down_doc));
    if (s.shared_expert_gated) {
      v.push_back(layer_slot(s, WeightRole::shared_expert_gate, "mlp.shared_expert_gate.weight", {1, H},
                             "(1, hidden_size)"));
    }
  }
}

// Gemma 4's MoE layer after pre_feedforward_layernorm (models/gemma4 Gemma4TextDecoderLayer.__init__, Gemma4TextRouter,
// Gemma4TextExperts): the dense MLP and its post norm, the experts' input norm, the router, the experts stacked, their
// post norm (post_feedforward_layernorm, on the sum, follows as in every sandwich layer).
void add_gemma4_moe_slots(const ModelSpec& s, int64_t layer, std::vector<WeightSlot>& v) {
  // (the dense MLP double-wide in a KV-shared layer, as Gemma4TextMLP(config, layer_idx) makes it)
  const int64_t H = s.hidden_size, F = s.mlp_width(layer), E = s.num_experts, Fm = s.moe_intermediate_size;
  v.push_back(layer_slot(s, WeightRole::gate_proj, "mlp.gate_proj.weight", {F, H}, "(intermediate_size, hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::up_proj, "mlp.up_proj.weight", {F, H}, "(intermediate_size, hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::down_proj, "mlp.down_proj.weight", {H, F}, "(hidden_size, intermediate_size)"));
  v.push_back(layer_slot(s, WeightRole::dense_post_norm, "post_feedforward_layernorm_1.weight", {H}, "(hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::moe_norm, "pre_feedforward_layernorm_2.weight", {H}, "(hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::router, "router.proj.weight", {E, H}, "(num_experts, hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::router_scale, "router.scale", {H}, "(hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::router_expert_scale, "router.per_expert_scale", {E}, "(num_experts)"));
  for (int64_t e = 0; e < E; ++e) {
    const size_t at = v.size();
    v.push_back(layer_slot(s, WeightRole::expert_gate_proj, "", {Fm, H}, ""));
    v.push_back(layer_slot(s, WeightRole::expert_up_proj, "", {Fm, H}, ""));
    v.push_back(layer_slot(s, WeightRole::expert_down_proj, "", {H, Fm}, ""));
    stack_expert_slots(s, v, at, e);
    for (size_t i = at; i < v.size(); ++i) v[i].expert = static_cast<int32_t>(e);
  }
  v.push_back(layer_slot(s, WeightRole::moe_post_norm, "post_feedforward_layernorm_2.weight", {H}, "(hidden_size)"));
}

// Gemma 4's per-layer embeddings in layer l (Gemma4TextDecoderLayer: per_layer_input_gate, per_layer_projection,
// post_per_layer_input_norm), and the layer's share of the model's tables (Gemma4TextModel: embed_tokens_per_layer
// (V, L*P) packed layer-major per token, per_layer_model_projection (L*P, H), per_layer_projection_norm (P)): the
// columns [lP, (l+1)P) of the first, the rows [lP, (l+1)P) of the second, the whole norm, so each layer's unit holds
// what the layer reads.
void add_ple_slots(const ModelSpec& s, int64_t l, std::vector<WeightSlot>& v) {
  const int64_t H = s.hidden_size, P = s.ple_dim, L = s.num_layers, V = s.vocab_size;
  v.push_back(layer_slot(s, WeightRole::ple_gate, "per_layer_input_gate.weight", {P, H},
                         "(hidden_size_per_layer_input, hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::ple_proj, "per_layer_projection.weight", {H, P},
                         "(hidden_size, hidden_size_per_layer_input)"));
  v.push_back(layer_slot(s, WeightRole::ple_post_norm, "post_per_layer_input_norm.weight", {H}, "(hidden_size)"));
  const auto model_tensor = [&](WeightRole role, const char* name, std::vector<int64_t> shape, const char* doc) {
    WeightSlot slot = layer_slot(s, role, "", std::move(shape), doc);
    slot.pattern = s.weight_prefix + name;  // (no "{}": every layer names the same file tensor)
    return slot;
  };
  WeightSlot table = model_tensor(WeightRole::ple_embed, "embed_tokens_per_layer.weight", {V, P},
                                  "(vocab_size_per_layer_input, num_hidden_layers*hidden_size_per_layer_input)");
  table.file_shape = {V, L * P};
  table.file_offset = l * P;
  table.file_strides = {L * P, 1};
  v.push_back(std::move(table));
  WeightSlot proj = model_tensor(WeightRole::ple_model_proj, "per_layer_model_projection.weight", {P, H},
                                 "(num_hidden_layers*hidden_size_per_layer_input, hidden_size)");
  proj.file_shape = {L * P, H};
  proj.file_offset = l * P * H;
  v.push_back(std::move(proj));
  v.push_back(model_tensor(WeightRole::ple_proj_norm, "per_layer_projection_norm.weight", {P},
                           "(hidden_size_per_layer_input)"));
}

// Latent attention's projections (models/deepseek_v3 DeepseekV3Attention.__init__), in module order.
void add_mla_slots(const ModelSpec& s, std::vector<WeightSlot>& v) {
  const int64_t H = s.hidden_size, NH = s.num_heads, C = s.kv_lora_rank, R = s.partial_rotary_dim;
  if (s.q_lora_rank > 0) {
    const int64_t ql = s.q_lora_rank;
    v.push_back(layer_slot(s, WeightRole::q_a_proj, "self_attn.q_a_proj.weight", {ql, H}, "(q_lora_rank, hidden_size)"));
    v.push_back(layer_slot(s, WeightRole::q_a_norm, "self_attn.q_a_layernorm.weight", {ql}, "(q_lora_rank)"));
    v.push_back(layer_slot(s, WeightRole::q_b_proj, "self_attn.q_b_proj.weight", {NH * s.head_dim, ql},
                           "(num_attention_heads*(qk_nope_head_dim + qk_rope_head_dim), q_lora_rank)"));
  } else {
    v.push_back(layer_slot(s, WeightRole::q_proj, "self_attn.q_proj.weight", {NH * s.head_dim, H},
                           "(num_attention_heads*(qk_nope_head_dim + qk_rope_head_dim), hidden_size)"));
  }
  v.push_back(layer_slot(s, WeightRole::kv_a_proj, "self_attn.kv_a_proj_with_mqa.weight", {C + R, H},
                         "(kv_lora_rank + qk_rope_head_dim, hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::kv_a_norm, "self_attn.kv_a_layernorm.weight", {C}, "(kv_lora_rank)"));
  v.push_back(layer_slot(s, WeightRole::kv_b_proj, "self_attn.kv_b_proj.weight",
                         {NH * (s.qk_nope_head_dim + s.v_head()), C},
                         "(num_attention_heads*(qk_nope_head_dim + v_head_dim), kv_lora_rank)"));
}

// "<prefix>layers.{l}." with L <= l < L + mtp_layers; Qwen3-Next and Qwen3.5 keep theirs under "mtp."
// (Qwen3NextPreTrainedModel._keys_to_ignore_on_load_unexpected).
bool is_mtp_tensor(const ModelSpec& spec, const std::string& name) {
  if (!spec.linear_layers.empty() && name.rfind("mtp.", 0) == 0) return true;
  if (spec.mtp_layers <= 0) return false;
  const std::string head = spec.weight_prefix + "layers.";
  if (name.rfind(head, 0) != 0) return false;
  size_t at = head.size();
  int64_t l = 0;
  const size_t digits = at;
  while (at < name.size() && name[at] >= '0' && name[at] <= '9' && at - digits < 9) l = l * 10 + (name[at++] - '0');
  return at > digits && at < name.size() && name[at] == '.' && l >= spec.num_layers &&
         l < spec.num_layers + spec.mtp_layers;
}

// The blocks and scales of an MXFP4 slot: present, U8, shaped after the dequantized file_shape.
void check_mxfp4(const ExpectedWeight& e, const io::SafetensorsReader& reader,
                 std::set<std::string, std::less<>>& expected, WeightCheck& out) {
  std::vector<int64_t> blocks_shape(e.file_shape.begin(), e.file_shape.end() - 1), scales_shape;
  const int64_t in = e.file_shape.back();
  blocks_shape.push_back(in / 32);
  scales_shape = blocks_shape;
  blocks_shape.push_back(16);
  const std::pair<std::string, std::vector<int64_t>> parts[] = {{mxfp4_blocks_name(e.name), blocks_shape},
                                                                {mxfp4_scales_name(e.name), scales_shape}};
  for (const auto& [name, shape] : parts) {
    expected.insert(name);
    const io::TensorInfo* t = reader.find(name);
    if (!t) {
      out.problems.push_back(fmt::format("missing tensor '{}'", name));
      continue;
    }
    if (t->dtype_name != "U8") {
      out.problems.push_back(fmt::format("'{}' in {}: dtype {}, expected U8 (MXFP4)", name, t->file, t->dtype_name));
    }
    if (t->shape != shape) {
      out.problems.push_back(fmt::format("'{}' in {}: shape {}, expected {} for {} {}", name, t->file,
                                         io::format_shape(t->shape), io::format_shape(shape), e.name, e.shape_doc));
    }
  }
}

// An F8_E4M3 tensor: a block-scaled checkpoint says so, and its scales are there, F32, one per block.
void check_fp8(const ModelSpec& spec, const ExpectedWeight& e, const io::TensorInfo& t,
               const io::SafetensorsReader& reader, std::set<std::string, std::less<>>& expected, WeightCheck& out) {
  if (spec.fp8_block_rows <= 0) {
    out.problems.push_back(fmt::format("'{}' in {}: dtype F8_E4M3, but config.json has no quantization_config with "
                                       "quant_method fp8 and weight_block_size",
                                       e.name, t.file));
    return;
  }
  if (t.shape.size() < 2) {
    out.problems.push_back(fmt::format("'{}' in {}: an FP8 tensor of shape {}; block scales need a matrix", e.name,
                                       t.file, io::format_shape(t.shape)));
    return;
  }
  const std::string name = fp8_scale_name(e.name);
  expected.insert(name);
  const io::TensorInfo* s = reader.find(name);
  const std::vector<int64_t> shape = fp8_scale_shape(t.shape, spec.fp8_block_rows, spec.fp8_block_cols);
  if (!s) {
    out.problems.push_back(fmt::format("missing tensor '{}' (the block scales of the F8_E4M3 tensor '{}')", name, e.name));
  } else if (s->dtype != DType::f32 || s->shape != shape) {
    out.problems.push_back(fmt::format("'{}' in {}: {} {}, expected F32 {} (blocks of {}x{} over {} {})", name,
                                       s->file, s->dtype_name, io::format_shape(s->shape), io::format_shape(shape),
                                       spec.fp8_block_rows, spec.fp8_block_cols, e.name, io::format_shape(t.shape)));
  }
}

// fn(i, file_index(w, first + i)) for i in [0, count), stepping the slot's multi-index like an
// odometer instead of dividing for every element (a strided slot of gpt-oss-120b has 10^10 of them).
template <typename Fn>
void for_each_file_index(const ExpectedWeight& w, int64_t first, int64_t count, Fn&& fn) {
  if (w.file_strides.empty()) {
    for (int64_t i = 0; i < count; ++i) fn(i, w.file_offset + first + i);
    return;
  }
  const size_t D = w.shape.size();
  std::vector<int64_t> idx(D);
  int64_t rest = first;
  for (size_t d = D; d-- > 0;) {
    idx[d] = rest % w.shape[d];
    rest /= w.shape[d];
  }
  int64_t at = file_index(w, first);
  for (int64_t i = 0; i < count; ++i) {
    fn(i, at);
    for (size_t d = D; d-- > 0;) {  // the next element: carry through the dims that wrap
      at += w.file_strides[d];
      if (++idx[d] < w.shape[d]) break;
      at -= w.shape[d] * w.file_strides[d];
      idx[d] = 0;
    }
  }
}

// The first and last file elements that elements [first, first + count) of the slot occupy.
std::pair<int64_t, int64_t> file_span(const ExpectedWeight& w, int64_t first, int64_t count) {
  int64_t lo = file_index(w, first), hi = lo;
  for_each_file_index(w, first, count, [&](int64_t, int64_t at) {
    lo = std::min(lo, at);
    hi = std::max(hi, at);
  });
  return {lo, hi};
}

// Elements [first, first + count) of an MXFP4 slot: the bytes of the blocks that hold them, read once.
void read_mxfp4(const io::SafetensorsReader& reader, const ExpectedWeight& w, int64_t first, int64_t count,
                float* out) {
  const std::pair<int64_t, int64_t> span = file_span(w, first, count);
  const int64_t lo = span.first, hi = span.second;
  const int64_t b0 = lo / 32, n = hi / 32 - b0 + 1;
  std::vector<uint8_t> blocks(static_cast<size_t>(n * 16)), scales(static_cast<size_t>(n));
  reader.read_bytes(reader.tensor(mxfp4_blocks_name(w.name)), static_cast<uint64_t>(b0 * 16), blocks.size(),
                    blocks.data());
  reader.read_bytes(reader.tensor(mxfp4_scales_name(w.name)), static_cast<uint64_t>(b0), scales.size(), scales.data());
  for_each_file_index(w, first, count, [&](int64_t i, int64_t at) {
    const int64_t b = at / 32 - b0, j = at % 32;
    const uint8_t byte = blocks[static_cast<size_t>(b * 16 + j / 2)];
    out[i] = mxfp4_value(j % 2 == 0 ? byte & 0x0F : byte >> 4, scales[static_cast<size_t>(b)]);
  });
}

// Elements [first, first + count) of a slot whose file tensor is FP8: the file run that holds them,
// dequantized once and gathered.
void read_fp8_slot(const io::SafetensorsReader& reader, const io::TensorInfo& t, const ExpectedWeight& w,
                   int64_t first, int64_t count, float* out) {
  if (w.fp8_block_rows <= 0) {
    fail("{}: tensor '{}' is F8_E4M3 but config.json has no quantization_config with quant_method fp8 and its "
         "weight_block_size",
         t.file, t.name);
  }
  const std::pair<int64_t, int64_t> span = file_span(w, first, count);
  std::vector<float> run(static_cast<size_t>(span.second - span.first + 1));
  read_fp8(reader, t, w.fp8_block_rows, w.fp8_block_cols, span.first, static_cast<int64_t>(run.size()), run.data());
  for_each_file_index(w, first, count, [&](int64_t i, int64_t at) { out[i] = run[static_cast<size_t>(at - span.first)]; });
}

}  // namespace

std::string fp8_scale_name(const std::string& name) { return name + "_scale_inv"; }

float fp8_e4m3_value(uint8_t code) {
  const int e = (code >> 3) & 0x0F, m = code & 0x07;
  const float sign = (code & 0x80) ? -1.0f : 1.0f;
  if (e == 0x0F && m == 0x07) return std::numeric_limits<float>::quiet_NaN();
  if (e == 0) return sign * std::ldexp(static_cast<float>(m) / 8.0f, -6);
  return sign * std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
}

bool is_fp8(const io::TensorInfo& t) { return t.dtype_name == "F8_E4M3"; }

std::vector<int64_t> fp8_scale_shape(const std::vector<int64_t>& shape, int64_t block_rows, int64_t block_cols) {
  ABL_CHECK(shape.size() >= 2 && block_rows > 0 && block_cols > 0, "FP8 scales of a {}-d tensor", shape.size());
  std::vector<int64_t> s(shape.begin(), shape.end() - 2);
  s.push_back((shape[shape.size() - 2] + block_rows - 1) / block_rows);
  s.push_back((shape.back() + block_cols - 1) / block_cols);
  return s;
}

void read_fp8(const io::SafetensorsReader& reader, const io::TensorInfo& t, int64_t block_rows, int64_t block_cols,
              int64_t first, int64_t count, float* out) {
  if (count <= 0) return;
  ABL_CHECK(first >= 0 && first + count <= t.numel, "{}: elements [{}, {}) of a tensor of {}", t.name, first,
            first + count, t.numel);
  const io::TensorInfo& s = reader.tensor(fp8_scale_name(t.name));
  const std::vector<int64_t> sshape = fp8_scale_shape(t.shape, block_rows, block_cols);
  ABL_CHECK(s.shape == sshape, "{}: shape {}, expected {} for the {}x{} blocks of {}", s.name,
            io::format_shape(s.shape), io::format_shape(sshape), block_rows, block_cols, t.name);
  const int64_t rows = t.shape[t.shape.size() - 2], cols = t.shape.back();
  const int64_t srows = sshape[sshape.size() - 2], scols = sshape.back();
  // the scale rows of the matrices and block rows [first, first + count) touch
  const int64_t r0 = first / cols, r1 = (first + count - 1) / cols;  // rows of the flattened (…·rows, cols) view
  const int64_t s0 = (r0 / rows) * srows + (r0 % rows) / block_rows, s1 = (r1 / rows) * srows + (r1 % rows) / block_rows;
  std::vector<float> scale(static_cast<size_t>((s1 - s0 + 1) * scols));
  reader.read_f32(s, s0 * scols, static_cast<int64_t>(scale.size()), scale.data());
  std::vector<uint8_t> codes(static_cast<size_t>(count));
  reader.read_bytes(t, static_cast<uint64_t>(first), codes.size(), codes.data());
  for (int64_t i = 0; i < count; ++i) {
    const int64_t at = first + i, r = at / cols, c = at % cols;
    const int64_t srow = (r / rows) * srows + (r % rows) / block_rows;
    const float v = fp8_e4m3_value(codes[static_cast<size_t>(i)]) * scale[static_cast<size_t>((srow - s0) * scols + c / block_cols)];
    out[i] = ::abl::bf16_to_f32(::abl::f32_to_bf16(v));
  }
}

std::string mxfp4_blocks_name(const std::string& name) { return name + "_blocks"; }
std::string mxfp4_scales_name(const std::string& name) { return name + "_scales"; }

float mxfp4_value(uint8_t nibble, uint8_t scale) {
  static constexpr float kE2M1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                      -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  return std::ldexp(kE2M1[nibble & 0x0F], static_cast<int>(scale) - 127);
}

std::string_view role_name(WeightRole role) {
  switch (role) {
    case WeightRole::embed: return "embed";
    case WeightRole::attn_norm: return "attn_norm";
    case WeightRole::attn_norm_bias: return "attn_norm_bias";
    case WeightRole::q_proj: return "q_proj";
    case WeightRole::k_proj: return "k_proj";
    case WeightRole::v_proj: return "v_proj";
    case WeightRole::q_bias: return "q_bias";
    case WeightRole::k_bias: return "k_bias";
    case WeightRole::v_bias: return "v_bias";
    case WeightRole::q_norm: return "q_norm";
    case WeightRole::k_norm: return "k_norm";
    case WeightRole::q_a_proj: return "q_a_proj";
    case WeightRole::q_a_norm: return "q_a_norm";
    case WeightRole::q_b_proj: return "q_b_proj";
    case WeightRole::kv_a_proj: return "kv_a_proj";
    case WeightRole::kv_a_norm: return "kv_a_norm";
    case WeightRole::kv_b_proj: return "kv_b_proj";
    case WeightRole::q_gate_proj: return "q_gate_proj";
    case WeightRole::linear_q: return "linear_q";
    case WeightRole::linear_k: return "linear_k";
    case WeightRole::linear_v: return "linear_v";
    case WeightRole::linear_z: return "linear_z";
    case WeightRole::linear_b: return "linear_b";
    case WeightRole::linear_a: return "linear_a";
    case WeightRole::linear_conv: return "linear_conv";
    case WeightRole::linear_a_log: return "linear_a_log";
    case WeightRole::linear_dt_bias: return "linear_dt_bias";
    case WeightRole::linear_norm: return "linear_norm";
    case WeightRole::mamba_xbc: return "mamba_xbc";
    case WeightRole::mamba_dt: return "mamba_dt";
    case WeightRole::linear_conv_bias: return "linear_conv_bias";
    case WeightRole::mamba_d: return "mamba_d";
    case WeightRole::short_conv_in: return "short_conv_in";
    case WeightRole::o_proj: return "o_proj";
    case WeightRole::o_bias: return "o_bias";
    case WeightRole::attn_sinks: return "attn_sinks";
    case WeightRole::post_attn_norm: return "post_attn_norm";
    case WeightRole::mlp_norm: return "mlp_norm";
    case WeightRole::mlp_norm_bias: return "mlp_norm_bias";
    case WeightRole::gate_proj: return "gate_proj";
    case WeightRole::up_proj: return "up_proj";
    case WeightRole::down_proj: return "down_proj";
    case WeightRole::gate_bias: return "gate_bias";
    case WeightRole::up_bias: return "up_bias";
    case WeightRole::down_bias: return "down_bias";
    case WeightRole::xielu_alpha_p: return "xielu_alpha_p";
    case WeightRole::xielu_alpha_n: return "xielu_alpha_n";
    case WeightRole::xielu_beta: return "xielu_beta";
    case WeightRole::xielu_eps: return "xielu_eps";
    case WeightRole::post_mlp_norm: return "post_mlp_norm";
    case WeightRole::layer_scalar: return "layer_scalar";
    case WeightRole::dense_post_norm: return "dense_post_norm";
    case WeightRole::moe_norm: return "moe_norm";
    case WeightRole::moe_post_norm: return "moe_post_norm";
    case WeightRole::router_scale: return "router_scale";
    case WeightRole::router_expert_scale: return "router_expert_scale";
    case WeightRole::ple_gate: return "ple_gate";
    case WeightRole::ple_proj: return "ple_proj";
    case WeightRole::ple_post_norm: return "ple_post_norm";
    case WeightRole::ple_embed: return "ple_embed";
    case WeightRole::ple_model_proj: return "ple_model_proj";
    case WeightRole::ple_proj_norm: return "ple_proj_norm";
    case WeightRole::router: return "router";
    case WeightRole::router_bias: return "router_bias";
    case WeightRole::router_logit_bias: return "router_logit_bias";
    case WeightRole::expert_gate_proj: return "expert_gate_proj";
    case WeightRole::expert_up_proj: return "expert_up_proj";
    case WeightRole::expert_down_proj: return "expert_down_proj";
    case WeightRole::expert_gate_bias: return "expert_gate_bias";
    case WeightRole::expert_up_bias: return "expert_up_bias";
    case WeightRole::expert_down_bias: return "expert_down_bias";
    case WeightRole::shared_gate_proj: return "shared_gate_proj";
    case WeightRole::shared_up_proj: return "shared_up_proj";
    case WeightRole::shared_down_proj: return "shared_down_proj";
    case WeightRole::shared_expert_gate: return "shared_expert_gate";
    case WeightRole::latent_in_proj: return "latent_in_proj";
    case WeightRole::latent_out_proj: return "latent_out_proj";
    case WeightRole::final_norm: return "final_norm";
    case WeightRole::final_norm_bias: return "final_norm_bias";
    case WeightRole::lm_head_bias: return "lm_head_bias";
    case WeightRole::lm_head: return "lm_head";
  }
  return "?";
}

bool is_down_projection(const ModelSpec& spec, WeightRole role) {
  return role == WeightRole::down_proj || role == WeightRole::shared_down_proj || is_routed_down_projection(spec, role);
}

bool is_routed_down_projection(const ModelSpec& spec, WeightRole role) {
  return role == (spec.moe_latent_size > 0 ? WeightRole::latent_out_proj : WeightRole::expert_down_proj);
}

// A strided view of a (rows, H) file tensor whose rows come in `groups` groups of `group_rows`: the
// slot takes `rows` rows from `first` within each group, (groups, rows, H) (Qwen3-Next's in_proj_qkvz
// and in_proj_ba, per key head; Qwen3NextGatedDeltaNet.fix_query_key_value_ordering; and a gated
// q_proj, per attention head).
void view_grouped_rows(WeightSlot& slot, const std::string& name, int64_t groups, int64_t group_rows, int64_t first,
                       int64_t rows, int64_t H, const char* doc) {
  slot.pattern = slot.pattern.substr(0, slot.pattern.find("{}") + 3) + name;
  slot.shape = {groups, rows, H};
  slot.file_shape = {groups * group_rows, H};
  slot.file_offset = first * H;
  slot.file_strides = {group_rows * H, H, 1};
  slot.shape_doc = doc;
}

// The gated delta rule's tensors (Qwen3NextGatedDeltaNet.__init__, Qwen3_5GatedDeltaNet.__init__), in the
// order the forward pass wants them contiguous: q, k, v (the conv's input), z, b, a, conv, A_log,
// dt_bias, norm, out_proj.
void add_linear_attention_slots(const ModelSpec& s, std::vector<WeightSlot>& v) {
  const int64_t H = s.hidden_size, NK = s.linear_num_key_heads, NV = s.linear_num_value_heads;
  const int64_t DK = s.linear_key_head_dim, DV = s.linear_value_head_dim, KD = s.linear_key_dim();
  const int64_t VD = s.linear_value_dim(), C = s.linear_conv_dim();
  auto add = [&](WeightRole role, const std::string& name, std::vector<int64_t> shape, const char* doc) {
    v.push_back(layer_slot(s, role, "linear_attn." + name, std::move(shape), doc));
  };
  const size_t at = v.size();
  add(WeightRole::linear_q, "in_proj_qkv.weight", {KD, H}, "");
  add(WeightRole::linear_k, "in_proj_qkv.weight", {KD, H}, "");
  add(WeightRole::linear_v, "in_proj_qkv.weight", {VD, H}, "");
  add(WeightRole::linear_z, "in_proj_z.weight", {VD, H}, "(linear_num_value_heads*linear_value_head_dim, hidden_size)");
  add(WeightRole::linear_b, "in_proj_b.weight", {NV, H}, "(linear_num_value_heads, hidden_size)");
  add(WeightRole::linear_a, "in_proj_a.weight", {NV, H}, "(linear_num_value_heads, hidden_size)");
  if (s.linear_fused_projections) {
    const int64_t r = NV / NK, group = 2 * DK + 2 * r * DV;
    const char* qkvz = "(linear_num_key_heads*(2*linear_key_head_dim + 2*linear_value_head_dim*linear_num_value_heads/"
                       "linear_num_key_heads), hidden_size)";
    const char* ba = "(2*linear_num_value_heads, hidden_size)";
    const std::string fused = "linear_attn.in_proj_qkvz.weight", fused_ba = "linear_attn.in_proj_ba.weight";
    view_grouped_rows(v[at], fused, NK, group, 0, DK, H, qkvz);
    view_grouped_rows(v[at + 1], fused, NK, group, DK, DK, H, qkvz);
    view_grouped_rows(v[at + 2], fused, NK, group, 2 * DK, r * DV, H, qkvz);
    view_grouped_rows(v[at + 3], fused, NK, group, 2 * DK + r * DV, r * DV, H, qkvz);
    view_grouped_rows(v[at + 4], fused_ba, NK, 2 * r, 0, r, H, ba);
    view_grouped_rows(v[at + 5], fused_ba, NK, 2 * r, r, r, H, ba);
  } else {
    fuse_rows(v, at, 3, "linear_attn.in_proj_qkv.weight",
              "(2*linear_num_key_heads*linear_key_head_dim + linear_num_value_heads*linear_value_head_dim, hidden_size)");
  }
  add(WeightRole::linear_conv, "conv1d.weight", {C, 1, s.linear_conv_kernel},
      "(2*linear_num_key_heads*linear_key_head_dim + linear_num_value_heads*linear_value_head_dim, 1, "
      "linear_conv_kernel_dim)");
  add(WeightRole::linear_a_log, "A_log", {NV}, "(linear_num_value_heads)");
  add(WeightRole::linear_dt_bias, "dt_bias", {NV}, "(linear_num_value_heads)");
  add(WeightRole::linear_norm, "norm.weight", {DV}, "(linear_value_head_dim)");
  add(WeightRole::o_proj, "out_proj.weight", {H, VD}, "(hidden_size, linear_num_value_heads*linear_value_head_dim)");
}

// Mamba-2's tensors (GraniteMoeHybridMambaLayer.__init__, Bamba's mixer; Nemotron-H's NemotronHMamba2Mixer under
// mixer.), in the order the forward pass wants them: in_proj's row blocks z, x|B|C, dt (one file tensor), conv1d, its
// bias, A_log, dt_bias, D, norm, out_proj. The shapes' docs in the config's names.
void add_mamba2_slots(const ModelSpec& s, std::vector<WeightSlot>& v) {
  const int64_t H = s.hidden_size, NV = s.linear_num_value_heads, I = s.linear_value_dim(), C = s.linear_conv_dim();
  const bool nemotron = s.nemotron_h_names;
  const std::string module = nemotron ? "mixer." : "mamba.";
  auto add = [&](WeightRole role, const std::string& name, std::vector<int64_t> shape, const char* doc) {
    v.push_back(layer_slot(s, role, module + name, std::move(shape), doc));
  };
  const char* heads = nemotron ? "(mamba_num_heads)" : "(mamba_n_heads)";
  const char* inner = nemotron ? "mamba_num_heads*mamba_head_dim" : "mamba_expand*hidden_size";
  const std::string conv = fmt::format("{} + 2*{}", inner, nemotron ? "n_groups*ssm_state_size" : "mamba_n_groups*mamba_d_state");
  const size_t at = v.size();
  add(WeightRole::linear_z, "in_proj.weight", {I, H}, "");
  add(WeightRole::mamba_xbc, "in_proj.weight", {C, H}, "");
  add(WeightRole::mamba_dt, "in_proj.weight", {NV, H}, "");
  fuse_rows(v, at, 3, module + "in_proj.weight",
            fmt::format("({} + {} + {}, hidden_size)", inner, conv, nemotron ? "mamba_num_heads" : "mamba_n_heads"));
  add(WeightRole::linear_conv, "conv1d.weight", {C, 1, s.linear_conv_kernel}, "");
  v.back().shape_doc = fmt::format("({}, 1, {})", conv, nemotron ? "conv_kernel" : "mamba_d_conv");
  if (s.linear_conv_bias) {
    add(WeightRole::linear_conv_bias, "conv1d.bias", {C}, "");
    v.back().shape_doc = fmt::format("({})", conv);
  }
  add(WeightRole::linear_a_log, "A_log", {NV}, heads);
  add(WeightRole::linear_dt_bias, "dt_bias", {NV}, heads);
  add(WeightRole::mamba_d, "D", {NV}, heads);
  add(WeightRole::linear_norm, "norm.weight", {I}, "");
  v.back().shape_doc = fmt::format("({})", inner);
  add(WeightRole::o_proj, "out_proj.weight", {H, I}, "");
  v.back().shape_doc = fmt::format("(hidden_size, {})", inner);
}

// Nemotron-H's MoE block (NemotronHMoE): the router mixer.gate with its e_score_correction_bias, [LatentMoE:
// mixer.fc1_latent_proj,] per expert the ungated up_proj / down_proj (one module each as released; stacked
// (E, Fm, D) / (E, D, Fm) as transformers 5 holds them, each expert one block; D = H, or the latent),
// [mixer.fc2_latent_proj,] then the ungated shared expert.
void add_nemotron_h_moe_slots(const ModelSpec& s, std::vector<WeightSlot>& v) {
  const int64_t H = s.hidden_size, E = s.num_experts, Fm = s.moe_intermediate_size, Fs = s.shared_expert_intermediate_size;
  const int64_t D = s.expert_width();
  const bool latent = s.moe_latent_size > 0;
  const char* d_name = latent ? "moe_latent_size" : "hidden_size";
  v.push_back(layer_slot(s, WeightRole::router, "mixer.gate.weight", {E, H}, "(n_routed_experts, hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::router_bias, "mixer.gate.e_score_correction_bias", {E}, "(n_routed_experts)"));
  if (latent) {
    v.push_back(layer_slot(s, WeightRole::latent_in_proj, "mixer.fc1_latent_proj.weight", {D, H},
                           "(moe_latent_size, hidden_size)"));
  }
  for (int64_t e = 0; e < E; ++e) {
    const std::string p = "mixer.experts." + std::to_string(e) + ".";
    v.push_back(layer_slot(s, WeightRole::expert_up_proj, p + "up_proj.weight", {Fm, D}, ""));
    v.back().shape_doc = fmt::format("(moe_intermediate_size, {})", d_name);
    v.push_back(layer_slot(s, WeightRole::expert_down_proj, p + "down_proj.weight", {D, Fm}, ""));
    v.back().shape_doc = fmt::format("({}, moe_intermediate_size)", d_name);
    if (s.fused_experts) {
      WeightSlot& up = v[v.size() - 2];
      up.pattern = s.weight_prefix + "layers.{}.mixer.experts.up_proj";
      up.file_shape = {E, Fm, D};
      up.file_offset = e * Fm * D;
      up.shape_doc = fmt::format("(n_routed_experts, moe_intermediate_size, {})", d_name);
      WeightSlot& down = v.back();
      down.pattern = s.weight_prefix + "layers.{}.mixer.experts.down_proj";
      down.file_shape = {E, D, Fm};
      down.file_offset = e * D * Fm;
      down.shape_doc = fmt::format("(n_routed_experts, {}, moe_intermediate_size)", d_name);
    }
    v[v.size() - 2].expert = v.back().expert = static_cast<int32_t>(e);
  }
  if (latent) {
    v.push_back(layer_slot(s, WeightRole::latent_out_proj, "mixer.fc2_latent_proj.weight", {H, D},
                           "(hidden_size, moe_latent_size)"));
  }
  v.push_back(layer_slot(s, WeightRole::shared_up_proj, "mixer.shared_experts.up_proj.weight", {Fs, H},
                         "(moe_shared_expert_intermediate_size, hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::shared_down_proj, "mixer.shared_experts.down_proj.weight", {H, Fs},
                         "(hidden_size, moe_shared_expert_intermediate_size)"));
}

// Nemotron-H's layer (NemotronHBlock): its one norm.weight — the input norm of a mixer block, of an MLP block —
// then the block's tensors under mixer.: Mamba-2's, the attention's q/k/v/o (JambaAttention, no biases), or the
// ungated MLP's up_proj / down_proj (NemotronMLP).
std::vector<WeightSlot> nemotron_h_layer_slots(const ModelSpec& s, int64_t layer) {
  const int64_t H = s.hidden_size, F = s.intermediate_size, QD = s.q_dim(), KVD = s.kv_dim();
  std::vector<WeightSlot> v;
  auto add = [&](WeightRole role, const std::string& name, std::vector<int64_t> shape, const char* doc) {
    v.push_back(layer_slot(s, role, name, std::move(shape), doc));
  };
  add(s.has_mixer(layer) ? WeightRole::attn_norm : WeightRole::mlp_norm, "norm.weight", {H}, "(hidden_size)");
  if (s.is_moe_layer(layer)) {
    add_nemotron_h_moe_slots(s, v);
  } else if (!s.has_mixer(layer)) {
    add(WeightRole::up_proj, "mixer.up_proj.weight", {F, H}, "(intermediate_size, hidden_size)");
    add(WeightRole::down_proj, "mixer.down_proj.weight", {H, F}, "(hidden_size, intermediate_size)");
  } else if (s.is_linear_layer(layer)) {
    add_mamba2_slots(s, v);
  } else {
    add(WeightRole::q_proj, "mixer.q_proj.weight", {QD, H}, "(num_attention_heads*head_dim, hidden_size)");
    add(WeightRole::k_proj, "mixer.k_proj.weight", {KVD, H}, "(num_key_value_heads*head_dim, hidden_size)");
    add(WeightRole::v_proj, "mixer.v_proj.weight", {KVD, H}, "(num_key_value_heads*head_dim, hidden_size)");
    add(WeightRole::o_proj, "mixer.o_proj.weight", {H, QD}, "(hidden_size, num_attention_heads*head_dim)");
  }
  return v;
}

// LFM2's short convolution (Lfm2ShortConv.__init__): in_proj (B | C | x rows), the depthwise conv, out_proj.
void add_short_conv_slots(const ModelSpec& s, std::vector<WeightSlot>& v) {
  const int64_t H = s.hidden_size;
  v.push_back(layer_slot(s, WeightRole::short_conv_in, "conv.in_proj.weight", {3 * H, H}, "(3*hidden_size, hidden_size)"));
  v.push_back(layer_slot(s, WeightRole::linear_conv, "conv.conv.weight", {H, 1, s.linear_conv_kernel},
                         "(hidden_size, 1, conv_L_cache)"));
  v.push_back(layer_slot(s, WeightRole::o_proj, "conv.out_proj.weight", {H, H}, "(hidden_size, hidden_size)"));
}

std::vector<WeightSlot> layer_slots(const ModelSpec& s, int64_t layer) {
  if (s.nemotron_h_names) return nemotron_h_layer_slots(s, layer);
  const int64_t H = s.hidden_size, F = s.mlp_width(layer), HD = s.head_dim_of(layer);
  const int64_t QD = s.q_dim_of(layer), KVD = s.kv_dim_of(layer);
  std::vector<WeightSlot> v;
  auto add = [&](WeightRole role, const std::string& name, std::vector<int64_t> shape, const char* doc) {
    v.push_back(layer_slot(s, role, name, std::move(shape), doc));
  };
  if (s.input_norms) {
    add(WeightRole::attn_norm,
        s.lfm2_names ? "operator_norm.weight" : s.apertus_names ? "attention_layernorm.weight" : "input_layernorm.weight",
        {H}, "(hidden_size)");
  }
  if (s.input_norms && s.norm_bias) add(WeightRole::attn_norm_bias, "input_layernorm.bias", {H}, "(hidden_size)");
  const size_t q_at = v.size();
  const bool linear = s.is_linear_layer(layer);
  if (linear && s.mamba2()) {
    add_mamba2_slots(s, v);
  } else if (linear && s.linear_mixer == ModelSpec::LinearMixer::short_conv) {
    add_short_conv_slots(s, v);
  } else if (linear) {
    add_linear_attention_slots(s, v);
  } else if (s.mla) {
    add_mla_slots(s, v);
  } else if (s.per_layer_geometry()) {
    // Gemma 4: the full-attention layers' global_head_dim heads and (with k_eq_v) num_global_key_value_heads, no v_proj
    // with k_eq_v; a KV-shared layer has only q_proj (HF ignores stray k/v tensors there: they are copied, unread)
    const bool full = s.is_full_attention_layer(layer);
    add(WeightRole::q_proj, "self_attn.q_proj.weight", {QD, H},
        full ? "(num_attention_heads*global_head_dim, hidden_size)" : "(num_attention_heads*head_dim, hidden_size)");
    const char* kv_doc = !full     ? "(num_key_value_heads*head_dim, hidden_size)"
                         : s.k_eq_v ? "(num_global_key_value_heads*global_head_dim, hidden_size)"
                                    : "(num_key_value_heads*global_head_dim, hidden_size)";
    if (!s.is_kv_shared_layer(layer)) add(WeightRole::k_proj, "self_attn.k_proj.weight", {KVD, H}, kv_doc);
    if (!s.is_kv_shared_layer(layer) && !s.values_are_keys(layer)) {
      add(WeightRole::v_proj, "self_attn.v_proj.weight", {KVD, H}, kv_doc);
    }
  } else {
    add(WeightRole::q_proj, "self_attn.q_proj.weight", {QD, H}, "(num_attention_heads*head_dim, hidden_size)");
    add(WeightRole::k_proj, "self_attn.k_proj.weight", {KVD, H}, "(num_key_value_heads*head_dim, hidden_size)");
    add(WeightRole::v_proj, "self_attn.v_proj.weight", {KVD, H}, "(num_key_value_heads*head_dim, hidden_size)");
  }
  if (s.attn_output_gate && !linear) {
    // Qwen3NextAttention: q_proj (NH*2*HD, H) viewed (NH, 2*HD) per token, each head's q then its gate
    const char* doc = "(num_attention_heads*2*head_dim, hidden_size)";
    view_grouped_rows(v[q_at], "self_attn.q_proj.weight", s.num_heads, 2 * HD, 0, HD, H, doc);
    v.push_back(v[q_at]);
    v.back().role = WeightRole::q_gate_proj;
    v.back().file_offset = HD * H;
  }
  if (s.fused_qkv) {
    fuse_rows(v, q_at, 3, "self_attn.qkv_proj.weight",
              "((num_attention_heads + 2*num_key_value_heads)*head_dim, hidden_size)");
  }
  if (linear) {
    // the gated delta rule has no q/k norms, biases nor sinks; its out_proj is the o_proj slot
  } else if (s.qkv_bias) {
    add(WeightRole::q_bias, "self_attn.q_proj.bias", {QD}, "(num_attention_heads*head_dim)");
    add(WeightRole::k_bias, "self_attn.k_proj.bias", {KVD}, "(num_key_value_heads*head_dim)");
    add(WeightRole::v_bias, "self_attn.v_proj.bias", {KVD}, "(num_key_value_heads*head_dim)");
  }
  if (linear) {
  } else if (s.qk_norm && s.qk_norm_per_head) {
    add(WeightRole::q_norm, "self_attn.q_norm.weight", {s.num_heads, HD}, "(num_attention_heads, head_dim)");
    add(WeightRole::k_norm, "self_attn.k_norm.weight", {s.num_kv_heads, HD}, "(num_key_value_heads, head_dim)");
  } else if (s.qk_norm && s.qk_norm_full) {
    add(WeightRole::q_norm, "self_attn.q_norm.weight", {QD}, "(num_attention_heads*head_dim)");
    add(WeightRole::k_norm, "self_attn.k_norm.weight", {KVD}, "(num_key_value_heads*head_dim)");
  } else if (s.qk_norm) {
    using N = ModelSpec::QkNormNames;
    const char* q = s.qk_norm_names == N::query_layernorm ? "self_attn.query_layernorm.weight"
                    : s.qk_norm_names == N::q_layernorm  ? "self_attn.q_layernorm.weight"
                                                         : "self_attn.q_norm.weight";
    const char* k = s.qk_norm_names == N::query_layernorm ? "self_attn.key_layernorm.weight"
                    : s.qk_norm_names == N::q_layernorm  ? "self_attn.k_layernorm.weight"
                                                         : "self_attn.k_norm.weight";
    const char* doc = HD == s.head_dim ? "(head_dim)" : "(global_head_dim)";
    add(WeightRole::q_norm, q, {HD}, doc);
    if (!s.is_kv_shared_layer(layer)) add(WeightRole::k_norm, k, {HD}, doc);
  }
  if (s.attn_sinks) add(WeightRole::attn_sinks, "self_attn.sinks", {s.num_heads}, "(num_attention_heads)");
  if (linear) {
  } else if (s.mla) {
    add(WeightRole::o_proj, "self_attn.o_proj.weight", {H, s.o_dim()}, "(hidden_size, num_attention_heads*v_head_dim)");
  } else {
    add(WeightRole::o_proj, s.lfm2_names ? "self_attn.out_proj.weight" : "self_attn.o_proj.weight", {H, QD},
        HD == s.head_dim ? "(hidden_size, num_attention_heads*head_dim)"
                         : "(hidden_size, num_attention_heads*global_head_dim)");
  }
  if (s.o_bias) add(WeightRole::o_bias, "self_attn.o_proj.bias", {H}, "(hidden_size)");
  const bool glm4 = s.sandwich_names == ModelSpec::SandwichNames::glm4;
  if (s.sandwich_norms) {
    add(WeightRole::post_attn_norm, glm4 ? "post_self_attn_layernorm.weight" : "post_attention_layernorm.weight", {H},
        "(hidden_size)");
    if (s.input_norms) {
      add(WeightRole::mlp_norm, glm4 ? "post_attention_layernorm.weight" : "pre_feedforward_layernorm.weight", {H},
          "(hidden_size)");
    }
  } else if (!s.parallel_block) {  // (Cohere's parallel block: the MLP reads input_layernorm's output)
    add(WeightRole::mlp_norm,
        s.lfm2_names ? "ffn_norm.weight" : s.apertus_names ? "feedforward_layernorm.weight" : "post_attention_layernorm.weight",
        {H}, "(hidden_size)");
    if (s.norm_bias) add(WeightRole::mlp_norm_bias, "post_attention_layernorm.bias", {H}, "(hidden_size)");
  }
  if (s.is_moe_layer(layer) && s.moe_beside_dense) {
    add_gemma4_moe_slots(s, layer, v);
  } else if (s.is_moe_layer(layer)) {
    add_moe_slots(s, v);
  } else if (s.expert_names == ModelSpec::ExpertNames::granite) {
    // Granite 4.0's dense layers: GraniteMoeSharedMLP as the whole MLP (input_linear: gate rows, then up rows)
    const size_t gate_at = v.size();
    add(WeightRole::gate_proj, "shared_mlp.input_linear.weight", {F, H}, "");
    add(WeightRole::up_proj, "shared_mlp.input_linear.weight", {F, H}, "");
    fuse_rows(v, gate_at, 2, "shared_mlp.input_linear.weight", "(2*shared_intermediate_size, hidden_size)");
    add(WeightRole::down_proj, "shared_mlp.output_linear.weight", {H, F}, "(hidden_size, shared_intermediate_size)");
  } else if (s.lfm2_names) {
    // Lfm2MLP: w2(silu(w1(x)) * w3(x))
    add(WeightRole::gate_proj, "feed_forward.w1.weight", {F, H}, "(intermediate_size adjusted, hidden_size)");
    add(WeightRole::up_proj, "feed_forward.w3.weight", {F, H}, "(intermediate_size adjusted, hidden_size)");
    add(WeightRole::down_proj, "feed_forward.w2.weight", {H, F}, "(hidden_size, intermediate_size adjusted)");
  } else {
    const size_t gate_at = v.size();
    const std::string mlp = s.expert_names == ModelSpec::ExpertNames::llama4 ? "feed_forward." : "mlp.";
    const bool gated = gated_activation(s.activation);  // Arcee's MLP: down(relu(up(x))²); Apertus' down(xIELU(up(x)))
    const bool wide = F != s.intermediate_size;  // Gemma 4's double-wide MLP
    if (gated) {
      add(WeightRole::gate_proj, mlp + "gate_proj.weight", {F, H},
          wide ? "(2*intermediate_size, hidden_size)" : "(intermediate_size, hidden_size)");
    }
    add(WeightRole::up_proj, mlp + "up_proj.weight", {F, H},
        wide ? "(2*intermediate_size, hidden_size)" : "(intermediate_size, hidden_size)");
    if (s.fused_gate_up) fuse_rows(v, gate_at, 2, "mlp.gate_up_proj.weight", "(2*intermediate_size, hidden_size)");
    add(WeightRole::down_proj, mlp + "down_proj.weight", {H, F},
        wide ? "(hidden_size, 2*intermediate_size)" : "(hidden_size, intermediate_size)");
    if (s.mlp_bias) {
      if (gated) add(WeightRole::gate_bias, "mlp.gate_proj.bias", {F}, "(intermediate_size)");
      add(WeightRole::up_bias, "mlp.up_proj.bias", {F}, "(intermediate_size)");
      add(WeightRole::down_bias, "mlp.down_proj.bias", {H}, "(hidden_size)");
    }
    if (s.activation == Activation::xielu) {  // XIELUActivation's parameters (1,) and buffers ()
      add(WeightRole::xielu_alpha_p, "mlp.act_fn.alpha_p", {1}, "(1)");
      add(WeightRole::xielu_alpha_n, "mlp.act_fn.alpha_n", {1}, "(1)");
      add(WeightRole::xielu_beta, "mlp.act_fn.beta", {}, "() (a 0-d buffer)");
      add(WeightRole::xielu_eps, "mlp.act_fn.eps", {}, "() (a 0-d buffer)");
    }
  }
  if (s.sandwich_norms) {
    add(WeightRole::post_mlp_norm, glm4 ? "post_mlp_layernorm.weight" : "post_feedforward_layernorm.weight", {H},
        "(hidden_size)");
  }
  if (s.ple_dim > 0) add_ple_slots(s, layer, v);
  if (s.layer_scalar) add(WeightRole::layer_scalar, "layer_scalar", {1}, "(1) (a buffer)");
  return v;
}

std::vector<WeightSlot> global_slots(const ModelSpec& s) {
  const int64_t V = s.vocab_size, H = s.hidden_size;
  const auto slot = [](WeightRole role, std::string pattern, std::vector<int64_t> shape, const char* doc) {
    WeightSlot w;
    w.role = role;
    w.pattern = std::move(pattern);
    w.shape = std::move(shape);
    w.shape_doc = doc;
    return w;
  };
  std::vector<WeightSlot> v;
  const std::string& embed = s.embed_name;
  const char* final_norm = s.lfm2_names ? "embedding_norm.weight" : s.nemotron_h_names ? "norm_f.weight" : "norm.weight";
  v.push_back(slot(WeightRole::embed, s.weight_prefix + embed, {V, H}, "(vocab_size, hidden_size)"));
  v.push_back(slot(WeightRole::final_norm, s.weight_prefix + final_norm, {H}, "(hidden_size)"));
  if (s.norm_bias) v.push_back(slot(WeightRole::final_norm_bias, s.weight_prefix + "norm.bias", {H}, "(hidden_size)"));
  if (s.lm_head_bias) {
    const std::string& w = s.lm_head_name;  // "....weight" -> "....bias"
    const std::string base = w.size() > 7 && w.compare(w.size() - 7, 7, ".weight") == 0 ? w.substr(0, w.size() - 7) : w;
    v.push_back(slot(WeightRole::lm_head_bias, base + ".bias", {V}, "(vocab_size)"));
  }
  v.push_back(slot(WeightRole::lm_head, s.lm_head_name, {V, H}, "(vocab_size, hidden_size)"));
  if (s.tied_embeddings) {
    // transformers ties the head to the embedding and ignores a stored lm_head.weight.
    v.back().need = Need::optional;
    v.back().tied_to = WeightRole::embed;
  }
  return v;
}

std::vector<WeightSlot> weight_slots(const ModelSpec& spec) {
  std::vector<WeightSlot> v = layer_slots(spec);
  for (WeightSlot& g : global_slots(spec)) v.push_back(std::move(g));
  return v;
}

std::string weight_name(const WeightSlot& slot, int64_t layer) {
  if (!slot.per_layer) return slot.pattern;
  std::string name = slot.pattern;
  size_t at = name.find("{}");
  if (at != std::string::npos) name.replace(at, 2, std::to_string(layer));
  return name;
}

std::vector<ExpectedWeight> expected_weights(const ModelSpec& spec) {
  std::vector<ExpectedWeight> out;
  auto add = [&](const WeightSlot& s, int64_t layer) {
    ExpectedWeight e;
    e.name = weight_name(s, layer);
    e.role = s.role;
    e.layer = s.per_layer ? layer : -1;
    e.need = s.need;
    e.tied_to = s.tied_to;
    e.shape = s.shape;
    e.shape_doc = s.shape_doc;
    e.file_shape = s.file_shape.empty() ? s.shape : s.file_shape;
    e.file_offset = s.file_offset;
    e.file_strides = s.file_strides;
    e.mxfp4 = s.mxfp4;
    e.expert = s.expert;
    e.fp8_block_rows = spec.fp8_block_rows;
    e.fp8_block_cols = spec.fp8_block_cols;
    out.push_back(std::move(e));
  };
  std::vector<WeightSlot> globals = global_slots(spec);
  add(globals[0], -1);  // embed first, as in the module order of transformers
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    for (const WeightSlot& s : layer_slots(spec, l)) add(s, l);
  }
  for (size_t g = 1; g < globals.size(); ++g) add(globals[g], -1);  // the head unit's tensors, lm_head last
  return out;
}

WeightCheck inspect_weights(const ModelSpec& spec, const io::SafetensorsReader& reader) {
  WeightCheck out;
  std::set<std::string, std::less<>> expected;
  for (const ExpectedWeight& e : expected_weights(spec)) {
    if (!expected.insert(e.name).second) continue;  // a fused tensor's later slots
    if (e.mxfp4) {
      check_mxfp4(e, reader, expected, out);
      continue;
    }
    const io::TensorInfo* t = reader.find(e.name);
    if (!t) {
      if (e.need == Need::required) out.problems.push_back(fmt::format("missing tensor '{}'", e.name));
      continue;
    }
    if (e.tied_to) {
      out.ignored.push_back(e.name);
      continue;
    }
    if (is_fp8(*t)) {
      check_fp8(spec, e, *t, reader, expected, out);
    } else if (!t->dtype) {
      out.problems.push_back(fmt::format("'{}' in {}: dtype {} is unsupported (supported: {})",
                                         e.name, t->file, t->dtype_name, io::supported_dtypes()));
    }
    if (t->shape != e.file_shape) {
      out.problems.push_back(fmt::format("'{}' in {}: shape {}, expected {} {}", e.name, t->file,
                                         io::format_shape(t->shape), io::format_shape(e.file_shape),
                                         e.shape_doc));
    }
  }
  for (const io::TensorInfo& t : reader.tensors()) {
    if (expected.count(t.name)) continue;
    // Old checkpoints store RoPE's inverse frequencies; we compute them from rope_theta.
    if (ends_with(t.name, ".rotary_emb.inv_freq")) {
      out.ignored.push_back(t.name);
    } else if (is_mtp_tensor(spec, t.name)) {
      // GLM-4.5's multi-token-prediction layers: not run (transformers ignores them on load), copied
      // unchanged by export.
      out.ignored.push_back(t.name);
    } else if (spec.multimodal && t.name.rfind(spec.weight_prefix, 0) != 0) {
      // A multimodal checkpoint's other towers (vision_tower.*, multi_modal_projector.*): not
      // ours to run, copied unchanged by export.
      out.ignored.push_back(t.name);
    } else {
      out.unexpected.push_back(t.name);
    }
  }
  return out;
}

void check_weights(const ModelSpec& spec, const io::SafetensorsReader& reader, size_t max_listed) {
  WeightCheck c = inspect_weights(spec, reader);
  std::string where = reader.index_path().empty() ? reader.file(0).path() : reader.index_path();
  if (!c.problems.empty()) {
    std::string msg = fmt::format("{}: {} problem{} with the weights for {} ({}):", where,
                                  c.problems.size(), c.problems.size() == 1 ? "" : "s",
                                  spec.architecture, spec.source);
    size_t shown = std::min(c.problems.size(), std::max<size_t>(max_listed, 1));
    for (size_t i = 0; i < shown; ++i) msg += "\n  - " + c.problems[i];
    if (shown < c.problems.size()) msg += fmt::format("\n  ... and {} more", c.problems.size() - shown);
    throw Error(msg);
  }
  if (!c.unexpected.empty()) {
    std::string names;
    for (size_t i = 0; i < c.unexpected.size() && i < 5; ++i) names += (i ? ", " : "") + c.unexpected[i];
    if (c.unexpected.size() > 5) names += ", ...";
    log::warn("{}: {} tensor{} not used by {} will be ignored: {}", where, c.unexpected.size(),
              c.unexpected.size() == 1 ? "" : "s", spec.architecture, names);
  }
  if (spec.tied_embeddings && reader.find(spec.lm_head_name)) {
    log::warn("{}: {} is stored but tie_word_embeddings is true; it is ignored and "
              "{}embed_tokens.weight is used, as in transformers",
              where, spec.lm_head_name, spec.weight_prefix);
  }
}

int64_t file_index(const ExpectedWeight& w, int64_t i) {
  if (w.file_strides.empty()) return w.file_offset + i;
  int64_t at = w.file_offset;
  for (size_t d = w.shape.size(); d-- > 0;) {
    at += (i % w.shape[d]) * w.file_strides[d];
    i /= w.shape[d];
  }
  return at;
}

bool is_transposed(const ExpectedWeight& w) {
  return w.shape.size() == 2 && w.file_strides.size() == 2 && w.file_strides[0] == 1 &&
         w.file_strides[1] == w.shape[0];
}

void read_weight(const io::SafetensorsReader* reader, const ExpectedWeight& w, int64_t first, int64_t count,
                 float* out) {
  if (!reader) {
    synthetic_weight_values(w, first, count, out);
  } else if (w.mxfp4) {
    if (count > 0) read_mxfp4(*reader, w, first, count, out);
  } else if (const io::TensorInfo& t = reader->tensor(w.name); is_fp8(t)) {
    if (count > 0) read_fp8_slot(*reader, t, w, first, count, out);
  } else if (w.file_strides.empty()) {
    reader->read_f32(reader->tensor(w.name), w.file_offset + first, count, out);
  } else if (count > 0 && w.shape.size() == 2 && w.file_strides.size() == 2 && w.file_strides[1] == 1 &&
             w.file_strides[0] > 2 * w.shape[1]) {
    // A block of columns of a much wider matrix (Gemma 4's per-layer table: each layer's P of L·P): its rows are
    // contiguous runs, read one by one rather than the whole span between them.
    const int64_t cols = w.shape[1];  // (t: the file tensor, from the FP8 test above)
    for (int64_t i = first; i < first + count;) {
      const int64_t r = i / cols, c = i % cols, n = std::min(cols - c, first + count - i);
      reader->read_f32(t, w.file_offset + r * w.file_strides[0] + c, n, out + (i - first));
      i += n;
    }
  } else if (count > 0) {
    // A strided view (gpt-oss's experts): the file run that holds elements [first, first + count),
    // read once and gathered.
    const std::pair<int64_t, int64_t> span = file_span(w, first, count);
    const int64_t lo = span.first, hi = span.second;
    std::vector<float> run(static_cast<size_t>(hi - lo + 1));
    reader->read_f32(reader->tensor(w.name), lo, hi - lo + 1, run.data());
    for_each_file_index(w, first, count, [&](int64_t i, int64_t at) { out[i] = run[static_cast<size_t>(at - lo)]; });
  }
}

int64_t parameter_count(const ModelSpec& spec) {
  int64_t total = 0;
  std::set<std::pair<std::string, int64_t>> counted;  // a file tensor that several layers name whole counts once
  for (const ExpectedWeight& e : expected_weights(spec)) {
    if (e.tied_to) continue;
    if (e.layer >= 0 && !counted.emplace(e.name, e.file_offset).second) continue;
    int64_t n = 1;
    for (int64_t d : e.shape) {
      if (__builtin_mul_overflow(n, d, &n)) fail("{}: parameter count overflows", spec.source);
    }
    if (__builtin_add_overflow(total, n, &total)) fail("{}: parameter count overflows", spec.source);
  }
  return total;
}

int64_t active_parameter_count(const ModelSpec& spec) {
  int64_t active = parameter_count(spec);
  const int64_t matrices = gated_activation(spec.activation) ? 3 : 2;  // Nemotron-H's experts: up and down only
  int64_t per_expert = matrices * spec.moe_intermediate_size * spec.expert_width();
  if (spec.expert_bias) per_expert += 2 * spec.moe_intermediate_size + spec.hidden_size;
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    if (spec.is_moe_layer(l)) active -= (spec.num_experts - spec.experts_per_token) * per_expert;
  }
  return active;
}

uint64_t weight_bytes(const ModelSpec& spec, DType dtype) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(parameter_count(spec)), dtype_size(dtype), &bytes)) {
    fail("{}: weight size overflows", spec.source);
  }
  return bytes;
}

FileSummary summarize_files(const io::SafetensorsReader& reader) {
  FileSummary s;
  for (const io::TensorInfo& t : reader.tensors()) {
    ++s.num_tensors;
    s.num_params += t.numel;
    s.total_bytes += t.nbytes();
    s.bytes_by_dtype[t.dtype_name] += t.nbytes();
    ++s.tensors_by_dtype[t.dtype_name];
  }
  return s;
}

std::string format_tensor_table(const io::SafetensorsReader& reader) {
  struct Row {
    std::string name, dtype, shape, file;
  };
  std::vector<Row> rows;
  size_t w_name = 0, w_dtype = 0, w_shape = 0;
  for (const io::TensorInfo& t : reader.tensors()) {
    Row r{t.name, t.dtype_name, io::format_shape(t.shape),
          std::filesystem::path(t.file).filename().string()};
    w_name = std::max(w_name, r.name.size());
    w_dtype = std::max(w_dtype, r.dtype.size());
    w_shape = std::max(w_shape, r.shape.size());
    rows.push_back(std::move(r));
  }
  std::string out;
  for (const Row& r : rows) {
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", r.name, w_name, r.dtype, w_dtype, r.shape,
                       w_shape, r.file);
  }
  return out;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace abl::model
