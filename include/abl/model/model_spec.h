// ModelSpec: the architecture of a decoder-only model, read from a Hugging Face config.json.
// Family differences (Llama, Mistral, Qwen2, Qwen3, Gemma 2/3, Phi-3, GLM, SmolLM3, the MoE families)
// become flags and numbers here (qkv_bias, qk_norm, (1 + w) norms, soft-caps, per-layer windows and
// RoPE, fused tensors, weight-name prefixes, routers) so that no other code needs to switch on the architecture name. Defaults
// for absent keys follow each family's transformers config class; docs/families.md has the
// sources.
//
// Dimension names used with this spec everywhere: V vocab, H hidden, F ffn (intermediate),
// L layers, NH attention heads, NKV key/value heads, HD head dim.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "abl/core/dtype.h"

namespace abl::io {
class JsonValue;
}

namespace abl::model {

struct RopeScaling {
  enum class Type { none, llama3, linear, longrope, yarn, dynamic, proportional };
  Type type = Type::none;
  // proportional (Gemma 4's full-attention layers: _compute_proportional_rope_parameters): over a head of D dims,
  // the first int(rotary_fraction·D // 2) of the D/2 frequencies are θ^(−2i/D) (the exponent over the whole head),
  // the others 0 (those dims pass unchanged), all divided by `factor`; pairs (i, i + D/2) as the default RoPE.
  double rotary_fraction = 1.0;
  // llama3 (Llama 3.1+): wavelengths above original_max/low_freq_factor are divided by
  // `factor`, those below original_max/high_freq_factor kept, a smooth blend in between.
  // linear (Gemma 3's global layers): every inverse frequency divided by `factor`.
  // dynamic (dynamic NTK): transformers raises the base only for a sequence longer than
  // max_position_embeddings, which no run has (ModelSpec::context_length caps every prompt and
  // its generation), so within a run it is the default RoPE; `factor` is kept for describe().
  // HunYuan's DynamicNTKAlphaRotary reads an `alpha` beside it (ntk_alpha; 0 = none): the family raises
  // rope_theta by alpha^(head_dim / (head_dim - 2)) (model_spec.cpp); other families ignore it, as transformers.
  double factor = 1.0;
  double ntk_alpha = 0.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 0;
  // longrope (Phi-3): inverse frequency i divided by short_factor[i] while a sequence holds at most
  // original_max_position_embeddings tokens, by long_factor[i] once it is longer (see
  // ModelSpec::long_rope_after), and cos/sin multiplied by attention_factor either way.
  std::vector<double> short_factor, long_factor;
  double attention_factor = 1.0;
  // yarn (Qwen's long-context setting, DeepSeek): inverse frequencies that turn fewer than
  // beta_slow times over original_max_position_embeddings divided by `factor`, those that turn
  // more than beta_fast times kept, a linear ramp between (over whole dimensions when truncate);
  // cos/sin multiplied by attention_factor (0.1 ln(factor) + 1 unless given or set by mscale).
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  bool truncate = true;
};

// The activation of the gated MLP: down(act(gate(x)) * up(x)).
enum class Activation {
  silu,       // SwiGLU (Llama, Mistral, Qwen, Phi-3)
  gelu_tanh,  // GeGLU with the tanh approximation, "gelu_pytorch_tanh" (Gemma)
  // gpt-oss's experts (GptOssExperts._apply_gate): (clamp(up, ±limit) + 1) · g·σ(α·g) with
  // g = min(gate, limit); α = ModelSpec::swiglu_alpha, limit = ModelSpec::swiglu_limit.
  swiglu_clamped,
  // Ungated (Nemotron-H's relu2: NemotronMLP): down(relu(up(x))²); the MLP has no gate projection.
  relu2,
  // Ungated (Apertus: ApertusMLP, XIELUActivation): down(xIELU(up(x))) with four learned scalars per layer
  // (mlp.act_fn.alpha_p, alpha_n, beta, eps): xIELU(x) = softplus(alpha_p)·x² + beta·x for x > 0, else
  // (expm1(min(x, eps)) − x)·(beta + softplus(alpha_n)) + beta·x.
  xielu,
};

// Is the MLP gated, down(act(gate(x)) · up(x)) with a gate projection, or ungated down(act(up(x)))?
constexpr bool gated_activation(Activation a) { return a != Activation::relu2 && a != Activation::xielu; }

struct ModelSpec {
  std::string source;        // config.json path, or "synthetic:<preset>"; errors name it
  std::string architecture;  // "LlamaForCausalLM", ...
  std::string model_type;    // "llama", "mistral", "qwen2", "qwen3" (as written; may be empty)

