// The weight name table: Hugging Face tensor names (with "{}" for the layer index) mapped to
// roles, with required/optional/tied flags and shapes derived from the ModelSpec, and the check
// of a model's files against it, done before any tensor data is read. The order of the layer
// slots is the fixed order of tensors inside one layer's sharding unit.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "abl/model/model_spec.h"

namespace abl::io {
class SafetensorsReader;
struct TensorInfo;
}

namespace abl::model {

enum class WeightRole {
  embed,       // (V, H)   model.embed_tokens.weight
  attn_norm,   // (H)      input_layernorm
  attn_norm_bias,  // (H)  input_layernorm.bias (norm_bias: Phi-3.5-MoE's nn.LayerNorm)
  q_proj,      // (NH*HD, H)
  k_proj,      // (NKV*HD, H)
  v_proj,      // (NKV*HD, H)
  q_bias,      // (NH*HD)  when qkv_bias
  k_bias,      // (NKV*HD)
  v_bias,      // (NKV*HD)
  q_norm,      // (HD)     when qk_norm; (NH, HD) with qk_norm_per_head
  k_norm,      // (HD)     (NKV, HD) with qk_norm_per_head
  // Latent attention (ModelSpec::mla) instead of q/k/v_proj; C = kv_lora_rank, R = qk_rope_head_dim:
  q_a_proj,    // (q_lora_rank, H)  self_attn.q_a_proj (with q_lora_rank; else q_proj)
  q_a_norm,    // (q_lora_rank)     self_attn.q_a_layernorm
  q_b_proj,    // (NH*HD, q_lora_rank)
  kv_a_proj,   // (C + R, H)        self_attn.kv_a_proj_with_mqa: the latent, then the shared k_pe
  kv_a_norm,   // (C)               self_attn.kv_a_layernorm
  kv_b_proj,   // (NH*(nope + HDv), C): head h's k_nope rows, then its value rows
  // Full attention with attn_output_gate: each head's gate rows of q_proj (NH, HD, H), a strided view.
  q_gate_proj,
  // Linear-attention layers (ModelSpec::linear_layers; linear_attn.*): q, k, v are the conv's channels in
  // order, each a view of in_proj_qkvz (Qwen3-Next, grouped per key head) or a row block of in_proj_qkv:
  linear_q,       // (NK*DK, H)
  linear_k,       // (NK*DK, H)
  linear_v,       // (NV*DV, H)
  linear_z,       // (NV*DV, H)  the output gate (in_proj_qkvz / in_proj_z)
  linear_b,       // (NV, H)     β's logits (in_proj_ba / in_proj_b)
  linear_a,       // (NV, H)     the decay's input (in_proj_ba / in_proj_a)
  linear_conv,    // (NK*DK*2 + NV*DV, 1, K) conv1d.weight, depthwise
  linear_a_log,   // (NV)        A_log
  linear_dt_bias, // (NV)        dt_bias
  linear_norm,    // (DV)        norm.weight (the gated RMSNorm, plain w); Mamba-2: (NV*DV)
  // Mamba-2 layers (ModelSpec::mamba2; mamba.*) use linear_z (in_proj's first rows), linear_conv, linear_a_log,
  // linear_dt_bias and linear_norm, and:
  mamba_xbc,         // (NV*DV + 2*NK*DK, H)  in_proj's rows of the conv's channels x | B | C
  mamba_dt,          // (NV, H)               in_proj's last rows, dt
  linear_conv_bias,  // (NV*DV + 2*NK*DK)     conv1d.bias (mamba_conv_bias)
  mamba_d,           // (NV)                  D, the skip of x into y
  // LFM2's short-conv layers (LinearMixer::short_conv; conv.*) use linear_conv and o_proj (conv.out_proj), and:
  short_conv_in,     // (3*H, H)  conv.in_proj: B rows, C rows, x rows
  o_proj,      // (H, NH*HD); (H, NH*HDv) with latent attention; linear_attn.out_proj (H, NV*DV)
  o_bias,      // (H)      o_bias (gpt-oss)
  attn_sinks,  // (NH)     attn_sinks (gpt-oss: self_attn.sinks)
  post_attn_norm,  // (H)  Gemma: post_attention_layernorm, on the attention output
  mlp_norm,    // (H)      post_attention_layernorm (Gemma: pre_feedforward_layernorm)
  mlp_norm_bias,   // (H)  post_attention_layernorm.bias (norm_bias)
  gate_proj,   // (F, H)
  up_proj,     // (F, H)
  down_proj,   // (H, F)
  gate_bias,   // (F)      mlp_bias
  up_bias,     // (F)
  down_bias,   // (H)
  // xIELU's learned scalars (Activation::xielu; Apertus' mlp.act_fn.*), one element each:
  xielu_alpha_p,  // (1)  alpha_p, before its softplus
  xielu_alpha_n,  // (1)  alpha_n, before its softplus
  xielu_beta,     // ()   beta (a 0-d buffer)
  xielu_eps,      // ()   eps (a 0-d buffer)
  post_mlp_norm,  // (H)   Gemma: post_feedforward_layernorm, on the MLP output
  layer_scalar,   // (1)   Gemma 4: the residual stream's factor at the end of the layer
  // MoE layers (instead of gate_proj/up_proj/down_proj), expert-major in the unit:
  router,            // (E, H)   mlp.gate / block_sparse_moe.gate
  router_bias,       // (E)      GLM-4.5: mlp.gate.e_score_correction_bias (fp32 in the files)
  router_logit_bias, // (E)      gpt-oss: mlp.router.bias, added to the router's logits
  expert_gate_proj,  // (Fm, H)  per expert: mlp.experts.{e}.gate_proj (Mixtral w1); H: expert_width()
  expert_up_proj,    // (Fm, H)  mlp.experts.{e}.up_proj (Mixtral w3)
  expert_down_proj,  // (H, Fm)  mlp.experts.{e}.down_proj (Mixtral w2); a LatentMoE's write the latent (D, Fm)
  expert_gate_bias,  // (Fm)     expert_bias (gpt-oss): from mlp.experts.gate_up_proj_bias
  expert_up_bias,    // (Fm)
  expert_down_bias,  // (H)      mlp.experts.down_proj_bias
  shared_gate_proj,  // (Fs, H)  Qwen2-MoE: mlp.shared_expert.gate_proj (GLM-4.5: mlp.shared_experts.)
  shared_up_proj,    // (Fs, H)
  shared_down_proj,  // (H, Fs)
  shared_expert_gate,  // (1, H) sigmoid gate of the shared expert
  latent_in_proj,   // (D, H)  LatentMoE (ModelSpec::moe_latent_size = D): mixer.fc1_latent_proj, before the experts
  latent_out_proj,  // (H, D)  mixer.fc2_latent_proj, the routed experts' sum back to H (ablated as mlp.down_proj)
  // Gemma 4's MoE layers (ModelSpec::moe_beside_dense), beside the dense gate_proj / up_proj / down_proj:
  dense_post_norm,      // (H)  post_feedforward_layernorm_1, on the dense MLP's output
  moe_norm,             // (H)  pre_feedforward_layernorm_2, the experts' input norm
  moe_post_norm,        // (H)  post_feedforward_layernorm_2, on the experts' weighted sum
  router_scale,         // (H)  router.scale, on the router's normed input
  router_expert_scale,  // (E)  router.per_expert_scale, on each chosen weight
  // Gemma 4's per-layer embeddings (ModelSpec::ple_dim = P), per layer, and the layer's share of the model's tables:
  ple_gate,        // (P, H)  per_layer_input_gate
  ple_proj,        // (H, P)  per_layer_projection, a writer to the residual stream (not ablated)
  ple_post_norm,   // (H)     post_per_layer_input_norm
  ple_embed,       // (V, P)  columns [lP, (l+1)P) of the model's embed_tokens_per_layer (V, L*P)
  ple_model_proj,  // (P, H)  rows [lP, (l+1)P) of the model's per_layer_model_projection (L*P, H)
  ple_proj_norm,   // (P)     the model's per_layer_projection_norm (every layer names it)
  final_norm,  // (H)      model.norm.weight
  final_norm_bias,  // (H) model.norm.bias (norm_bias)
  lm_head_bias,     // (V) lm_head.bias (lm_head_bias)
  lm_head,     // (V, H)   absent or ignored when tied
};
std::string_view role_name(WeightRole role);  // "q_proj", ...

enum class Need {
  required,  // must be in the files
  optional,  // may be absent; checked when present
};

struct WeightSlot {
  WeightRole role;
  std::string pattern;                // HF name; "{}" is the layer index in per-layer slots
  bool per_layer = false;
  Need need = Need::required;
  std::optional<WeightRole> tied_to;  // lm_head -> embed with tie_word_embeddings
  std::vector<int64_t> shape;         // expected shape of the slot
  std::string shape_doc;              // how the shape follows from config.json, for messages
  // A slot may be a block of rows of a larger file tensor (Phi-3's fused qkv_proj and
  // gate_up_proj): the file tensor's shape and the slot's first element in it. Empty file_shape:
  // the slot is the whole tensor.
  std::vector<int64_t> file_shape;
  int64_t file_offset = 0;
  // Element strides of the slot's dimensions in the file tensor; empty: its elements are one
  // contiguous row-major run. gpt-oss's experts: gate (Fm, H) of gate_up_proj (E, H, 2*Fm) has
  // strides (2, 2*Fm), down (H, Fm) of down_proj (E, Fm, H) has (1, H).
  std::vector<int64_t> file_strides;
  // The file tensor is MXFP4 (gpt-oss as released): "<name>_blocks" (U8: file_shape without its last
  // dim, then last/32 blocks of 16 bytes, two E2M1 values each, the low nibble first) and
  // "<name>_scales" (U8: one E8M0 exponent per block, bias 127); file_shape is the dequantized tensor,
  // (E, out, in) — not transposed, unlike the plain layout.
  bool mxfp4 = false;
  int32_t expert = -1;  // the expert of an expert_* slot
};

// Is this the down projection of an MLP or of an expert (what the mlp.down_proj ablation rewrites)? In a
// LatentMoE the experts' down projections write the latent, and fc2_latent_proj is the one that writes the
// residual stream.
bool is_down_projection(const ModelSpec& spec, WeightRole role);
// Is it the routed experts' writer to the residual stream (what --ablate-experts false leaves alone)?
bool is_routed_down_projection(const ModelSpec& spec, WeightRole role);

// Layer slots in unit order, then the global ones (embed, final_norm, [final_norm_bias, lm_head_bias,]
// lm_head: the head's tensors in the order of its sharding unit, lm_head last). Layers of a
// mixture-of-experts model may differ (dense layers among MoE ones): layer_slots(spec, l).
std::vector<WeightSlot> weight_slots(const ModelSpec& spec);
std::vector<WeightSlot> layer_slots(const ModelSpec& spec, int64_t layer = 0);
std::vector<WeightSlot> global_slots(const ModelSpec& spec);

// The tensor name of `slot` for `layer` (ignored by global slots).
std::string weight_name(const WeightSlot& slot, int64_t layer);

// Every tensor the model needs, expanded over layers: embed, layer 0 slots, ..., norm, lm_head.
struct ExpectedWeight {
  std::string name;  // the file tensor (shared by the slots of a fused tensor)
  WeightRole role;
  int64_t layer = -1;  // -1 for global tensors
  Need need = Need::required;
  std::optional<WeightRole> tied_to;
  std::vector<int64_t> shape;       // of the slot
  std::string shape_doc;
  std::vector<int64_t> file_shape;  // of the file tensor (== shape unless fused)
  int64_t file_offset = 0;          // the slot's first element in the file tensor
  std::vector<int64_t> file_strides;  // of the slot's dims in the file tensor; empty = contiguous
  bool mxfp4 = false;               // the file tensor is "<name>_blocks" + "<name>_scales" (WeightSlot)
  int32_t expert = -1;              // the expert of an expert_* slot
  // The spec's FP8 blocks (ModelSpec::fp8_block_rows/cols), used when the file tensor is F8_E4M3.
  int64_t fp8_block_rows = 0;
  int64_t fp8_block_cols = 0;
};

// The tensors of an MXFP4 slot in the files.
std::string mxfp4_blocks_name(const std::string& name);  // "<name>_blocks"
std::string mxfp4_scales_name(const std::string& name);  // "<name>_scales"
// The value of 4-bit E2M1 code `nibble` times 2^(scale - 127), as transformers' convert_moe_packed_tensors.
float mxfp4_value(uint8_t nibble, uint8_t scale);

// FP8 block-scaled tensors (ModelSpec::fp8_block_rows): the scales of "<name>" are "<name>_scale_inv".
std::string fp8_scale_name(const std::string& name);
// The value of an e4m3fn code (bias 7, subnormals, 0x7F and 0xFF NaN, no infinities).
float fp8_e4m3_value(uint8_t code);
bool is_fp8(const io::TensorInfo& t);  // dtype F8_E4M3
// The shape of the scales of an FP8 tensor of `shape`: its leading dims, then ⌈rows / block_rows⌉ and
// ⌈cols / block_cols⌉ of its last two.
std::vector<int64_t> fp8_scale_shape(const std::vector<int64_t>& shape, int64_t block_rows, int64_t block_cols);
// Elements [first, first + count) (row-major) of the FP8 file tensor t: each code's value times its
// block's scale (fp32), rounded to bf16 (transformers' Fp8Dequantize, then the model's bf16).
void read_fp8(const io::SafetensorsReader& reader, const io::TensorInfo& t, int64_t block_rows, int64_t block_cols,
              int64_t first, int64_t count, float* out);

// The file tensor's element holding element i (row-major) of the slot.
int64_t file_index(const ExpectedWeight& w, int64_t i);
// Is the slot, an (out, in) matrix, stored transposed, as (in, out) blocks of its file tensor?
// (gpt-oss's down_proj: export ablates such a block through its transpose.)
bool is_transposed(const ExpectedWeight& w);
std::vector<ExpectedWeight> expected_weights(const ModelSpec& spec);

// Elements [first, first + count) of the slot `w`: from the files (converted to fp32), or the
// synthetic values when `reader` is null (synthetic models).
void read_weight(const io::SafetensorsReader* reader, const ExpectedWeight& w, int64_t first, int64_t count,
                 float* out);

// Product of a shape's dimensions (1 for a scalar).
int64_t element_count(const std::vector<int64_t>& shape);

struct WeightCheck {
  std::vector<std::string> problems;    // empty when the model can be loaded
  std::vector<std::string> unexpected;  // tensors no slot uses (worth a warning)
  std::vector<std::string> ignored;     // known harmless extras (rotary inv_freq, tied lm_head)
};

// Compares the files' tensor table with the spec: presence, dtype (F32/F16/BF16) and shape of
// every needed tensor. Reads headers only.
WeightCheck inspect_weights(const ModelSpec& spec, const io::SafetensorsReader& reader);

// inspect_weights, then throws abl::Error listing all problems (up to `max_listed`, then a
// count), naming the files, tensors and expected vs found shapes; warns about unexpected tensors.
void check_weights(const ModelSpec& spec, const io::SafetensorsReader& reader,
                   size_t max_listed = 20);

// Deterministic weights for synthetic models: element i of slot `w` depends only on
// (seed, w.name, w.file_offset + i), so every rank generates exactly its slice [first, first + count) and any
// split gives the same model. Matrices ~ uniform with std 1/sqrt(fan_in), embeddings std 1,
// norm weights 1 ± 0.05, biases ± 0.02.
void synthetic_weight_values(const ExpectedWeight& w, int64_t first, int64_t count, float* out,
                             uint64_t seed = 0);

// ---- for `abliterate info` and planning ----

// Parameters of the model described by the spec (a tied lm_head counted once).
int64_t parameter_count(const ModelSpec& spec);
// Parameters one token passes through: all of them, less the experts the router does not pick
// in each MoE layer ((E − k) experts).
int64_t active_parameter_count(const ModelSpec& spec);
// Bytes of all weights when stored as `dtype`.
uint64_t weight_bytes(const ModelSpec& spec, DType dtype);

struct FileSummary {
  int64_t num_tensors = 0;
  int64_t num_params = 0;                       // elements of all tensors in the files
  uint64_t total_bytes = 0;
  std::map<std::string, uint64_t> bytes_by_dtype;  // "BF16" -> bytes
  std::map<std::string, int64_t> tensors_by_dtype;
};
FileSummary summarize_files(const io::SafetensorsReader& reader);

// One line per tensor: name, dtype, shape and file (base name), columns aligned.
std::string format_tensor_table(const io::SafetensorsReader& reader);

}  // namespace abl::model
