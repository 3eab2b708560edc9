// Synthetic models: real architectures as embedded config.json texts (so they go through the same
// parser, defaults and validation as a downloaded model), and counter-based random weights so
// that any rank can generate any slice of any tensor without generating the rest.
#include <cmath>
#include <string_view>

#include "abl/core/error.h"
#include "abl/io/json_file.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"

namespace abl::model {

namespace {

struct Preset {
  const char* name;
  const char* config;  // the fields of the public config.json that matter to us
};

const Preset kPresets[] = {
    {"tiny-llama", R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 512, "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
      "num_key_value_heads": 2, "max_position_embeddings": 512, "rms_norm_eps": 1e-05,
      "rope_theta": 10000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
    {"llama-3.2-1b", R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 128256,
      "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
      "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
      "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
      "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                       "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
      "tie_word_embeddings": true, "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009],
      "torch_dtype": "bfloat16"})"},
    {"llama-3.1-8b", R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 128256,
      "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
      "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
      "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                       "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
      "tie_word_embeddings": false, "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009],
      "torch_dtype": "bfloat16"})"},
    {"llama-3.3-70b", R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 128256,
      "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
      "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 131072,
      "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
      "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                       "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
      "tie_word_embeddings": false, "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009],
      "torch_dtype": "bfloat16"})"},
    {"mistral-7b", R"({"architectures": ["MistralForCausalLM"], "vocab_size": 32768,
      "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768,
      "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "sliding_window": null,
      "tie_word_embeddings": false, "bos_token_id": 1, "eos_token_id": 2,
      "torch_dtype": "bfloat16"})"},
    // Mistral Small 3.1/3.2 24B's language model (Mistral3ForConditionalGeneration's text_config):
    // head_dim 128 beside hidden 5120 / 32 heads
    {"mistral-small-3.1-24b", R"({"architectures": ["MistralForCausalLM"], "vocab_size": 131072,
      "hidden_size": 5120, "intermediate_size": 32768, "num_hidden_layers": 40,
      "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 1000000000.0,
      "sliding_window": null, "tie_word_embeddings": false, "bos_token_id": 1, "eos_token_id": 2,
      "torch_dtype": "bfloat16"})"},
    // GLM-4-9B-0414 (Glm4ForCausalLM): half of each head rotates, adjacent dims paired
    {"glm-4-9b-0414", R"({"architectures": ["Glm4ForCausalLM"], "vocab_size": 151552,
      "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40,
      "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "partial_rotary_factor": 0.5,
      "attention_bias": true, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
      "tie_word_embeddings": false, "pad_token_id": 151329, "eos_token_id": [151329, 151336, 151338],
      "torch_dtype": "bfloat16"})"},
    {"qwen2.5-0.5b", R"({"architectures": ["Qwen2ForCausalLM"], "vocab_size": 151936,
      "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
      "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 32768,
      "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "use_sliding_window": false,
      "tie_word_embeddings": true, "bos_token_id": 151643, "eos_token_id": 151645,
      "torch_dtype": "bfloat16"})"},
    {"qwen2.5-7b", R"({"architectures": ["Qwen2ForCausalLM"], "vocab_size": 152064,
      "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
      "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
      "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "use_sliding_window": false,
      "tie_word_embeddings": false, "bos_token_id": 151643, "eos_token_id": 151645,
      "torch_dtype": "bfloat16"})"},
    {"qwen2.5-72b", R"({"architectures": ["Qwen2ForCausalLM"], "vocab_size": 152064,
      "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80,
      "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 32768,
      "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "use_sliding_window": false,
      "tie_word_embeddings": false, "bos_token_id": 151643, "eos_token_id": 151645,
      "torch_dtype": "bfloat16"})"},
    {"qwen3-0.6b", R"({"architectures": ["Qwen3ForCausalLM"], "vocab_size": 151936,
      "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
      "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 40960, "rms_norm_eps": 1e-06, "rope_theta": 1000000,
      "tie_word_embeddings": true, "bos_token_id": 151643, "eos_token_id": 151645,
      "torch_dtype": "bfloat16"})"},
    {"qwen3-8b", R"({"architectures": ["Qwen3ForCausalLM"], "vocab_size": 151936,
      "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36,
      "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 40960, "rms_norm_eps": 1e-06, "rope_theta": 1000000,
      "tie_word_embeddings": false, "bos_token_id": 151643, "eos_token_id": 151645,
      "torch_dtype": "bfloat16"})"},
    {"gemma-7b", R"({"architectures": ["GemmaForCausalLM"], "vocab_size": 256000, "hidden_size": 3072,
      "intermediate_size": 24576, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 16,
      "head_dim": 256, "hidden_act": "gelu", "max_position_embeddings": 8192, "rms_norm_eps": 1e-06,
      "rope_theta": 10000.0, "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    {"gemma-2-9b", R"({"architectures": ["Gemma2ForCausalLM"], "vocab_size": 256000,
      "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42,
      "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
      "query_pre_attn_scalar": 256, "sliding_window": 4096, "attn_logit_softcapping": 50.0,
      "final_logit_softcapping": 30.0, "max_position_embeddings": 8192, "rms_norm_eps": 1e-06,
      "rope_theta": 10000.0, "hidden_activation": "gelu_pytorch_tanh", "bos_token_id": 2,
      "eos_token_id": [1, 107], "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    {"gemma-3-12b", R"({"architectures": ["Gemma3ForCausalLM"], "vocab_size": 262208,
      "hidden_size": 3840, "intermediate_size": 15360, "num_hidden_layers": 48,
      "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
      "query_pre_attn_scalar": 256, "sliding_window": 1024, "sliding_window_pattern": 6,
      "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
      "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "max_position_embeddings": 131072,
      "rms_norm_eps": 1e-06, "bos_token_id": 2, "eos_token_id": [1, 106], "pad_token_id": 0,
      "torch_dtype": "bfloat16"})"},
    // Gemma 4 (text models as convert_gemma4_weights.py's _VARIANTS give them; docs/gemma4.md §1)
    {"gemma-4-e2b", R"({"architectures": ["Gemma4ForCausalLM"], "vocab_size": 262144, "hidden_size": 1536,
      "intermediate_size": 6144, "num_hidden_layers": 35, "num_attention_heads": 8, "num_key_value_heads": 1,
      "head_dim": 256, "global_head_dim": 512, "hidden_size_per_layer_input": 256, "num_kv_shared_layers": 20,
      "use_double_wide_mlp": true, "sliding_window": 512, "max_position_embeddings": 131072,
      "final_logit_softcapping": 30.0, "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
      "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0}}, "eos_token_id": [1, 106], "torch_dtype": "bfloat16"})"},
    {"gemma-4-e4b", R"({"architectures": ["Gemma4ForCausalLM"], "vocab_size": 262144, "hidden_size": 2560,
      "intermediate_size": 10240, "num_hidden_layers": 42, "num_attention_heads": 8, "num_key_value_heads": 2,
      "head_dim": 256, "global_head_dim": 512, "hidden_size_per_layer_input": 256, "num_kv_shared_layers": 18,
      "sliding_window": 512, "max_position_embeddings": 131072, "final_logit_softcapping": 30.0,
      "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0}}, "eos_token_id": [1, 106], "torch_dtype": "bfloat16"})"},
    {"gemma-4-31b", R"({"architectures": ["Gemma4ForCausalLM"], "vocab_size": 262144, "hidden_size": 5376,
      "intermediate_size": 21504, "num_hidden_layers": 60, "num_attention_heads": 32, "num_key_value_heads": 16,
      "head_dim": 256, "global_head_dim": 512, "num_global_key_value_heads": 4, "attention_k_eq_v": true,
      "hidden_size_per_layer_input": 0, "sliding_window": 1024, "max_position_embeddings": 262144,
      "use_bidirectional_attention": "vision", "final_logit_softcapping": 30.0,
      "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0}}, "eos_token_id": [1, 106], "torch_dtype": "bfloat16"})"},
    {"gemma-4-26b-a4b", R"({"architectures": ["Gemma4ForCausalLM"], "vocab_size": 262144, "hidden_size": 2816,
      "intermediate_size": 2112, "num_hidden_layers": 30, "num_attention_heads": 16, "num_key_value_heads": 8,
      "head_dim": 256, "global_head_dim": 512, "num_global_key_value_heads": 2, "attention_k_eq_v": true,
      "hidden_size_per_layer_input": 0, "enable_moe_block": true, "num_experts": 128, "top_k_experts": 8,
      "moe_intermediate_size": 704, "sliding_window": 1024, "max_position_embeddings": 262144,
      "use_bidirectional_attention": "vision", "final_logit_softcapping": 30.0,
      "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0}}, "eos_token_id": [1, 106], "torch_dtype": "bfloat16"})"},
    {"phi-3-mini-4k", R"({"architectures": ["Phi3ForCausalLM"], "vocab_size": 32064,
      "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 4096,
      "original_max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
      "rope_scaling": null, "sliding_window": 2047, "tie_word_embeddings": false, "bos_token_id": 1,
      "eos_token_id": 32000, "pad_token_id": 32000, "torch_dtype": "bfloat16"})"},
    {"mixtral-8x7b", R"({"architectures": ["MixtralForCausalLM"], "vocab_size": 32000,
      "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 8,
      "num_experts_per_tok": 2, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05,
      "rope_theta": 1000000.0, "sliding_window": null, "tie_word_embeddings": false,
      "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "bfloat16"})"},
    {"phi-3.5-moe", R"({"architectures": ["PhimoeForCausalLM"], "vocab_size": 32064, "hidden_size": 4096,
      "intermediate_size": 6400, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "num_local_experts": 16, "num_experts_per_tok": 2, "router_jitter_noise": 0.01, "attention_bias": true,
      "lm_head_bias": true, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
      "sliding_window": 131072, "tie_word_embeddings": false, "bos_token_id": 1, "eos_token_id": 32000,
      "torch_dtype": "bfloat16"})"},
    {"llama-4-scout-17b-16e", R"({"architectures": ["Llama4ForCausalLM"], "vocab_size": 202048, "hidden_size": 5120,
      "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
      "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16, "num_experts_per_tok": 1,
      "interleave_moe_layer_step": 1, "use_qk_norm": true, "attention_chunk_size": 8192, "attn_temperature_tuning": true,
      "floor_scale": 8192, "attn_scale": 0.1, "max_position_embeddings": 10485760, "rms_norm_eps": 1e-05,
      "rope_theta": 500000.0, "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
      "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "tie_word_embeddings": false,
      "bos_token_id": 200000, "eos_token_id": [200001, 200007, 200008], "torch_dtype": "bfloat16"})"},
    // Granite 4.0 micro: attention-only GraniteMoeHybrid, the dense MLP in shared_mlp (3.4B)
    {"granite-4.0-micro", R"({"architectures": ["GraniteMoeHybridForCausalLM"], "vocab_size": 100352,
      "hidden_size": 2560, "intermediate_size": 8192, "shared_intermediate_size": 8192, "num_hidden_layers": 40,
      "num_attention_heads": 40, "num_key_value_heads": 8, "num_local_experts": 0, "num_experts_per_tok": 0,
      "layer_types": ["attention", "attention", "attention", "attention", "attention", "attention", "attention",
      "attention", "attention", "attention", "attention", "attention", "attention", "attention", "attention",
      "attention", "attention", "attention", "attention", "attention", "attention", "attention", "attention",
      "attention", "attention", "attention", "attention", "attention", "attention", "attention", "attention",
      "attention", "attention", "attention", "attention", "attention", "attention", "attention", "attention",
      "attention"], "position_embedding_type": "rope", "embedding_multiplier": 12, "attention_multiplier": 0.0078125,
      "residual_multiplier": 0.22, "logits_scaling": 10, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
      "rope_theta": 10000000, "tie_word_embeddings": true, "bos_token_id": 100257, "eos_token_id": 100257,
      "pad_token_id": 100256, "torch_dtype": "bfloat16"})"},
    // Granite 4.0-H micro's shape: 36 Mamba-2 layers, attention on 5, 15, 25, 35, no positions; the multipliers
    // as granite-4.0-micro's (3.19B)
    {"granite-4.0-h-micro", R"({"architectures": ["GraniteMoeHybridForCausalLM"], "vocab_size": 100352,
      "hidden_size": 2048, "intermediate_size": 8192, "shared_intermediate_size": 8192, "num_hidden_layers": 40,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 0, "num_experts_per_tok": 0,
      "layer_types": ["mamba", "mamba", "mamba", "mamba", "mamba", "attention", "mamba", "mamba", "mamba", "mamba",
      "mamba", "mamba", "mamba", "mamba", "mamba", "attention", "mamba", "mamba", "mamba", "mamba", "mamba",
      "mamba", "mamba", "mamba", "mamba", "attention", "mamba", "mamba", "mamba", "mamba", "mamba", "mamba",
      "mamba", "mamba", "mamba", "attention", "mamba", "mamba", "mamba", "mamba"],
      "mamba_n_heads": 64, "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4,
      "mamba_expand": 2, "mamba_conv_bias": true, "mamba_proj_bias": false, "mamba_chunk_size": 256,
      "position_embedding_type": "nope", "embedding_multiplier": 12, "attention_multiplier": 0.0078125,
      "residual_multiplier": 0.22, "logits_scaling": 10, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
      "rope_theta": 10000, "tie_word_embeddings": true, "bos_token_id": 100257, "eos_token_id": 100257,
      "pad_token_id": 100256, "torch_dtype": "bfloat16"})"},
    // LFM2-1.2B's shape: 10 short-conv layers, 6 attention layers with q/k norms, the MLP adjusted to 8192 (1.17B)
    {"lfm2-1.2b", R"({"architectures": ["Lfm2ForCausalLM"], "vocab_size": 65536, "hidden_size": 2048,
      "block_ff_dim": 12288, "intermediate_size": 12288, "block_auto_adjust_ff_dim": true, "block_multiple_of": 256,
      "block_ffn_dim_multiplier": 1.0, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
      "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv", "conv",
      "full_attention", "conv", "full_attention", "conv", "full_attention", "conv", "full_attention", "conv"],
      "conv_L_cache": 3, "conv_bias": false, "norm_eps": 1e-05, "rope_theta": 1000000.0,
      "max_position_embeddings": 128000, "tie_word_embeddings": true, "bos_token_id": 1, "eos_token_id": 7,
      "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    // LFM2-8B-A1B's shape: LFM2's layers, two dense MLPs, then 32 experts (4 per token) behind a sigmoid router
    // with a correction bias (8.3B, 1.5B active)
    {"lfm2-8b-a1b", R"({"architectures": ["Lfm2MoeForCausalLM"], "vocab_size": 65536, "hidden_size": 2048,
      "intermediate_size": 7168, "moe_intermediate_size": 1792, "num_hidden_layers": 24, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_experts": 32, "num_experts_per_tok": 4, "num_dense_layers": 2,
      "use_expert_bias": true, "norm_topk_prob": true, "routed_scaling_factor": 1.0,
      "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "conv", "full_attention", "conv", "conv",
      "conv", "full_attention", "conv", "conv", "conv", "full_attention", "conv", "conv", "conv", "full_attention",
      "conv", "conv", "conv", "full_attention", "conv"],
      "conv_L_cache": 3, "conv_bias": false, "norm_eps": 1e-05, "rope_theta": 1000000.0,
      "max_position_embeddings": 128000, "tie_word_embeddings": true, "bos_token_id": 1, "eos_token_id": 7,
      "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    // Nemotron-H-8B's shape: 52 single-block layers, 24 Mamba-2, 24 relu² MLPs, 4 attention layers without RoPE
    // (8.1B)
    {"nemotron-h-8b", R"({"architectures": ["NemotronHForCausalLM"], "vocab_size": 131072, "hidden_size": 4096,
      "intermediate_size": 21504, "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
      "num_hidden_layers": 52, "num_attention_heads": 32, "num_key_value_heads": 8, "attention_head_dim": 128,
      "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128, "conv_kernel": 4,
      "use_conv_bias": true, "time_step_min": 0.001, "mlp_hidden_act": "relu2", "layer_norm_epsilon": 1e-05,
      "max_position_embeddings": 8192, "tie_word_embeddings": false, "bos_token_id": 1, "eos_token_id": 2,
      "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    // Hunyuan-7B-Instruct's shape: per-head q/k norms after RoPE, the base raised by alpha 1000 (7.5B)
    {"apertus-8b", R"({"architectures": ["ApertusForCausalLM"], "vocab_size": 131072, "hidden_size": 4096,
      "intermediate_size": 21504, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "hidden_act": "xielu", "max_position_embeddings": 65536, "rms_norm_eps": 1e-05, "rope_theta": 12000000,
      "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
      "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "attention_bias": false,
      "mlp_bias": false, "tie_word_embeddings": false, "bos_token_id": 1, "eos_token_id": 68, "pad_token_id": 3,
      "torch_dtype": "bfloat16"})"},
    {"hunyuan-7b", R"({"architectures": ["HunYuanDenseV1ForCausalLM"], "vocab_size": 128167, "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "head_dim": 128, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
      "rope_scaling": {"alpha": 1000.0, "factor": 1.0, "type": "dynamic"}, "tie_word_embeddings": true,
      "bos_token_id": 1, "eos_token_id": 127960, "pad_token_id": 127961, "torch_dtype": "bfloat16"})"},
    // Hunyuan-A13B-Instruct's shape: the same attention, 64 experts top-8 and a shared MLP on every layer (80.4B,
    // 12.7B active); the release's per-layer lists and attention_head_dim
    {"hunyuan-a13b", R"({"architectures": ["HunYuanMoEV1ForCausalLM"], "vocab_size": 128167, "hidden_size": 4096,
      "intermediate_size": 3072, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "attention_head_dim": 128, "num_experts": 64, "moe_topk": [8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
      8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8], "num_shared_expert": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "use_mixed_mlp_moe": true, "use_qk_norm": true,
      "use_cla": false, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
      "rope_scaling": {"alpha": 1000.0, "factor": 1.0, "type": "dynamic"}, "tie_word_embeddings": true,
      "bos_token_id": 1, "eos_token_id": 127960, "pad_token_id": 127961, "torch_dtype": "bfloat16"})"},
    {"qwen3-30b-a3b", R"({"architectures": ["Qwen3MoeForCausalLM"], "vocab_size": 151936,
      "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 48,
      "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
      "num_experts_per_tok": 8, "moe_intermediate_size": 768, "norm_topk_prob": true,
      "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 40960,
      "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": false,
      "bos_token_id": 151643, "eos_token_id": 151645, "torch_dtype": "bfloat16"})"},
    {"qwen3-235b-a22b", R"({"architectures": ["Qwen3MoeForCausalLM"], "vocab_size": 151936,
      "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 94,
      "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
      "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "norm_topk_prob": true,
      "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 40960,
      "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": false,
      "bos_token_id": 151643, "eos_token_id": 151645, "torch_dtype": "bfloat16"})"},
    // Qwen3-VL-235B-A22B's language model: Qwen3-235B-A22B's layers under text_config
    {"qwen3-vl-235b-a22b", R"({"architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe",
      "tie_word_embeddings": false, "text_config": {"model_type": "qwen3_vl_moe_text", "vocab_size": 151936,
      "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 94, "num_attention_heads": 64,
      "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
      "moe_intermediate_size": 1536, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [],
      "max_position_embeddings": 262144, "rms_norm_eps": 1e-06, "rope_theta": 5000000,
      "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": true},
      "bos_token_id": 151643, "eos_token_id": 151645, "dtype": "bfloat16"}})"},
    // dots.llm1.inst's shape (142.8B, 14B active): Qwen3's attention, 128 sigmoid-routed experts top-6 and two
    // shared ones after one dense layer; n_group / topk_group null as released
    {"dots.llm1", R"({"architectures": ["Dots1ForCausalLM"], "vocab_size": 152064, "hidden_size": 4096,
      "intermediate_size": 10944, "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 32,
      "n_routed_experts": 128, "n_shared_experts": 2, "num_experts_per_tok": 6, "moe_intermediate_size": 1408,
      "norm_topk_prob": true, "n_group": null, "topk_group": null, "routed_scaling_factor": 2.5,
      "scoring_func": "sigmoid", "first_k_dense_replace": 1, "max_position_embeddings": 32768,
      "rms_norm_eps": 1e-05, "rope_theta": 10000000, "attention_bias": false, "tie_word_embeddings": false,
      "eos_token_id": 151649, "torch_dtype": "bfloat16"})"},
    {"glm-4.5-air", R"({"architectures": ["Glm4MoeForCausalLM"], "vocab_size": 151552, "hidden_size": 4096,
      "intermediate_size": 10944, "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8,
      "head_dim": 128, "partial_rotary_factor": 0.5, "attention_bias": true, "use_qk_norm": false,
      "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 8, "moe_intermediate_size": 1408,
      "norm_topk_prob": true, "n_group": 1, "topk_group": 1, "routed_scaling_factor": 1.0,
      "first_k_dense_replace": 1, "num_nextn_predict_layers": 1, "max_position_embeddings": 131072,
      "rms_norm_eps": 1e-05, "rope_theta": 1000000, "tie_word_embeddings": false, "pad_token_id": 151329,
      "eos_token_id": [151329, 151336, 151338], "torch_dtype": "bfloat16"})"},
    // gpt-oss as published (layer_types, the yarn rope and the swiglu keys as GptOssConfig sets them
    // when absent); the released experts are MXFP4, the synthetic ones plain.
    {"gpt-oss-20b", R"({"architectures": ["GptOssForCausalLM"], "vocab_size": 201088, "hidden_size": 2880,
      "intermediate_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8,
      "head_dim": 64, "num_local_experts": 32, "num_experts_per_tok": 4, "sliding_window": 128,
      "attention_bias": true, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 150000,
      "tie_word_embeddings": false, "eos_token_id": 200002, "pad_token_id": 199999, "torch_dtype": "bfloat16"})"},
    {"gpt-oss-120b", R"({"architectures": ["GptOssForCausalLM"], "vocab_size": 201088, "hidden_size": 2880,
      "intermediate_size": 2880, "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8,
      "head_dim": 64, "num_local_experts": 128, "num_experts_per_tok": 4, "sliding_window": 128,
      "attention_bias": true, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 150000,
      "tie_word_embeddings": false, "eos_token_id": 200002, "pad_token_id": 199999, "torch_dtype": "bfloat16"})"},
    // Seed-OSS-36B: Llama with q/k/v biases, 80 heads of 128 beside hidden 5120
    {"seed-oss-36b", R"({"architectures": ["SeedOssForCausalLM"], "vocab_size": 155136, "hidden_size": 5120,
      "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 80, "num_key_value_heads": 8,
      "head_dim": 128, "attention_bias": true, "attention_out_bias": false, "mlp_bias": false,
      "max_position_embeddings": 524288, "rms_norm_eps": 1e-06, "rope_theta": 10000000.0,
      "tie_word_embeddings": false, "bos_token_id": 0, "eos_token_id": 2, "pad_token_id": 1,
      "torch_dtype": "bfloat16"})"},
    // Command R+ (c4ai-command-r-plus, 104B): LayerNorms, parallel blocks, per-head q/k LayerNorms, tied
    {"command-r-plus", R"({"architectures": ["CohereForCausalLM"], "vocab_size": 256000, "hidden_size": 12288,
      "intermediate_size": 33792, "num_hidden_layers": 64, "num_attention_heads": 96, "num_key_value_heads": 8,
      "layer_norm_eps": 1e-05, "logit_scale": 0.8333333333333334, "use_qk_norm": true, "attention_bias": false,
      "max_position_embeddings": 8192, "rope_theta": 75000000.0, "bos_token_id": 5, "eos_token_id": 255001,
      "pad_token_id": 0, "torch_dtype": "float16"})"},
    // DeepSeek-V3 / R1 (671B, 37B active; the released weights are FP8, the MTP layer not counted):
    // latent attention, 256 experts in 8 groups (best 4 kept), top-8, one shared expert, 3 dense layers
    {"deepseek-v3", R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
      "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
      "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
      "n_routed_experts": 256, "routed_scaling_factor": 2.5, "kv_lora_rank": 512, "q_lora_rank": 1536,
      "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "topk_method": "noaux_tc", "n_group": 8,
      "topk_group": 4, "num_experts_per_tok": 8, "moe_layer_freq": 1, "first_k_dense_replace": 3,
      "norm_topk_prob": true, "scoring_func": "sigmoid", "hidden_act": "silu", "max_position_embeddings": 163840,
      "rms_norm_eps": 1e-06, "rope_theta": 10000, "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
      "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"},
      "tie_word_embeddings": false, "bos_token_id": 0, "eos_token_id": 1, "num_nextn_predict_layers": 1,
      "torch_dtype": "bfloat16"})"},
    // GLM-4.7-Flash (zai-org): DeepSeek-V3's architecture under GLM's config, 64 experts top-4, one shared
    {"glm-4.7-flash", R"({"architectures": ["Glm4MoeLiteForCausalLM"], "model_type": "glm4_moe_lite", "vocab_size": 154880,
      "hidden_size": 2048, "intermediate_size": 10240, "moe_intermediate_size": 1536, "num_hidden_layers": 47,
      "num_attention_heads": 20, "num_key_value_heads": 20, "n_routed_experts": 64, "n_shared_experts": 1,
      "num_experts_per_tok": 4, "routed_scaling_factor": 1.8, "n_group": 1, "topk_group": 1, "norm_topk_prob": true,
      "topk_method": "noaux_tc", "first_k_dense_replace": 1, "num_nextn_predict_layers": 1, "q_lora_rank": 768,
      "kv_lora_rank": 512, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256,
      "rope_interleave": true, "max_position_embeddings": 202752, "rms_norm_eps": 1e-05,
      "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}, "attention_bias": false,
      "tie_word_embeddings": false, "eos_token_id": [154820, 154827, 154829], "pad_token_id": 154820,
      "torch_dtype": "bfloat16"})"},
    // Moonlight-16B-A3B (moonshotai): DeepSeek-V3's architecture without a q rank, 64 experts, top-6
    {"moonlight-16b-a3b", R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
      "vocab_size": 163840, "hidden_size": 2048, "intermediate_size": 11264, "moe_intermediate_size": 1408,
      "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16, "n_shared_experts": 2,
      "n_routed_experts": 64, "routed_scaling_factor": 2.446, "kv_lora_rank": 512, "q_lora_rank": null,
      "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "topk_method": "noaux_tc", "n_group": 1,
      "topk_group": 1, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "norm_topk_prob": true,
      "scoring_func": "sigmoid", "hidden_act": "silu", "max_position_embeddings": 8192, "rms_norm_eps": 1e-05,
      "rope_theta": 50000.0, "rope_scaling": null, "tie_word_embeddings": false, "bos_token_id": 163584,
      "eos_token_id": 163585, "torch_dtype": "bfloat16"})"},
    // DeepSeek-V2-Lite (15.7B, 2.4B active) and DeepSeek-V2 / V2.5 (236B, 21B active), as recalled, not checked
    // against the Hub: V3's latent attention, a softmax router (V2: the best 3 of 8 groups, x16), 2 shared experts
    {"deepseek-v2-lite", R"({"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
      "vocab_size": 102400, "hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408,
      "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16, "n_shared_experts": 2,
      "n_routed_experts": 64, "routed_scaling_factor": 1.0, "kv_lora_rank": 512, "q_lora_rank": null,
      "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "topk_method": "greedy", "n_group": 1,
      "topk_group": 1, "num_experts_per_tok": 6, "moe_layer_freq": 1, "first_k_dense_replace": 1,
      "norm_topk_prob": false, "scoring_func": "softmax", "hidden_act": "silu", "max_position_embeddings": 163840,
      "rms_norm_eps": 1e-06, "rope_theta": 10000, "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
      "mscale": 0.707, "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096, "type": "yarn"},
      "tie_word_embeddings": false, "bos_token_id": 100000, "eos_token_id": 100001, "torch_dtype": "bfloat16"})"},
    {"deepseek-v2", R"({"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
      "vocab_size": 102400, "hidden_size": 5120, "intermediate_size": 12288, "moe_intermediate_size": 1536,
      "num_hidden_layers": 60, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 2,
      "n_routed_experts": 160, "routed_scaling_factor": 16.0, "kv_lora_rank": 512, "q_lora_rank": 1536,
      "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "topk_method": "group_limited_greedy",
      "n_group": 8, "topk_group": 3, "num_experts_per_tok": 6, "moe_layer_freq": 1, "first_k_dense_replace": 1,
      "norm_topk_prob": false, "scoring_func": "softmax", "hidden_act": "silu", "max_position_embeddings": 163840,
      "rms_norm_eps": 1e-06, "rope_theta": 10000, "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40,
      "mscale": 0.707, "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096, "type": "yarn"},
      "tie_word_embeddings": false, "bos_token_id": 100000, "eos_token_id": 100001, "torch_dtype": "bfloat16"})"},
    // Kimi-K2 (moonshotai, 1T, 32B active): DeepSeek-V3's architecture with 64 heads, 384 experts in one
    // group and YaRN x32 with beta_fast = beta_slow = 1
    {"kimi-k2", R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", "vocab_size": 163840,
      "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
      "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1, "n_routed_experts": 384,
      "routed_scaling_factor": 2.827, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
      "v_head_dim": 128, "qk_nope_head_dim": 128, "topk_method": "noaux_tc", "n_group": 1, "topk_group": 1,
      "num_experts_per_tok": 8, "first_k_dense_replace": 1, "norm_topk_prob": true, "scoring_func": "sigmoid",
      "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "rope_theta": 50000.0,
      "rope_scaling": {"beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0, "mscale": 1.0, "mscale_all_dim": 1.0,
      "original_max_position_embeddings": 4096, "type": "yarn"}, "tie_word_embeddings": false,
      "bos_token_id": 163584, "eos_token_id": 163585, "torch_dtype": "bfloat16"})"},
    // OLMo 2 (OLMo-2-1124-7B and OLMo-2-0325-32B as recalled, not checked against the Hub): norms on the
    // branch outputs only, q/k RMSNorms over all heads
    {"olmo-2-7b", R"({"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "vocab_size": 100352,
      "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 32, "hidden_act": "silu", "max_position_embeddings": 4096, "rms_norm_eps": 1e-06,
      "rope_theta": 500000, "attention_bias": false, "tie_word_embeddings": false, "pad_token_id": 100277,
      "eos_token_id": 100257, "torch_dtype": "float32"})"},
    {"olmo-2-32b", R"({"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "vocab_size": 100352,
      "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 40,
      "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 4096, "rms_norm_eps": 1e-06,
      "rope_theta": 500000, "attention_bias": false, "tie_word_embeddings": false, "pad_token_id": 100277,
      "eos_token_id": 100257, "torch_dtype": "bfloat16"})"},
    // OLMoE-1B-7B-0924 (6.9B, 1.3B active; as recalled, not checked against the Hub): 64 experts of width
    // 1024, top-8 not renormalised, on every layer; q/k norms over the whole projections
    {"olmoe-1b-7b", R"({"architectures": ["OlmoeForCausalLM"], "model_type": "olmoe", "vocab_size": 50304,
      "hidden_size": 2048, "intermediate_size": 1024, "num_hidden_layers": 16, "num_attention_heads": 16,
      "num_key_value_heads": 16, "hidden_act": "silu", "max_position_embeddings": 4096, "rms_norm_eps": 1e-05,
      "rope_theta": 10000.0, "attention_bias": false, "clip_qkv": null, "num_experts": 64, "num_experts_per_tok": 8,
      "norm_topk_prob": false, "tie_word_embeddings": false, "pad_token_id": 1, "eos_token_id": 50279,
      "torch_dtype": "bfloat16"})"},
    // OLMo 3 (Olmo-3-1025-7B and Olmo-3-1125-32B as recalled, not checked against the Hub): OLMo 2's
    // layers, 3 of 4 sliding (window 4096, unscaled RoPE), YaRN x8 on the others
    {"olmo-3-7b", R"({"architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3", "vocab_size": 100278,
      "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 32, "hidden_act": "silu", "max_position_embeddings": 65536, "rms_norm_eps": 1e-06,
      "rope_theta": 500000, "rope_scaling": {"attention_factor": 1.2079441541679836, "beta_fast": 32,
      "beta_slow": 1, "factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "yarn"},
      "sliding_window": 4096, "attention_bias": false, "tie_word_embeddings": false, "pad_token_id": 100277,
      "eos_token_id": 100257, "torch_dtype": "bfloat16"})"},
    {"olmo-3-32b", R"({"architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3", "vocab_size": 100278,
      "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 40,
      "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 65536, "rms_norm_eps": 1e-06,
      "rope_theta": 500000, "rope_scaling": {"attention_factor": 1.2079441541679836, "beta_fast": 32,
      "beta_slow": 1, "factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "yarn"},
      "sliding_window": 4096, "attention_bias": false, "tie_word_embeddings": false, "pad_token_id": 100277,
      "eos_token_id": 100257, "torch_dtype": "bfloat16"})"},
    // MiniMax-M2 (230B, 10B active; config.json as a stored copy of MiniMaxAI/MiniMax-M2's, FP8 scales
    // and the attn_type_list of 62 ones left out): 256 experts of width 1536, top-8 by sigmoid +
    // correction bias; q/k norms over the whole projections, RoPE on 64 of each head's 128 dims
    {"minimax-m2", R"({"architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2", "head_dim": 128,
      "hidden_act": "silu", "hidden_size": 3072, "intermediate_size": 1536, "max_position_embeddings": 196608,
      "num_attention_heads": 48, "num_experts_per_tok": 8, "num_hidden_layers": 62, "num_key_value_heads": 8,
      "num_local_experts": 256, "qk_norm_type": "per_layer", "rms_norm_eps": 1e-06, "rope_theta": 5000000,
      "rotary_dim": 64, "scoring_func": "sigmoid", "shared_intermediate_size": 0, "tie_word_embeddings": false,
      "use_qk_norm": true, "use_routing_bias": true, "vocab_size": 200064, "bos_token_id": 200034,
      "eos_token_id": 200020, "torch_dtype": "bfloat16"})"},
    // EXAONE 4.0 (as recalled, not checked against the Hub): OLMo 2's post-norm layers with per-head
    // q/k norms; 32B: 3 of 4 layers sliding (window 4096, RoPE), the others full without RoPE; 1.2B:
    // no window, tied
    {"exaone-4.0-32b", R"({"architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "vocab_size": 102400,
      "hidden_size": 5120, "intermediate_size": 27392, "num_hidden_layers": 64, "num_attention_heads": 40,
      "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 131072,
      "rms_norm_eps": 1e-05, "rope_theta": 1000000, "rope_scaling": {"factor": 16.0, "high_freq_factor": 4.0,
      "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
      "sliding_window": 4096, "sliding_window_pattern": "LLLG", "tie_word_embeddings": false, "bos_token_id": 1,
      "eos_token_id": 361, "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    {"exaone-4.0-1.2b", R"({"architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "vocab_size": 102400,
      "hidden_size": 2048, "intermediate_size": 4096, "num_hidden_layers": 30, "num_attention_heads": 32,
      "num_key_value_heads": 8, "head_dim": 64, "hidden_act": "silu", "max_position_embeddings": 65536,
      "rms_norm_eps": 1e-05, "rope_theta": 1000000, "rope_scaling": {"factor": 16.0, "high_freq_factor": 4.0,
      "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
      "sliding_window": null, "sliding_window_pattern": null, "tie_word_embeddings": true, "bos_token_id": 1,
      "eos_token_id": 361, "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    // ERNIE 4.5 (as recalled, not checked against the Hub): the 0.36B dense model; 21B-A3B (64 experts
    // top-6 from layer 1, 2 shared) and 300B-A47B (64 top-8 from layer 3, none shared); softmax routers
    // picking by p + e_score_correction_bias
    {"ernie-4.5-0.3b", R"({"architectures": ["Ernie4_5ForCausalLM"], "model_type": "ernie4_5", "vocab_size": 103424,
      "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 18, "num_attention_heads": 16,
      "num_key_value_heads": 2, "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 131072,
      "rms_norm_eps": 1e-05, "rope_theta": 500000, "use_bias": false, "tie_word_embeddings": true,
      "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    {"ernie-4.5-21b-a3b", R"({"architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe",
      "vocab_size": 103424, "hidden_size": 2560, "intermediate_size": 12288, "num_hidden_layers": 28,
      "num_attention_heads": 20, "num_key_value_heads": 4, "hidden_act": "silu", "max_position_embeddings": 131072,
      "rms_norm_eps": 1e-05, "rope_theta": 500000, "use_bias": false, "moe_num_experts": 64,
      "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_intermediate_size": 1536, "moe_k": 6,
      "moe_layer_interval": 1, "moe_use_aux_free": true, "tie_word_embeddings": true, "bos_token_id": 1,
      "eos_token_id": 2, "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    {"ernie-4.5-300b-a47b", R"({"architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe",
      "vocab_size": 103424, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 54,
      "num_attention_heads": 64, "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 131072,
      "rms_norm_eps": 1e-05, "rope_theta": 500000, "use_bias": false, "moe_num_experts": 64,
      "moe_num_shared_experts": 0, "moe_layer_start_index": 3, "moe_intermediate_size": 3584, "moe_k": 8,
      "moe_layer_interval": 1, "moe_use_aux_free": true, "tie_word_embeddings": false, "bos_token_id": 1,
      "eos_token_id": 2, "pad_token_id": 0, "torch_dtype": "bfloat16"})"},
    // Qwen3-Next-80B-A3B: 3 of 4 layers a gated delta rule, 512 experts top-10 + a gated shared expert
    {"qwen3-next-80b-a3b", R"({"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
      "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5120, "num_hidden_layers": 48,
      "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "hidden_act": "silu",
      "max_position_embeddings": 262144, "rms_norm_eps": 1e-06, "rope_theta": 10000000, "partial_rotary_factor": 0.25,
      "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
      "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_value_head_dim": 128,
      "decoder_sparse_step": 1, "mlp_only_layers": [], "num_experts": 512, "num_experts_per_tok": 10,
      "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "norm_topk_prob": true,
      "tie_word_embeddings": false, "bos_token_id": 151643, "eos_token_id": 151645, "torch_dtype": "bfloat16"})"},
    // Qwen3.5-35B-A3B's language model (Qwen3_5MoeForConditionalGeneration): the same layers, 256 experts top-8
    {"qwen3.5-35b-a3b", R"({"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
      "tie_word_embeddings": false, "text_config": {"model_type": "qwen3_5_moe_text", "vocab_size": 248320,
      "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16, "num_key_value_heads": 2,
      "head_dim": 256, "hidden_act": "silu", "max_position_embeddings": 262144, "rms_norm_eps": 1e-06,
      "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
      "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_value_head_dim": 128, "num_experts": 256,
      "num_experts_per_tok": 8, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
      "rope_parameters": {"rope_type": "default", "rope_theta": 10000000, "partial_rotary_factor": 0.25,
      "mrope_section": [11, 11, 10], "mrope_interleaved": true}, "eos_token_id": 248044, "dtype": "bfloat16"}})"},
};

constexpr std::string_view kPrefix = "synthetic:";

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

const std::vector<std::string>& synthetic_presets() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Preset& p : kPresets) v.emplace_back(p.name);
    return v;
  }();
  return names;
}

ModelSpec synthetic_model_spec(const std::string& name) {
  std::string_view n = name;
  if (n.substr(0, kPrefix.size()) == kPrefix) n.remove_prefix(kPrefix.size());
  for (const Preset& p : kPresets) {
    if (n == p.name) {
      return parse_model_spec(io::parse_json(p.config, fmt::format("synthetic:{}", p.name)));
    }
  }
  std::string list;
  for (const Preset& p : kPresets) list += (list.empty() ? "" : ", ") + std::string(p.name);
  fail("unknown synthetic model '{}' (presets: {})", n, list);
}

void synthetic_weight_values(const ExpectedWeight& w, int64_t first, int64_t count, float* out,
                             uint64_t seed) {
  int64_t numel = 1;
  for (int64_t d : w.shape) numel *= d;
  if (first < 0 || count < 0 || first > numel || count > numel - first) {
    fail("synthetic weight '{}': element range [{}, {}+{}) is outside its {} elements", w.name, first,
         first, count, numel);
  }
  float center = 0.0f, half_width = 0.0f;  // uniform(center - hw, center + hw)
  switch (w.role) {
    case WeightRole::attn_norm:
    case WeightRole::post_attn_norm:
    case WeightRole::mlp_norm:
    case WeightRole::post_mlp_norm:
    case WeightRole::layer_scalar:
    case WeightRole::dense_post_norm:
    case WeightRole::moe_norm:
    case WeightRole::moe_post_norm:
    case WeightRole::router_scale:
    case WeightRole::router_expert_scale:
    case WeightRole::ple_post_norm:
    case WeightRole::ple_proj_norm:
    case WeightRole::final_norm:
    case WeightRole::q_norm:
    case WeightRole::k_norm:
    case WeightRole::q_a_norm:
    case WeightRole::kv_a_norm:
    case WeightRole::linear_norm:
      center = 1.0f;
      half_width = 0.05f;
      break;
    case WeightRole::q_bias:
    case WeightRole::k_bias:
    case WeightRole::v_bias:
    case WeightRole::o_bias:
    case WeightRole::attn_sinks:
    case WeightRole::router_logit_bias:
    case WeightRole::expert_gate_bias:
    case WeightRole::expert_up_bias:
    case WeightRole::expert_down_bias:
    case WeightRole::gate_bias:
    case WeightRole::up_bias:
    case WeightRole::down_bias:
    case WeightRole::attn_norm_bias:
    case WeightRole::mlp_norm_bias:
    case WeightRole::final_norm_bias:
    case WeightRole::lm_head_bias:
    case WeightRole::linear_conv_bias:
      half_width = 0.02f;
      break;
    case WeightRole::embed:
      half_width = std::sqrt(3.0f);  // std 1
      break;
    case WeightRole::xielu_alpha_p:  // around transformers' init: softplus⁻¹(0.8)
      center = 0.2032f;
      half_width = 0.05f;
      break;
    case WeightRole::xielu_alpha_n:  // softplus⁻¹(0.8 − beta)
      center = -1.0502f;
      half_width = 0.05f;
      break;
    case WeightRole::xielu_beta:
      center = 0.5f;
      half_width = 0.02f;
      break;
    case WeightRole::xielu_eps:
      center = -1e-6f;
      break;
    default:
      // (out, in) matrices (and views (groups, rows, in); the conv's (C, 1, K)): std 1/sqrt(in) keeps
      // activations at unit scale.
      half_width = std::sqrt(3.0f / static_cast<float>(w.shape.size() >= 2 ? w.shape.back() : 1));
      break;
  }
  const uint64_t key = splitmix64(fnv1a(w.name) ^ splitmix64(seed));
  for (int64_t i = 0; i < count; ++i) {
    uint64_t u = splitmix64(key + static_cast<uint64_t>(file_index(w, first + i)) * 0x9e3779b97f4a7c15ull);
    // 24 random bits -> (-1, 1), symmetric around 0.
    float r = (static_cast<float>(u >> 40) + 0.5f) * (2.0f / 16777216.0f) - 1.0f;
    out[i] = center + half_width * r;
  }
}

}  // namespace abl::model