  int64_t vocab_size = 0;         // V
  int64_t hidden_size = 0;        // H
  int64_t intermediate_size = 0;  // F
  int64_t num_layers = 0;         // L  (num_hidden_layers)
  int64_t num_heads = 0;          // NH (num_attention_heads)
  int64_t num_kv_heads = 0;       // NKV (num_key_value_heads)
  int64_t head_dim = 0;           // HD; NH * HD need not equal H (Qwen3)
  // Gemma 4 (models/gemma4 Gemma4TextAttention): the full-attention layers (those not sliding) have their own head
  // size (global_head_dim) and, with k_eq_v, their own kv heads (num_global_key_value_heads); 0 = head_dim,
  // num_kv_heads. The per-layer sizes are head_dim_of(l), kv_heads_of(l) and the *_dim_of(l) below.
  int64_t full_head_dim = 0;
  int64_t full_kv_heads = 0;
  // Gemma 4's attention_k_eq_v: the full-attention layers have no v_proj; their values are k_proj's raw output
  // (before k_norm and RoPE).
  bool k_eq_v = false;
  // Gemma 4: every value head is RMS-normed without a weight (v_norm) before the attention.
  bool v_norm = false;
  // Gemma 4: at the end of each layer the whole residual stream is multiplied by the layer's layer_scalar, a (1)
  // tensor (Gemma4TextDecoderLayer.forward).
  bool layer_scalar = false;
  // Gemma 4 E2B/E4B's per-layer embeddings (hidden_size_per_layer_input P; Gemma4TextModel.get_per_layer_inputs and
  // project_per_layer_inputs, Gemma4TextDecoderLayer.forward): layer l's input is ple_l = (rms_w(x0·W_lᵀ·H^-0.5;
  // per_layer_projection_norm) + E_l[token]·ple_embed_scale)·2^-0.5, x0 the scaled input embedding, W_l the rows
  // [lP, (l+1)P) of per_layer_model_projection, E_l the columns [lP, (l+1)P) of embed_tokens_per_layer; after the MLP
  // block x += rms_w(per_layer_projection·(gelu_tanh(per_layer_input_gate·x) ⊙ ple_l); post_per_layer_input_norm).
  // 0 = none.
  int64_t ple_dim = 0;
  double ple_embed_scale = 1.0;  // √P in the checkpoint dtype, as embed_scale
  // Gemma 4's num_kv_shared_layers: the last N layers compute no keys or values and attend over those of the last
  // unshared layer of their own type (kv_source(l); Gemma4TextAttention's shared_kv_states). 0 = none.
  int64_t kv_shared_layers = 0;
  // Gemma 4's use_double_wide_mlp: the KV-shared layers' MLP is 2·intermediate_size wide (mlp_width(l)).
  bool double_wide_shared_mlp = false;
  // The leading dims of each head that RoPE rotates, pairs (i, i + R/2); the rest pass unchanged
  // (MLA: the trailing ones). 0 = all of them. Phi-4-mini: int(HD * partial_rotary_factor) = 96 of 128; GLM: 64 of 128.
  int64_t partial_rotary_dim = 0;
  // RoPE pairs adjacent dims (2i, 2i + 1) of the rotary part instead of (i, i + R/2), with the
  // same frequency i (GLM's interleaved rotate_half); the weights stay as stored either way.
  bool rope_interleaved = false;
  // (L) layers whose attention takes no RoPE at all (SmolLM3's NoPE layers: no_rope_layers[l] == 0);
  // empty = every layer rotates.
  std::vector<uint8_t> nope_layers;
  // Ministral 3 (Ministral3Attention): after RoPE every query is multiplied by
  // 1 + query_log_scale_beta * log(1 + floor(position / query_log_scale_period)) (transformers'
  // _get_llama_4_attn_scale with rope_parameters' llama_4_scaling_beta and original_max_position_embeddings);
  // beta 0 = none.
  // Llama 4's attn_temperature_tuning (Llama4TextAttention) is the same with floor_scale as the period and
  // attn_scale as beta, on positions + 1 (query_log_scale_offset) and on the NoPE layers only.
  double query_log_scale_beta = 0.0;
  int64_t query_log_scale_period = 0;
  int64_t query_log_scale_offset = 0;
  bool query_log_scale_nope_only = false;
  // Ministral 3 makes the factor a tensor of the query's dtype (bf16 in a bf16 run) before the product;
  // Llama 4 multiplies by the fp32 factor and rounds the product once. (The CPU engine is fp32 throughout.)
  bool query_log_scale_in_dtype = false;
  // Llama 4 (Llama4TextL2Norm, use_qk_norm): on the rotary layers, each q and k head divided by its RMS
  // (eps rms_norm_eps, no weight) after RoPE.
  bool qk_l2_norm = false;
  // Llama 4's rotary layers attend within chunks of this many positions (attention_chunk_size); a sequence
  // within one chunk attends causally, and context_length() keeps every sequence within one. 0 = none.
  int64_t attention_chunk = 0;

  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;  // RoPE base, rotate-half layout as in transformers
  RopeScaling rope_scaling;
  // > 0: the sliding-window layers use this base and no scaling (Gemma 3's local layers).
  double rope_local_theta = 0.0;
  int64_t max_position_embeddings = 0;
  // Sliding-window attention (transformers semantics: a query at p sees keys p - window < j <= p)
  // in the layers l with sliding_layers[l] != 0; 0 = full attention everywhere. Mistral and Phi-3:
  // all layers; Qwen2/3 with use_sliding_window: layers >= max_window_layers; Gemma 2: even
  // layers; Gemma 3: all but every sliding_window_pattern-th (or as layer_types says).
  int64_t sliding_window = 0;
  std::vector<uint8_t> sliding_layers;  // (L) when sliding_window > 0

