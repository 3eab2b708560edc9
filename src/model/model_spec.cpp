// config.json -> ModelSpec. One table row per supported family holds what differs between them
// (biases, q/k norm, defaults of absent keys, sliding-window keys); the parser is shared.
// Options we cannot run faithfully (o_proj/MLP biases, other activations, other RoPE scalings)
// are refused here, naming the key, rather than ignored later.
#include "abl/model/model_spec.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/io/json_file.h"
#include "abl/io/safetensors.h"
#include "rope_config.h"
#include "spec_checks.h"

namespace abl::model {

namespace fs = std::filesystem;

namespace {

struct Keys;

struct Family {
  const char* architecture;
  bool qkv_bias;                 // fixed by the family (Qwen2's Linear layers have bias=True)
  bool qk_norm;
  bool has_attention_bias_key;   // Llama/Qwen3: attention_bias adds q/k/v/o biases
  int64_t default_head_dim;      // for an absent head_dim; 0 = hidden_size / num_attention_heads
  int64_t default_kv_heads;      // for an absent num_key_value_heads; 0 = num_attention_heads
  int64_t default_max_positions;
  // none; always: every layer when sliding_window is set; switched: use_sliding_window gates it,
  // from max_window_layers on; per_layer: the family's own keys say which layers (Gemma).
  enum class Window { none, always, switched, per_layer } window;
  int64_t default_sliding_window;  // used when the key is absent (not when null)
  // The config class's defaults of absent keys, as a JSON object (Gemma: every key).
  const char* defaults = nullptr;
  // Keys only this family has (Gemma's norms and caps, Phi-3's fused tensors and LongRoPE).
  void (*family_keys)(const Keys&, ModelSpec&) = nullptr;
  // Multimodal checkpoints: the text model's keys sit under this key (its missing keys take
  // `defaults`); everything else (architectures, dtype, token ids) may sit at the top level.
  const char* text_config = nullptr;
  // The key naming the MLP's activation (Gemma's configs also carry an unused hidden_act).
  const char* activation_key = "hidden_act";
  // A generic multimodal wrapper (LLaVA, InternVL): its language model is the family of text_config's model_type
  // (kWrappedTextModels), this one when text_config names none; everything else is that family's.
  const char* wrapped_text_model = nullptr;
};

void gemma_keys(const Keys& k, ModelSpec& s);
void gemma2_keys(const Keys& k, ModelSpec& s);
void gemma3_keys(const Keys& k, ModelSpec& s);
void gemma4_keys(const Keys& k, ModelSpec& s);
void phi3_keys(const Keys& k, ModelSpec& s);
void mistral3_keys(const Keys& k, ModelSpec& s);
void glm_keys(const Keys& k, ModelSpec& s);
void smollm3_keys(const Keys& k, ModelSpec& s);
void mixtral_keys(const Keys& k, ModelSpec& s);
void phimoe_keys(const Keys& k, ModelSpec& s);
void llama4_keys(const Keys& k, ModelSpec& s);
void qwen_moe_keys(const Keys& k, ModelSpec& s);
void qwen3_vl_moe_keys(const Keys& k, ModelSpec& s);
void glm4_moe_keys(const Keys& k, ModelSpec& s);
void granite_keys(const Keys& k, ModelSpec& s);
void granite_moe_keys(const Keys& k, ModelSpec& s);
void granite_hybrid_keys(const Keys& k, ModelSpec& s);
void mamba2_keys(const Keys& k, ModelSpec& s);
void lfm2_keys(const Keys& k, ModelSpec& s);
void lfm2_moe_keys(const Keys& k, ModelSpec& s);
void nemotron_h_keys(const Keys& k, ModelSpec& s);
void nemotron_h_moe_keys(const Keys& k, ModelSpec& s);
void hunyuan_dense_keys(const Keys& k, ModelSpec& s);
void apertus_keys(const Keys& k, ModelSpec& s);
void gpt_oss_keys(const Keys& k, ModelSpec& s);
void cohere_keys(const Keys& k, ModelSpec& s);
void olmo2_keys(const Keys& k, ModelSpec& s);
void olmo3_keys(const Keys& k, ModelSpec& s);
void olmoe_keys(const Keys& k, ModelSpec& s);
void minimax_m2_keys(const Keys& k, ModelSpec& s);
void exaone4_keys(const Keys& k, ModelSpec& s);
void ernie4_5_keys(const Keys& k, ModelSpec& s);
void ernie4_5_moe_keys(const Keys& k, ModelSpec& s);
void seed_oss_keys(const Keys& k, ModelSpec& s);
void deepseek_v3_keys(const Keys& k, ModelSpec& s);
void glm4_moe_lite_keys(const Keys& k, ModelSpec& s);
void deepseek_v2_keys(const Keys& k, ModelSpec& s);
void qwen3_next_keys(const Keys& k, ModelSpec& s);
void dots1_keys(const Keys& k, ModelSpec& s);
void hunyuan_moe_keys(const Keys& k, ModelSpec& s);

// GraniteMoeHybridConfig, for absent keys (without layer_types every layer is Mamba-2).
constexpr const char* kGraniteHybridDefaults = R"({"vocab_size": 32000, "hidden_size": 4096,
  "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu",
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "attention_bias": false,
  "tie_word_embeddings": false, "bos_token_id": 1, "eos_token_id": 2, "num_local_experts": 8,
  "num_experts_per_tok": 2, "shared_intermediate_size": 1024, "mamba_n_heads": 128, "mamba_n_groups": 1,
  "mamba_d_state": 256, "mamba_d_head": "auto", "mamba_d_conv": 4, "mamba_expand": 2, "mamba_conv_bias": true,
  "mamba_proj_bias": false})";
// NemotronHConfig, for absent keys (its num_hidden_layers is the length of the layer pattern, which
// nemotron_h_keys reads; 4 is that of the default pattern; head_dim: nemotron_h_keys).
constexpr const char* kNemotronHDefaults = R"({"vocab_size": 131072, "hidden_size": 4096,
  "intermediate_size": 21504, "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8,
  "max_position_embeddings": 4096, "tie_word_embeddings": false, "pad_token_id": 0, "bos_token_id": 1,
  "eos_token_id": 2})";
// Lfm2Config, for absent keys (no hidden_act: the MLP is SwiGLU; rope_theta 1e6 unless "theta" says).
constexpr const char* kLfm2Defaults = R"({"vocab_size": 65536, "hidden_size": 2560, "intermediate_size": 12288,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 128000,
  "norm_eps": 1e-05, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": true,
  "rope_theta": 1000000.0, "conv_bias": false, "conv_L_cache": 3, "block_multiple_of": 256,
  "block_ffn_dim_multiplier": 1.0, "block_auto_adjust_ff_dim": true})";
// Lfm2MoeConfig, for absent keys (default_theta 1e6).
constexpr const char* kLfm2MoeDefaults = R"({"vocab_size": 65536, "hidden_size": 2048, "intermediate_size": 7168,
  "moe_intermediate_size": 1792, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
  "max_position_embeddings": 128000, "norm_eps": 1e-05, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
  "tie_word_embeddings": true, "rope_theta": 1000000.0, "conv_bias": false, "conv_L_cache": 3,
  "num_dense_layers": 2, "num_experts_per_tok": 4, "num_experts": 32, "use_expert_bias": true,
  "routed_scaling_factor": 1.0, "norm_topk_prob": true})";
// HunYuanDenseV1Config, for absent keys.
constexpr const char* kHunyuanDenseDefaults = R"({"vocab_size": 290943, "hidden_size": 4096,
  "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu",
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "attention_bias": false,
  "tie_word_embeddings": false, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2})";
// HunYuanMoEV1Config, for absent keys (no head_dim: hunyuan_moe_keys).
constexpr const char* kHunyuanMoeDefaults = R"({"vocab_size": 290943, "hidden_size": 4096,
  "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu",
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "attention_bias": false,
  "tie_word_embeddings": false, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "num_experts": 1,
  "moe_topk": 1})";
// LlamaConfig, for the keys a wrapped llama text_config leaves out (LLaVA-1.5's lists only a few).
constexpr const char* kLlamaDefaults = R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
  "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu", "max_position_embeddings": 2048,
  "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "rope_theta": 10000.0, "attention_bias": false,
  "mlp_bias": false, "bos_token_id": 1, "eos_token_id": 2})";
// ArceeConfig (AFM-4.5B), for absent keys: Llama's with the ungated relu² MLP.
constexpr const char* kArceeDefaults = R"({"vocab_size": 32000, "hidden_size": 2560, "intermediate_size": 18432,
  "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "relu2", "max_position_embeddings": 4096,
  "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "attention_bias": false, "mlp_bias": false,
  "tie_word_embeddings": false, "bos_token_id": 128000, "eos_token_id": 128001})";
// ApertusConfig, for absent keys (its default RoPE: llama3 with base 1.2e7, x8 from 8192).
constexpr const char* kApertusDefaults = R"({"vocab_size": 131072, "hidden_size": 4096,
  "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "xielu",
  "max_position_embeddings": 65536, "rms_norm_eps": 1e-05, "pad_token_id": 3, "bos_token_id": 1, "eos_token_id": 2,
  "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 12000000.0, "rope_parameters": {"rope_type": "llama3",
  "rope_theta": 12000000.0, "factor": 8.0, "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
  "high_freq_factor": 4.0}})";
// Dots1Config (dots.llm1), for absent keys (n_routed_experts, num_experts_per_tok and n_shared_experts
// have no usable default: None in the config class, so a config must give them).
constexpr const char* kDots1Defaults = R"({"vocab_size": 152064, "hidden_size": 4608, "intermediate_size": 10944,
  "moe_intermediate_size": 1408, "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 32,
  "n_group": 1, "topk_group": 1, "first_k_dense_replace": 0, "norm_topk_prob": false, "hidden_act": "silu",
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "rope_theta": 10000.0,
  "attention_bias": false, "routed_scaling_factor": 1.0, "sliding_window": 4096, "max_window_layers": 62})";
// PhimoeConfig (transformers 4.x), for absent keys.
constexpr const char* kPhimoeDefaults = R"({"vocab_size": 32064, "hidden_size": 4096, "intermediate_size": 6400,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu",
  "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "bos_token_id": 1, "eos_token_id": 2,
  "tie_word_embeddings": false, "rope_theta": 1000000.0, "sliding_window": null, "num_experts_per_tok": 2,
  "num_local_experts": 16, "router_jitter_noise": 0.01, "attention_bias": false, "lm_head_bias": false})";

// Llama4TextConfig, for absent keys.
constexpr const char* kLlama4Defaults = R"({"vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
  "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8,
  "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
  "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": false, "num_experts_per_tok": 1,
  "num_local_experts": 16, "interleave_moe_layer_step": 1, "use_qk_norm": true, "no_rope_layer_interval": 4,
  "attention_chunk_size": 8192, "attn_temperature_tuning": true, "floor_scale": 8192, "attn_scale": 0.1,
  "attention_bias": false, "rope_theta": 500000.0})";

// Gemma2Config and Gemma3TextConfig (transformers), for absent keys.
constexpr const char* kGemma2Defaults = R"({"vocab_size": 256000, "hidden_size": 2304,
  "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8,
  "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
  "max_position_embeddings": 8192, "rms_norm_eps": 1e-06, "tie_word_embeddings": true,
  "rope_theta": 10000.0, "query_pre_attn_scalar": 256, "sliding_window": 4096,
  "final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0, "pad_token_id": 0,
  "eos_token_id": 1, "bos_token_id": 2})";
// GemmaConfig (transformers 4.57); hidden_activation absent or null means gelu_pytorch_tanh (gemma_keys).
constexpr const char* kGemmaDefaults = R"({"vocab_size": 256000, "hidden_size": 3072,
  "intermediate_size": 24576, "num_hidden_layers": 28, "num_attention_heads": 16,
  "num_key_value_heads": 16, "head_dim": 256, "hidden_activation": null, "max_position_embeddings": 8192,
  "rms_norm_eps": 1e-06, "tie_word_embeddings": true, "rope_theta": 10000.0, "attention_bias": false,
  "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2})";
// MistralConfig's defaults, for the keys a Mistral3ForConditionalGeneration text_config leaves out.
constexpr const char* kMistralDefaults = R"({"vocab_size": 32000, "hidden_size": 4096,
  "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
  "num_key_value_heads": 8, "head_dim": null, "hidden_act": "silu", "max_position_embeddings": 131072,
  "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "rope_theta": 10000.0, "sliding_window": 4096})";
// Ministral3Config (transformers 5): a Mistral 3 text_config of model_type "ministral3" and
// Ministral3ForCausalLM take these for absent keys, YaRN with the query scaling included.
constexpr const char* kMinistral3Defaults = R"({"vocab_size": 131072, "hidden_size": 4096,
  "intermediate_size": 14336, "num_hidden_layers": 34, "num_attention_heads": 32, "num_key_value_heads": 8,
  "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 262144, "rms_norm_eps": 1e-05,
  "pad_token_id": 11, "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": false, "sliding_window": null,
  "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
  "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0,
  "mscale": 1.0, "llama_4_scaling_beta": 0.1}})";
// Phi3Config always has original_max_position_embeddings (LongRoPE reads it).
constexpr const char* kPhi3Defaults = R"({"original_max_position_embeddings": 4096})";
// Qwen2_5_VLTextConfig (Qwen2VLTextConfig alike) and Qwen3VLTextConfig, for the keys their text
// configs leave out (the released Qwen2-VL/Qwen2.5-VL configs are flat: every key at the top level).
constexpr const char* kQwen2VlDefaults = R"({"vocab_size": 152064, "hidden_size": 8192,
  "intermediate_size": 29568, "num_hidden_layers": 80, "num_attention_heads": 64,
  "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 32768, "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false, "rope_theta": 1000000.0, "use_sliding_window": false, "sliding_window": 4096,
  "max_window_layers": 80})";
constexpr const char* kQwen3VlDefaults = R"({"vocab_size": 151936, "hidden_size": 4096,
  "intermediate_size": 22016, "num_hidden_layers": 32, "num_attention_heads": 32,
  "num_key_value_heads": 32, "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 128000,
  "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "rope_theta": 5000000.0, "attention_bias": false})";
// Qwen3VLMoeTextConfig as transformers 4.57 (which saved the released checkpoints) has it.
constexpr const char* kQwen3VlMoeDefaults = R"({"vocab_size": 151936, "hidden_size": 2048,
  "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 16,
  "num_key_value_heads": 16, "head_dim": null, "hidden_act": "silu", "max_position_embeddings": 128000,
  "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "rope_theta": 5000000.0, "attention_bias": false,
  "decoder_sparse_step": 1, "moe_intermediate_size": 1408, "num_experts_per_tok": 4, "num_experts": 60})";
// SmolLM3Config.
constexpr const char* kSmolLM3Defaults = R"({"vocab_size": 128256, "hidden_size": 2048,
  "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
  "hidden_act": "silu", "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 2000000.0,
  "use_sliding_window": false, "sliding_window": null, "no_rope_layer_interval": 4, "tie_word_embeddings": true,
  "pad_token_id": 128004, "bos_token_id": 128000, "eos_token_id": 128001})";
// GlmConfig and Glm4Config (the same defaults; partial_rotary_factor is set by their __init__).
constexpr const char* kGlmDefaults = R"({"vocab_size": 151552, "hidden_size": 4096,
  "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32,
  "num_key_value_heads": 2, "head_dim": 128, "partial_rotary_factor": 0.5, "hidden_act": "silu",
  "max_position_embeddings": 131072, "rms_norm_eps": 1.5625e-07, "tie_word_embeddings": false,
  "rope_theta": 10000.0, "attention_bias": true, "pad_token_id": 151329,
  "eos_token_id": [151329, 151336, 151338]})";
// Glm4MoeConfig (partial_rotary_factor from its kwargs.setdefault; head_dim from hidden_size /
// num_attention_heads when absent, as Glm4MoeAttention's getattr).
// Glm4vTextConfig (GLM-4.1V): rms_norm_eps 1e-5; no head_dim (glm_keys) and no partial_rotary_factor.
constexpr const char* kGlm4vDefaults = R"({"vocab_size": 151552, "hidden_size": 4096,
  "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32,
  "num_key_value_heads": 2, "head_dim": null, "hidden_act": "silu",
  "max_position_embeddings": 32768, "rms_norm_eps": 1e-05, "tie_word_embeddings": false,
  "rope_theta": 10000.0})";
// Glm4vMoeTextConfig (GLM-4.5V): Glm4MoeConfig's with its own vocabulary, context and attention_bias.
constexpr const char* kGlm4vMoeDefaults = R"({"vocab_size": 151424, "hidden_size": 4096,
  "intermediate_size": 10944, "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8,
  "partial_rotary_factor": 0.5, "hidden_act": "silu", "max_position_embeddings": 65536, "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false, "rope_theta": 10000.0, "attention_bias": true, "moe_intermediate_size": 1408,
  "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "routed_scaling_factor": 1.0,
  "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1, "norm_topk_prob": true,
  "num_nextn_predict_layers": 0})";
constexpr const char* kGlm4MoeDefaults = R"({"vocab_size": 151552, "hidden_size": 4096,
  "intermediate_size": 10944, "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8,
  "partial_rotary_factor": 0.5, "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false, "rope_theta": 10000.0, "attention_bias": false, "moe_intermediate_size": 1408,
  "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "routed_scaling_factor": 1.0,
  "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1, "norm_topk_prob": true, "use_qk_norm": false,
  "num_nextn_predict_layers": 0})";
// DeepseekV3Config (head_dim is not read: the parser sets qk_nope_head_dim + qk_rope_head_dim).
constexpr const char* kDeepseekV3Defaults = R"({"vocab_size": 129280, "hidden_size": 7168,
  "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
  "n_shared_experts": 1, "n_routed_experts": 256, "routed_scaling_factor": 2.5, "kv_lora_rank": 512,
  "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "n_group": 8,
  "topk_group": 4, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "norm_topk_prob": true,
  "hidden_act": "silu", "max_position_embeddings": 4096, "rms_norm_eps": 1e-06, "bos_token_id": 0,
  "eos_token_id": 1, "tie_word_embeddings": false, "rope_interleave": true, "attention_bias": false,
  "num_nextn_predict_layers": 0})";
// Glm4MoeLiteConfig (GLM-4.7-Flash), for absent keys; its default mlp_layer_types (layer 0 dense) stands as
// first_k_dense_replace 1, which the config class does not have.
constexpr const char* kGlm4MoeLiteDefaults = R"({"vocab_size": 154880, "hidden_size": 2048,
  "intermediate_size": 10240, "moe_intermediate_size": 1536, "num_hidden_layers": 47, "num_attention_heads": 20,
  "num_key_value_heads": 20, "n_shared_experts": 1, "n_routed_experts": 64, "routed_scaling_factor": 1.8,
  "kv_lora_rank": 512, "q_lora_rank": 768, "qk_rope_head_dim": 64, "v_head_dim": 256, "qk_nope_head_dim": 192,
  "n_group": 1, "topk_group": 1, "num_experts_per_tok": 4, "norm_topk_prob": true, "hidden_act": "silu",
  "max_position_embeddings": 202752, "rms_norm_eps": 1e-05, "bos_token_id": 0, "eos_token_id": 1,
  "tie_word_embeddings": false, "rope_interleave": true, "attention_bias": false, "first_k_dense_replace": 1})";
// DeepseekV2Config (n_group, topk_group and num_experts_per_tok default to None: required here).
constexpr const char* kDeepseekV2Defaults = R"({"vocab_size": 32000, "hidden_size": 4096,
  "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu",
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-06, "bos_token_id": 1, "eos_token_id": 2,
  "tie_word_embeddings": false, "rope_theta": 10000.0, "attention_bias": false, "mlp_bias": false,
  "first_k_dense_replace": 0, "kv_lora_rank": 512, "q_lora_rank": 1536, "n_group": null, "n_routed_experts": 64,
  "n_shared_experts": 2, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "routed_scaling_factor": 1.0,
  "topk_group": null, "topk_method": "greedy", "norm_topk_prob": false, "v_head_dim": 128,
  "num_experts_per_tok": null, "moe_intermediate_size": 1407})";
// GptOssConfig (its __post_init__ sets layer_types and the yarn rope_parameters when absent).
constexpr const char* kGptOssDefaults = R"({"num_hidden_layers": 36, "num_local_experts": 128,
  "vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64,
  "num_key_value_heads": 8, "sliding_window": 128, "tie_word_embeddings": false, "hidden_act": "silu",
  "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 150000.0, "rope_parameters": {
  "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": false,
  "original_max_position_embeddings": 4096}, "num_experts_per_tok": 4, "swiglu_alpha": 1.702, "swiglu_limit": 7.0,
  "attention_bias": true})";
// SeedOssConfig (no rope_theta: the class leaves it to rope_parameters, whose default base is 10000).
constexpr const char* kSeedOssDefaults = R"({"vocab_size": 155136, "hidden_size": 4096,
  "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 80, "num_key_value_heads": 8,
  "hidden_act": "silu", "max_position_embeddings": 524288, "rms_norm_eps": 1e-06, "pad_token_id": 1,
  "bos_token_id": 0, "eos_token_id": 2, "tie_word_embeddings": false, "attention_bias": true,
  "attention_out_bias": false, "mlp_bias": false, "head_dim": 128})";
// CohereConfig and Cohere2Config (the same defaults; Cohere2's sliding_window and its pattern besides).
constexpr const char* kCohereDefaults = R"({"vocab_size": 256000, "hidden_size": 8192,
  "intermediate_size": 22528, "logit_scale": 0.0625, "num_hidden_layers": 40, "num_attention_heads": 64,
  "hidden_act": "silu", "max_position_embeddings": 8192, "layer_norm_eps": 1e-05, "rope_theta": 10000.0,
  "pad_token_id": 0, "bos_token_id": 5, "eos_token_id": 255001, "tie_word_embeddings": true,
  "attention_bias": false, "use_qk_norm": false})";
constexpr const char* kCohere2Defaults = R"({"vocab_size": 256000, "hidden_size": 8192,
  "intermediate_size": 22528, "logit_scale": 0.0625, "num_hidden_layers": 40, "num_attention_heads": 64,
  "hidden_act": "silu", "max_position_embeddings": 8192, "layer_norm_eps": 1e-05, "rope_theta": 10000.0,
  "pad_token_id": 0, "bos_token_id": 5, "eos_token_id": 255001, "tie_word_embeddings": true,
  "attention_bias": false, "sliding_window": 4096, "sliding_window_pattern": 4})";
