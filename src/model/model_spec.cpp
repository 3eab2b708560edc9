// config.json -> ModelSpec. One table row per supported family holds what differs between them
// (biases, q/k norm, defaults of absent keys, sliding-window keys); the parser is shared.
// Options we cannot run faithfully (o_proj/MLP biases, other activations, other RoPE scalings)
// are refused here, naming the key, rather than ignored later.
#include "abl/model/model_spec.h"

#include <cmath>
#include <filesystem>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/io/json_file.h"

namespace abl::model {

namespace fs = std::filesystem;

namespace {

struct Family {
  const char* architecture;
  bool qkv_bias;                 // fixed by the family (Qwen2's Linear layers have bias=True)
  bool qk_norm;
  bool has_attention_bias_key;   // Llama/Qwen3: attention_bias adds q/k/v/o biases
  int64_t default_head_dim;      // for an absent head_dim; 0 = hidden_size / num_attention_heads
  int64_t default_kv_heads;      // for an absent num_key_value_heads; 0 = num_attention_heads
  int64_t default_max_positions;
  enum class Window { none, always, switched } window;  // switched: use_sliding_window gates it
  int64_t default_sliding_window;  // Mistral: used when the key is absent (not when null)
};

// Defaults of absent keys are those of the transformers config classes.
const Family kFamilies[] = {
    {"LlamaForCausalLM", false, false, true, 0, 0, 2048, Family::Window::none, 0},
    {"MistralForCausalLM", false, false, false, 0, 8, 4096 * 32, Family::Window::always, 4096},
    {"Qwen2ForCausalLM", true, false, false, 0, 0, 32768, Family::Window::switched, 4096},
    {"Qwen3ForCausalLM", false, true, true, 128, 0, 32768, Family::Window::switched, 4096},
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

// Everything must also fit products like V * H in int64_t without overflow.
constexpr int64_t kMaxDim = int64_t{1} << 31;

[[noreturn]] void bad_key(const ModelSpec& s, const char* key, const std::string& msg) {
  fail("{}: key '{}': {}", s.source, key, msg);
}

void check_size(const ModelSpec& s, const char* key, int64_t v) {
  if (v <= 0) bad_key(s, key, fmt::format("must be positive, found {}", v));
  if (v > kMaxDim) bad_key(s, key, fmt::format("{} is implausibly large", v));
}

void check_token(const ModelSpec& s, const char* key, int64_t id) {
  if (id < 0 || id >= s.vocab_size) {
    bad_key(s, key, fmt::format("token id {} is outside the vocabulary [0, {})", id, s.vocab_size));
  }
}

void parse_rope_scaling(const io::JsonValue& r, RopeScaling* out) {
  if (!r.is_object()) r.fail(fmt::format("must be an object or null, found {}", r.type_name()));
  std::string type = r.get_string("rope_type", r.get_string("type", ""));
  if (type.empty()) r.fail("has no 'rope_type' (or 'type')");
  if (type == "default") {
    out->type = RopeScaling::Type::none;
    return;
  }
  if (type != "llama3") {
    r.fail(fmt::format("rope type '{}' is not supported (supported: default, llama3)", type));
  }
  out->type = RopeScaling::Type::llama3;
  out->factor = r.get_double("factor");
  out->low_freq_factor = r.get_double("low_freq_factor");
  out->high_freq_factor = r.get_double("high_freq_factor");
  out->original_max_position_embeddings = r.get_int("original_max_position_embeddings");
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

}  // namespace

bool ModelSpec::uses_sliding_window(int64_t layer) const {
  return sliding_window > 0 && layer >= sliding_window_first_layer;
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

  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.intermediate_size = c.get_int("intermediate_size");
  s.num_layers = c.get_int("num_hidden_layers");
  s.num_heads = c.get_int("num_attention_heads");
  s.num_kv_heads =
      c.get_int("num_key_value_heads", fam->default_kv_heads ? fam->default_kv_heads : s.num_heads);
  check_size(s, "hidden_size", s.hidden_size);
  check_size(s, "num_attention_heads", s.num_heads);
  if (auto hd = c.find("head_dim")) {
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

  std::string act = c.get_string("hidden_act", "silu");
  if (act != "silu") {
    fail("{}: key 'hidden_act': '{}' is not supported (the {} family uses silu)", s.source, act,
         s.architecture);
  }

  s.rms_norm_eps = c.get_double("rms_norm_eps", 1e-6);
  s.max_position_embeddings = c.get_int("max_position_embeddings", fam->default_max_positions);

  // RoPE: classic top-level keys, or transformers v5's "rope_parameters" holding both.
  auto rope_params = c.find("rope_parameters");
  double theta_default = 10000.0;
  if (rope_params && rope_params->is_object()) theta_default = rope_params->get_double("rope_theta", 10000.0);
  s.rope_theta = c.get_double("rope_theta", theta_default);
  if (auto scaling = c.find("rope_scaling")) {
    parse_rope_scaling(*scaling, &s.rope_scaling);
  } else if (rope_params) {
    parse_rope_scaling(*rope_params, &s.rope_scaling);
  }

  s.tied_embeddings = c.get_bool("tie_word_embeddings", false);
  s.qkv_bias = fam->qkv_bias;
  s.qk_norm = fam->qk_norm;
  if (fam->has_attention_bias_key && c.get_bool("attention_bias", false)) {
    // transformers puts this bias on o_proj too; the ablation epilogue assumes y = W x.
    fail("{}: key 'attention_bias': true (biases on q/k/v/o projections) is not supported",
         s.source);
  }
  if (c.get_bool("mlp_bias", false)) {
    fail("{}: key 'mlp_bias': true (biases on the MLP projections) is not supported", s.source);
  }

  switch (fam->window) {
    case Family::Window::none: break;
    case Family::Window::always:
      if (!c.contains("sliding_window")) {
        s.sliding_window = fam->default_sliding_window;
      } else if (auto w = c.find("sliding_window")) {
        s.sliding_window = w->as_int();
      }
      break;
    case Family::Window::switched:
      if (c.get_bool("use_sliding_window", false)) {
        s.sliding_window = c.get_int("sliding_window", fam->default_sliding_window);
        s.sliding_window_first_layer = c.get_int("max_window_layers", 28);
      }
      break;
  }

  if (auto v = c.find("bos_token_id")) s.bos_token_id = v->as_int();
  if (auto v = c.find("eos_token_id")) s.eos_token_ids = v->as_int_list();
  if (auto v = c.find("pad_token_id")) s.pad_token_id = v->as_int();
  if (auto v = c.find("torch_dtype")) {
    s.torch_dtype = parse_torch_dtype(*v);
  } else if (auto d = c.find("dtype")) {
    s.torch_dtype = parse_torch_dtype(*d);
  }

  validate_model_spec(s);
  return s;
}

void validate_model_spec(const ModelSpec& s) {
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
  if (s.rope_scaling.type == RopeScaling::Type::llama3) {
    const RopeScaling& r = s.rope_scaling;
    if (!(r.factor > 0) || !std::isfinite(r.factor)) {
      bad_key(s, "rope_scaling.factor", fmt::format("must be positive, found {}", r.factor));
    }
    if (!(r.low_freq_factor > 0) || !std::isfinite(r.low_freq_factor)) {
      bad_key(s, "rope_scaling.low_freq_factor",
              fmt::format("must be positive, found {}", r.low_freq_factor));
    }
    if (!(r.high_freq_factor > r.low_freq_factor) || !std::isfinite(r.high_freq_factor)) {
      bad_key(s, "rope_scaling.high_freq_factor",
              fmt::format("must be greater than low_freq_factor {}, found {}", r.low_freq_factor,
                          r.high_freq_factor));
    }
    check_size(s, "rope_scaling.original_max_position_embeddings",
               r.original_max_position_embeddings);
  }
  if (s.sliding_window < 0) {
    bad_key(s, "sliding_window", fmt::format("must be positive or null, found {}", s.sliding_window));
  }
  if (s.sliding_window_first_layer < 0) {
    bad_key(s, "max_window_layers",
            fmt::format("must not be negative, found {}", s.sliding_window_first_layer));
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
  return parse_model_spec(io::read_json_file(file));
}

std::string describe(const ModelSpec& s) {
  std::string rope = fmt::format("rope theta {}", s.rope_theta);
  if (s.rope_scaling.type == RopeScaling::Type::llama3) {
    rope += fmt::format(" llama3 x{}", s.rope_scaling.factor);
  }
  std::string flags;
  if (s.qkv_bias) flags += ", qkv bias";
  if (s.qk_norm) flags += ", q/k norm";
  if (s.sliding_window) flags += fmt::format(", sliding window {}", s.sliding_window);
  return fmt::format("{}: L={} H={} F={} NH={} NKV={} HD={} V={}, {}, {}{}", s.architecture,
                     s.num_layers, s.hidden_size, s.intermediate_size, s.num_heads, s.num_kv_heads,
                     s.head_dim, s.vocab_size, rope, s.tied_embeddings ? "tied" : "untied", flags);
}

}  // namespace abl::model