  bool tied_embeddings = false;  // lm_head reuses model.embed_tokens.weight
  bool qkv_bias = false;         // q/k/v projections carry a bias (Qwen2)
  bool qk_norm = false;          // RMSNorm of each q and k head before RoPE (Qwen3, Gemma 3)
  // The q/k norm holds one weight row per head, (NH, HD) and (NKV, HD), instead of one (HD) row for
  // all heads; with norm_centered it is a LayerNorm, as the residual norms (Command R+'s use_qk_norm:
  // CohereLayerNorm over each head).
  bool qk_norm_per_head = false;
  // The q/k norm is one RMSNorm over the whole projection, (NH·HD) and (NKV·HD), before the split
  // into heads (OLMo 2's q_norm/k_norm), instead of one over each head.
  bool qk_norm_full = false;
  // The per-head q/k norms come after RoPE (HunYuanDenseV1Attention), not before it.
  bool qk_norm_after_rope = false;
  // Their tensors: self_attn.q_norm / k_norm, or HunYuan's self_attn.query_layernorm / key_layernorm.
  enum class QkNormNames { q_norm, query_layernorm, q_layernorm };  // q_layernorm: LFM2's
  QkNormNames qk_norm_names = QkNormNames::q_norm;
  // o_proj carries a bias (gpt-oss's attention_bias). It is added after the ablation epilogue: the
  // ablation rewrites weights only, as export does.
  bool o_bias = false;
  // The dense MLP's gate, up and down projections carry biases (Llama, Granite and SmolLM3's
  // mlp_bias); the down projection's is added after the ablation epilogue, as o_proj's.
  bool mlp_bias = false;
  // DeepSeek-V2/V3's multi-head latent attention (MLA; models/deepseek_v3 DeepseekV3Attention): q from
  // q_a_proj → q_a_layernorm → q_b_proj (q_lora_rank > 0) or q_proj; one shared latent per token from
  // kv_a_proj_with_mqa: its first kv_lora_rank values → kv_a_layernorm → kv_b_proj give every head
  // its k_nope (qk_nope_head_dim) and its value (v_head_dim), its last partial_rotary_dim values
  // are one rotated k_pe that every head appends. A q/k head is [nope ; rope] (head_dim = nope +
  // rope): the rotated dims are the TAIL of each head here, the leading ones everywhere else. No
  // GQA (num_kv_heads = num_heads); the latent norms take latent_norm_eps.
  bool mla = false;
  int64_t q_lora_rank = 0;       // 0 = a plain q_proj (DeepSeek-V2-Lite, Moonlight)
  int64_t kv_lora_rank = 0;      // C
  int64_t qk_nope_head_dim = 0;  // the unrotated lead of each q/k head
  int64_t v_head_dim = 0;        // HDv; 0 = head_dim (every family but MLA)
  double latent_norm_eps = 1e-6;
  // Hybrid linear attention (Qwen3-Next, Qwen3.5: models/qwen3_next Qwen3NextGatedDeltaNet): the
  // layers with linear_layers[l] != 0 mix tokens with a gated delta rule instead of softmax attention.
  // Per token: q, k (NK heads of DK) and v (NV heads of DV) from one projection through a causal
  // depthwise conv of linear_conv_kernel taps and SiLU; q, k L2-normed, q scaled by DK^-0.5, repeated
  // to NV heads; per value head a state S (DK, DV) decays by exp(g), g = −exp(A_log)·softplus(a + dt_bias),
  // and learns v with rate β = σ(b): S += k ⊗ β(v − Sᵀk); out = Sᵀq, RMSNormed per head (weight w, not
  // 1 + w) times SiLU(z), then out_proj (the o_proj slot: the attn.o_proj ablation rewrites it). The
  // state and the conv's last K − 1 inputs are kept per sequence between passes (engine KvCache).
  std::vector<uint8_t> linear_layers;  // (L); empty = none
  int64_t linear_num_key_heads = 0;    // NK
  int64_t linear_num_value_heads = 0;  // NV, a multiple of NK
  int64_t linear_key_head_dim = 0;     // DK
  int64_t linear_value_head_dim = 0;   // DV
  int64_t linear_conv_kernel = 0;      // K
  // Qwen3-Next's in_proj_qkvz / in_proj_ba, whose rows are grouped per key head ([q, k, v, z] and
  // [b, a] of each); Qwen3.5's in_proj_qkv / in_proj_z / in_proj_b / in_proj_a are separate. Both
  // load into the same slots (weights.cpp).
  bool linear_fused_projections = false;
  // The linear layers' mixer: the gated delta rule above, or Mamba-2 (Granite 4.0-H: models/granitemoehybrid
  // GraniteMoeHybridMambaLayer, which is Bamba's mixer), whose sizes live in the same fields: mamba_n_groups
  // is NK, mamba_d_state DK, mamba_n_heads NV, mamba_d_head DV, mamba_d_conv K (so the conv's x | B | C has
  // NV·DV + 2·NK·DK channels and a head's state is DK × DV). Per token, mamba.in_proj gives z (NV·DV), the
  // conv's channels x | B | C and dt (NV); the conv (plus conv1d.bias) and SiLU as above; per head h of
  // group g = h / (NV/NK): dt = clamp(softplus(dt + dt_bias), mamba_dt_min, mamba_dt_max),
  // S (DK, DV) ← exp(−exp(A_log)·dt)·S + dt·B_g ⊗ x_h, y_h = SᵀC_g + D_h·x_h; then RMSNorm(y·SiLU(z)) over
  // all NV·DV (the gate before the norm, plain w), then out_proj (the o_proj slot, as the delta rule's).
  // Or LFM2's short convolution (models/lfm2 Lfm2ShortConv: "conv" layers): conv.in_proj gives B, C, x (H each),
  // the causal depthwise conv (conv_L_cache taps, no bias, no activation) runs over B·x with its state, then
  // y = C·conv, then conv.out_proj (the o_proj slot). No recurrent state S: the sizes are NV 1, DV H, NK 0, DK 0.
  enum class LinearMixer { gated_delta_rule, mamba2, short_conv };
  LinearMixer linear_mixer = LinearMixer::gated_delta_rule;
  bool linear_conv_bias = false;  // conv1d.bias (Mamba-2's mamba_conv_bias)
  // Mamba-2's gated norm RMS-normalises each group of NV·DV/NK channels apart (Zamba2RMSNormGated's
  // group_size = intermediate_size / n_groups: Nemotron-H) instead of all NV·DV at once (Granite 4.0-H).
  bool mamba_norm_per_group = false;
  double mamba_dt_min = 0.0;                                      // time_step_limit[0]
  double mamba_dt_max = std::numeric_limits<double>::infinity();  // time_step_limit[1]
  // The full-attention layers' q_proj also yields a per-head gate: (NH·2HD, H), each head's q rows
  // then its gate rows; the attention output is multiplied by σ(gate) before o_proj (Qwen3NextAttention).
  bool attn_output_gate = false;
  // Attention sinks (gpt-oss: self_attn.sinks): each head's learned logit joins the softmax over
  // the keys as one more column whose value row is zero, so a query's weights sum to less than 1.
  bool attn_sinks = false;

