// ModelSpec: the architecture of a decoder-only model, read from a Hugging Face config.json.
// Family differences (Llama, Mistral, Qwen2, Qwen3) become flags and numbers here
// (qkv_bias, qk_norm, tied_embeddings, head_dim, rope scaling) so that no other code needs to
// switch on the architecture name. Defaults for absent keys follow each family's
// transformers config class.
//
// Dimension names used with this spec everywhere: V vocab, H hidden, F ffn (intermediate),
// L layers, NH attention heads, NKV key/value heads, HD head dim.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "abl/core/dtype.h"

namespace abl::io {
class JsonValue;
}

namespace abl::model {

struct RopeScaling {
  enum class Type { none, llama3 };
  Type type = Type::none;
  // llama3 (Llama 3.1+): wavelengths above original_max/low_freq_factor are divided by
  // `factor`, those below original_max/high_freq_factor kept, a smooth blend in between.
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 0;
};

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

  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;  // RoPE base, rotate-half layout as in transformers
  RopeScaling rope_scaling;
  int64_t max_position_embeddings = 0;
  // Sliding-window attention (transformers semantics) in layers >= sliding_window_first_layer;
  // 0 = full attention everywhere. Mistral: all layers; Qwen2/3: only with use_sliding_window.
  int64_t sliding_window = 0;
  int64_t sliding_window_first_layer = 0;

  bool tied_embeddings = false;  // lm_head reuses model.embed_tokens.weight
  bool qkv_bias = false;         // q/k/v projections carry a bias (Qwen2)
  bool qk_norm = false;          // RMSNorm of each q and k head before RoPE (Qwen3)

  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;  // config's eos_token_id, an int or a list
  std::optional<int64_t> pad_token_id;
  std::optional<DType> torch_dtype;    // "torch_dtype" (or newer "dtype") of the checkpoint

  int64_t q_dim() const { return num_heads * head_dim; }      // NH * HD
  int64_t kv_dim() const { return num_kv_heads * head_dim; }  // NKV * HD
  int64_t group_size() const { return num_heads / num_kv_heads; }
  bool uses_sliding_window(int64_t layer) const;
};

// "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM"
const std::vector<std::string>& supported_architectures();

// `path`: a model folder (reads <path>/config.json) or a config.json file.
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

// "LlamaForCausalLM: L=32 H=4096 F=14336 NH=32 NKV=8 HD=128 V=128256, rope llama3 x8, untied"
std::string describe(const ModelSpec& spec);

}  // namespace abl::model