// Olmo2Config.
constexpr const char* kOlmo2Defaults = R"({"vocab_size": 50304, "hidden_size": 4096,
  "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu",
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "attention_bias": false,
  "tie_word_embeddings": false, "pad_token_id": 1, "eos_token_id": 50279})";
// Olmo3Config (transformers 5: default_theta 500000; sliding_window 4096; layer_types from __post_init__).
constexpr const char* kOlmo3Defaults = R"({"vocab_size": 50304, "hidden_size": 4096,
  "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu",
  "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "attention_bias": false,
  "tie_word_embeddings": false, "pad_token_id": 1, "eos_token_id": 50279, "sliding_window": 4096})";
// OlmoeConfig.
constexpr const char* kOlmoeDefaults = R"({"vocab_size": 50304, "hidden_size": 2048,
  "intermediate_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16, "hidden_act": "silu",
  "max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "attention_bias": false,
  "tie_word_embeddings": false, "pad_token_id": 1, "eos_token_id": 50279, "clip_qkv": null,
  "num_experts_per_tok": 8, "num_experts": 64, "norm_topk_prob": false})";
// MiniMaxM2Config (default_theta 5e6) without its bos / eos defaults (200034, 200020): the released
// config.json has no token ids, and generation stops at generation_config.json's (load_model_spec).
constexpr const char* kMiniMaxM2Defaults = R"({"vocab_size": 200064, "hidden_size": 3072,
  "intermediate_size": 1536, "num_hidden_layers": 62, "num_attention_heads": 48, "num_key_value_heads": 8,
  "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 196608, "rms_norm_eps": 1e-06,
  "rope_theta": 5000000.0, "tie_word_embeddings": false,
  "num_experts_per_tok": 8, "num_local_experts": 256})";
// Exaone4Config.
constexpr const char* kExaone4Defaults = R"({"vocab_size": 102400, "hidden_size": 4096,
  "intermediate_size": 16384, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
  "hidden_act": "silu", "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "bos_token_id": 0,
  "eos_token_id": 2, "tie_word_embeddings": false, "rope_theta": 10000.0, "sliding_window": 4096,
  "sliding_window_pattern": 4})";
// Ernie4_5Config and Ernie4_5_MoeConfig (default_theta 5e5; the MoE one's head_dim is LlamaAttention's
// hidden_size / heads when absent).
constexpr const char* kErnie45Defaults = R"({"vocab_size": 103424, "hidden_size": 1024,
  "intermediate_size": 3072, "num_hidden_layers": 18, "num_attention_heads": 16, "num_key_value_heads": 2,
  "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
  "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": true, "rope_theta": 500000.0,
  "use_bias": false})";
constexpr const char* kErnie45MoeDefaults = R"({"vocab_size": 103424, "hidden_size": 2560,
  "intermediate_size": 12288, "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4,
  "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "pad_token_id": 0,
  "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": true, "rope_theta": 500000.0, "use_bias": false,
  "moe_intermediate_size": 1536, "moe_k": 6, "moe_num_experts": 64, "moe_num_shared_experts": 2,
  "moe_layer_start_index": 1, "moe_layer_end_index": -1, "moe_layer_interval": 1, "moe_norm_min": 1e-12})";
// Qwen3NextConfig, Qwen3_5TextConfig and Qwen3_5MoeTextConfig (each __post_init__ sets
// partial_rotary_factor 0.25 when absent; Qwen3.5-MoE has no intermediate_size: every layer is MoE and
// Qwen3NextConfig's 5632 below is never used).
#define ABL_QWEN3_NEXT_COMMON                                                                               \
  "\"hidden_act\": \"silu\", \"max_position_embeddings\": 32768, \"rms_norm_eps\": 1e-06, "                 \
  "\"tie_word_embeddings\": false, \"rope_theta\": 10000.0, \"partial_rotary_factor\": 0.25, "                \
  "\"head_dim\": 256, \"linear_conv_kernel_dim\": 4, \"linear_key_head_dim\": 128, "                        \
  "\"linear_value_head_dim\": 128, \"linear_num_key_heads\": 16, \"linear_num_value_heads\": 32, "          \
  "\"full_attention_interval\": 4, \"moe_intermediate_size\": 512, \"shared_expert_intermediate_size\": 512"
constexpr const char* kQwen3NextDefaults = "{\"vocab_size\": 151936, \"hidden_size\": 2048, "
    "\"intermediate_size\": 5632, \"num_hidden_layers\": 48, \"num_attention_heads\": 16, "
    "\"num_key_value_heads\": 2, \"num_experts\": 512, \"num_experts_per_tok\": 10, \"norm_topk_prob\": true, "
    "\"decoder_sparse_step\": 1, " ABL_QWEN3_NEXT_COMMON "}";
constexpr const char* kQwen35Defaults = "{\"vocab_size\": 248320, \"hidden_size\": 4096, "
    "\"intermediate_size\": 12288, \"num_hidden_layers\": 32, \"num_attention_heads\": 16, "
    "\"num_key_value_heads\": 4, " ABL_QWEN3_NEXT_COMMON "}";
constexpr const char* kQwen35MoeDefaults = "{\"vocab_size\": 248320, \"hidden_size\": 2048, "
    "\"intermediate_size\": 5632, \"num_hidden_layers\": 40, \"num_attention_heads\": 16, "
    "\"num_key_value_heads\": 2, \"num_experts\": 256, \"num_experts_per_tok\": 8, " ABL_QWEN3_NEXT_COMMON "}";
#undef ABL_QWEN3_NEXT_COMMON
constexpr const char* kGemma3Defaults = R"({"vocab_size": 262208, "hidden_size": 2304,
  "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8,
  "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
  "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "tie_word_embeddings": true,
  "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "query_pre_attn_scalar": 256,
  "sliding_window": 4096, "sliding_window_pattern": 6, "final_logit_softcapping": null,
  "attn_logit_softcapping": null, "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2})";

// Gemma4TextConfig (models/gemma4 configuration_gemma4), for absent keys. global_head_dim (512) is a popped kwarg
// there, a field in the earlier form; num_global_key_value_heads defaults to None in both.
constexpr const char* kGemma4Defaults = R"({"vocab_size": 262144, "hidden_size": 2304,
  "intermediate_size": 9216, "num_hidden_layers": 30, "num_attention_heads": 8, "num_key_value_heads": 4,
  "head_dim": 256, "global_head_dim": 512, "hidden_activation": "gelu_pytorch_tanh",
  "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "tie_word_embeddings": true, "attention_bias": false,
  "sliding_window": 512, "final_logit_softcapping": null, "vocab_size_per_layer_input": 262144,
  "hidden_size_per_layer_input": 256, "attention_k_eq_v": false, "num_kv_shared_layers": 0,
  "enable_moe_block": false, "use_double_wide_mlp": false, "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2,
  "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                      "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                         "rope_theta": 1000000.0}}})";

using W = Family::Window;
// Defaults of absent keys are those of the transformers config classes.
const Family kFamilies[] = {
    {"LlamaForCausalLM", false, false, true, 0, 0, 2048, W::none, 0},
    {"MistralForCausalLM", false, false, false, 0, 8, 4096 * 32, W::always, 4096},
    {"Qwen2ForCausalLM", true, false, false, 0, 0, 32768, W::switched, 4096},
    {"Qwen3ForCausalLM", false, true, true, 128, 0, 32768, W::switched, 4096},
    // Gemma 1, 1.1, CodeGemma: Llama's layers with Gemma's (1 + w) norms, scaled embeddings and GeGLU
    {"GemmaForCausalLM", false, false, true, 0, 0, 0, W::none, 0, kGemmaDefaults, gemma_keys, nullptr,
     "hidden_activation"},
    {"Gemma2ForCausalLM", false, false, true, 0, 0, 0, W::per_layer, 0, kGemma2Defaults, gemma2_keys, nullptr,
     "hidden_activation"},
    {"Gemma3ForCausalLM", false, true, true, 0, 0, 0, W::per_layer, 0, kGemma3Defaults, gemma3_keys, nullptr,
     "hidden_activation"},
    {"Gemma3ForConditionalGeneration", false, true, true, 0, 0, 0, W::per_layer, 0, kGemma3Defaults,
     gemma3_keys, "text_config", "hidden_activation"},
    // Gemma 4 (E2B, E4B, 31B, 26B-A4B; docs/gemma4.md): Gemma 3's layout with plain-w norms, per-layer head sizes,
    // a value norm, proportional RoPE on the full-attention layers and a scalar per layer
    {"Gemma4ForCausalLM", false, true, false, 0, 0, 0, W::per_layer, 0, kGemma4Defaults, gemma4_keys, nullptr,
     "hidden_activation"},
    {"Gemma4ForConditionalGeneration", false, true, false, 0, 0, 0, W::per_layer, 0, kGemma4Defaults, gemma4_keys,
     "text_config", "hidden_activation"},
    // Mistral Small 3.1/3.2, Magistral, Devstral: a Mistral text model beside a Pixtral vision tower
    // (Ministral 3 too: a text_config of model_type "ministral3", whose queries are scaled by position)
    {"Mistral3ForConditionalGeneration", false, false, false, 0, 8, 4096 * 32, W::always, 4096, kMistralDefaults,
     mistral3_keys, "text_config"},
    {"Ministral3ForCausalLM", false, false, false, 0, 8, 262144, W::always, 0, kMinistral3Defaults, mistral3_keys},
    {"Phi3ForCausalLM", false, false, false, 0, 0, 4096, W::always, 0, kPhi3Defaults, phi3_keys},
    // Qwen2-VL, Qwen2.5-VL, Qwen3-VL: the language model (a Qwen2 / Qwen3 decoder) beside the vision
    // tower; for text its multimodal RoPE is the plain one (rope_config.cpp, type "mrope")
    {"Qwen2VLForConditionalGeneration", true, false, false, 0, 0, 0, W::switched, 4096, kQwen2VlDefaults,
     nullptr, "text_config"},
    {"Qwen2_5_VLForConditionalGeneration", true, false, false, 0, 0, 0, W::switched, 4096, kQwen2VlDefaults,
     nullptr, "text_config"},
    {"Qwen3VLForConditionalGeneration", false, true, true, 0, 0, 0, W::none, 0, kQwen3VlDefaults, nullptr,
     "text_config"},
    // Qwen3-VL-30B-A3B, Qwen3-VL-235B-A22B: Qwen3-MoE's layers as the language model, the top-k always
    // renormalised, the experts stacked and transposed as released
    {"Qwen3VLMoeForConditionalGeneration", false, true, true, 0, 0, 0, W::none, 0, kQwen3VlMoeDefaults,
     qwen3_vl_moe_keys, "text_config"},
    // GLM-4-9B-chat-hf (GlmForCausalLM) and GLM-4-0414 (Glm4ForCausalLM, with post norms)
    {"GlmForCausalLM", false, false, false, 0, 0, 0, W::none, 0, kGlmDefaults, glm_keys},
    {"Glm4ForCausalLM", false, false, false, 0, 0, 0, W::none, 0, kGlmDefaults, glm_keys},
    // GLM-4.1V-9B-Thinking, GLM-4.6V-Flash: GLM-4-0414's layers as the language model; GLM-4.5V, GLM-4.6V:
    // GLM-4.5's (rotate-half RoPE, q/k/v biases); for text their multimodal RoPE is the plain one
    {"Glm4vForConditionalGeneration", false, false, false, 0, 0, 0, W::none, 0, kGlm4vDefaults, glm_keys,
     "text_config"},
    {"Glm4vMoeForConditionalGeneration", false, false, false, 0, 0, 0, W::none, 0, kGlm4vMoeDefaults, glm4_moe_keys,
     "text_config"},
    // SmolLM3: Llama with a NoPE layer every no_rope_layer_interval-th
    {"SmolLM3ForCausalLM", false, false, true, 0, 0, 0, W::per_layer, 0, kSmolLM3Defaults, smollm3_keys},
    // AFM-4.5B (Arcee): Llama with the ungated MLP down(relu(up(x))²)
    {"ArceeForCausalLM", false, false, true, 0, 0, 4096, W::none, 0, kArceeDefaults},
    // Apertus (8B, 70B): Llama with per-head q/k norms before RoPE and the ungated MLP down(xIELU(up(x)))
    {"ApertusForCausalLM", false, true, true, 0, 0, 0, W::none, 0, kApertusDefaults, apertus_keys},
    // Granite 3.x: Llama with four multipliers
    {"GraniteForCausalLM", false, false, true, 0, 0, 2048, W::none, 0, nullptr, granite_keys},
    // Granite 3.x MoE (1B-A400M, 3B-A800M) and with a shared expert: the same multipliers, stacked experts
    {"GraniteMoeForCausalLM", false, false, true, 0, 0, 2048, W::none, 0, nullptr, granite_moe_keys},
    {"GraniteMoeSharedForCausalLM", false, false, true, 0, 0, 2048, W::none, 0, nullptr, granite_moe_keys},
    // Granite 4.0 without Mamba (granite-4.0-micro, -1b, -350m): the same multipliers, every layer attention
    // (RoPE or none), the dense MLP in shared_mlp, experts beside it where num_local_experts > 0
    {"GraniteMoeHybridForCausalLM", false, false, true, 0, 0, 0, W::none, 0, kGraniteHybridDefaults,
     granite_hybrid_keys},
    // Hunyuan-0.5B/1.8B/4B/7B (-Instruct): Llama with per-head q/k norms after RoPE, RoPE's base raised by
    // the dynamic scaling's alpha
    {"HunYuanDenseV1ForCausalLM", false, true, true, 0, 0, 0, W::none, 0, kHunyuanDenseDefaults, hunyuan_dense_keys},
    // Hunyuan-A13B (-Instruct): the same attention, every layer MoE (softmax top-k renormalised, a shared MLP)
    {"HunYuanMoEV1ForCausalLM", false, true, true, 0, 0, 0, W::none, 0, kHunyuanMoeDefaults, hunyuan_moe_keys},
    // LFM2 (350M, 700M, 1.2B, 2.6B): short-convolution layers beside attention layers with per-head q/k norms
    {"Lfm2ForCausalLM", false, true, false, 0, 0, 0, W::none, 0, kLfm2Defaults, lfm2_keys},
    // LFM2-8B-A1B: LFM2's layers, dense MLPs first, then sigmoid-routed experts chosen with a correction bias
    {"Lfm2MoeForCausalLM", false, true, false, 0, 0, 0, W::none, 0, kLfm2MoeDefaults, lfm2_moe_keys},
    // Nemotron-H (8B, 4B), NVIDIA-Nemotron-Nano-9B-v2 / 12B-v2: one block per layer — Mamba-2 ('M'), attention
    // without RoPE ('*') or a relu² MLP ('-') — in the order hybrid_override_pattern gives
    {"NemotronHForCausalLM", false, false, false, 0, 0, 0, W::none, 0, kNemotronHDefaults, nemotron_h_keys},
    {"MixtralForCausalLM", false, false, false, 0, 8, 4096 * 32, W::always, 0, nullptr, mixtral_keys},
    // Llama 4 Scout, Maverick (the language model): NoPE every 4th layer, the others chunked with interleaved
    // RoPE and L2-normed q/k; a sigmoid top-k router scaling the experts' inputs, a shared expert
    {"Llama4ForConditionalGeneration", false, false, true, 0, 0, 0, W::none, 0, kLlama4Defaults, llama4_keys,
     "text_config"},
    {"Llama4ForCausalLM", false, false, true, 0, 0, 0, W::none, 0, kLlama4Defaults, llama4_keys},
    // Phi-3.5-MoE (and GRIN-MoE): Mixtral's experts behind the sparsemixer router, LayerNorms with biases,
    // q/k/v/o and lm_head biases; the Hub's configs name the remote-code class PhiMoEForCausalLM
    {"PhimoeForCausalLM", false, false, true, 0, 0, 0, W::always, 0, kPhimoeDefaults, phimoe_keys},
    {"PhiMoEForCausalLM", false, false, true, 0, 0, 0, W::always, 0, kPhimoeDefaults, phimoe_keys},
    {"Qwen2MoeForCausalLM", true, false, false, 0, 0, 32768, W::switched, 4096, nullptr, qwen_moe_keys},
    // LLaVA (1.5, Pixtral-12B) and InternVL (3, 3.5 as transformers ports them): a vision tower and projector beside
    // the language model of text_config's model_type (LlavaConfig's default llama, InternVLConfig's qwen2)
    {"LlavaForConditionalGeneration", false, false, false, 0, 0, 0, W::none, 0, nullptr, nullptr, "text_config",
     "hidden_act", "llama"},
    {"InternVLForConditionalGeneration", false, false, false, 0, 0, 0, W::none, 0, nullptr, nullptr, "text_config",
     "hidden_act", "qwen2"},
    {"Qwen3MoeForCausalLM", false, true, true, 0, 0, 32768, W::switched, 4096, nullptr, qwen_moe_keys},
    // GLM-4.5, GLM-4.5-Air, GLM-4.6: sigmoid router with correction bias, ungated shared experts
    {"Glm4MoeForCausalLM", false, false, false, 0, 0, 0, W::none, 0, kGlm4MoeDefaults, glm4_moe_keys},
    // dots.llm1 (rednote-hilab): Qwen3's attention (per-head q/k norms), DeepSeek-V3's sigmoid router and
    // shared experts after first_k_dense_replace dense layers
    {"Dots1ForCausalLM", false, true, true, 0, 0, 0, W::per_layer, 0, kDots1Defaults, dots1_keys},
    // gpt-oss-20b, gpt-oss-120b: attention sinks, biases everywhere, clamped SwiGLU experts
    {"GptOssForCausalLM", false, false, false, 0, 0, 0, W::per_layer, 0, kGptOssDefaults, gpt_oss_keys},
    // Command-R, Aya-23, Aya-Expanse: LayerNorms, parallel blocks, interleaved RoPE, scaled logits
    {"CohereForCausalLM", false, false, false, 0, 0, 0, W::none, 0, kCohereDefaults, cohere_keys},
    // Command R7B, Command A: the same, 3 of 4 layers sliding, the others without RoPE
    {"Cohere2ForCausalLM", false, false, false, 0, 0, 0, W::per_layer, 0, kCohere2Defaults, cohere_keys},
    // Seed-OSS-36B: Llama with q/k/v biases (attention_bias, default true) and o_proj's apart
    // (attention_out_bias, default false)
    {"SeedOssForCausalLM", false, false, false, 0, 0, 0, W::none, 0, kSeedOssDefaults, seed_oss_keys},
    // DeepSeek-V3/R1, Kimi-K2, Moonlight: multi-head latent attention, GLM-4.5's sigmoid router
    // (head_dim 192 stands for hidden_size / heads, which MLA does not use; deepseek_v3_keys sets it)
    {"DeepseekV3ForCausalLM", false, false, false, 192, 0, 0, W::none, 0, kDeepseekV3Defaults, deepseek_v3_keys},
    // GLM-4.7-Flash: DeepSeek-V3's latent attention and router under GLM's config (dense layers from mlp_layer_types)
    {"Glm4MoeLiteForCausalLM", false, false, false, 192, 0, 0, W::none, 0, kGlm4MoeLiteDefaults, glm4_moe_lite_keys},
    // DeepSeek-V2, V2-Lite, V2.5: the same attention (RoPE pairs adjacent), a softmax router
    {"DeepseekV2ForCausalLM", false, false, false, 192, 0, 0, W::none, 0, kDeepseekV2Defaults, deepseek_v2_keys},
    // models/olmo2 (Olmo2Config: rms_norm_eps 1e-5; attention_bias on q/k/v/o as Llama's).
    {"Olmo2ForCausalLM", false, true, true, 0, 0, 2048, W::none, 0, kOlmo2Defaults, olmo2_keys},
    // models/olmo3: OLMo 2's layers, 3 of 4 sliding, the sliding ones with unscaled RoPE
    {"Olmo3ForCausalLM", false, true, true, 0, 0, 2048, W::per_layer, 0, kOlmo3Defaults, olmo3_keys},
    // OLMoE-1B-7B: Llama's pre-norm layers with OLMo 2's q/k norms, every layer MoE (softmax top-k)
    {"OlmoeForCausalLM", false, true, true, 0, 0, 4096, W::none, 0, kOlmoeDefaults, olmoe_keys},
    // MiniMax-M2, M2.1, M2.5: OLMoE's q/k norms on Mixtral's layers, partial RoPE, GLM-4.5's sigmoid router
    {"MiniMaxM2ForCausalLM", false, true, false, 0, 0, 0, W::none, 0, kMiniMaxM2Defaults, minimax_m2_keys},
    // EXAONE 4.0 (32B, 1.2B): OLMo 2's post-norm layers, per-head q/k norms, 3 of 4 layers sliding with
    // RoPE, the others full without it
    {"Exaone4ForCausalLM", false, true, false, 0, 0, 0, W::per_layer, 0, kExaone4Defaults, exaone4_keys},
    // ERNIE 4.5 (0.3B; 21B-A3B, 300B-A47B): Llama's layers with RoPE in adjacent pairs; the MoE one's
    // softmax router picks by p + e_score_correction_bias, with ungated shared experts
    {"Ernie4_5ForCausalLM", false, false, false, 0, 0, 0, W::none, 0, kErnie45Defaults, ernie4_5_keys},
    {"Ernie4_5_MoeForCausalLM", false, false, false, 0, 0, 0, W::none, 0, kErnie45MoeDefaults, ernie4_5_moe_keys},
    // Qwen3-Next, Qwen3.5 (dense and MoE; their language models): 3 of 4 layers a gated delta rule
    // (linear attention), the others gated softmax attention with per-head (1 + w) q/k norms and RoPE on
    // a quarter of each head; Qwen2-MoE's experts with the gated shared expert
    {"Qwen3NextForCausalLM", false, true, false, 0, 0, 0, W::none, 0, kQwen3NextDefaults, qwen3_next_keys},
    {"Qwen3_5ForCausalLM", false, true, false, 0, 0, 0, W::none, 0, kQwen35Defaults, qwen3_next_keys},
    {"Qwen3_5ForConditionalGeneration", false, true, false, 0, 0, 0, W::none, 0, kQwen35Defaults, qwen3_next_keys,
     "text_config"},
    {"Qwen3_5MoeForCausalLM", false, true, false, 0, 0, 0, W::none, 0, kQwen35MoeDefaults, qwen3_next_keys},
    {"Qwen3_5MoeForConditionalGeneration", false, true, false, 0, 0, 0, W::none, 0, kQwen35MoeDefaults,
     qwen3_next_keys, "text_config"},
};