  // Nemotron-H (models/nemotron_h NemotronHBlock): each layer is ONE block, x += block(RMSNorm(x)) with the
  // layer's single norm — a token mixer (softmax attention, or Mamba-2 where linear_layers says so) or an MLP
  // (hybrid_override_pattern 'M', '*', '-'). layer_blocks[l] is a LayerBlock; empty = every layer both, the
  // mixer then the MLP. The norm of a mixer block loads into attn_norm, that of an MLP block into mlp_norm.
  enum class LayerBlock : uint8_t { both = 0, mixer = 1, mlp = 2 };
  std::vector<uint8_t> layer_blocks;  // (L) or empty
  // Nemotron-H's names: "<weight_prefix>embeddings.weight", "<weight_prefix>norm_f.weight", and per layer
  // norm.weight and mixer.* (mixer.q_proj ... o_proj, mixer.in_proj ... out_proj, mixer.up_proj / down_proj).
  bool nemotron_h_names = false;

  // Gemma: every RMSNorm scales by (1 + w) instead of w; "sandwich" norms also normalise the
  // attention and MLP outputs before they are added to the residual (post_attention_layernorm,
  // post_feedforward_layernorm; pre_feedforward_layernorm is then the MLP's input norm).
  bool norm_plus_one = false;
  bool sandwich_norms = false;
  // OLMo 2: the sandwich without its bread — no input_layernorm and no MLP input norm; attention and
  // MLP read the residual itself and only their outputs are normed (Olmo2DecoderLayer).
  bool input_norms = true;
  // Cohere: the residual-stream norms (input_layernorm, model.norm) are LayerNorms without a bias,
  // (x − mean) / sqrt(var + eps) · w (CohereLayerNorm; rms_norm_eps holds layer_norm_eps); and the
  // block is parallel: attention and MLP both read input_layernorm's output, x += attn + mlp
  // (CohereDecoderLayer), so there is no MLP input norm.
  bool norm_centered = false;
  bool parallel_block = false;
  // With norm_centered, the residual-stream norms are torch's nn.LayerNorm with a bias as well
  // (Phi-3.5-MoE: input_layernorm, post_attention_layernorm and model.norm carry .weight and .bias).
  bool norm_bias = false;
  // The names of the sandwich norms: Gemma's above, or GLM-4's post_self_attn_layernorm (attention
  // output), post_attention_layernorm (the MLP's input) and post_mlp_layernorm (MLP output).
  enum class SandwichNames { gemma, glm4 };
  SandwichNames sandwich_names = SandwichNames::gemma;
  double embed_scale = 1.0;     // embeddings are multiplied by this (Gemma: sqrt(H) in the checkpoint dtype;
                                // Granite: embedding_multiplier)
  double attn_scale = 0.0;      // attention score scale; 0 = head_dim^-0.5 (Gemma: query_pre_attn_scalar^-0.5;
                                // Granite: attention_multiplier)
  double residual_multiplier = 1.0;  // each branch output is multiplied by this before the residual add (Granite)
  double logits_scaling = 1.0;       // the logits are divided by this (Granite; Cohere: 1 / logit_scale)
  bool lm_head_bias = false;         // lm_head carries a bias (Phi-3.5-MoE's lm_head_bias), added to the logits
  double attn_softcap = 0.0;    // scores -> cap * tanh(scores / cap) before the mask; 0 = off (Gemma 2)
  double final_softcap = 0.0;   // the same on the logits (Gemma 2)
  Activation activation = Activation::silu;
  double swiglu_alpha = 1.702;  // Activation::swiglu_clamped (gpt-oss)
  double swiglu_limit = 7.0;