// The text models a generic wrapper (Family::wrapped_text_model) may hold: text_config's model_type, the family
// that runs it, and the defaults of its config class for the keys a text_config leaves out (none: every key needed).
struct WrappedTextModel {
  const char* model_type;
  const char* architecture;
  const char* defaults;
};
const WrappedTextModel kWrappedTextModels[] = {
    {"llama", "LlamaForCausalLM", kLlamaDefaults},       {"mistral", "MistralForCausalLM", kMistralDefaults},
    {"qwen2", "Qwen2ForCausalLM", nullptr},              {"qwen3", "Qwen3ForCausalLM", nullptr},
    {"qwen3_moe", "Qwen3MoeForCausalLM", nullptr},
};

// Families whose dense MLP takes mlp_bias (LlamaMLP and the MLPs copied from it).
bool mlp_bias_key(std::string_view architecture) {
  return architecture == "LlamaForCausalLM" || architecture == "GraniteForCausalLM" ||
         architecture == "SmolLM3ForCausalLM" || architecture == "SeedOssForCausalLM" ||
         architecture == "ArceeForCausalLM";
}

// Where a model's keys are read: its config (or the text_config of a multimodal one), then the
// top level of a multimodal config, then the family's defaults. A key present with null is
// "not set" (HF semantics), and a present null hides the later places.
struct Keys {
  io::JsonValue config;                    // the text model's config
  std::optional<io::JsonValue> outer;      // the top level of a multimodal config
  std::optional<io::JsonValue> defaults;   // the config class's defaults

  // The value of `key`, null included; nullopt when no place has it.
  std::optional<io::JsonValue> lookup(std::string_view key) const {
    for (const io::JsonValue* v : {&config, outer ? &*outer : nullptr, defaults ? &*defaults : nullptr}) {
      if (!v) continue;
      if (auto m = v->member(key)) return m;
    }
    return std::nullopt;
  }
  bool contains(std::string_view key) const { return lookup(key).has_value(); }
  // Written in the config itself (not a default).
  bool given(std::string_view key) const {
    return config.contains(key) || (outer && outer->contains(key));
  }
  std::optional<io::JsonValue> find(std::string_view key) const {
    auto v = lookup(key);
    if (!v || v->is_null()) return std::nullopt;
    return v;
  }
  io::JsonValue at(std::string_view key) const {
    if (auto v = find(key)) return *v;
    return config.at(key);  // the error names the config and the key
  }
  int64_t get_int(std::string_view key) const { return at(key).as_int(); }
  int64_t get_int(std::string_view key, int64_t fallback) const {
    auto v = find(key);
    return v ? v->as_int() : fallback;
  }
  double get_double(std::string_view key) const { return at(key).as_double(); }
  double get_double(std::string_view key, double fallback) const {
    auto v = find(key);
    return v ? v->as_double() : fallback;
  }
  bool get_bool(std::string_view key, bool fallback) const {
    auto v = find(key);
    return v ? v->as_bool() : fallback;
  }
  std::string get_string(std::string_view key, std::string_view fallback) const {
    auto v = find(key);
    return v ? v->as_string() : std::string(fallback);
  }
  const std::string& origin() const { return config.origin(); }
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

void check_token(const ModelSpec& s, const char* key, int64_t id) {
  if (id < 0 || id >= s.vocab_size) {
    bad_key(s, key, fmt::format("token id {} is outside the vocabulary [0, {})", id, s.vocab_size));
  }
}

std::optional<DType> parse_torch_dtype(const io::JsonValue& v) {
  const std::string& name = v.as_string();
  std::string n = name.rfind("torch.", 0) == 0 ? name.substr(6) : name;
  if (n == "bfloat16") return DType::bf16;
  if (n == "float16" || n == "half") return DType::f16;
  if (n == "float32" || n == "float") return DType::f32;
  // Only a hint for export; the tensors' own dtypes are what we load.
  log::warn("{}: key '{}': dtype '{}' not recognised, ignored", v.origin(), v.key_path(), name);
  return std::nullopt;
}

Activation parse_activation(const ModelSpec& s, const char* key, const std::string& name) {
  if (name == "silu") return Activation::silu;
  if (name == "gelu_pytorch_tanh") return Activation::gelu_tanh;
  if (name == "relu2") return Activation::relu2;  // ungated: only where the family's MLP is (validate_spec)
  if (name == "xielu") return Activation::xielu;  // ungated, Apertus' (validate_spec)
  fail("{}: key '{}': '{}' is not supported (supported: silu, gelu_pytorch_tanh, relu2, xielu)", s.source, key, name);
}

// fn(l, name, entry) for each entry of layer_types, which must list one per layer; false without the key.
template <class Fn>
bool each_layer_type(const Keys& k, const ModelSpec& s, Fn fn) {
  auto types = k.find("layer_types");
  if (!types) return false;
  if (!types->is_array() || static_cast<int64_t>(types->size()) != s.num_layers) {
    types->fail(fmt::format("must list one type per layer ({} layers)", s.num_layers));
  }
  for (int64_t l = 0; l < s.num_layers; ++l) {
    const io::JsonValue t = types->at(static_cast<size_t>(l));
    fn(l, t.as_string(), t);
  }
  return true;
}

// Which layers slide: layer_types (transformers 5.x spelling) when given, else `pattern(l)`.
template <class Pattern>
void sliding_layers_from(const Keys& k, ModelSpec& s, Pattern pattern) {
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  const bool listed = each_layer_type(k, s, [&](int64_t l, const std::string& name, const io::JsonValue& t) {
    if (name != "sliding_attention" && name != "full_attention") {
      t.fail(fmt::format("'{}' is not a layer type (sliding_attention, full_attention)", name));
    }
    s.sliding_layers[static_cast<size_t>(l)] = name == "sliding_attention";
  });
  if (!listed) {
    for (int64_t l = 0; l < s.num_layers; ++l) s.sliding_layers[static_cast<size_t>(l)] = pattern(l);
  }
}

// A scale as a tensor of the checkpoint dtype, sqrt(H) for Gemma's embeddings: Gemma2Model.forward makes
// torch.tensor(hidden_size**0.5, dtype=hidden_states.dtype), Gemma3TextScaledWordEmbedding (and Gemma 4's, for its
// per-layer table with sqrt(P) too) multiplies by embed_scale.to(weight.dtype) — the model runs in the dtype it is
// stored in.
double scale_in_dtype(const ModelSpec& s, double scale) {
  const float f = static_cast<float>(scale);
  if (s.torch_dtype == DType::bf16) return ::abl::bf16_to_f32(::abl::f32_to_bf16(f));
  if (s.torch_dtype == DType::f16) return ::abl::f16_to_f32(::abl::f32_to_f16(f));
  return f;
}

double gemma_embed_scale(const ModelSpec& s) { return scale_in_dtype(s, std::sqrt(static_cast<double>(s.hidden_size))); }

void refuse_bidirectional(const Keys& k, const ModelSpec& s) {
  if (k.get_bool("use_bidirectional_attention", false)) {
    fail("{}: key 'use_bidirectional_attention': true (an embedding model, not a causal LM) is not "
         "supported",
         s.source);
  }
}

void gemma_common_keys(const Keys& k, ModelSpec& s) {
  refuse_bidirectional(k, s);
  s.norm_plus_one = true;
  s.sandwich_norms = true;
  s.embed_scale = gemma_embed_scale(s);
  s.attn_scale = 1.0 / std::sqrt(k.get_double("query_pre_attn_scalar"));
  s.sliding_window = k.get_int("sliding_window", 0);
}

// models/gemma (GemmaRMSNorm, GemmaModel.forward's normalizer, GemmaMLP): the activation is
// hidden_activation, or gelu_pytorch_tanh when that is absent or null, as the model was trained and
// transformers 4.39-4.47 run it (PR 29402); the released configs' "hidden_act": "gelu", which 4.48+
// read (GemmaMLP became LlamaMLP), is not (docs/families.md).
void gemma_keys(const Keys& k, ModelSpec& s) {
  refuse_bidirectional(k, s);
  s.norm_plus_one = true;
  s.embed_scale = gemma_embed_scale(s);
  if (!k.find("hidden_activation")) s.activation = Activation::gelu_tanh;
}

// models/gemma2: even layers slide (Gemma2Attention: sliding_window if not layer_idx % 2); both
// soft-caps apply (eager_attention_forward, Gemma2ForCausalLM.forward).
void gemma2_keys(const Keys& k, ModelSpec& s) {
  gemma_common_keys(k, s);
  sliding_layers_from(k, s, [](int64_t l) { return l % 2 == 0; });
  if (auto cap = k.find("attn_logit_softcapping")) s.attn_softcap = cap->as_double();
  if (auto cap = k.find("final_logit_softcapping")) s.final_softcap = cap->as_double();
}

// models/gemma3: all layers but every sliding_window_pattern-th slide; sliding layers use
// rope_local_base_freq without scaling (Gemma3TextModel.__init__); Gemma3Attention never passes
// the attention soft-cap; Gemma3ForCausalLM caps the logits, Gemma3ForConditionalGeneration not.
void gemma3_keys(const Keys& k, ModelSpec& s) {
  gemma_common_keys(k, s);
  const int64_t pattern = k.get_int("sliding_window_pattern", 6);
  if (pattern <= 0) bad_key(s, "sliding_window_pattern", fmt::format("must be positive, found {}", pattern));
  sliding_layers_from(k, s, [pattern](int64_t l) { return (l + 1) % pattern != 0; });
  if (k.find("attn_logit_softcapping")) {
    log::debug("{}: attn_logit_softcapping is not used by Gemma 3 (as in transformers)", s.source);
  }
  if (s.architecture == "Gemma3ForCausalLM") {
    if (auto cap = k.find("final_logit_softcapping")) s.final_softcap = cap->as_double();
  }
  if (s.rope_local_theta == 0.0) s.rope_local_theta = k.get_double("rope_local_base_freq", 10000.0);
}

// The full-attention layers' head size and kv heads (Gemma4TextAttention.__init__): flat global_head_dim /
// num_global_key_value_heads, or transformers' later per_layer_config {"<layer>": {"head_dim": ..,
// "num_key_value_heads": ..}}, which wins when present (Gemma4TextConfig.__post_init__ synthesizes it from the flat
// keys only when it is absent). Every full-attention layer must carry the same override, sliding layers none.
void gemma4_full_layer_geometry(const Keys& k, ModelSpec& s) {
  s.k_eq_v = k.get_bool("attention_k_eq_v", false);
  int64_t hd = 0, kv = 0;
  if (auto plc = k.find("per_layer_config")) {
    if (!plc->is_object()) plc->fail(fmt::format("must be an object of layer overrides, found {}", plc->type_name()));
    bool first = true;
    for (int64_t l = 0; l < s.num_layers; ++l) {
      const std::optional<io::JsonValue> o = plc->find(std::to_string(l));
      if (!s.is_full_attention_layer(l)) {
        if (o) o->fail("overrides a sliding layer (Gemma 4 overrides only its full-attention layers)");
        continue;
      }
      if (!o || !o->is_object()) {
        plc->fail(fmt::format("has no override object for full-attention layer {}", l));
      }
      for (const std::string& key : o->keys()) {
        if (key != "head_dim" && key != "num_key_value_heads") {
          o->fail(fmt::format("overrides '{}' (only head_dim and num_key_value_heads are supported)", key));
        }
      }
      const int64_t h = o->get_int("head_dim", s.head_dim), n = o->get_int("num_key_value_heads", s.num_kv_heads);
      if (!first && (h != hd || n != kv)) o->fail("differs from the other full-attention layers' override");
      hd = h;
      kv = n;
      first = false;
    }
    for (const std::string& key : plc->keys()) {
      const bool index = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos && key.size() < 10;
      if (!index || std::stoll(key) >= s.num_layers) plc->fail(fmt::format("'{}' is not a layer index", key));
    }
    if (k.given("global_head_dim") || k.given("num_global_key_value_heads")) {
      log::warn("{}: per_layer_config given; global_head_dim / num_global_key_value_heads are ignored (as in "
                "transformers)",
                s.source);
    }
  } else {
    hd = k.get_int("global_head_dim", 0);
    if (hd == 0) {
      // Gemma4TextAttention falls back to head_dim, its proportional RoPE to hidden_size / num_attention_heads
      hd = s.head_dim;
      if (s.rope_scaling.type == RopeScaling::Type::proportional && s.hidden_size / s.num_heads != s.head_dim) {
        bad_key(s, "global_head_dim", fmt::format("null with proportional RoPE: transformers' attention would use "
                                                  "head_dim {} and its RoPE hidden_size / num_attention_heads {}",
                                                  s.head_dim, s.hidden_size / s.num_heads));
      }
    }
    kv = s.num_kv_heads;
    if (s.k_eq_v) {
      // the override is gated by attention_k_eq_v; without it the two transformers versions disagree
      if (!k.find("num_global_key_value_heads")) {
        bad_key(s, "num_global_key_value_heads", "must be given with attention_k_eq_v (transformers' versions "
                                                 "disagree on what a null means)");
      }
      kv = k.get_int("num_global_key_value_heads");
    }
  }
  check_size(s, "global_head_dim", hd);
  check_size(s, "num_global_key_value_heads", kv);
  s.full_head_dim = hd;
  s.full_kv_heads = kv;
}

// models/gemma4 (docs/gemma4.md §1, §2): Gemma 3's sandwich with plain-w norms (Gemma4RMSNorm), the scaled embedding,
// q/k norms and a weightless v norm, score scale 1, the sliding pattern 5:1 with the last layer forced full, per
// layer-type RoPE (default on the sliding layers, proportional on the full ones), the full layers' own head size and
// kv heads, layer_scalar, and the final soft-cap in both Gemma4ForCausalLM and Gemma4ForConditionalGeneration.
void gemma4_keys(const Keys& k, ModelSpec& s) {
  if (auto b = k.find("use_bidirectional_attention")) {
    // "vision": only image tokens attend both ways (text is causal); "all": an encoder
    if (!b->is_string() || b->as_string() != "vision") {
      b->fail("only null or \"vision\" is supported (bidirectional attention over text is not a causal LM)");
    }
  }
  if (k.get_bool("attention_bias", false)) {
    bad_key(s, "attention_bias", "true is not supported (Gemma 4's attention has no biases in any release)");
  }
  s.sandwich_norms = true;
  s.v_norm = true;
  s.layer_scalar = true;
  s.embed_scale = gemma_embed_scale(s);
  s.attn_scale = 1.0;  // Gemma4TextAttention: self.scaling = 1.0 (q and k are normed)
  s.sliding_window = k.get_int("sliding_window", 0);
  check_size(s, "sliding_window", s.sliding_window);
  sliding_layers_from(k, s, [](int64_t l) { return (l + 1) % 6 != 0; });
  if (s.sliding_layers.back() != 0) {
    log::warn("{}: the last layer must use full_attention (Gemma4TextConfig forces it, as here)", s.source);
    s.sliding_layers.back() = 0;
  }
  if (auto cap = k.find("final_logit_softcapping")) s.final_softcap = cap->as_double();
  for (const char* key : {"query_pre_attn_scalar", "attn_logit_softcapping", "rope_local_base_freq",
                          "sliding_window_pattern"}) {
    if (k.given(key)) log::debug("{}: '{}' is not used by Gemma 4 (as in transformers)", s.source, key);
  }

  // RoPE per layer type, from rope_parameters only (Gemma4TextConfig.convert_rope_params_to_dict reads no
  // top-level rope_theta or rope_scaling)
  for (const char* key : {"rope_theta", "rope_scaling"}) {
    if (k.given(key)) log::warn("{}: '{}' is ignored by Gemma 4 (rope_parameters holds its RoPE)", s.source, key);
  }
  const io::JsonValue params = k.at("rope_parameters");
  if (!params.is_object() || !params.find("sliding_attention") || !params.find("full_attention")) {
    params.fail("must hold a 'sliding_attention' and a 'full_attention' entry");
  }
  const io::JsonValue full = params.at("full_attention"), local = params.at("sliding_attention");
  RopeScaling local_scaling;
  parse_rope_scaling(local, RopeTopLevel{s.max_position_embeddings, std::nullopt}, &local_scaling);
  if (local_scaling.type != RopeScaling::Type::none) local.fail("the sliding layers' RoPE must be the default one");
  s.rope_local_theta = local.get_double("rope_theta");
  s.rope_scaling = RopeScaling{};
  parse_rope_scaling(full, RopeTopLevel{s.max_position_embeddings, std::nullopt}, &s.rope_scaling);
  if (s.rope_scaling.type != RopeScaling::Type::none && s.rope_scaling.type != RopeScaling::Type::proportional) {
    full.fail("Gemma 4's full-attention layers take the default or the proportional RoPE");
  }
  s.rope_theta = full.get_double("rope_theta");
  gemma4_full_layer_geometry(k, s);

  // Per-layer embeddings (E2B, E4B; a config without the key gets the class default 256)
  s.ple_dim = k.get_int("hidden_size_per_layer_input", 0);
  if (s.ple_dim < 0) bad_key(s, "hidden_size_per_layer_input", fmt::format("must not be negative, found {}", s.ple_dim));
  if (s.ple_dim > 0) {
    check_size(s, "hidden_size_per_layer_input", s.ple_dim);
    if (const int64_t v = k.get_int("vocab_size_per_layer_input", s.vocab_size); v != s.vocab_size) {
      // Gemma4TextModel looks every token up in both tables; a smaller one would be indexed out of range
      bad_key(s, "vocab_size_per_layer_input", fmt::format("{} differs from vocab_size {}", v, s.vocab_size));
    }
    s.ple_embed_scale = scale_in_dtype(s, std::sqrt(static_cast<double>(s.ple_dim)));
  }
  // KV sharing: the last num_kv_shared_layers layers reuse the K, V of the last unshared layer of their type
  s.kv_shared_layers = k.get_int("num_kv_shared_layers", 0);
  if (s.kv_shared_layers < 0 || s.kv_shared_layers >= s.num_layers) {
    // (N = L: no layer stores, transformers fails in forward; N > L: it silently shares nothing or fails at init)
    bad_key(s, "num_kv_shared_layers",
            fmt::format("must be in [0, num_hidden_layers {}), found {}", s.num_layers, s.kv_shared_layers));
  }
  for (int64_t l = s.num_layers - s.kv_shared_layers; l < s.num_layers; ++l) {
    if (s.kv_source(l) < 0) {
      bad_key(s, "num_kv_shared_layers",
              fmt::format("{}: shared layer {} is {} attention, and no unshared layer of that type stores keys and "
                          "values for it",
                          s.kv_shared_layers, l, s.is_full_attention_layer(l) ? "full" : "sliding"));
    }
  }
  // Gemma4TextMLP.__init__: twice as wide in the KV-shared layers (its guard first_kv_shared_layer_idx > 0 holds)
  s.double_wide_shared_mlp = k.get_bool("use_double_wide_mlp", false) && s.kv_shared_layers > 0;
  if (k.get_bool("enable_moe_block", false)) {
    // Gemma4TextDecoderLayer: every layer has the router and the experts beside its dense MLP
    s.num_experts = k.get_int("num_experts");
    s.experts_per_token = k.get_int("top_k_experts");
    s.moe_intermediate_size = k.get_int("moe_intermediate_size");
    check_size(s, "num_experts", s.num_experts);
    check_size(s, "moe_intermediate_size", s.moe_intermediate_size);
    if (s.experts_per_token < 1 || s.experts_per_token > s.num_experts) {
      bad_key(s, "top_k_experts", fmt::format("must be in [1, num_experts {}], found {}", s.num_experts,
                                              s.experts_per_token));
    }
    s.norm_topk_prob = true;  // Gemma4TextRouter: top_k_weights /= top_k_weights.sum(dim=-1)
    s.moe_beside_dense = true;
    s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
    s.expert_names = ModelSpec::ExpertNames::gemma4;
    s.fused_experts = true;
  }
}

// models/ministral3 (Ministral3Attention.forward, _get_llama_4_attn_scale): Mistral's layers, each query
// multiplied after RoPE by 1 + beta * log(1 + floor(position / original_max_position_embeddings)) with
// beta = rope_parameters' llama_4_scaling_beta (1 below the original context; required, as transformers
// fails without it). A Mistral 3 text model of model_type "mistral" has no such scaling.
void mistral3_keys(const Keys& k, ModelSpec& s) {
  if (k.config.get_string("model_type", "") != "ministral3") return;
  std::optional<io::JsonValue> params = k.find("rope_parameters");
  if (!params) params = k.find("rope_scaling");
  const std::optional<io::JsonValue> beta = params && params->is_object() ? params->find("llama_4_scaling_beta")
                                                                          : std::nullopt;
  if (!beta) {
    fail("{}: a ministral3 text model needs rope_parameters' llama_4_scaling_beta (Ministral3Attention reads "
         "it for every query), and this config has none",
         s.source);
  }
  s.query_log_scale_beta = beta->as_double();
  s.query_log_scale_in_dtype = true;  // _get_llama_4_attn_scale(...).to(query_states.dtype)
  if (!std::isfinite(s.query_log_scale_beta)) beta->fail("must be a finite number");
  if (s.query_log_scale_beta == 0.0) return;
  const std::optional<io::JsonValue> period = params->find("original_max_position_embeddings");
  if (!period) params->fail("has llama_4_scaling_beta but no original_max_position_embeddings (its period)");
  s.query_log_scale_period = period->as_int();
  if (s.query_log_scale_period <= 0) period->fail(fmt::format("must be positive, found {}", s.query_log_scale_period));
}

// partial_rotary_factor: Phi3Attention and GlmAttention rotate q[..., :rotary_dim] with
// rotary_dim = int(head_dim * factor) (modeling_rope_utils: `dim = int(head_dim *
// partial_rotary_factor)`). transformers 5 may keep the factor in rope_parameters: a key written
// in the config wins, then rope_parameters, then the config class's default.
void partial_rotary_keys(const Keys& k, ModelSpec& s) {
  std::optional<io::JsonValue> prf;
  if (k.given("partial_rotary_factor")) {
    prf = k.find("partial_rotary_factor");
  } else if (auto rp = k.find("rope_parameters"); rp && rp->is_object() && rp->find("partial_rotary_factor")) {
    prf = rp->find("partial_rotary_factor");
  } else {
    prf = k.find("partial_rotary_factor");
  }
  if (!prf || prf->as_double() == 1.0) return;
  const double f = prf->as_double();
  if (!(f > 0.0 && f < 1.0)) bad_key(s, "partial_rotary_factor", fmt::format("must be in (0, 1], found {}", f));
  s.partial_rotary_dim = static_cast<int64_t>(static_cast<double>(s.head_dim) * f);
  if (s.partial_rotary_dim < 2 || s.partial_rotary_dim % 2 != 0) {
    bad_key(s, "partial_rotary_factor",
            fmt::format("{} of head_dim {} rotates {} dims; RoPE needs an even number of at least 2", f, s.head_dim,
                        s.partial_rotary_dim));
  }
}

// models/phi3: fused qkv_proj / gate_up_proj; a sliding window on every layer when set; Phi-4-mini
// rotates part of each head.
void phi3_keys(const Keys& k, ModelSpec& s) {
  s.fused_qkv = true;
  s.fused_gate_up = true;
  partial_rotary_keys(k, s);
}

// models/glm, models/glm4: q/k/v biases when attention_bias (o_proj has none), fused gate_up_proj
// (Phi3MLP's: first half gate), RoPE on the first half of each head with adjacent dims paired
// (apply_rotary_pos_emb: rotate_half over x[..., 0::2] / x[..., 1::2], cos/sin repeat_interleave'd).
// Glm4DecoderLayer adds post_self_attn_layernorm and post_mlp_layernorm on the two branch outputs.
// models/glm4v: Glm4vTextDecoderLayer is Glm4DecoderLayer; apply_multimodal_rotary_pos_emb pairs
// adjacent dims the same way (rotate_half_llm), and for text its three position rows are equal.
// Glm4vTextAttention takes head_dim = hidden_size / heads whatever a head_dim key says, and always
// biases q/k/v; partial_rotary_factor is required (without it transformers' default of 1 makes the
// mrope sections, which cover half the head, fail to split).
void glm_keys(const Keys& k, ModelSpec& s) {
  const bool glm4v = s.architecture == "Glm4vForConditionalGeneration";
  if (glm4v) {
    if (s.hidden_size % s.num_heads != 0) {
      bad_key(s, "num_attention_heads",
              fmt::format("must divide hidden_size {} (Glm4vTextAttention's head_dim), found {}", s.hidden_size,
                          s.num_heads));
    }
    s.head_dim = s.hidden_size / s.num_heads;
    if (!k.find("partial_rotary_factor")) {
      fail("{}: Glm4vForConditionalGeneration needs text_config.partial_rotary_factor (the released configs write "
           "0.5; transformers' default of 1 cannot split the mrope sections over half a head)",
           s.source);
    }
  }
  s.qkv_bias = glm4v || k.get_bool("attention_bias", true);
  s.fused_gate_up = true;
  s.rope_interleaved = true;
  partial_rotary_keys(k, s);
  if (s.architecture == "Glm4ForCausalLM" || glm4v) {
    s.sandwich_norms = true;
    s.sandwich_names = ModelSpec::SandwichNames::glm4;
  }
}

// models/smollm3 (SmolLM3Config.__post_init__, SmolLM3Attention): layer l rotates q/k only when
// no_rope_layers[l] (default: every layer but each no_rope_layer_interval-th); with
// use_sliding_window and a sliding_window, layer_types (default: the NoPE layers) slide.
// no_rope_layers (1 = the layer rotates, 0 = NoPE) when given (and not empty), else a NoPE layer every
// no_rope_layer_interval-th (SmolLM3Config, Llama4TextConfig.__post_init__).
void nope_layers_from(const Keys& k, ModelSpec& s) {
  std::vector<int64_t> rope;
  if (auto given = k.find("no_rope_layers"); given && !(given->is_array() && given->size() == 0)) {
    rope = given->as_int_list();
    if (static_cast<int64_t>(rope.size()) < s.num_layers) {
      given->fail(fmt::format("lists {} layers for a model of {}", rope.size(), s.num_layers));
    }
  } else {
    const int64_t every = k.get_int("no_rope_layer_interval", 4);
    if (every <= 0) bad_key(s, "no_rope_layer_interval", fmt::format("must be positive, found {}", every));
    for (int64_t l = 0; l < s.num_layers; ++l) rope.push_back((l + 1) % every != 0);
  }
  s.nope_layers.assign(static_cast<size_t>(s.num_layers), 0);
  for (int64_t l = 0; l < s.num_layers; ++l) s.nope_layers[static_cast<size_t>(l)] = rope[static_cast<size_t>(l)] == 0;
}

void smollm3_keys(const Keys& k, ModelSpec& s) {
  nope_layers_from(k, s);
  if (k.get_bool("use_sliding_window", false) && k.find("sliding_window")) {
    s.sliding_window = k.get_int("sliding_window");
    sliding_layers_from(k, s, [&s](int64_t l) { return s.nope_layers[static_cast<size_t>(l)] != 0; });
  }
}

// models/granite (GraniteModel, GraniteDecoderLayer, GraniteAttention, GraniteForCausalLM): a Llama
// whose embeddings are multiplied by embedding_multiplier, attention scores scaled by
// attention_multiplier (instead of head_dim^-0.5), both branch outputs multiplied by
// residual_multiplier before their residual add, logits divided by logits_scaling; GraniteConfig's
// defaults are 1.0 each (plain multiplications of Python floats: no rounding to the checkpoint dtype).
void granite_keys(const Keys& k, ModelSpec& s) {
  s.embed_scale = k.get_double("embedding_multiplier", 1.0);
  s.attn_scale = k.get_double("attention_multiplier", 1.0);
  s.residual_multiplier = k.get_double("residual_multiplier", 1.0);
  s.logits_scaling = k.get_double("logits_scaling", 1.0);
  if (!(s.embed_scale > 0) || !std::isfinite(s.embed_scale)) {
    bad_key(s, "embedding_multiplier", fmt::format("must be a positive number, found {}", s.embed_scale));
  }
  if (!(s.attn_scale > 0) || !std::isfinite(s.attn_scale)) {
    bad_key(s, "attention_multiplier", fmt::format("must be a positive number, found {}", s.attn_scale));
  }
}

// models/granitemoe, models/granitemoeshared (GraniteMoeMoE, JetMoeTopKGating, GraniteMoeSharedMLP):
// Granite's multipliers; every layer MoE with num_local_experts experts as wide as intermediate_size,
// stacked in input_linear / output_linear; the router takes the top-k logits and softmaxes them,
// which is the softmax over all E renormalised over the k; GraniteMoeShared adds shared_mlp of
// shared_intermediate_size (0 = none) to the experts' sum, ungated.
void granite_moe_keys(const Keys& k, ModelSpec& s) {
  granite_keys(k, s);
  mixtral_keys(k, s);  // Mixtral's experts, router and layers (GraniteMoeForCausalLM is a MixtralForCausalLM)
  s.expert_names = ModelSpec::ExpertNames::granite;
  s.fused_experts = true;
  if (s.architecture == "GraniteMoeSharedForCausalLM") {
    s.shared_expert_intermediate_size = k.get_int("shared_intermediate_size", 0);
    s.shared_expert_gated = false;
  }
}

// models/granitemoehybrid (GraniteMoeHybridConfig, GraniteMoeHybridDecoderLayer, GraniteMoeHybridModel):
// Granite's multipliers; layer_types says "attention" or "mamba" (a Mamba-2 mixer, mamba2_keys) per layer,
// every layer "mamba" without it (GraniteMoeHybridConfig.layers_block_type); RoPE on every attention layer
// when position_embedding_type is "rope", on none when it is null or "nope"; shared_mlp (GraniteMoeSharedMLP,
// gated, of shared_intermediate_size) is the layer's whole MLP when num_local_experts is 0, else added
// ungated to GraniteMoe's experts.
void granite_hybrid_keys(const Keys& k, ModelSpec& s) {
  s.linear_layers.assign(static_cast<size_t>(s.num_layers), 1);
  each_layer_type(k, s, [&](int64_t l, const std::string& name, const io::JsonValue& t) {
    if (name != "attention" && name != "mamba") t.fail(fmt::format("'{}' is not a layer type (attention, mamba)", name));
    s.linear_layers[static_cast<size_t>(l)] = name == "mamba";
  });
  if (std::find(s.linear_layers.begin(), s.linear_layers.end(), 1) == s.linear_layers.end()) {
    s.linear_layers.clear();
  } else {
    mamba2_keys(k, s);
  }
  // transformers rotates only for "rope"; the Granite 4.0-H configs say "nope"
  const std::string position = k.get_string("position_embedding_type", "nope");
  if (position != "rope" && position != "nope") {
    bad_key(s, "position_embedding_type", fmt::format("'{}' is not supported (rope; nope or null for none)", position));
  }
  if (position == "nope") s.nope_layers.assign(static_cast<size_t>(s.num_layers), 1);
  const int64_t shared = k.get_int("shared_intermediate_size", 1024);
  if (k.get_int("num_local_experts", 8) > 0) {
    granite_moe_keys(k, s);
    s.shared_expert_intermediate_size = shared;
    s.shared_expert_gated = false;
  } else {
    granite_keys(k, s);
    s.intermediate_size = shared;
    s.expert_names = ModelSpec::ExpertNames::granite;  // the dense MLP's names: shared_mlp.input_linear/output_linear
  }
}

// GraniteMoeHybridMambaLayer.__init__ (Bamba's mixer, models/bamba BambaMixer) from GraniteMoeHybridConfig's
// mamba_* keys: mamba_n_heads heads of mamba_d_head ("auto": mamba_expand·hidden_size / mamba_n_heads, which
// the product must equal) in mamba_n_groups groups of B and C of mamba_d_state, a conv of mamba_d_conv taps
// (with a bias when mamba_conv_bias); time_step_limit (default (0, inf)) clamps dt.
void mamba2_keys(const Keys& k, ModelSpec& s) {
  s.linear_mixer = ModelSpec::LinearMixer::mamba2;
  const int64_t heads = k.get_int("mamba_n_heads");
  const int64_t inner = k.get_int("mamba_expand") * s.hidden_size;
  check_size(s, "mamba_n_heads", heads);
  int64_t head_dim = 0;
  if (auto d = k.find("mamba_d_head"); d && d->is_string()) {
    if (d->as_string() != "auto") d->fail(fmt::format("'{}' is not a head size (an integer or \"auto\")", d->as_string()));
    if (inner % heads != 0) {
      bad_key(s, "mamba_n_heads", fmt::format("{} does not divide mamba_expand * hidden_size = {}", heads, inner));
    }
    head_dim = inner / heads;
  } else {
    head_dim = k.get_int("mamba_d_head");
  }
  if (head_dim * heads != inner) {
    bad_key(s, "mamba_d_head", fmt::format("{} heads of {} are not mamba_expand * hidden_size = {}", heads, head_dim,
                                           inner));
  }
  s.linear_num_value_heads = heads;
  s.linear_value_head_dim = head_dim;
  s.linear_num_key_heads = k.get_int("mamba_n_groups");
  s.linear_key_head_dim = k.get_int("mamba_d_state");
  s.linear_conv_kernel = k.get_int("mamba_d_conv");
  s.linear_conv_bias = k.get_bool("mamba_conv_bias", true);
  if (s.activation != Activation::silu) {  // the mixer's conv activation is hidden_act too; we run SiLU there
    bad_key(s, "hidden_act", "must be silu beside Mamba-2 layers (their conv's activation), as in every Granite 4.0-H");
  }
  if (k.get_bool("mamba_proj_bias", false)) {
    bad_key(s, "mamba_proj_bias", "true is not supported (in_proj and out_proj without biases, as every released "
                                  "Granite 4.0-H)");
  }
  if (auto limit = k.find("time_step_limit")) {
    if (!limit->is_array() || limit->size() != 2) limit->fail("must be a list of two numbers (min, max)");
    s.mamba_dt_min = limit->at(0).as_double();
    s.mamba_dt_max = limit->at(1).is_null() ? std::numeric_limits<double>::infinity() : limit->at(1).as_double();
    if (!(s.mamba_dt_min >= 0) || !(s.mamba_dt_max > s.mamba_dt_min)) {
      limit->fail(fmt::format("[{}, {}] is not a range 0 <= min < max", s.mamba_dt_min, s.mamba_dt_max));
    }
    // the engines clamp in fp32: a bound beyond its range is none
    if (s.mamba_dt_max > std::numeric_limits<float>::max()) s.mamba_dt_max = std::numeric_limits<double>::infinity();
  }
}

// models/lfm2 (Lfm2Config, Lfm2DecoderLayer, Lfm2ShortConv, Lfm2Attention) and models/lfm2_moe alike:
// layer_types of "conv" / "full_attention" (else full_attn_idxs lists the attention layers, every layer without
// it); per-head q/k RMSNorms before RoPE; norm_eps; "theta" (the original key) over rope_theta; "tie_embedding"
// over tie_word_embeddings; the MLPs SwiGLU whatever a hidden_act says.
void lfm2_layer_keys(const Keys& k, ModelSpec& s) {
  s.lfm2_names = true;
  s.activation = Activation::silu;
  s.qk_norm_names = ModelSpec::QkNormNames::q_layernorm;
  s.rms_norm_eps = k.get_double("norm_eps");
  if (auto theta = k.find("theta")) s.rope_theta = theta->as_double();
  if (auto tie = k.find("tie_embedding")) s.tied_embeddings = tie->as_bool();
  if (k.get_bool("conv_bias", false)) {
    bad_key(s, "conv_bias", "true is not supported (biases on conv.in_proj, conv.conv and conv.out_proj; no LFM2 "
                            "release has them)");
  }
  s.linear_layers.assign(static_cast<size_t>(s.num_layers), 0);
  const bool listed = each_layer_type(k, s, [&](int64_t l, const std::string& name, const io::JsonValue& t) {
    if (name != "conv" && name != "full_attention") t.fail(fmt::format("'{}' is not a layer type (conv, full_attention)", name));
    s.linear_layers[static_cast<size_t>(l)] = name == "conv";
  });
  if (!listed) {
    if (auto idx = k.find("full_attn_idxs")) {
      s.linear_layers.assign(static_cast<size_t>(s.num_layers), 1);
      for (int64_t l : idx->as_int_list()) {
        if (l < 0 || l >= s.num_layers) idx->fail(fmt::format("layer {} is outside [0, {})", l, s.num_layers));
        s.linear_layers[static_cast<size_t>(l)] = 0;
      }
    }
  }
  if (std::find(s.linear_layers.begin(), s.linear_layers.end(), 1) == s.linear_layers.end()) {
    s.linear_layers.clear();
    return;
  }
  s.linear_mixer = ModelSpec::LinearMixer::short_conv;
  s.linear_num_value_heads = 1;
  s.linear_value_head_dim = s.hidden_size;
  s.linear_conv_kernel = k.get_int("conv_L_cache");
}

// Lfm2MLP's width: block_ff_dim (else intermediate_size), with block_auto_adjust_ff_dim 2/3 of it, then, with a
// block_ffn_dim_multiplier, times it and rounded up to block_multiple_of.
void lfm2_keys(const Keys& k, ModelSpec& s) {
  lfm2_layer_keys(k, s);
  int64_t ff = k.get_int("block_ff_dim", k.get_int("intermediate_size"));
  if (k.get_bool("block_auto_adjust_ff_dim", true)) {
    ff = 2 * ff / 3;
    // transformers rounds inside the multiplier's `if` (a null multiplier leaves 2/3 unrounded; vLLM and llama.cpp
    // round either way: the released configs' 1.0 makes them agree)
    if (auto m = k.find("block_ffn_dim_multiplier")) {
      ff = static_cast<int64_t>(m->as_double() * static_cast<double>(ff));
      const int64_t multiple = k.get_int("block_multiple_of");
      if (multiple <= 0) bad_key(s, "block_multiple_of", fmt::format("must be positive, found {}", multiple));
      ff = multiple * ((ff + multiple - 1) / multiple);
    }
  }
  s.intermediate_size = ff;
}

// Nemotron-H's MoE blocks ('E': NemotronHMoE, a DeepseekV3MoE with NemotronHTopkRouter): DeepSeek-V3's sigmoid
// router choosing on s + e_score_correction_bias within the best topk_group of n_group groups, the kept weights
// renormalised (norm_topk_prob) and times routed_scaling_factor; n_routed_experts ungated relu² experts of
// moe_intermediate_size, and always one ungated shared expert of moe_shared_expert_intermediate_size added as it
// is. With moe_latent_size (Nemotron 3 Super's LatentMoE) the routed experts run in that latent, between
// mixer.fc1_latent_proj and mixer.fc2_latent_proj (NemotronHMoE.forward); the router and the shared expert read
// the block's H-wide input.
void nemotron_h_moe_keys(const Keys& k, ModelSpec& s) {
  s.expert_names = ModelSpec::ExpertNames::nemotron_h;
  s.num_experts = k.get_int("n_routed_experts", 8);
  s.experts_per_token = k.get_int("num_experts_per_tok", 2);
  s.moe_intermediate_size = k.get_int("moe_intermediate_size", 7688);
  s.shared_expert_intermediate_size = k.get_int("moe_shared_expert_intermediate_size", 7688);
  s.shared_expert_gated = false;
  s.norm_topk_prob = k.get_bool("norm_topk_prob", true);
  s.router_sigmoid = true;
  s.router_bias = true;
  s.expert_groups = k.get_int("n_group", 1);
  s.topk_groups = k.get_int("topk_group", 1);
  s.routed_scaling_factor = k.get_double("routed_scaling_factor", 1.0);
  check_size(s, "moe_shared_expert_intermediate_size", s.shared_expert_intermediate_size);
  if (auto latent = k.find("moe_latent_size"); latent && !latent->is_null()) {
    s.moe_latent_size = k.get_int("moe_latent_size");
    check_size(s, "moe_latent_size", s.moe_latent_size);
    if (s.moe_latent_size > s.hidden_size) {
      bad_key(s, "moe_latent_size",
              fmt::format("a latent wider than hidden_size ({} > {}) is not supported", s.moe_latent_size,
                          s.hidden_size));
    }
  }
}

// models/nemotron_h (NemotronHConfig, NemotronHBlock, NemotronHMamba2Mixer = zamba2's Zamba2MambaMixer): the layers
// from hybrid_override_pattern (one character per layer: 'M' Mamba-2, '*' attention, '-' MLP, 'E' MoE), else
// layers_block_type / layer_types (transformers 5: "mamba" or "linear_attention", "attention" or "full_attention",
// "mlp", "moe"); their count is the pattern's whatever num_hidden_layers says (as NemotronHConfig). Attention
// without any positional encoding (JambaAttention); the MLP relu²(up)·down (NemotronMLP, mlp_hidden_act relu2);
// Mamba-2 of mamba_num_heads heads of mamba_head_dim in n_groups groups of ssm_state_size, a conv of conv_kernel
// taps (with a bias when use_conv_bias), dt floored at time_step_min and not capped (Zamba2MambaMixer ignores
// time_step_limit), its gated norm per group. The old key names (mamba_n_groups, mamba_d_conv, mamba_dt_min,
// mamba_conv_bias) as NemotronHConfig.__post_init__ takes them; RMSNorm eps layer_norm_epsilon.
void nemotron_h_keys(const Keys& k, ModelSpec& s) {
  s.nemotron_h_names = true;
  s.weight_prefix = "backbone.";  // load_model_spec switches to "model." for transformers 5's files
  s.embed_name = "embeddings.weight";
  std::vector<char> blocks;       // 'M', '*', '-', 'E'
  if (auto p = k.find("hybrid_override_pattern")) {
    for (char c : p->as_string()) {
      if (c != 'M' && c != '*' && c != '-' && c != 'E') {
        p->fail(fmt::format("'{}' is not a layer ('M' Mamba-2, '*' attention, '-' MLP, 'E' MoE)", c));
      }
      blocks.push_back(c);
    }
  } else {
    const char* key = k.find("layers_block_type") ? "layers_block_type" : "layer_types";
    if (auto list = k.find(key)) {
      if (!list->is_array()) list->fail("must be a list of layer types");
      for (size_t l = 0; l < list->size(); ++l) {
        const io::JsonValue t = list->at(l);
        const std::string& name = t.as_string();
        const char c = name == "mamba" || name == "linear_attention"    ? 'M'
                       : name == "attention" || name == "full_attention" ? '*'
                       : name == "mlp"                                   ? '-'
                       : name == "moe"                                   ? 'E'
                                                                         : '?';
        if (c == '?') t.fail(fmt::format("'{}' is not a layer type (mamba, attention, mlp, moe)", name));
        blocks.push_back(c);
      }
    } else {
      blocks = {'M', 'E', '*', '-'};  // NemotronHConfig's default layers_block_type
    }
  }
  const char* pattern_key = k.find("hybrid_override_pattern") ? "hybrid_override_pattern" : "layers_block_type";
  if (blocks.empty()) bad_key(s, pattern_key, "lists no layer");
  if (k.given("num_hidden_layers") && k.get_int("num_hidden_layers") != static_cast<int64_t>(blocks.size())) {
    log::warn("{}: num_hidden_layers {} is not the {} layers of {}; the pattern decides (as transformers)", s.source,
              k.get_int("num_hidden_layers"), blocks.size(), pattern_key);
  }
  s.num_layers = static_cast<int64_t>(blocks.size());
  s.layer_blocks.clear();
  s.linear_layers.clear();
  s.moe_layers.clear();
  const bool moe = std::find(blocks.begin(), blocks.end(), 'E') != blocks.end();
  for (char c : blocks) {
    const bool mlp = c == '-' || c == 'E';
    s.layer_blocks.push_back(static_cast<uint8_t>(mlp ? ModelSpec::LayerBlock::mlp : ModelSpec::LayerBlock::mixer));
    s.linear_layers.push_back(c == 'M' ? 1 : 0);
    if (moe) s.moe_layers.push_back(c == 'E' ? 1 : 0);
  }
  if (moe) nemotron_h_moe_keys(k, s);
  if (std::find(s.linear_layers.begin(), s.linear_layers.end(), 1) == s.linear_layers.end()) s.linear_layers.clear();
  s.nope_layers.assign(static_cast<size_t>(s.num_layers), 1);  // JambaAttention: no positional encoding

  if (!k.given("head_dim")) s.head_dim = k.get_int("attention_head_dim", 128);  // NemotronHConfig: head_dim 128
  s.rms_norm_eps = k.get_double("layer_norm_epsilon", 1e-5);
  const std::string act = k.get_string("mlp_hidden_act", "relu2");
  if (act != "relu2") bad_key(s, "mlp_hidden_act", fmt::format("'{}' is not supported (relu2)", act));
  s.activation = Activation::relu2;
  for (const char* key : {"attention_bias", "mlp_bias", "use_bias"}) {
    if (k.get_bool(key, false)) bad_key(s, key, "true is not supported (no released Nemotron-H has these biases)");
  }
  if (auto w = k.find("sliding_window"); w && !w->is_null()) {
    bad_key(s, "sliding_window", "is not supported (the attention layers attend to every earlier token)");
  }
  if (s.linear_layers.empty()) return;
  s.linear_mixer = ModelSpec::LinearMixer::mamba2;
  s.mamba_norm_per_group = true;
  const auto get = [&](const char* key, const char* old_key, int64_t fallback) {
    return k.given(key) || !k.given(old_key) ? k.get_int(key, fallback) : k.get_int(old_key);
  };
  s.linear_num_value_heads = k.get_int("mamba_num_heads", 128);
  s.linear_value_head_dim = k.get_int("mamba_head_dim", 64);
  s.linear_num_key_heads = get("n_groups", "mamba_n_groups", 8);
  s.linear_key_head_dim = k.get_int("ssm_state_size", 128);
  s.linear_conv_kernel = get("conv_kernel", "mamba_d_conv", 4);
  s.linear_conv_bias = k.given("use_conv_bias") || !k.given("mamba_conv_bias") ? k.get_bool("use_conv_bias", true)
                                                                                : k.get_bool("mamba_conv_bias", true);
  s.mamba_dt_min = k.given("time_step_min") || !k.given("mamba_dt_min") ? k.get_double("time_step_min", 0.001)
                                                                        : k.get_double("mamba_dt_min");
  s.mamba_dt_max = std::numeric_limits<double>::infinity();
  if (!(s.mamba_dt_min >= 0) || !std::isfinite(s.mamba_dt_min)) {
    bad_key(s, "time_step_min", fmt::format("must be a number >= 0, found {}", s.mamba_dt_min));
  }
  const std::string mamba_act = k.get_string("mamba_hidden_act", "silu");
  if (mamba_act != "silu") bad_key(s, "mamba_hidden_act", fmt::format("'{}' is not supported (silu)", mamba_act));
}

// models/lfm2_moe (Lfm2MoeConfig, Lfm2MoeDecoderLayer, Lfm2MoeSparseMoeBlock): LFM2's layers; the first
// num_dense_layers MLPs dense of intermediate_size (not adjusted), the others num_experts experts of
// moe_intermediate_size, num_experts_per_tok per token by a sigmoid router — chosen on s + expert_bias with
// use_expert_bias, weighted by s, renormalised by (sum + 1e-6) with norm_topk_prob, times routed_scaling_factor.
void lfm2_moe_keys(const Keys& k, ModelSpec& s) {
  lfm2_layer_keys(k, s);
  s.intermediate_size = k.get_int("intermediate_size");
  s.num_experts = k.get_int("num_experts");
  s.experts_per_token = k.get_int("num_experts_per_tok");
  s.moe_intermediate_size = k.get_int("moe_intermediate_size");
  s.expert_names = ModelSpec::ExpertNames::lfm2;
  s.router_sigmoid = true;
  s.router_bias = k.get_bool("use_expert_bias", true);
  s.norm_topk_prob = k.get_bool("norm_topk_prob", true);
  s.router_norm_eps = 1e-6;
  s.routed_scaling_factor = k.get_double("routed_scaling_factor", 1.0);
  const int64_t dense = k.get_int("num_dense_layers");
  if (dense < 0) bad_key(s, "num_dense_layers", fmt::format("must not be negative, found {}", dense));
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 0);
  for (int64_t l = dense; l < s.num_layers; ++l) s.moe_layers[static_cast<size_t>(l)] = 1;
}