  // Tensor names: the decoder's tensors are "<weight_prefix>layers.{l}...", "<weight_prefix>norm.weight"
  // and "<weight_prefix>embed_tokens.weight"; Gemma 3's multimodal checkpoints keep the text model
  // under "language_model.model." (or "model.language_model."), the vision tower beside it.
  std::string weight_prefix = "model.";
  std::string lm_head_name = "lm_head.weight";
  // The embedding after weight_prefix: embed_tokens.weight; Nemotron-H's embeddings.weight (embedding.weight in the
  // files of some releases and of transformers 5's save of a new model: load_model_spec takes the files' spelling).
  std::string embed_name = "embed_tokens.weight";
  // LFM2's names (models/lfm2): operator_norm / ffn_norm for input_layernorm / post_attention_layernorm,
  // embedding_norm for the final norm, self_attn.out_proj for o_proj and the dense MLP as feed_forward.w1
  // (gate) / w3 (up) / w2 (down); its q/k norms are QkNormNames::q_layernorm.
  bool lfm2_names = false;
  // Apertus' names: attention_layernorm / feedforward_layernorm for input_layernorm / post_attention_layernorm.
  bool apertus_names = false;
  // A multimodal checkpoint (*ForConditionalGeneration): tensors outside the language model (the
  // vision tower, the projector) are not run, and export copies them unchanged.
  bool multimodal = false;
  // Phi-3 stores q, k, v as row blocks of one self_attn.qkv_proj.weight and gate, up of one
  // mlp.gate_up_proj.weight; they load into the same unit slots as separate tensors would.
  bool fused_qkv = false;
  bool fused_gate_up = false;

  // Mixture of experts (Mixtral, Qwen2-MoE, Qwen3-MoE, GLM-4.5); num_experts 0 = a dense model. In
  // an MoE layer the MLP is a router over E experts, the top k of them per token (weights
  // renormalised over the k when norm_topk_prob), each expert a SwiGLU MLP of width
  // moe_intermediate_size, plus (Qwen2-MoE, GLM-4.5) a shared expert of width
  // shared_expert_intermediate_size: Qwen2-MoE's mlp.shared_expert scaled by
  // sigmoid(shared_expert_gate · h), GLM-4.5's mlp.shared_experts added as it is.
  int64_t num_experts = 0;                      // E
  int64_t experts_per_token = 0;                // k
  int64_t moe_intermediate_size = 0;            // Fm
  int64_t shared_expert_intermediate_size = 0;  // Fs; 0 = no shared expert
  // Nemotron 3 Super's LatentMoE (NemotronHMoE with moe_latent_size): the routed experts run in a latent of this
  // width between mixer.fc1_latent_proj (latent, H) and mixer.fc2_latent_proj (H, latent), the router and the shared
  // expert on the H-wide input; 0 = none. fc2_latent_proj then writes the routed experts' sum to the residual
  // stream, so it (not the experts' latent down projections) is what the mlp.down_proj ablation rewrites.
  int64_t moe_latent_size = 0;
  bool norm_topk_prob = false;
  bool shared_expert_gated = true;  // Qwen2-MoE's gate; false: GLM-4.5's ungated shared_experts
  // The router (backend/router.h): softmax scores (Mixtral, Qwen-MoE, DeepSeek-V2, ERNIE 4.5), or
  // sigmoid scores (GLM-4.5: Glm4MoeTopkRouter, DeepSeek-V3, MiniMax-M2), ranked — with router_bias —
  // by score + the per-expert e_score_correction_bias (sigmoid: always; softmax: ERNIE 4.5's
  // moe_statics), chosen within the best topk_groups of expert_groups groups, weights multiplied by
  // routed_scaling_factor. A group scores the sum of its two best experts, or (router_group_max:
  // DeepSeek-V2's group_limited_greedy) its best one.
  bool router_sigmoid = false;
  bool router_bias = false;
  int64_t expert_groups = 1;           // n_group
  int64_t topk_groups = 1;             // topk_group
  bool router_group_max = false;
  double routed_scaling_factor = 1.0;
  // A sigmoid router's renormalisation divides by the kept weights' sum plus this (transformers: 1e-20; LFM2-MoE's
  // Lfm2MoeSparseMoeBlock: 1e-6).
  double router_norm_eps = 1e-20;
  // Phi-3.5-MoE's sparsemixer (models/phimoe sparsemixer, eval mode): top-2 only, each pick's weight a
  // softmax over the experts within a relative 2·router_jitter_eps of it (router.h).
  bool router_sparsemixer = false;
  double router_jitter_eps = 0.0;
  // Llama 4 (Llama4TextMoe): the router's weight scales each chosen expert's input (hidden · score) and the
  // expert outputs are summed as they are, instead of weighting the outputs.
  bool moe_scale_input = false;
  // Gemma 4's MoE layers (enable_moe_block; Gemma4TextDecoderLayer.forward): the dense MLP (width intermediate_size)
  // runs beside the experts as an always-on branch, its output normed by post_feedforward_layernorm_1; the experts read
  // the residual through their own pre_feedforward_layernorm_2 and their weighted sum is normed by
  // post_feedforward_layernorm_2; the two are added and take post_feedforward_layernorm. The router (Gemma4TextRouter)
  // reads rms(residual) (no weight) · router.scale · hidden_size^-0.5, takes softmax top-k renormalised, and
  // multiplies each chosen weight by router.per_expert_scale[e]. Names: ExpertNames::gemma4.
  bool moe_beside_dense = false;
  // Multi-token-prediction layers stored after the last decoder layer (GLM-4.5's
  // num_nextn_predict_layers: model.layers.{L}...): not run, as in transformers; their tensors are
  // ignored by the weight check and copied unchanged by export.
  int64_t mtp_layers = 0;
  std::vector<uint8_t> moe_layers;              // (L) when num_experts > 0: which layers are MoE
  // mlp.experts.{e}.*_proj, block_sparse_moe.experts.{e}.w1/w2/w3, or Granite-MoE's stacked
  // block_sparse_moe.input_linear (E, 2*Fm, H: gate rows, then up rows) and output_linear (E, H, Fm)
  // with the router block_sparse_moe.router.layer (always fused_experts) and the ungated shared
  // expert shared_mlp.input_linear (2*Fs, H) / shared_mlp.output_linear (H, Fs).
  // gpt-oss: the router mlp.router (with a bias added to its logits), experts stacked transposed
  // for x @ W with gate and up interleaved: mlp.experts.gate_up_proj (E, H, 2*Fm), gate the even
  // columns, up the odd ones; mlp.experts.down_proj (E, Fm, H); each with a bias
  // (gate_up_proj_bias (E, 2*Fm) interleaved alike, down_proj_bias (E, H)); always fused_experts.
  // Llama 4: every MLP tensor under feed_forward. — the router feed_forward.router, the experts stacked and
  // transposed as Qwen3-VL-MoE's (feed_forward.experts.gate_up_proj (E, H, 2*Fm), down_proj (E, Fm, H);
  // always fused_experts and transposed_experts), the ungated feed_forward.shared_expert, and the dense
  // layers' feed_forward.gate_proj / up_proj / down_proj.
  // LFM2-MoE: the router feed_forward.gate (its correction bias feed_forward.expert_bias), the experts
  // feed_forward.experts.{e}.w1 (gate) / w3 (up) / w2 (down), as the released checkpoints name them.
  // Nemotron-H's MoE blocks: mixer.gate (its e_score_correction_bias inside), ungated experts
  // mixer.experts.{e}.up_proj / down_proj (stacked in transformers 5's layout: mixer.experts.up_proj (E, Fm, H),
  // down_proj (E, H, Fm)) and mixer.shared_experts.up_proj / down_proj.
  // Gemma 4: router.proj / router.scale / router.per_expert_scale, experts.gate_up_proj (E, 2*Fm, H) and
  // experts.down_proj (E, H, Fm), right under the layer (no mlp. prefix); always fused_experts.
  enum class ExpertNames { qwen, mixtral, granite, gpt_oss, llama4, lfm2, nemotron_h, hunyuan, gemma4 };
  ExpertNames expert_names = ExpertNames::qwen;
  // The experts of a layer stacked in two tensors, as transformers 5 holds them and saves them with
  // save_original_format=False (and as checkpoints re-saved that way ship): mlp.experts.gate_up_proj
  // (E, 2*Fm, H), each expert's gate rows then its up rows, and mlp.experts.down_proj (E, H, Fm);
  // Mixtral's router is then mlp.gate. Taken from the files' tensor names by load_model_spec.
  bool fused_experts = false;
  // With fused_experts, Qwen3-VL-MoE as released: the stacks transposed for x @ W —
  // mlp.experts.gate_up_proj (E, H, 2*Fm), each expert's gate columns then its up columns, and
  // mlp.experts.down_proj (E, Fm, H) (transformers 5 reads them with Transpose(1, 2)). Taken from
  // gate_up_proj's shape by load_model_spec.
  bool transposed_experts = false;
  // The experts' projections carry biases (gpt-oss); the down projection's is added after the
  // ablation epilogue, as o_proj's.
  bool expert_bias = false;
  bool router_logit_bias = false;  // the router's logits carry a bias (gpt-oss's mlp.router.bias)
  // The experts' matrices are MXFP4 (gpt-oss as released: mlp.experts.gate_up_proj_blocks /
  // _scales, down_proj_blocks / _scales), dequantized as read. Taken from the files' tensor names.
  bool mxfp4_experts = false;