// Apertus (models/apertus: ApertusAttention, ApertusDecoderLayer, ApertusMLP): Llama's layers with RMSNorms of each q
// and k head before RoPE (Qwen3's), the norms named attention_layernorm / feedforward_layernorm, and the ungated MLP
// down_proj(XIELUActivation(up_proj(x))) without biases, whose four scalars per layer are checkpoint tensors.
// The release's own keys qk_norm and post_norm are not read by transformers, which always runs q/k norms and pre-norm
// layers: a config saying otherwise is refused. A rope_scaling written null is no scaling (transformers 4.56's
// ApertusConfig takes the null over its llama3 default), unless rope_parameters says otherwise.
void apertus_keys(const Keys& k, ModelSpec& s) {
  s.apertus_names = true;
  if (!k.get_bool("qk_norm", true)) {
    bad_key(s, "qk_norm", "false is not supported: ApertusAttention always has q_norm and k_norm");
  }
  if (k.get_bool("post_norm", false)) {
    bad_key(s, "post_norm", "true is not supported: ApertusDecoderLayer norms each branch's input");
  }
  if (k.given("rope_scaling") && !k.find("rope_scaling") && !k.given("rope_parameters")) s.rope_scaling = RopeScaling{};
}

// models/hunyuan_v1_dense (HunYuanDenseV1Attention, HunYuanDenseV1RotaryEmbedding): Llama's layers; RoPE,
// then RMSNorms of each q and k head (self_attn.query_layernorm / key_layernorm); with rope_scaling of type
// "dynamic" and an alpha, inv_freq from base = rope_theta * alpha^(head_dim / (head_dim - 2)) and no attention
// scaling (the dynamic update never fires within max_position_embeddings, the context's cap).
void hunyuan_dense_keys(const Keys&, ModelSpec& s) {
  s.qk_norm_after_rope = true;
  s.qk_norm_names = ModelSpec::QkNormNames::query_layernorm;
  RopeScaling& r = s.rope_scaling;
  if (r.type == RopeScaling::Type::dynamic && r.ntk_alpha != 0.0) {
    if (!(r.ntk_alpha > 0) || !std::isfinite(r.ntk_alpha) || s.head_dim <= 2) {
      bad_key(s, "rope_scaling.alpha", fmt::format("must be positive with head_dim > 2, found {} (head_dim {})",
                                                   r.ntk_alpha, s.head_dim));
    }
    const double hd = static_cast<double>(s.head_dim);
    s.rope_theta *= std::pow(r.ntk_alpha, hd / (hd - 2.0));
    r = RopeScaling{};  // the default RoPE with that base
  }
}

// models/hunyuan_v1_moe (HunYuanMoEV1Config, HunYuanMoEV1Attention, HunYuanMoEV1Gate, HunYuanMoEV1Moe; transformers
// 4.56 on): HunYuan dense's attention and RoPE, every layer MoE. The router mlp.gate.wg (fp32) scores a softmax over
// num_experts, the moe_topk best renormalised by their sum; the experts and the shared MLP mlp.shared_mlp (added as it
// is) are all intermediate_size wide. num_experts and moe_topk may be per-layer lists (read at [layer_idx]), which we
// take when every entry is the same. The release's keys transformers does not read are checked against what it runs:
// moe_intermediate_size must equal intermediate_size, num_shared_expert 1, use_mixed_mlp_moe true (Tencent's code
// runs no shared MLP without it), use_cla false (cross-layer KV sharing: k/v projections on every other layer only).
// head_dim: the key, else the release's attention_head_dim (as Tencent's code and vLLM read it), else hidden / heads.
void hunyuan_moe_keys(const Keys& k, ModelSpec& s) {
  if (!k.find("head_dim")) {
    if (auto a = k.find("attention_head_dim")) s.head_dim = a->as_int();
  }
  hunyuan_dense_keys(k, s);
  // A per-layer list's value, all entries alike (one value for every layer); a number as it is.
  const auto uniform = [&](const char* key, std::optional<int64_t> fallback) -> std::optional<int64_t> {
    const auto v = k.find(key);
    if (!v && !fallback) return k.get_int(key);  // absent or null: fails naming the config and the key
    if (!v) return fallback;
    if (!v->is_array()) return v->as_int();
    const std::vector<int64_t> list = v->as_int_list();
    if (static_cast<int64_t>(list.size()) != s.num_layers) {
      v->fail(fmt::format("lists {} values for {} layers", list.size(), s.num_layers));
    }
    if (std::adjacent_find(list.begin(), list.end(), std::not_equal_to<>()) != list.end()) {
      v->fail("per-layer values must all be the same (layers of different shapes are not supported)");
    }
    return list.front();
  };
  s.num_experts = *uniform("num_experts", std::nullopt);
  s.experts_per_token = *uniform("moe_topk", std::nullopt);
  s.moe_intermediate_size = s.intermediate_size;
  if (const auto fm = uniform("moe_intermediate_size", s.intermediate_size); *fm != s.intermediate_size) {
    bad_key(s, "moe_intermediate_size",
            fmt::format("{} is not intermediate_size {}: transformers runs the experts at intermediate_size", *fm,
                        s.intermediate_size));
  }
  if (const auto n = uniform("num_shared_expert", 1); *n != 1) {
    bad_key(s, "num_shared_expert", fmt::format("{} is not supported (transformers runs one shared MLP)", *n));
  }
  if (!k.get_bool("use_mixed_mlp_moe", true)) {
    bad_key(s, "use_mixed_mlp_moe", "false (experts without the shared MLP) is not supported");
  }
  if (k.get_bool("use_cla", false)) {
    bad_key(s, "use_cla", "true (k/v shared across layers) is not supported");
  }
  s.shared_expert_intermediate_size = s.intermediate_size;
  s.shared_expert_gated = false;
  s.norm_topk_prob = true;
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  s.expert_names = ModelSpec::ExpertNames::hunyuan;
}

// models/mixtral (MixtralSparseMoeBlock): every layer is MoE, experts as wide as
// intermediate_size, the top-k weights always renormalised.
void mixtral_keys(const Keys& k, ModelSpec& s) {
  s.num_experts = k.get_int("num_local_experts", 8);
  s.experts_per_token = k.get_int("num_experts_per_tok", 2);
  s.moe_intermediate_size = s.intermediate_size;
  s.norm_topk_prob = true;
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  s.expert_names = ModelSpec::ExpertNames::mixtral;
}

// models/phimoe as transformers 4.x has it (PhimoeDecoderLayer, PhimoeModel, sparsemixer,
// PhimoeRotaryEmbedding.forward; Microsoft's remote code alike): Mixtral's layers and experts with
// nn.LayerNorm (weight and bias, eps = rms_norm_eps) for input_layernorm, post_attention_layernorm and
// model.norm, q/k/v/o biases when attention_bias, lm_head's bias when lm_head_bias, the sparsemixer router
// (top-2 only, jitter eps = router_jitter_noise), and cos/sin times rope_scaling's short_mscale (long_mscale
// past original_max_position_embeddings) in place of LongRoPE's computed attention factor. transformers 5's
// port differs (RMSNorms without the biases in the layers; its rotary embedding never sets the mscales)
// and is not followed (docs/families.md).
void phimoe_keys(const Keys& k, ModelSpec& s) {
  mixtral_keys(k, s);
  s.norm_topk_prob = false;
  s.router_sparsemixer = true;
  if (s.experts_per_token != 2) {
    bad_key(s, "num_experts_per_tok",
            fmt::format("the sparsemixer router picks exactly 2 experts (transformers raises otherwise), found {}",
                        s.experts_per_token));
  }
  s.router_jitter_eps = k.get_double("router_jitter_noise");
  if (!(s.router_jitter_eps >= 0) || !std::isfinite(s.router_jitter_eps)) {
    bad_key(s, "router_jitter_noise", fmt::format("must be a non-negative number, found {}", s.router_jitter_eps));
  }
  s.norm_centered = true;
  s.norm_bias = true;
  s.lm_head_bias = k.get_bool("lm_head_bias", false);
  std::optional<io::JsonValue> r = k.find("rope_scaling");
  if (!r) r = k.find("rope_parameters");
  if (s.rope_scaling.type == RopeScaling::Type::none || !r) return;
  if (s.rope_scaling.type != RopeScaling::Type::longrope) {
    r->fail("must be longrope for Phi-3.5-MoE (PhimoeRotaryEmbedding scales it by short_mscale / long_mscale)");
  }
  // PhimoeConfig requires both (a TypeError otherwise)
  const double short_m = r->get_double("short_mscale"), long_m = r->get_double("long_mscale");
  if (short_m != long_m) {
    r->fail(fmt::format("short_mscale {} and long_mscale {} differ, which is not supported (the released "
                        "checkpoints have one value for both)",
                        short_m, long_m));
  }
  s.rope_scaling.attention_factor = short_m;
}

// models/llama4 (Llama4TextConfig.__post_init__, Llama4TextAttention, Llama4Router, Llama4TextMoe,
// Llama4TextExperts, apply_rotary_emb): Llama's pre-norm layers where
// - no_rope_layers (default: every no_rope_layer_interval-th layer) take no RoPE; the others rotate adjacent
//   pairs (complex multiplication) and, with use_qk_norm, L2-normalise each q and k head after RoPE;
// - with attn_temperature_tuning the NoPE layers scale their queries by
//   1 + attn_scale · log1p(floor((position + 1) / floor_scale));
// - the rotary layers attend in chunks of attention_chunk_size: context_length() stays within one chunk,
//   where that is causal attention (longer sequences are refused rather than run unchunked);
// - the layers in moe_layers (default every interleave_moe_layer_step-th) are MoE: a sigmoid of the top-k
//   router logits scales each chosen expert's input, the experts (intermediate_size wide, stacked and
//   transposed) are summed with an ungated shared expert of the same width; the other layers are dense
//   MLPs of intermediate_size_mlp.
void llama4_keys(const Keys& k, ModelSpec& s) {
  nope_layers_from(k, s);
  s.rope_interleaved = true;
  s.qk_l2_norm = k.get_bool("use_qk_norm", true);
  // attn_temperature_tuning: a bool in Llama4TextConfig, an int (4) in the released configs — truthy either way
  const std::optional<io::JsonValue> tuning = k.find("attn_temperature_tuning");
  if (tuning && (tuning->is_bool() ? tuning->as_bool() : tuning->as_double() != 0.0)) {
    s.query_log_scale_beta = k.get_double("attn_scale");
    s.query_log_scale_period = k.get_int("floor_scale");
    if (s.query_log_scale_period <= 0) {
      bad_key(s, "floor_scale", fmt::format("must be positive, found {}", s.query_log_scale_period));
    }
    s.query_log_scale_offset = 1;
    s.query_log_scale_nope_only = true;
  }
  s.attention_chunk = k.get_int("attention_chunk_size", 0);
  if (s.attention_chunk < 0) bad_key(s, "attention_chunk_size", fmt::format("must not be negative, found {}", s.attention_chunk));
  s.moe_intermediate_size = s.intermediate_size;  // intermediate_size: each expert's (and the shared one's) width
  s.intermediate_size = k.get_int("intermediate_size_mlp");
  check_size(s, "intermediate_size_mlp", s.intermediate_size);
  s.num_experts = k.get_int("num_local_experts");
  s.experts_per_token = k.get_int("num_experts_per_tok");
  s.shared_expert_intermediate_size = s.moe_intermediate_size;
  s.shared_expert_gated = false;
  s.router_sigmoid = true;
  s.norm_topk_prob = false;
  s.moe_scale_input = true;
  s.expert_names = ModelSpec::ExpertNames::llama4;
  s.fused_experts = true;
  s.transposed_experts = true;
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (auto listed = k.find("moe_layers")) {
    for (int64_t l : listed->as_int_list()) {
      if (l < 0 || l >= s.num_layers) listed->fail(fmt::format("layer {} is not one of the {} layers", l, s.num_layers));
      s.moe_layers[static_cast<size_t>(l)] = 1;
    }
  } else {
    const int64_t step = k.get_int("interleave_moe_layer_step", 1);
    if (step <= 0) bad_key(s, "interleave_moe_layer_step", fmt::format("must be positive, found {}", step));
    for (int64_t l = step - 1; l < s.num_layers; l += step) s.moe_layers[static_cast<size_t>(l)] = 1;
  }
}

// models/qwen2_moe, models/qwen3_moe (*DecoderLayer.__init__): layer l is MoE when it is not in
// mlp_only_layers and (l + 1) % decoder_sparse_step == 0; the others are dense MLPs of
// intermediate_size. Qwen2-MoE adds the gated shared expert.
void qwen_moe_keys(const Keys& k, ModelSpec& s) {
  s.num_experts = k.get_int("num_experts", s.architecture == "Qwen2MoeForCausalLM" ? 60 : 128);
  s.experts_per_token = k.get_int("num_experts_per_tok", s.architecture == "Qwen2MoeForCausalLM" ? 4 : 8);
  s.moe_intermediate_size = k.get_int("moe_intermediate_size", s.architecture == "Qwen2MoeForCausalLM" ? 1408 : 768);
  if (s.architecture == "Qwen2MoeForCausalLM") {
    s.shared_expert_intermediate_size = k.get_int("shared_expert_intermediate_size", 5632);
  }
  s.norm_topk_prob = k.get_bool("norm_topk_prob", false);
  const int64_t step = k.get_int("decoder_sparse_step", 1);
  if (step <= 0) bad_key(s, "decoder_sparse_step", fmt::format("must be positive, found {}", step));
  std::vector<int64_t> dense;
  if (auto only = k.find("mlp_only_layers")) dense = only->as_int_list();
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 0);
  for (int64_t l = 0; l < s.num_layers; ++l) {
    const bool is_dense = std::find(dense.begin(), dense.end(), l) != dense.end();
    s.moe_layers[static_cast<size_t>(l)] = !is_dense && (l + 1) % step == 0;
  }
  s.expert_names = ModelSpec::ExpertNames::qwen;
}

// models/glm4_moe (Glm4MoeConfig, Glm4MoeAttention, Glm4MoeMoE, Glm4MoeDecoderLayer): q/k/v biases
// from attention_bias (o_proj none), q/k norm from use_qk_norm, RoPE on the first half of each head in
// the rotate-half pairing (apply_rotary_pos_emb: q_rot = q[..., :rotary_dim]); the first
// first_k_dense_replace layers are dense MLPs of intermediate_size, the rest MoE: n_routed_experts
// experts of moe_intermediate_size picked by the sigmoid router (route_tokens_to_experts) and
// n_shared_experts shared ones as one MLP of n_shared_experts * moe_intermediate_size, ungated.
// models/glm4v_moe: the same layers (Glm4vMoeTextAttention: Glm4Attention with gpt_neox's rotate-half
// apply_rotary_pos_emb; for text the multimodal RoPE is the plain one), attention_bias true by default.
void sigmoid_moe_keys(const Keys& k, ModelSpec& s);
void glm4_moe_keys(const Keys& k, ModelSpec& s) {
  s.qkv_bias = k.get_bool("attention_bias", false);
  // Glm4vMoeTextConfig has no use_qk_norm (Glm4vMoeTextAttention never norms q/k)
  s.qk_norm = s.architecture != "Glm4vMoeForConditionalGeneration" && k.get_bool("use_qk_norm", false);
  partial_rotary_keys(k, s);
  sigmoid_moe_keys(k, s);
}

// The routed and shared experts of DeepSeek-V2/V3, GLM-4.5 and ERNIE 4.5, under each family's key
// names: `experts` experts of moe_intermediate_size, `top_k` of them per token, and `shared` shared
// ones as one ungated MLP of that many times moe_intermediate_size.
void ungated_shared_moe_keys(const Keys& k, ModelSpec& s, const char* experts, const char* top_k,
                             const char* shared) {
  s.num_experts = k.get_int(experts);
  s.experts_per_token = k.get_int(top_k);
  s.moe_intermediate_size = k.get_int("moe_intermediate_size");
  const int64_t n = k.get_int(shared);
  if (n < 0) bad_key(s, shared, fmt::format("must not be negative, found {}", n));
  s.shared_expert_intermediate_size = n * s.moe_intermediate_size;
  s.shared_expert_gated = false;
}

// The MoE layers of DeepSeek-V2/V3 and GLM-4.5 (DeepseekV2Moe, Glm4MoeMoE = DeepseekV3MoE) but their
// router: n_routed_experts experts from layer first_k_dense_replace on, n_shared_experts shared ones
// as one ungated MLP, the weights times routed_scaling_factor.
void deepseek_moe_keys(const Keys& k, ModelSpec& s) {
  ungated_shared_moe_keys(k, s, "n_routed_experts", "num_experts_per_tok", "n_shared_experts");
  s.routed_scaling_factor = k.get_double("routed_scaling_factor");
  const int64_t dense = k.get_int("first_k_dense_replace");
  if (dense < 0) bad_key(s, "first_k_dense_replace", fmt::format("must not be negative, found {}", dense));
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 0);
  for (int64_t l = dense; l < s.num_layers; ++l) s.moe_layers[static_cast<size_t>(l)] = 1;
  s.mtp_layers = k.get_int("num_nextn_predict_layers", 0);
  if (s.mtp_layers < 0) {
    bad_key(s, "num_nextn_predict_layers", fmt::format("must not be negative, found {}", s.mtp_layers));
  }
  s.expert_names = ModelSpec::ExpertNames::qwen;
}

// GLM-4.5's and DeepSeek-V3's router (Glm4MoeTopkRouter = DeepseekV3TopkRouter): see glm4_moe_keys.
void sigmoid_moe_keys(const Keys& k, ModelSpec& s) {
  deepseek_moe_keys(k, s);
  s.norm_topk_prob = k.get_bool("norm_topk_prob", true);
  s.router_sigmoid = true;
  s.router_bias = true;
  s.expert_groups = k.get_int("n_group");
  s.topk_groups = k.get_int("topk_group");
}

// models/deepseek_v3 (DeepseekV3Config, DeepseekV3Attention, DeepseekV3TopkRouter, DeepseekV3MoE;
// docs/deepseek-mla.md): multi-head latent attention (ModelSpec::mla) over q/k heads of
// qk_nope_head_dim + qk_rope_head_dim and value heads of v_head_dim, the rotated tail paired
// adjacently when rope_interleave (apply_rotary_pos_emb_interleave reorders (2i, 2i + 1) into
// rotate-half's (i, i + R/2) for q and k alike, so the scores equal our in-place adjacent pairs);
// the score scale qk_head_dim^-0.5, times yarn_get_mscale(factor, mscale_all_dim)² when the rope
// is scaled; GLM-4.5's MoE layers. The latent norms are DeepseekV3RMSNorm(rank) with its default eps.
void mla_keys(const Keys& k, ModelSpec& s);
void refuse_other_routing(const Keys& k, const ModelSpec& s);
void deepseek_v3_keys(const Keys& k, ModelSpec& s) {
  mla_keys(k, s);
  s.rope_interleaved = k.get_bool("rope_interleave", true);
  refuse_other_routing(k, s);
  sigmoid_moe_keys(k, s);
}

// models/glm4_moe_lite (Glm4MoeLiteConfig, Glm4MoeLiteAttention = DeepseekV3Attention, Glm4MoeLiteMoE = GLM-4.5's =
// DeepSeek-V3's, Glm4MoeLiteDecoderLayer): DeepSeek-V3's layers; layer l is MoE when mlp_layer_types[l] is "sparse",
// by default every layer but the first (Glm4MoeLiteConfig.__post_init__). transformers does not read
// first_k_dense_replace here, which the release also writes: where it is written it must agree. The release's MTP
// layer (model.layers.47.*, ignored by Glm4MoeLitePreTrainedModel) is counted by num_nextn_predict_layers.
void glm4_moe_lite_keys(const Keys& k, ModelSpec& s) {
  deepseek_v3_keys(k, s);  // first_k_dense_replace: the config's, else the defaults' 1 (mlp_layer_types' default)
  // head_dim is an alias of qk_rope_head_dim here (Glm4MoeLiteConfig.attribute_map), and the rotary embedding turns
  // head_dim × partial_rotary_factor dims: a config where either would change the rotated dims is refused
  if (auto hd = k.find("head_dim"); hd && hd->as_int() != s.partial_rotary_dim) {
    hd->fail(fmt::format("{} differs from qk_rope_head_dim {} (transformers reads head_dim as qk_rope_head_dim)",
                         hd->as_int(), s.partial_rotary_dim));
  }
  std::optional<io::JsonValue> factor = k.find("partial_rotary_factor");
  if (auto rp = k.find("rope_parameters"); !factor && rp && rp->is_object()) factor = rp->find("partial_rotary_factor");
  if (factor && factor->as_double() != 1.0) {
    factor->fail(fmt::format("{} is not supported: the latent attention rotates all qk_rope_head_dim dims",
                             factor->as_double()));
  }
  if (auto types = k.find("mlp_layer_types")) {
    if (!types->is_array() || static_cast<int64_t>(types->size()) != s.num_layers) {
      types->fail(fmt::format("must list one type per layer ({} layers)", s.num_layers));
    }
    for (int64_t l = 0; l < s.num_layers; ++l) {
      const io::JsonValue t = types->at(static_cast<size_t>(l));
      const std::string name = t.as_string();
      if (name != "dense" && name != "sparse") t.fail(fmt::format("'{}' is not a layer type (dense, sparse)", name));
      const uint8_t moe = name == "sparse";
      if (k.given("first_k_dense_replace") && moe != s.moe_layers[static_cast<size_t>(l)]) {
        t.fail(fmt::format("layer {} is {}, but first_k_dense_replace {} says otherwise (transformers reads "
                           "mlp_layer_types)",
                           l, name, k.get_int("first_k_dense_replace")));
      }
      s.moe_layers[static_cast<size_t>(l)] = moe;
    }
  } else if (k.given("first_k_dense_replace") && k.get_int("first_k_dense_replace") != 1) {
    bad_key(s, "first_k_dense_replace",
            fmt::format("{} is not read by transformers for {}: without mlp_layer_types only layer 0 is dense",
                        k.get_int("first_k_dense_replace"), s.architecture));
  }
}

// DeepseekV3TopkRouter (and dots.llm1's copy) always scores with a sigmoid and picks by noaux_tc, whatever
// these keys say; a config naming another method was written for other code, so it is refused rather than
// run differently.
void refuse_other_routing(const Keys& k, const ModelSpec& s) {
  if (auto m = k.find("topk_method"); m && m->as_string() != "noaux_tc") {
    m->fail(fmt::format("'{}' is not supported: {} routes by noaux_tc (sigmoid scores, corrected by "
                        "e_score_correction_bias, within the best topk_group groups)",
                        m->as_string(), s.architecture));
  }
  if (auto f = k.find("scoring_func"); f && f->as_string() != "sigmoid") {
    f->fail(fmt::format("'{}' is not supported: {} scores its experts with a sigmoid", f->as_string(), s.architecture));
  }
}

// models/dots1 (Dots1Config, Dots1Attention, Dots1TopkRouter, Dots1MoE, Dots1DecoderLayer): Qwen3's attention
// (q_norm/k_norm per head before RoPE; attention_bias on q/k/v/o), DeepSeek-V3's router (sigmoid scores, the
// choice corrected by e_score_correction_bias within the best topk_group of n_group groups, the weights
// renormalised + 1e-20 when norm_topk_prob, times routed_scaling_factor) and its n_shared_experts as one
// MLP of n_shared_experts * moe_intermediate_size; layers below first_k_dense_replace are dense MLPs of
// intermediate_size. The sliding layers come from layer_types, else (Dots1Config.__post_init__) every
// layer from max_window_layers on when sliding_window is set. n_group / topk_group null (as dots.llm1.inst's
// config.json writes them) is one group: no group limit, the only routing such a config can mean.
void dots1_keys(const Keys& k, ModelSpec& s) {
  refuse_other_routing(k, s);
  deepseek_moe_keys(k, s);
  s.norm_topk_prob = k.get_bool("norm_topk_prob", false);
  s.router_sigmoid = true;
  s.router_bias = true;
  // null (or both absent: Dots1Config's 1) is one group; one key null beside a real grouping is not a routing
  const auto groups = k.find("n_group"), kept = k.find("topk_group");
  s.expert_groups = groups ? groups->as_int() : 1;
  s.topk_groups = kept ? kept->as_int() : 1;
  if (static_cast<bool>(groups) != static_cast<bool>(kept) && (s.expert_groups != 1 || s.topk_groups != 1)) {
    bad_key(s, groups ? "topk_group" : "n_group",
            fmt::format("null beside {} {}: transformers cannot route so (give both, or both null)",
                        groups ? "n_group" : "topk_group", groups ? s.expert_groups : s.topk_groups));
  }
  if (!k.find("sliding_window")) {
    each_layer_type(k, s, [&](int64_t, const std::string& name, const io::JsonValue& t) {
      if (name == "sliding_attention") t.fail("a sliding layer with sliding_window null (transformers refuses it)");
    });
  }
  if (auto w = k.find("sliding_window")) {
    s.sliding_window = w->as_int();
    const int64_t first = k.get_int("max_window_layers", s.num_layers);
    if (first < 0) bad_key(s, "max_window_layers", fmt::format("must not be negative, found {}", first));
    sliding_layers_from(k, s, [first](int64_t l) { return l >= first; });
    if (std::none_of(s.sliding_layers.begin(), s.sliding_layers.end(), [](auto x) { return x != 0; })) {
      s.sliding_window = 0;  // as released (max_window_layers = the layer count): no layer slides
      s.sliding_layers.clear();
    }
  }
}

// models/deepseek_v2 (DeepseekV2Config, DeepseekV2Attention, DeepseekV2Moe.route_tokens_to_experts;
// DeepSeek's own modeling_deepseek.py MoEGate alike): V3's latent attention with the rotated dims
// paired adjacently (apply_rotary_emb: view_as_complex over (2i, 2i + 1)) and the same score scale
// (mscale² since transformers PR #47435, as DeepSeek's code always had it); a softmax router:
// "greedy" takes the k largest p, "group_limited_greedy" first keeps the topk_group best of n_group
// groups scored by their largest p; the weights are p times routed_scaling_factor, not renormalised.
void deepseek_v2_keys(const Keys& k, ModelSpec& s) {
  mla_keys(k, s);
  s.rope_interleaved = true;
  if (auto f = k.find("scoring_func"); f && f->as_string() != "softmax") {
    f->fail(fmt::format("'{}' is not supported: {} scores its experts with a softmax", f->as_string(), s.architecture));
  }
  // transformers' DeepseekV2Moe ignores norm_topk_prob and scales; DeepSeek's MoEGate renormalises
  // instead of scaling. No released V2 sets it; such a config is refused rather than run one way.
  if (k.get_bool("norm_topk_prob", false)) {
    fail("{}: key 'norm_topk_prob': true is not supported for {}: transformers ignores it (the weights are "
         "scaled by routed_scaling_factor) while DeepSeek's own code renormalises them instead; no released "
         "checkpoint sets it",
         s.source, s.architecture);
  }
  deepseek_moe_keys(k, s);
  const std::string method = k.get_string("topk_method", "greedy");
  if (method == "group_limited_greedy") {
    s.expert_groups = k.get_int("n_group");
    s.topk_groups = k.get_int("topk_group");
    s.router_group_max = true;
  } else if (method != "greedy") {
    k.at("topk_method").fail(fmt::format("'{}' is not supported: {} routes by greedy or group_limited_greedy",
                                         method, s.architecture));
  }
}

// The latent attention of DeepSeek-V2 and V3 (see deepseek_v3_keys), its score scale, and the
// refusals both share.
void mla_keys(const Keys& k, ModelSpec& s) {
  s.mla = true;
  s.q_lora_rank = k.get_int("q_lora_rank", 0);
  s.kv_lora_rank = k.get_int("kv_lora_rank");
  s.qk_nope_head_dim = k.get_int("qk_nope_head_dim");
  const int64_t rope = k.get_int("qk_rope_head_dim");
  s.v_head_dim = k.get_int("v_head_dim");
  if (s.q_lora_rank < 0) bad_key(s, "q_lora_rank", fmt::format("must be positive or null, found {}", s.q_lora_rank));
  check_size(s, "kv_lora_rank", s.kv_lora_rank);
  check_size(s, "v_head_dim", s.v_head_dim);
  if (s.qk_nope_head_dim < 0) {
    bad_key(s, "qk_nope_head_dim", fmt::format("must not be negative, found {}", s.qk_nope_head_dim));
  }
  if (rope < 2 || rope % 2 != 0) bad_key(s, "qk_rope_head_dim", fmt::format("must be even and at least 2, found {}", rope));
  s.head_dim = s.qk_nope_head_dim + rope;
  s.partial_rotary_dim = rope;
  if (s.num_kv_heads != s.num_heads) {
    bad_key(s, "num_key_value_heads",
            fmt::format("{} differs from num_attention_heads {}: latent attention gives every head its own key and "
                        "value (transformers' repeat_kv would break the shapes)",
                        s.num_kv_heads, s.num_heads));
  }
  if (k.get_bool("attention_bias", false)) {
    fail("{}: key 'attention_bias': true (biases on q_a_proj, kv_a_proj_with_mqa and o_proj) is not supported for "
         "{}; no released checkpoint has them",
         s.source, s.architecture);
  }
  if (auto f = k.find("moe_layer_freq"); f && f->as_int() != 1) {
    f->fail(fmt::format("{} is not supported: transformers makes every layer from first_k_dense_replace on MoE",
                        f->as_int()));
  }
  s.attn_scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  // DeepseekV3Attention.__init__: with a scaled rope (rope_type != "default"), scaling *= mscale² where
  // mscale = yarn_get_mscale(factor, mscale_all_dim) when mscale_all_dim is set.
  std::optional<io::JsonValue> rope_keys = k.find("rope_scaling");
  if (!rope_keys) rope_keys = k.find("rope_parameters");
  if (s.rope_scaling.type != RopeScaling::Type::none && rope_keys && rope_keys->is_object()) {
    const double all_dim = rope_keys->get_double("mscale_all_dim", 0.0);
    const double factor = rope_keys->get_double("factor", 1.0);
    if (all_dim != 0.0 && factor > 1.0) {
      const double mscale = 0.1 * all_dim * std::log(factor) + 1.0;
      s.attn_scale *= mscale * mscale;
    }
  }
}

// models/gpt_oss (GptOssConfig, GptOssAttention, eager_attention_forward, GptOssTopKRouter,
// GptOssExperts): q/k/v/o biases (attention_bias), a learned sink logit per head, alternate layers
// sliding (layer_types; by default the even ones); every layer MoE: num_local_experts experts as wide
// as intermediate_size, the router's logits with a bias, the softmax of the top-k logits (the softmax
// over all renormalised over the k), biased experts with the clamped SwiGLU (swiglu_alpha and
// swiglu_limit, 1.702 and 7.0 as GptOssExperts fixes them).
void gpt_oss_keys(const Keys& k, ModelSpec& s) {
  const bool bias = k.get_bool("attention_bias", true);
  s.qkv_bias = bias;
  s.o_bias = bias;
  s.attn_sinks = true;
  s.sliding_window = k.get_int("sliding_window", 0);
  if (s.sliding_window > 0) sliding_layers_from(k, s, [](int64_t l) { return (l + 1) % 2 == 1; });
  s.num_experts = k.get_int("num_local_experts");
  s.experts_per_token = k.get_int("num_experts_per_tok");
  s.moe_intermediate_size = s.intermediate_size;
  s.norm_topk_prob = true;
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  s.expert_names = ModelSpec::ExpertNames::gpt_oss;
  s.fused_experts = true;
  s.expert_bias = true;
  s.router_logit_bias = true;
  s.activation = Activation::swiglu_clamped;
  s.swiglu_alpha = k.get_double("swiglu_alpha");
  s.swiglu_limit = k.get_double("swiglu_limit");
  if (!(s.swiglu_alpha > 0) || !std::isfinite(s.swiglu_alpha)) {
    bad_key(s, "swiglu_alpha", fmt::format("must be a positive number, found {}", s.swiglu_alpha));
  }
  if (!(s.swiglu_limit > 0) || !std::isfinite(s.swiglu_limit)) {
    bad_key(s, "swiglu_limit", fmt::format("must be a positive number, found {}", s.swiglu_limit));
  }
}

// models/olmo2 (Olmo2DecoderLayer, Olmo2Attention): no input_layernorm and no MLP input norm — the
// attention and the MLP read the residual, post_attention_layernorm and post_feedforward_layernorm
// norm their outputs; q_norm/k_norm are RMSNorms over all of q_proj's and k_proj's output
// (num_attention_heads·head_dim, num_key_value_heads·head_dim) before the split into heads.
void olmo2_keys(const Keys&, ModelSpec& s) {
  s.sandwich_norms = true;
  s.input_norms = false;
  s.qk_norm_full = true;
}

// models/olmo3 (Olmo3Config, Olmo3Attention, Olmo3Model): OLMo 2's layers; layer_types (default: all
// but every 4th slide) with sliding_window on the sliding ones. RoPE scaling is not applied to the
// sliding layers (the model's authors: OLMo-core "Don't do RoPE extension in sliding window layers";
// transformers' first Olmo3Model kept a default rotary embedding for them, and transformers 5's
// Olmo3Config writes rope_parameters per layer type with the sliding one "default"): they rotate
// with the default RoPE at rope_theta — or at rope_parameters.sliding_attention's own base, which
// the shared parser has already read into rope_local_theta.
void olmo3_keys(const Keys& k, ModelSpec& s) {
  olmo2_keys(k, s);
  sliding_layers_from(k, s, [](int64_t l) { return (l + 1) % 4 != 0; });
  s.sliding_window = k.get_int("sliding_window", 0);
  if (s.rope_local_theta == 0.0) s.rope_local_theta = s.rope_theta;
}

// models/olmoe (OlmoeConfig, OlmoeAttention, OlmoeSparseMoeBlock, OlmoeDecoderLayer): Llama's layers
// (input_layernorm, post_attention_layernorm) with q_norm = RMSNorm(hidden_size) and k_norm =
// RMSNorm(hidden_size / heads · kv heads) over the whole projections, as OLMo 2's; every layer MoE:
// mlp.gate, softmax, the top num_experts_per_tok, renormalised when norm_topk_prob, experts
// mlp.experts.{e}.* as wide as intermediate_size, no shared expert. clip_qkv (null in every release)
// clamps q, k, v; it is refused rather than ignored.
void olmoe_keys(const Keys& k, ModelSpec& s) {
  s.qk_norm_full = true;
  if (s.num_heads * s.head_dim != s.hidden_size) {
    bad_key(s, "head_dim", fmt::format("{} x {} heads differs from hidden_size {}, the width of OlmoeAttention's "
                                       "q_norm", s.head_dim, s.num_heads, s.hidden_size));
  }
  if (auto clip = k.find("clip_qkv")) {
    clip->fail(fmt::format("{} is not supported (q/k/v clamping; no released OLMoE sets it)", clip->as_double()));
  }
  s.num_experts = k.get_int("num_experts");
  s.experts_per_token = k.get_int("num_experts_per_tok");
  s.moe_intermediate_size = s.intermediate_size;
  s.norm_topk_prob = k.get_bool("norm_topk_prob", false);
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  s.expert_names = ModelSpec::ExpertNames::qwen;
}

// models/minimax_m2 (MiniMaxM2Config, MiniMaxM2Attention(FlexOlmoAttention), MiniMaxM2TopKRouter,
// MiniMaxM2SparseMoeBlock; the decoder layer is MixtralDecoderLayer): Llama's pre-norm layers;
// q_norm / k_norm RMSNorms over the whole q_proj / k_proj output (heads x head_dim, kv heads x
// head_dim) before the view into heads, as OLMo 2's ("qk_norm_type": "per_layer"); RoPE on the
// first rotary_dim dims of each head, rotate-half pairs (Glm4MoeRotaryEmbedding). The released
// remote-code config says rotary_dim, which MiniMaxM2Config turns into partial_rotary_factor =
// rotary_dim / head_dim, head_dim // 2 when absent; transformers 5 writes the factor (also into
// rope_parameters), which we read as Glm4MoeRotaryEmbedding does (docs/families.md). Every layer
// is MoE: sigmoid scores, the top num_experts_per_tok of score + e_score_correction_bias, weighted
// by their unbiased scores renormalised; Mixtral's experts (block_sparse_moe.experts.{e}.w1/w3/w2),
// no groups, no shared expert, no scaling. Remote-code keys that would ask for other code are
// refused by name rather than ignored as transformers does.
void minimax_m2_keys(const Keys& k, ModelSpec& s) {
  s.qk_norm_full = true;
  if (auto v = k.find("use_qk_norm"); v && !v->as_bool()) {
    v->fail("false is not supported: MiniMaxM2Attention always applies q_norm and k_norm");
  }
  if (auto v = k.find("qk_norm_type"); v && v->as_string() != "per_layer") {
    v->fail(fmt::format("'{}' is not supported: {} normalises q and k over the whole projection (\"per_layer\")",
                        v->as_string(), s.architecture));
  }
  if (auto v = k.find("scoring_func"); v && v->as_string() != "sigmoid") {
    v->fail(fmt::format("'{}' is not supported: {} scores its experts with a sigmoid", v->as_string(), s.architecture));
  }
  if (auto v = k.find("use_routing_bias"); v && !v->as_bool()) {
    v->fail("false is not supported: MiniMaxM2SparseMoeBlock always picks by score + e_score_correction_bias");
  }
  if (auto v = k.find("shared_intermediate_size"); v && v->as_int() != 0) {
    v->fail(fmt::format("{} is not supported: {} has no shared expert", v->as_int(), s.architecture));
  }
  if (auto v = k.find("routed_scaling_factor"); v && v->as_double() != 1.0) {
    v->fail(fmt::format("{} is not supported: {} does not scale its routing weights", v->as_double(), s.architecture));
  }
  if (auto v = k.find("use_grouped_topk"); v && v->as_bool()) {
    v->fail(fmt::format("true is not supported: {} routes without expert groups", s.architecture));
  }
  if (auto v = k.find("attn_window_size")) {
    for (int64_t w : v->as_int_list()) {
      if (w > 0) v->fail(fmt::format("a window of {} is not supported: {} attends to the whole context", w, s.architecture));
    }
  }
  if (auto v = k.find("attn_type_list")) {
    const std::vector<int64_t> types = v->as_int_list();
    if (static_cast<int64_t>(types.size()) != s.num_layers) {
      v->fail(fmt::format("{} entries for {} layers", types.size(), s.num_layers));
    }
    for (size_t l = 0; l < types.size(); ++l) {
      if (types[l] != 1) {
        v->fail(fmt::format("layer {} has type {}: only softmax attention (1) is supported; MiniMax-Text-01's "
                            "lightning attention (0) is not", l, types[l]));
      }
    }
  }
  partial_rotary_keys(k, s);
  const bool factor_given = k.given("partial_rotary_factor") ||
                            (k.find("rope_parameters") && k.find("rope_parameters")->is_object() &&
                             k.find("rope_parameters")->find("partial_rotary_factor"));
  int64_t dim = s.rotary_dim();
  if (auto v = k.find("rotary_dim")) {
    dim = v->as_int();
    if (dim < 2 || dim % 2 != 0 || dim > s.head_dim) {
      v->fail(fmt::format("{} must be even, at least 2 and at most head_dim {}", dim, s.head_dim));
    }
    if (factor_given && s.rotary_dim() != dim) {
      v->fail(fmt::format("{} disagrees with partial_rotary_factor, which rotates {} of head_dim {}", dim,
                          s.rotary_dim(), s.head_dim));
    }
  } else if (!factor_given) {
    // Neither key: MiniMaxM2Config's rotary_dim default, head_dim // 2 (convert_rope_params_to_dict)
    dim = s.head_dim / 2;
    if (dim < 2 || dim % 2 != 0) {
      bad_key(s, "rotary_dim", fmt::format("absent, so head_dim {} / 2 = {}; RoPE needs an even number of at least 2",
                                           s.head_dim, dim));
    }
  }
  s.partial_rotary_dim = dim == s.head_dim ? 0 : dim;
  mixtral_keys(k, s);
  s.router_sigmoid = true;
  s.router_bias = true;
}

// models/exaone4 (Exaone4Config.__post_init__, Exaone4Attention, Exaone4DecoderLayer = Olmo2DecoderLayer):
// OLMo 2's post-norm layers (no norm on the branch inputs) with Qwen3's per-head q/k RMSNorms. With
// sliding_window set the attention is hybrid: layer_types, else every sliding_window_pattern-th layer
// full and the others sliding — or, as the released 32B config spells it, a string of L (local) and G
// (global) repeating from layer 0 with the last layer global (the docstring's rule; the newest
// __post_init__ would fail on a string) — and only the sliding layers rotate q and k (global NoPE).
// Without sliding_window (EXAONE-4.0-1.2B) every layer is full and rotates.
void exaone4_keys(const Keys& k, ModelSpec& s) {
  olmo2_keys(k, s);
  s.qk_norm_full = false;  // Exaone4RMSNorm(head_dim) on each head
  s.sliding_window = k.get_int("sliding_window", 0);
  if (s.sliding_window < 0) bad_key(s, "sliding_window", fmt::format("must not be negative, found {}", s.sliding_window));
  std::function<bool(int64_t)> pattern = [](int64_t) { return false; };
  if (s.sliding_window > 0 && !k.find("layer_types")) {
    auto p = k.find("sliding_window_pattern");
    if (!p) bad_key(s, "sliding_window_pattern", "is null, and sliding_window is set without layer_types");
    if (p->is_string()) {
      const std::string letters = p->as_string();
      if (letters.empty() || letters.find_first_not_of("LG") != std::string::npos) {
        p->fail(fmt::format("'{}' must be a string of L (local) and G (global)", letters));
      }
      const int64_t last = s.num_layers - 1;
      pattern = [letters, last](int64_t l) {
        return l != last && letters[static_cast<size_t>(l) % letters.size()] == 'L';
      };
    } else {
      const int64_t every = p->as_int();
      if (every <= 0) p->fail(fmt::format("must be positive, found {}", every));
      pattern = [every](int64_t l) { return (l + 1) % every != 0; };
    }
  }
  sliding_layers_from(k, s, pattern);
  // Exaone4Attention rotates `if self.sliding_window is None or self.is_sliding` (unlike Cohere 2, whose
  // layers all go without RoPE when there is no window)
  s.nope_layers.assign(static_cast<size_t>(s.num_layers), 0);
  for (int64_t l = 0; l < s.num_layers; ++l) {
    s.nope_layers[static_cast<size_t>(l)] = s.sliding_window > 0 && !s.sliding_layers[static_cast<size_t>(l)];
  }
  if (s.sliding_window == 0) {
    s.sliding_layers.clear();
    s.nope_layers.clear();
  }
}