  // An FP8 block-scaled checkpoint (quantization_config: quant_method "fp8", fmt e4m3,
  // weight_block_size [rows, cols]; DeepSeek-V3/R1 and Kimi-K2 as released): a matrix stored as F8_E4M3
  // comes with "<name>_scale_inv" (F32, one scale per block of its last two dims, blocks at the edges
  // cut short) and is read as fp8 value × scale, rounded to bf16 as transformers' dequantized model
  // holds it. 0 = no FP8 tensors expected.
  int64_t fp8_block_rows = 0;
  int64_t fp8_block_cols = 0;

  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;  // config's eos_token_id, an int or a list
  std::optional<int64_t> pad_token_id;
  std::optional<DType> torch_dtype;    // "torch_dtype" (or newer "dtype") of the checkpoint

  bool is_moe_layer(int64_t layer) const;
  // The widest dense MLP (intermediate_size, or twice that in Gemma 4's double-wide layers) when some layer has one,
  // else 0 (every layer MoE: Mixtral, Qwen3-MoE; every MLP block MoE: Nemotron 3 Nano).
  int64_t dense_mlp_width() const;
  // The routed experts' input and output width: the latent of a LatentMoE, else H.
  int64_t expert_width() const { return moe_latent_size > 0 ? moe_latent_size : hidden_size; }
  // The attention's sizes in layer l: they differ between layers only in Gemma 4 (full_head_dim, full_kv_heads).
  bool is_full_attention_layer(int64_t layer) const;  // not a sliding layer of a model with sliding layers
  int64_t head_dim_of(int64_t layer) const {
    return full_head_dim > 0 && is_full_attention_layer(layer) ? full_head_dim : head_dim;
  }
  int64_t kv_heads_of(int64_t layer) const {
    return full_kv_heads > 0 && is_full_attention_layer(layer) ? full_kv_heads : num_kv_heads;
  }
  int64_t q_dim_of(int64_t layer) const { return num_heads * head_dim_of(layer); }
  int64_t kv_dim_of(int64_t layer) const { return kv_heads_of(layer) * head_dim_of(layer); }
  int64_t v_head_of(int64_t layer) const { return v_head_dim > 0 ? v_head_dim : head_dim_of(layer); }
  int64_t v_dim_of(int64_t layer) const { return kv_heads_of(layer) * v_head_of(layer); }
  int64_t o_dim_of(int64_t layer) const { return num_heads * v_head_of(layer); }
  int64_t rotary_dim_of(int64_t layer) const { return partial_rotary_dim > 0 ? partial_rotary_dim : head_dim_of(layer); }
  // Layer l's values are its keys before k_norm and RoPE (k_eq_v on a full-attention layer): no v_proj.
  bool values_are_keys(int64_t layer) const { return k_eq_v && is_full_attention_layer(layer); }
  // Gemma 4's KV sharing: does layer l reuse another layer's keys and values, and whose (l itself when unshared; the
  // last unshared layer of l's type otherwise, -1 when there is none)?
  bool is_kv_shared_layer(int64_t layer) const {
    return kv_shared_layers > 0 && layer >= num_layers - kv_shared_layers && layer < num_layers;
  }
  int64_t kv_source(int64_t layer) const;
  // The dense MLP's width in layer l: intermediate_size, twice that in Gemma 4's double-wide KV-shared layers.
  int64_t mlp_width(int64_t layer) const {
    return double_wide_shared_mlp && is_kv_shared_layer(layer) ? 2 * intermediate_size : intermediate_size;
  }
  // The largest of each over the layers (what buffers are sized by); every layer's own size where all are equal.
  int64_t max_head_dim() const { return std::max(head_dim, full_head_dim); }
  int64_t q_dim() const { return num_heads * max_head_dim(); }  // NH * HD
  int64_t kv_dim() const;                                       // NKV * HD (a key row)
  int64_t v_head() const { return v_head_dim > 0 ? v_head_dim : max_head_dim(); }  // HDv
  int64_t v_dim() const;                                     // NKV * HDv (a value row)
  int64_t o_dim() const { return num_heads * v_head(); }     // NH * HDv: the attention output, o_proj's input
  // o_proj's input in layer l: o_dim_of(l), or NV * DV for a linear-attention layer's out_proj.
  int64_t o_in(int64_t layer) const { return is_linear_layer(layer) ? linear_value_dim() : o_dim_of(layer); }
  int64_t group_size() const { return num_heads / num_kv_heads; }
  int64_t rotary_dim() const { return partial_rotary_dim > 0 ? partial_rotary_dim : head_dim; }  // R
  // Does any layer's geometry differ from head_dim / num_kv_heads (Gemma 4)?
  bool per_layer_geometry() const { return full_head_dim > 0 || full_kv_heads > 0; }
  // Hybrid linear attention: is layer l a gated delta rule (or Mamba-2) layer; the widths of its projections.
  bool is_linear_layer(int64_t layer) const;
  int64_t linear_key_dim() const { return linear_num_key_heads * linear_key_head_dim; }        // NK*DK
  int64_t linear_value_dim() const { return linear_num_value_heads * linear_value_head_dim; }  // NV*DV
  int64_t linear_conv_dim() const { return 2 * linear_key_dim() + linear_value_dim(); }       // q, k, v (x, B, C)
  // The width of a linear layer's input projection (the engines' conv buffer): the conv's channels, or LFM2's
  // B | C | x (3·H).
  int64_t linear_in_dim() const {
    return linear_mixer == LinearMixer::short_conv ? 3 * linear_value_dim() : linear_conv_dim();
  }
  // Mamba-2's in_proj rows: z, the conv's channels, dt.
  int64_t mamba_in_proj_rows() const { return linear_value_dim() + linear_conv_dim() + linear_num_value_heads; }
  // Does layer l run a token mixer (attention or a linear layer) / an MLP (LayerBlock; both but on Nemotron-H)?
  bool has_mixer(int64_t layer) const { return layer_block(layer) != LayerBlock::mlp; }
  bool has_mlp(int64_t layer) const { return layer_block(layer) != LayerBlock::mixer; }
  LayerBlock layer_block(int64_t layer) const;
  // Does layer l run softmax attention (and so hold a KV cache)?
  bool is_attention_layer(int64_t layer) const { return has_mixer(layer) && !is_linear_layer(layer); }
  // Do layers a and b hold the same tensors (both MoE or both dense, both linear attention or not, the same blocks,
  // the same attention geometry)?
  bool same_layer_kind(int64_t a, int64_t b) const {
    return is_moe_layer(a) == is_moe_layer(b) && is_linear_layer(a) == is_linear_layer(b) &&
           layer_block(a) == layer_block(b) &&
           (!per_layer_geometry() || is_full_attention_layer(a) == is_full_attention_layer(b)) &&
           is_kv_shared_layer(a) == is_kv_shared_layer(b) && ple_dim == 0;  // (PLE: each layer its own slices)
  }
  bool mamba2() const { return linear_mixer == LinearMixer::mamba2; }  // the linear layers are Mamba-2 mixers
  // Layers with softmax attention (and a KV cache): is_attention_layer.
  int64_t attention_layers() const;
  // Values one token's key and value rows hold over all attention layers (each layer its own widths; KV-shared
  // layers hold none).
  int64_t kv_cache_row_floats() const;
  // Floats of one sequence's recurrent state over all linear layers: conv inputs and S.
  int64_t linear_state_floats() const;
  bool uses_sliding_window(int64_t layer) const;
  // The RoPE base of a layer (rope_local_theta on Gemma 3's sliding layers).
  bool uses_local_rope(int64_t layer) const;
  // Does layer l rotate q and k at all (false on SmolLM3's NoPE layers)?
  bool uses_rope(int64_t layer) const;
  // Are layer l's queries scaled by position (query_log_scale_beta: every layer, or the NoPE ones)?
  bool query_scaled_in(int64_t layer) const {
    return query_log_scale_beta != 0.0 && (!query_log_scale_nope_only || !uses_rope(layer));
  }
  // Score scale of the attention: attn_scale, or head_dim^-0.5.
  double attention_scale() const;
  // Positions a sequence may use: max_position_embeddings (0 = no limit known), or Llama 4's
  // attention_chunk_size where smaller.
  int64_t context_length() const;
  // LongRoPE: a sequence of more tokens than this runs with the long factors, every token of it
  // (original_max_position_embeddings); 0 for every other rope. See engine::rope_tables.
  int64_t long_rope_after() const;
};

// "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Gemma2ForCausalLM, ..."
const std::vector<std::string>& supported_architectures();

// `path`: a model folder (reads <path>/config.json) or a config.json file. In a folder, the
// weight-name prefix of a multimodal checkpoint and the layout of MoE experts (per expert or
// fused) are taken from its tensor names (both spellings transformers writes are accepted).
ModelSpec load_model_spec(const std::string& path);
// From a parsed config; errors name config.origin() and the key.
ModelSpec parse_model_spec(const io::JsonValue& config);
// Sizes positive and consistent (heads, kv heads, head_dim, rope, token ids); errors name
// spec.source and the config key. parse_model_spec already calls it.
void validate_model_spec(const ModelSpec& spec);

// Synthetic models (`--model synthetic:<preset>`): the architectures of real checkpoints
// (llama-3.1-8b, qwen2.5-7b, llama-3.3-70b, ...) without their files. `name` may carry the
// "synthetic:" prefix; an unknown name is an error listing the presets.
const std::vector<std::string>& synthetic_presets();
ModelSpec synthetic_model_spec(const std::string& name);

// Every field of `spec` as one line of text (not for people): equal fingerprints, equal specs. The
// ranks of a job compare theirs before they rely on the shapes (app Session).
std::string fingerprint(const ModelSpec& spec);

// "LlamaForCausalLM: L=32 H=4096 F=14336 NH=32 NKV=8 HD=128 V=128256, rope llama3 x8, untied"
std::string describe(const ModelSpec& spec);

}  // namespace abl::model