// models/ernie4_5 (Ernie4_5Config, Ernie4_5Attention, Ernie4_5MLP, apply_rotary_pos_emb): Llama's
// layers; RoPE over the whole head in adjacent pairs (GLM's rotate_half on repeat_interleave'd
// frequencies, in float); use_bias puts biases on q/k/v/o_proj and the MLP (not on lm_head).
void ernie4_5_keys(const Keys& k, ModelSpec& s) {
  s.rope_interleaved = true;
  const bool bias = k.get_bool("use_bias", false);
  s.qkv_bias = bias;
  s.o_bias = bias;
  s.mlp_bias = bias;
}

// models/ernie4_5_moe (Ernie4_5_MoeConfig, Ernie4_5_MoeSparseMoeBlock, Ernie4_5_MoeStatics,
// Ernie4_5_MoeDecoderLayer): ERNIE 4.5's layers; layer l is MoE when (l + 1) % moe_layer_interval == 0
// and moe_layer_start_index <= l <= moe_layer_end_index (-1: the last layer), else a dense MLP of
// intermediate_size. The router in fp32: p = softmax(gate(h)), the top moe_k of p +
// moe_statics.e_score_correction_bias (shape (1, E)), weighted by their p over the p's sum (clamped at
// moe_norm_min, 1e-12: the same for any real sum); moe_num_shared_experts shared experts as one
// ungated MLP of that many times moe_intermediate_size. use_bias would also give lm_head a bias and
// is refused (no release sets it), as is ERNIE-4.5-VL's list of expert counts. moe_use_aux_free
// false leaves the correction bias out of the files: transformers then initialises it to zeros,
// which is no bias at all.
void ernie4_5_moe_keys(const Keys& k, ModelSpec& s) {
  s.rope_interleaved = true;
  if (auto v = k.find("use_bias"); v && v->as_bool()) {
    v->fail(fmt::format("true is not supported for {} (biases on every projection and on lm_head; no release "
                        "sets it)", s.architecture));
  }
  if (auto v = k.find("moe_num_experts"); v && v->is_array()) {
    v->fail("a list of expert counts (ERNIE-4.5-VL's text and vision experts) is not supported");
  }
  ungated_shared_moe_keys(k, s, "moe_num_experts", "moe_k", "moe_num_shared_experts");
  s.norm_topk_prob = true;
  s.router_bias = k.get_bool("moe_use_aux_free", true);
  const int64_t every = k.get_int("moe_layer_interval"), first = k.get_int("moe_layer_start_index");
  int64_t last = k.get_int("moe_layer_end_index");
  if (last == -1) last = s.num_layers - 1;
  if (every <= 0) bad_key(s, "moe_layer_interval", fmt::format("must be positive, found {}", every));
  if (first < 0) bad_key(s, "moe_layer_start_index", fmt::format("must not be negative, found {}", first));
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 0);
  for (int64_t l = 0; l < s.num_layers; ++l) {
    s.moe_layers[static_cast<size_t>(l)] = (l + 1) % every == 0 && l >= first && l <= last;
  }
  s.expert_names = ModelSpec::ExpertNames::qwen;
}

// models/qwen3_vl_moe: Qwen3-MoE's decoder_sparse_step / mlp_only_layers; Qwen3VLMoeTextTopKRouter
// always renormalises the top-k (its config has no norm_topk_prob in transformers 5; 4.57's is unused).
void qwen3_vl_moe_keys(const Keys& k, ModelSpec& s) {
  qwen_moe_keys(k, s);
  s.norm_topk_prob = true;
}

// models/qwen3_next (Qwen3NextConfig.__post_init__, Qwen3NextDecoderLayer, Qwen3NextAttention,
// Qwen3NextGatedDeltaNet), models/qwen3_5 and models/qwen3_5_moe (the same layers; separate in_proj_qkv,
// in_proj_z, in_proj_b, in_proj_a). layer_types (legacy "attention" / "mamba" remapped), else every
// full_attention_interval-th layer full; Gemma 3's (1 + w) norms everywhere but the delta rule's output
// norm; q/k norms per head; q_proj doubled by the output gate (Qwen3.5's attn_output_gate key, which
// transformers does not read, must not say otherwise). MoE: Qwen2-MoE's router and gated shared expert;
// Qwen3.5-MoE has no decoder_sparse_step, mlp_only_layers nor norm_topk_prob (every layer MoE, the top-k
// always renormalised: Qwen3VLMoeTextTopKRouter).
void qwen3_next_keys(const Keys& k, ModelSpec& s) {
  const bool qwen35 = s.architecture.rfind("Qwen3_5", 0) == 0;
  const bool moe = s.architecture != "Qwen3_5ForCausalLM" && s.architecture != "Qwen3_5ForConditionalGeneration";
  s.norm_plus_one = true;
  s.attn_output_gate = true;
  if (!k.get_bool("attn_output_gate", true)) {
    bad_key(s, "attn_output_gate", "false is not supported (transformers' Qwen3NextAttention always gates the output)");
  }
  partial_rotary_keys(k, s);
  s.linear_num_key_heads = k.get_int("linear_num_key_heads");
  s.linear_num_value_heads = k.get_int("linear_num_value_heads");
  s.linear_key_head_dim = k.get_int("linear_key_head_dim");
  s.linear_value_head_dim = k.get_int("linear_value_head_dim");
  s.linear_conv_kernel = k.get_int("linear_conv_kernel_dim");
  s.linear_fused_projections = !qwen35;
  s.linear_layers.assign(static_cast<size_t>(s.num_layers), 0);
  const bool listed = each_layer_type(k, s, [&](int64_t l, const std::string& name, const io::JsonValue& t) {
    const bool linear = name == "linear_attention" || name == "mamba";
    if (!linear && name != "full_attention" && name != "attention") {
      t.fail(fmt::format("'{}' is not a layer type of {} (linear_attention, full_attention)", name, s.architecture));
    }
    s.linear_layers[static_cast<size_t>(l)] = linear;
  });
  if (!listed) {
    const int64_t every = k.get_int("full_attention_interval");
    if (every <= 0) bad_key(s, "full_attention_interval", fmt::format("must be positive, found {}", every));
    for (int64_t l = 0; l < s.num_layers; ++l) s.linear_layers[static_cast<size_t>(l)] = (l + 1) % every != 0;
  }
  if (!moe) return;
  s.num_experts = k.get_int("num_experts");
  s.experts_per_token = k.get_int("num_experts_per_tok");
  s.moe_intermediate_size = k.get_int("moe_intermediate_size");
  s.shared_expert_intermediate_size = k.get_int("shared_expert_intermediate_size");
  s.expert_names = ModelSpec::ExpertNames::qwen;
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  if (qwen35) {
    s.norm_topk_prob = true;
    return;
  }
  s.norm_topk_prob = k.get_bool("norm_topk_prob", true);
  const int64_t step = k.get_int("decoder_sparse_step");
  if (step <= 0) bad_key(s, "decoder_sparse_step", fmt::format("must be positive, found {}", step));
  std::vector<int64_t> dense;
  if (auto only = k.find("mlp_only_layers")) dense = only->as_int_list();
  for (int64_t l = 0; l < s.num_layers; ++l) {
    const bool is_dense = std::find(dense.begin(), dense.end(), l) != dense.end();
    s.moe_layers[static_cast<size_t>(l)] = !is_dense && (l + 1) % step == 0;
  }
}

// models/cohere (CohereConfig, CohereLayerNorm, CohereRotaryEmbedding, CohereAttention,
// CohereDecoderLayer, CohereForCausalLM) and models/cohere2 (Cohere2Config.__post_init__,
// Cohere2Attention): LayerNorms without bias (layer_norm_eps), a parallel block, RoPE over whole
// heads in adjacent pairs (repeat_interleave'd frequencies), q/k/v/o biases when attention_bias,
// logits × logit_scale, head_dim = hidden_size / num_attention_heads whatever the config says.
// Cohere2: layer_types (default: all but every sliding_window_pattern-th slide); the sliding layers
// rotate q and k, the full ones take no RoPE at all.
void cohere_keys(const Keys& k, ModelSpec& s) {
  // Command R+ (use_qk_norm): q_norm and k_norm are CohereLayerNorms of shape (heads, head_dim) on
  // q_proj(h).view(..., heads, head_dim) before RoPE, one weight row per head.
  s.qk_norm = s.architecture == "CohereForCausalLM" && k.get_bool("use_qk_norm", false);
  s.qk_norm_per_head = s.qk_norm;
  s.norm_centered = true;
  s.parallel_block = true;
  s.rope_interleaved = true;
  s.rms_norm_eps = k.get_double("layer_norm_eps");
  const bool bias = k.get_bool("attention_bias", false);
  s.qkv_bias = bias;
  s.o_bias = bias;
  const double logit_scale = k.get_double("logit_scale");
  if (!(logit_scale > 0) || !std::isfinite(logit_scale)) {
    bad_key(s, "logit_scale", fmt::format("must be a positive number, found {}", logit_scale));
  }
  s.logits_scaling = 1.0 / logit_scale;
  if (s.hidden_size % s.num_heads != 0) {
    bad_key(s, "hidden_size", fmt::format("{} is not divisible by num_attention_heads {}", s.hidden_size, s.num_heads));
  }
  s.head_dim = s.hidden_size / s.num_heads;
  if (s.architecture == "Cohere2ForCausalLM") {
    const int64_t pattern = k.get_int("sliding_window_pattern", 4);
    if (pattern <= 0) bad_key(s, "sliding_window_pattern", fmt::format("must be positive, found {}", pattern));
    sliding_layers_from(k, s, [pattern](int64_t l) { return (l + 1) % pattern != 0; });
    s.sliding_window = k.get_int("sliding_window", 0);
    // Cohere2Attention rotates only where it slides (sliding_window set and a sliding layer).
    s.nope_layers.assign(static_cast<size_t>(s.num_layers), 0);
    for (int64_t l = 0; l < s.num_layers; ++l) {
      s.nope_layers[static_cast<size_t>(l)] = !(s.sliding_window > 0 && s.sliding_layers[static_cast<size_t>(l)]);
    }
    if (s.sliding_window == 0) s.sliding_layers.clear();
  }
}

// models/seed_oss (SeedOssConfig, SeedOssAttention, SeedOssMLP): Llama's layers, q/k/v_proj with
// bias=attention_bias, o_proj with bias=attention_out_bias, the MLP with bias=mlp_bias; the dropouts
// are inactive at inference.
void seed_oss_keys(const Keys& k, ModelSpec& s) {
  s.qkv_bias = k.get_bool("attention_bias", true);
  s.o_bias = k.get_bool("attention_out_bias", false);
}

}  // namespace

bool ModelSpec::is_moe_layer(int64_t layer) const {
  return num_experts > 0 && layer >= 0 && layer < static_cast<int64_t>(moe_layers.size()) &&
         moe_layers[static_cast<size_t>(layer)] != 0;
}

bool ModelSpec::is_linear_layer(int64_t layer) const {
  return layer >= 0 && layer < static_cast<int64_t>(linear_layers.size()) && linear_layers[static_cast<size_t>(layer)] != 0;
}

ModelSpec::LayerBlock ModelSpec::layer_block(int64_t layer) const {
  if (layer < 0 || layer >= static_cast<int64_t>(layer_blocks.size())) return LayerBlock::both;
  return static_cast<LayerBlock>(layer_blocks[static_cast<size_t>(layer)]);
}

int64_t ModelSpec::attention_layers() const {
  int64_t n = 0;
  for (int64_t l = 0; l < num_layers; ++l) n += is_attention_layer(l);
  return n;
}

int64_t ModelSpec::kv_cache_row_floats() const {
  int64_t n = 0;
  for (int64_t l = 0; l < num_layers; ++l) {
    if (is_attention_layer(l) && !is_kv_shared_layer(l)) n += kv_dim_of(l) + v_dim_of(l);
  }
  return n;
}

int64_t ModelSpec::linear_state_floats() const {
  int64_t n = 0;
  for (int64_t l = 0; l < num_layers; ++l) {
    if (!is_linear_layer(l)) continue;
    n += linear_conv_dim() * (linear_conv_kernel - 1) + linear_num_value_heads * linear_key_head_dim * linear_value_head_dim;
  }
  return n;
}

int64_t ModelSpec::dense_mlp_width() const {
  int64_t widest = 0;
  for (int64_t l = 0; l < num_layers; ++l) {
    // (Nemotron-H's mixer blocks have none; Gemma 4's MoE layers have one beside the experts)
    if (has_mlp(l) && (!is_moe_layer(l) || moe_beside_dense)) widest = std::max(widest, mlp_width(l));
  }
  return widest;
}

int64_t ModelSpec::kv_source(int64_t layer) const {
  if (!is_kv_shared_layer(layer)) return layer;
  for (int64_t j = num_layers - kv_shared_layers - 1; j >= 0; --j) {
    if (is_full_attention_layer(j) == is_full_attention_layer(layer)) return j;
  }
  return -1;
}

bool ModelSpec::is_full_attention_layer(int64_t layer) const {
  return !sliding_layers.empty() && layer >= 0 && layer < static_cast<int64_t>(sliding_layers.size()) &&
         sliding_layers[static_cast<size_t>(layer)] == 0;
}

int64_t ModelSpec::kv_dim() const {
  int64_t d = num_kv_heads * head_dim;
  for (int64_t l = 0; per_layer_geometry() && l < num_layers; ++l) d = std::max(d, kv_dim_of(l));
  return d;
}

int64_t ModelSpec::v_dim() const {
  int64_t d = num_kv_heads * (v_head_dim > 0 ? v_head_dim : head_dim);
  for (int64_t l = 0; per_layer_geometry() && l < num_layers; ++l) d = std::max(d, v_dim_of(l));
  return d;
}

bool ModelSpec::uses_sliding_window(int64_t layer) const {
  if (sliding_window <= 0) return false;
  if (sliding_layers.empty()) return true;
  return layer >= 0 && layer < static_cast<int64_t>(sliding_layers.size()) &&
         sliding_layers[static_cast<size_t>(layer)] != 0;
}

bool ModelSpec::uses_rope(int64_t layer) const {
  return nope_layers.empty() || layer < 0 || layer >= static_cast<int64_t>(nope_layers.size()) ||
         nope_layers[static_cast<size_t>(layer)] == 0;
}

bool ModelSpec::uses_local_rope(int64_t layer) const {
  return rope_local_theta > 0.0 && !sliding_layers.empty() && layer >= 0 &&
         layer < static_cast<int64_t>(sliding_layers.size()) && sliding_layers[static_cast<size_t>(layer)] != 0;
}

double ModelSpec::attention_scale() const {
  return attn_scale > 0.0 ? attn_scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

int64_t ModelSpec::context_length() const {
  // Llama 4: within one attention chunk its chunked layers attend causally, as every other layer
  if (attention_chunk > 0 && (max_position_embeddings == 0 || attention_chunk < max_position_embeddings)) {
    return attention_chunk;
  }
  return max_position_embeddings;
}

int64_t ModelSpec::long_rope_after() const {
  return rope_scaling.type == RopeScaling::Type::longrope ? rope_scaling.original_max_position_embeddings : 0;
}

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Family& f : kFamilies) v.emplace_back(f.architecture);
    return v;
  }();
  return names;
}

ModelSpec parse_model_spec(const io::JsonValue& c) {
  if (!c.is_object()) c.fail(fmt::format("must be a JSON object, found {}", c.type_name()));
  ModelSpec s;
  s.source = c.origin();

  auto archs = c.find("architectures");
  if (!archs) {
    fail("{}: key 'architectures' is missing (supported: {})", s.source,
         join(supported_architectures()));
  }
  if (!archs->is_array() || archs->size() == 0) archs->fail("must be a non-empty list of names");
  s.architecture = archs->at(size_t{0}).as_string();
  const Family* fam = nullptr;
  for (const Family& f : kFamilies) {
    if (s.architecture == f.architecture) fam = &f;
  }
  if (!fam) {
    fail("{}: architecture '{}' is not supported (supported: {})", s.source, s.architecture,
         join(supported_architectures()));
  }
  s.model_type = c.get_string("model_type", "");
  // A generic wrapper: while its keys are read, the spec is the text model's family (whose rules name it); the
  // wrapper's name comes back at the end.
  const Family* wrapper = nullptr;
  const WrappedTextModel* wrapped = nullptr;
  if (fam->wrapped_text_model) {
    wrapper = fam;
    const auto text = c.find(wrapper->text_config);
    if (text && !text->is_object()) text->fail(fmt::format("must be an object, found {}", text->type_name()));
    const std::string type = text ? text->get_string("model_type", wrapper->wrapped_text_model) : wrapper->wrapped_text_model;
    std::vector<std::string> types;
    for (const WrappedTextModel& w : kWrappedTextModels) {
      types.emplace_back(w.model_type);
      if (type == w.model_type) wrapped = &w;
    }
    if (!wrapped) {
      fail("{}: {}'s text_config.model_type '{}' is not supported (supported: {})", s.source, s.architecture, type,
           join(types));
    }
    for (const Family& f : kFamilies) {
      if (std::string_view(f.architecture) == wrapped->architecture) fam = &f;
    }
    ABL_CHECK(fam != wrapper, "{}: no family runs {}", s.source, wrapped->architecture);
    s.architecture = wrapped->architecture;
  }
  Keys k{c, std::nullopt, std::nullopt};
  if (wrapper) {
    if (auto text = c.find(wrapper->text_config)) {
      k.config = *text;
      k.outer = c;
    }
  } else if (fam->text_config) {
    // Qwen2-VL/Qwen2.5-VL as released (and a text_config left out): every key at the top level
    if (auto text = c.find(fam->text_config)) {
      k.config = *text;
      k.outer = c;
    }
    if (!k.config.is_object()) k.config.fail(fmt::format("must be an object, found {}", k.config.type_name()));
  }
  if (fam->defaults) k.defaults = io::parse_json(fam->defaults, fmt::format("{} defaults", s.architecture));
  if (wrapped && wrapped->defaults) {
    k.defaults = io::parse_json(wrapped->defaults, fmt::format("{} defaults", wrapped->architecture));
  }
  if (fam->text_config && k.config.get_string("model_type", "") == "ministral3") {
    // Mistral 3's text_config is a MistralConfig, or for Ministral 3 a Ministral3Config (its own defaults)
    k.defaults = io::parse_json(kMinistral3Defaults, "Ministral3Config defaults");
  }

  s.vocab_size = k.get_int("vocab_size");
  s.hidden_size = k.get_int("hidden_size");
  s.intermediate_size = k.get_int("intermediate_size");
  s.num_layers = k.get_int("num_hidden_layers");
  s.num_heads = k.get_int("num_attention_heads");
  s.num_kv_heads =
      k.get_int("num_key_value_heads", fam->default_kv_heads ? fam->default_kv_heads : s.num_heads);
  check_size(s, "hidden_size", s.hidden_size);
  check_size(s, "num_attention_heads", s.num_heads);
  check_size(s, "num_hidden_layers", s.num_layers);
  if (auto hd = k.find("head_dim")) {
    s.head_dim = hd->as_int();
  } else if (fam->default_head_dim) {
    s.head_dim = fam->default_head_dim;
  } else {
    if (s.hidden_size % s.num_heads != 0) {
      fail("{}: key 'hidden_size': {} is not divisible by num_attention_heads {} (and no head_dim "
           "is given)",
           s.source, s.hidden_size, s.num_heads);
    }
    s.head_dim = s.hidden_size / s.num_heads;
  }

  s.activation = parse_activation(s, fam->activation_key, k.get_string(fam->activation_key, "silu"));
  if (s.activation == Activation::relu2 && s.architecture != "ArceeForCausalLM" &&
      s.architecture != "NemotronHForCausalLM") {
    bad_key(s, fam->activation_key, fmt::format("relu2 is supported only where the MLP is ungated (ArceeForCausalLM, "
                                                "NemotronHForCausalLM); {}'s MLP is gated", s.architecture));
  }
  if (s.activation == Activation::xielu && s.architecture != "ApertusForCausalLM") {
    bad_key(s, fam->activation_key, fmt::format("xielu is supported only in ApertusForCausalLM (its learned scalars are "
                                                "Apertus' mlp.act_fn.* tensors), not in {}", s.architecture));
  }

  s.rms_norm_eps = k.get_double("rms_norm_eps", 1e-6);
  s.max_position_embeddings = k.get_int("max_position_embeddings", fam->default_max_positions);

  // RoPE: classic top-level keys, or transformers v5's "rope_parameters" holding both — per layer
  // type ({"full_attention": ..., "sliding_attention": ...}) for Gemma 3.
  std::optional<io::JsonValue> rope_params = k.find("rope_parameters"), local_params;
  // transformers 5 reads a rope_scaling dict as rope_parameters, the base with it (a default rope_parameters of the
  // family's defaults, Apertus', gives way). As for rope_parameters, a top-level rope_theta written beside it wins.
  if (auto legacy = k.find("rope_scaling");
      !k.given("rope_parameters") && legacy && legacy->is_object() && legacy->find("rope_theta")) {
    rope_params = legacy;
  }
  if (rope_params && rope_params->is_object() && rope_params->contains("full_attention")) {
    local_params = rope_params->find("sliding_attention");
    rope_params = rope_params->find("full_attention");
  }
  if (rope_params && rope_params->is_object() && rope_params->find("rope_theta") && !k.given("rope_theta")) {
    s.rope_theta = rope_params->get_double("rope_theta");
  } else {
    s.rope_theta = k.get_double("rope_theta", 10000.0);
  }
  RopeTopLevel top{s.max_position_embeddings, std::nullopt};
  if (auto orig = k.find("original_max_position_embeddings")) top.original_max_position_embeddings = orig->as_int();
  if (auto scaling = k.find("rope_scaling")) {
    parse_rope_scaling(*scaling, top, &s.rope_scaling);
  } else if (rope_params) {
    parse_rope_scaling(*rope_params, top, &s.rope_scaling);
  }
  if (local_params) {
    RopeScaling local;
    parse_rope_scaling(*local_params, top, &local);
    if (local.type != RopeScaling::Type::none) {
      local_params->fail("the sliding layers' RoPE must be the default one");
    }
    // Without its own base: Gemma 3's rope_local_base_freq, else the model's rope_theta (OLMo 3).
    s.rope_local_theta =
        local_params->get_double("rope_theta", k.get_double("rope_local_base_freq", k.get_double("rope_theta", 10000.0)));
  }

  s.tied_embeddings = k.get_bool("tie_word_embeddings", false);
  s.qkv_bias = fam->qkv_bias;
  s.qk_norm = fam->qk_norm;
  if (fam->has_attention_bias_key && k.get_bool("attention_bias", false)) {
    // LlamaAttention (and its copies): q/k/v_proj and o_proj are nn.Linear(..., bias=attention_bias).
    s.qkv_bias = true;
    s.o_bias = true;
  }
  if (k.get_bool("mlp_bias", false)) {
    // LlamaMLP, GraniteMLP, SmolLM3MLP: gate/up/down_proj with bias=mlp_bias; the other families'
    // MLPs have no bias whatever the config says, and such a config is refused rather than guessed.
    if (!mlp_bias_key(s.architecture)) {
      fail("{}: key 'mlp_bias': true is not supported for {} (its MLP has no biases in transformers; "
           "LlamaForCausalLM, GraniteForCausalLM, SmolLM3ForCausalLM, SeedOssForCausalLM and ArceeForCausalLM take it)",
           s.source, s.architecture);
    }
    s.mlp_bias = true;
  }

  switch (fam->window) {
    case W::none:
    case W::per_layer: break;
    case W::always:
      if (!k.contains("sliding_window")) {
        s.sliding_window = fam->default_sliding_window;
      } else if (auto w = k.find("sliding_window")) {
        s.sliding_window = w->as_int();
      }
      break;
    case W::switched:
      if (k.get_bool("use_sliding_window", false)) {
        s.sliding_window = k.get_int("sliding_window", fam->default_sliding_window);
        const int64_t first = k.get_int("max_window_layers", 28);
        if (first < 0) bad_key(s, "max_window_layers", fmt::format("must not be negative, found {}", first));
        s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
        for (int64_t l = first; l < s.num_layers; ++l) s.sliding_layers[static_cast<size_t>(l)] = 1;
      }
      break;
  }

  if (auto v = k.find("bos_token_id")) s.bos_token_id = v->as_int();
  if (auto v = k.find("eos_token_id")) s.eos_token_ids = v->as_int_list();
  if (auto v = k.find("pad_token_id")) s.pad_token_id = v->as_int();
  if (auto v = k.find("torch_dtype")) {
    s.torch_dtype = parse_torch_dtype(*v);
  } else if (auto d = k.find("dtype")) {
    s.torch_dtype = parse_torch_dtype(*d);
  }
  if (auto q = k.find("quantization_config"); q && q->is_object() && q->get_string("quant_method", "") == "fp8") {
    // transformers' finegrained FP8 (FineGrainedFP8Config): e4m3 weights with one scale per block.
    if (auto f = q->find("fmt"); f && f->as_string() != "e4m3") {
      f->fail(fmt::format("'{}' is not supported (FP8 checkpoints are read as e4m3)", f->as_string()));
    }
    const auto block = q->find("weight_block_size");
    if (!block) q->fail("quant_method fp8 without weight_block_size (one scale per tensor) is not supported");
    const std::vector<int64_t> b = block->as_int_list();
    if (b.size() != 2 || b[0] <= 0 || b[1] <= 0) block->fail("must be two positive block sizes [rows, cols]");
    s.fp8_block_rows = b[0];
    s.fp8_block_cols = b[1];
  }
  if (fam->text_config || wrapper) {
    // The released checkpoints' spelling; load_model_spec switches to the newer one by the files.
    s.multimodal = true;
    s.weight_prefix = "language_model.model.";
    s.lm_head_name = "language_model.lm_head.weight";
  }
  if (fam->family_keys) fam->family_keys(k, s);

  validate_model_spec(s);
  if (wrapper) s.architecture = wrapper->architecture;
  return s;
}

void validate_model_spec(const ModelSpec& s) {
  if (s.norm_bias && !s.norm_centered) fail("{}: norm biases need LayerNorms (norm_centered)", s.source);
  if (s.query_log_scale_beta != 0.0 && s.query_log_scale_period <= 0) {
    fail("{}: llama_4_scaling_beta {} needs a positive period (original_max_position_embeddings), found {}", s.source,
         s.query_log_scale_beta, s.query_log_scale_period);
  }
  check_size(s, "vocab_size", s.vocab_size);
  check_size(s, "hidden_size", s.hidden_size);
  check_size(s, "intermediate_size", s.intermediate_size);
  check_size(s, "num_hidden_layers", s.num_layers);
  check_size(s, "num_attention_heads", s.num_heads);
  check_size(s, "num_key_value_heads", s.num_kv_heads);
  check_size(s, "head_dim", s.head_dim);
  check_size(s, "max_position_embeddings", s.max_position_embeddings);
  if (s.num_heads % s.num_kv_heads != 0) {
    bad_key(s, "num_key_value_heads",
            fmt::format("{} does not divide num_attention_heads {}", s.num_kv_heads, s.num_heads));
  }
  if (s.head_dim % 2 != 0) {
    bad_key(s, "head_dim", fmt::format("{} must be even for rotary embeddings", s.head_dim));
  }
  if (s.per_layer_geometry()) {
    check_size(s, "global_head_dim", s.full_head_dim);
    check_size(s, "num_global_key_value_heads", s.full_kv_heads);
    if (s.full_head_dim % 2 != 0) {
      bad_key(s, "global_head_dim", fmt::format("{} must be even for rotary embeddings", s.full_head_dim));
    }
    if (s.num_heads % s.full_kv_heads != 0) {
      bad_key(s, "num_global_key_value_heads",
              fmt::format("{} does not divide num_attention_heads {}", s.full_kv_heads, s.num_heads));
    }
    // the sliding layers' table is their own (head_dim wide); the full layers' spans full_head_dim
    if (s.rope_local_theta <= 0 || s.partial_rotary_dim != 0 || s.mla) {
      fail("{}: per-layer head sizes need the sliding layers' own RoPE and whole-head rotation", s.source);
    }
  }
  if (s.partial_rotary_dim < 0 || s.partial_rotary_dim % 2 != 0 || s.partial_rotary_dim > s.head_dim) {
    bad_key(s, "partial_rotary_factor",
            fmt::format("rotates {} dims of head_dim {}; must be even and at most head_dim", s.partial_rotary_dim,
                        s.head_dim));
  }
  if (s.q_dim() > kMaxDim) {
    bad_key(s, "head_dim", fmt::format("num_attention_heads * head_dim = {} * {} is implausibly large",
                                       s.num_heads, s.head_dim));
  }
  if (!(s.rms_norm_eps > 0) || !std::isfinite(s.rms_norm_eps)) {
    bad_key(s, "rms_norm_eps", fmt::format("must be a positive number, found {}", s.rms_norm_eps));
  }
  if (!(s.rope_theta > 0) || !std::isfinite(s.rope_theta)) {
    bad_key(s, "rope_theta", fmt::format("must be a positive number, found {}", s.rope_theta));
  }
  if (!(s.rope_local_theta >= 0) || !std::isfinite(s.rope_local_theta)) {
    bad_key(s, "rope_local_base_freq", fmt::format("must be a positive number, found {}", s.rope_local_theta));
  }
  check_rope_scaling(s);
  if (s.mla) {
    check_size(s, "kv_lora_rank", s.kv_lora_rank);
    check_size(s, "v_head_dim", s.v_head_dim);
    if (s.q_lora_rank < 0) bad_key(s, "q_lora_rank", fmt::format("must be positive or null, found {}", s.q_lora_rank));
    if (s.partial_rotary_dim <= 0 || s.qk_nope_head_dim < 0 || s.qk_nope_head_dim + s.partial_rotary_dim != s.head_dim) {
      bad_key(s, "qk_rope_head_dim",
              fmt::format("qk_nope_head_dim {} + qk_rope_head_dim {} must make the q/k head ({})", s.qk_nope_head_dim,
                          s.partial_rotary_dim, s.head_dim));
    }
    if (s.num_kv_heads != s.num_heads) {
      bad_key(s, "num_key_value_heads", fmt::format("latent attention needs one per head ({}), found {}", s.num_heads,
                                                    s.num_kv_heads));
    }
    if (!(s.latent_norm_eps > 0)) bad_key(s, "rms_norm_eps", "the latent norms' eps must be positive");
  } else if (s.v_head_dim != 0 && s.v_head_dim != s.head_dim) {
    bad_key(s, "v_head_dim", fmt::format("{} differs from head_dim {} outside latent attention", s.v_head_dim,
                                         s.head_dim));
  }
  if (s.sliding_window < 0) {
    bad_key(s, "sliding_window", fmt::format("must be positive or null, found {}", s.sliding_window));
  }
  if (!s.nope_layers.empty() && static_cast<int64_t>(s.nope_layers.size()) != s.num_layers) {
    bad_key(s, "no_rope_layers", fmt::format("{} layer flags for {} layers", s.nope_layers.size(), s.num_layers));
  }
  if (!s.sliding_layers.empty() && static_cast<int64_t>(s.sliding_layers.size()) != s.num_layers) {
    bad_key(s, "layer_types", fmt::format("{} layer types for {} layers", s.sliding_layers.size(), s.num_layers));
  }
  if (!(s.embed_scale > 0) || !std::isfinite(s.embed_scale)) {
    bad_key(s, "hidden_size", fmt::format("embedding scale {} must be positive", s.embed_scale));
  }
  if (!(s.attn_scale >= 0) || !std::isfinite(s.attn_scale)) {
    bad_key(s, "query_pre_attn_scalar", fmt::format("gives the attention scale {}; must be positive", s.attn_scale));
  }
  if (!(s.residual_multiplier > 0) || !std::isfinite(s.residual_multiplier)) {
    bad_key(s, "residual_multiplier", fmt::format("must be a positive number, found {}", s.residual_multiplier));
  }
  if (!(s.logits_scaling > 0) || !std::isfinite(s.logits_scaling)) {
    bad_key(s, "logits_scaling", fmt::format("must be a positive number, found {}", s.logits_scaling));
  }
  if (!(s.attn_softcap >= 0) || !std::isfinite(s.attn_softcap)) {
    bad_key(s, "attn_logit_softcapping", fmt::format("must be positive or null, found {}", s.attn_softcap));
  }
  if (!(s.final_softcap >= 0) || !std::isfinite(s.final_softcap)) {
    bad_key(s, "final_logit_softcapping", fmt::format("must be positive or null, found {}", s.final_softcap));
  }
  if (s.num_experts > 0) {
    check_size(s, "num_experts", s.num_experts);
    check_size(s, "moe_intermediate_size", s.moe_intermediate_size);
    if (s.experts_per_token <= 0 || s.experts_per_token > s.num_experts) {
      bad_key(s, "num_experts_per_tok",
              fmt::format("must be in [1, num_experts = {}], found {}", s.num_experts, s.experts_per_token));
    }
    if (s.shared_expert_intermediate_size < 0) {
      bad_key(s, "shared_expert_intermediate_size", fmt::format("must not be negative, found {}",
                                                                s.shared_expert_intermediate_size));
    }
    if (s.expert_groups > 1) {
      const int64_t per = s.num_experts / s.expert_groups, least = s.router_group_max ? 1 : 2;
      if (s.num_experts % s.expert_groups != 0 || per < least) {
        bad_key(s, "n_group", fmt::format("{} groups of {} experts: each group must hold the same number, at least {}",
                                          s.expert_groups, s.num_experts, least));
      }
      if (s.topk_groups < 1 || s.topk_groups > s.expert_groups || s.experts_per_token > s.topk_groups * per) {
        bad_key(s, "topk_group", fmt::format("must be in [1, n_group = {}] and keep at least num_experts_per_tok = {} "
                                             "experts ({} per group), found {}",
                                             s.expert_groups, s.experts_per_token, per, s.topk_groups));
      }
    } else if (s.expert_groups < 1) {
      bad_key(s, "n_group", fmt::format("must be positive, found {}", s.expert_groups));
    }
    if (s.router_sigmoid && s.num_experts < 2) {
      bad_key(s, "n_routed_experts", fmt::format("the sigmoid router scores groups by their two best experts; "
                                                 "found {} expert", s.num_experts));
    }
    if (!(s.routed_scaling_factor > 0) || !std::isfinite(s.routed_scaling_factor)) {
      bad_key(s, "routed_scaling_factor", fmt::format("must be a positive number, found {}", s.routed_scaling_factor));
    }
    if (static_cast<int64_t>(s.moe_layers.size()) != s.num_layers) {
      bad_key(s, "mlp_only_layers", fmt::format("{} layer flags for {} layers", s.moe_layers.size(), s.num_layers));
    }
  }
  if (!s.layer_blocks.empty()) {
    if (static_cast<int64_t>(s.layer_blocks.size()) != s.num_layers) {
      bad_key(s, "hybrid_override_pattern", fmt::format("{} blocks for {} layers", s.layer_blocks.size(), s.num_layers));
    }
    for (int64_t l = 0; l < s.num_layers; ++l) {
      if (s.layer_blocks[static_cast<size_t>(l)] > static_cast<uint8_t>(ModelSpec::LayerBlock::mlp)) {
        bad_key(s, "hybrid_override_pattern", fmt::format("layer {}: block kind {}", l, s.layer_blocks[static_cast<size_t>(l)]));
      }
      if (!s.has_mixer(l) && s.is_linear_layer(l)) {
        bad_key(s, "hybrid_override_pattern", fmt::format("layer {} is an MLP block and a linear layer", l));
      }
    }
    if (s.parallel_block || s.sandwich_norms || !s.input_norms) {
      bad_key(s, "hybrid_override_pattern", "single-block layers beside other layer shapes are not supported");
    }
    for (int64_t l = 0; l < s.num_layers; ++l) {
      if (s.is_moe_layer(l) && s.has_mixer(l)) bad_key(s, "hybrid_override_pattern", fmt::format("layer {}: an MoE mixer", l));
    }
  }
  if (s.nemotron_h_names && s.activation != Activation::relu2) {
    bad_key(s, "mlp_hidden_act", "Nemotron-H's MLP is the ungated relu2");
  }
  if (s.architecture == "ArceeForCausalLM" && s.activation != Activation::relu2) {
    bad_key(s, "hidden_act", "ArceeForCausalLM's MLP is ungated (ArceeMLP): only relu2 is supported");
  }
  if (s.architecture == "ApertusForCausalLM" && s.activation != Activation::xielu) {
    bad_key(s, "hidden_act", "ApertusForCausalLM's MLP is ungated (ApertusMLP): only xielu is supported");
  }
  if (s.activation == Activation::relu2 && !s.nemotron_h_names && s.architecture != "ArceeForCausalLM") {
    bad_key(s, "hidden_act", fmt::format("relu2 is supported only where the MLP is ungated (ArceeForCausalLM, "
                                         "NemotronHForCausalLM); {}'s MLP is gated", s.architecture));
  }
  if (!s.linear_layers.empty()) {
    if (static_cast<int64_t>(s.linear_layers.size()) != s.num_layers) {
      bad_key(s, "layer_types", fmt::format("{} layer types for {} layers", s.linear_layers.size(), s.num_layers));
    }
    // the config's names of NK, NV, DK, DV, K (LFM2's short conv: only K; no heads, no state)
    const bool mamba = s.mamba2(), short_conv = s.linear_mixer == ModelSpec::LinearMixer::short_conv;
    const bool nemotron = s.nemotron_h_names;  // NemotronHConfig's names of the same sizes
    const char* nk = nemotron ? "n_groups" : mamba ? "mamba_n_groups" : "linear_num_key_heads";
    const char* nv = nemotron ? "mamba_num_heads" : mamba ? "mamba_n_heads" : "linear_num_value_heads";
    const char* conv = short_conv ? "conv_L_cache"
                       : nemotron ? "conv_kernel"
                       : mamba    ? "mamba_d_conv"
                                  : "linear_conv_kernel_dim";
    check_size(s, conv, s.linear_conv_kernel);
    if (!short_conv) {
      check_size(s, nk, s.linear_num_key_heads);
      check_size(s, nv, s.linear_num_value_heads);
      check_size(s, nemotron ? "ssm_state_size" : mamba ? "mamba_d_state" : "linear_key_head_dim", s.linear_key_head_dim);
      check_size(s, nemotron ? "mamba_head_dim" : mamba ? "mamba_d_head" : "linear_value_head_dim",
                 s.linear_value_head_dim);
    }
    if (!short_conv && s.linear_num_value_heads % s.linear_num_key_heads != 0) {
      bad_key(s, nv, fmt::format("{} is not a multiple of {} {}", s.linear_num_value_heads, nk, s.linear_num_key_heads));
    }
    if (s.linear_conv_kernel > 64) {
      bad_key(s, conv, fmt::format("{} taps is implausibly many (at most 64)", s.linear_conv_kernel));
    }
    if (s.mla || s.sliding_window > 0) {
      bad_key(s, "layer_types", "linear-attention layers beside latent attention or a sliding window are not supported");
    }
  }
  if (s.bos_token_id) check_token(s, "bos_token_id", *s.bos_token_id);
  for (int64_t id : s.eos_token_ids) check_token(s, "eos_token_id", id);
  if (s.pad_token_id) check_token(s, "pad_token_id", *s.pad_token_id);
}

ModelSpec load_model_spec(const std::string& path) {
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    file = (fs::path(path) / "config.json").string();
    if (!fs::exists(file, ec)) fail("{}: no config.json in this folder", path);
  }
  ModelSpec spec = parse_model_spec(io::read_json_file(file));
  const fs::path dir = fs::path(file).parent_path();
  // transformers' generate() stops at generation_config.json's eos_token_id: where that file gives one it wins over
  // config.json's (InternVL's converted InternLM2 models: </s> in text_config, <|im_end|> there; Qwen2.5's two
  // there, one in config.json), and a config.json without one (MiniMax-M2's as released) takes it from there.
  if (const fs::path gen = dir / "generation_config.json"; fs::exists(gen, ec)) {
    if (auto v = io::read_json_file(gen.string()).find("eos_token_id")) {
      spec.eos_token_ids = v->as_int_list();
      for (int64_t id : spec.eos_token_ids) {
        if (id < 0 || id >= spec.vocab_size) {
          v->fail(fmt::format("{} is not a token id of this model (vocab_size {})", id, spec.vocab_size));
        }
      }
    }
  }
  const bool has_weights = fs::exists(dir / "model.safetensors", ec) ||
                           fs::exists(dir / "model.safetensors.index.json", ec);
  if (!has_weights || (!spec.multimodal && spec.num_experts == 0 && !spec.nemotron_h_names)) return spec;
  const io::SafetensorsReader reader(dir.string());
  // Nemotron-H as released keeps its decoder under backbone.; transformers 5 saves it under model.
  if (spec.nemotron_h_names && !reader.find("backbone.embeddings.weight")) {
    // transformers 5 names the decoder model.*; its conversion mapping reads (and writes back) embedding.weight
    for (const char* prefix : {"backbone.", "model."}) {
      for (const char* embed : {"embeddings.weight", "embedding.weight"}) {
        if (!reader.find(std::string(prefix) + embed)) continue;
        spec.weight_prefix = prefix;
        spec.embed_name = embed;
      }
    }
  }
  for (int64_t l = 0; l < spec.num_layers && spec.expert_names == ModelSpec::ExpertNames::nemotron_h; ++l) {
    if (!spec.is_moe_layer(l)) continue;
    // Nemotron-H's experts one module each (as released) or stacked (transformers 5)
    spec.fused_experts = reader.find(fmt::format("{}layers.{}.mixer.experts.up_proj", spec.weight_prefix, l)) != nullptr;
    break;
  }
  if (spec.multimodal && reader.find("model.language_model.embed_tokens.weight")) {
    // Multimodal checkpoints: transformers >= 4.52 saves the text model as model.language_model.*
    // and the head as lm_head.weight; the released Gemma 3 and Mistral 3 ones use
    // language_model.model.*, the released Qwen2-VL/Qwen2.5-VL ones model.* beside visual.*.
    spec.weight_prefix = "model.language_model.";
    spec.lm_head_name = "lm_head.weight";
  } else if (spec.multimodal && reader.find("model.embed_tokens.weight")) {
    spec.weight_prefix = "model.";
    spec.lm_head_name = "lm_head.weight";
  }
  if (spec.expert_names == ModelSpec::ExpertNames::gpt_oss) {
    // gpt-oss as released holds its experts in MXFP4 (mlp.experts.*_blocks / *_scales).
    spec.mxfp4_experts =
        reader.find(fmt::format("{}layers.0.mlp.experts.gate_up_proj_blocks", spec.weight_prefix)) != nullptr;
    if (spec.mxfp4_experts && (spec.hidden_size % 32 != 0 || spec.moe_intermediate_size % 32 != 0)) {
      fail("{}: MXFP4 experts need hidden_size and intermediate_size divisible by 32 (blocks of 32 values), "
           "found {} and {}",
           path, spec.hidden_size, spec.moe_intermediate_size);
    }
  }
  for (int64_t l = 0; l < spec.num_layers && spec.expert_names != ModelSpec::ExpertNames::granite &&
                      spec.expert_names != ModelSpec::ExpertNames::gpt_oss &&
                      spec.expert_names != ModelSpec::ExpertNames::llama4 &&
                      spec.expert_names != ModelSpec::ExpertNames::nemotron_h &&
                      spec.expert_names != ModelSpec::ExpertNames::gemma4;  // (always stacked)
       ++l) {
    if (!spec.is_moe_layer(l)) continue;
    // The first MoE layer tells: its experts stacked (transformers 5) or one tensor each; Qwen3-VL-MoE's
    // stacks as released are transposed (gate_up_proj (E, H, 2*Fm); preferred when H = 2*Fm).
    const io::TensorInfo* gate_up = reader.find(fmt::format("{}layers.{}.mlp.experts.gate_up_proj", spec.weight_prefix, l));
    spec.fused_experts = gate_up != nullptr;
    spec.transposed_experts = gate_up && spec.architecture == "Qwen3VLMoeForConditionalGeneration" &&
                              gate_up->shape == std::vector<int64_t>{spec.num_experts, spec.hidden_size,
                                                                     2 * spec.moe_intermediate_size};
    break;
  }
  return spec;
}

}  // namespace abl::model
