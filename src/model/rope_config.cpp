// RoPE scaling keys -> RopeScaling (rope_config.h), as transformers' modeling_rope_utils.py reads
// them: _compute_linear_scaling_rope_parameters, _compute_llama3_parameters,
// _compute_longrope_parameters, _compute_yarn_parameters. The frequencies themselves are
// engine::rope_inv_freq's.
#include "rope_config.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "spec_checks.h"

namespace abl::model {
namespace {

std::vector<double> double_list(const io::JsonValue& v) {
  if (!v.is_array()) v.fail(fmt::format("must be a list of numbers, found {}", v.type_name()));
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(v.at(i).as_double());
  return out;
}

// YaRN as transformers computes it (modeling_rope_utils.py _compute_yarn_parameters, 4.56 and
// later: `factor` as given, not max_position_embeddings / original_max_position_embeddings as
// 4.51-4.55 had it; the two agree when the config's max_position_embeddings is factor times the
// original). The original context: a top-level original_max_position_embeddings (transformers
// 5.x moves it into the rope parameters), else the rope key, else max_position_embeddings.
void parse_yarn(const io::JsonValue& r, const RopeTopLevel& top, RopeScaling* out) {
  out->type = RopeScaling::Type::yarn;
  out->factor = r.get_double("factor");
  out->original_max_position_embeddings =
      top.original_max_position_embeddings ? *top.original_max_position_embeddings
                                           : r.get_int("original_max_position_embeddings", top.max_position_embeddings);
  // `config.rope_scaling.get("beta_fast") or 32`: null and 0 take the default too
  const double fast = r.get_double("beta_fast", 0.0), slow = r.get_double("beta_slow", 0.0);
  out->beta_fast = fast != 0.0 ? fast : 32.0;
  out->beta_slow = slow != 0.0 ? slow : 1.0;
  out->truncate = r.get_bool("truncate", true);
  const auto mscale = [](double scale, double m) { return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
  const double m = r.get_double("mscale", 0.0), m_all = r.get_double("mscale_all_dim", 0.0);
  if (auto af = r.find("attention_factor")) {
    out->attention_factor = af->as_double();
  } else if (m != 0.0 && m_all != 0.0) {
    out->attention_factor = mscale(out->factor, m) / mscale(out->factor, m_all);
  } else {
    out->attention_factor = mscale(out->factor, 1.0);
  }
}

}  // namespace

void parse_rope_scaling(const io::JsonValue& r, const RopeTopLevel& top, RopeScaling* out) {
  if (!r.is_object()) r.fail(fmt::format("must be an object or null, found {}", r.type_name()));
  std::string type = r.get_string("rope_type", r.get_string("type", ""));
  if (type.empty()) r.fail("has no 'rope_type' (or 'type')");
  // Phi3Config._rope_scaling_adjustment: "su" and "yarn" are older names of longrope.
  if (type == "su" || (type == "yarn" && r.contains("short_factor"))) type = "longrope";
  // Qwen2-VL/Qwen2.5-VL write {"type": "mrope", "mrope_section": [...]}, which their config classes
  // turn into "default"; Qwen3-VL writes "default" with mrope_section and mrope_interleaved. The
  // multimodal RoPE gives each frequency band the temporal, height or width position of a token;
  // a text token has all three equal to its position (get_rope_index), so for text — all this tool
  // feeds the model — it is the plain RoPE.
  if (type == "default" || type == "mrope") {
    out->type = RopeScaling::Type::none;
    return;
  }
  if (type == "linear") {
    out->type = RopeScaling::Type::linear;
    out->factor = r.get_double("factor");
    return;
  }
  if (type == "proportional") {
    // modeling_rope_utils._compute_proportional_rope_parameters (Gemma 4's full-attention layers)
    out->type = RopeScaling::Type::proportional;
    out->factor = r.get_double("factor", 1.0);
    out->rotary_fraction = r.get_double("partial_rotary_factor", 1.0);
    return;
  }
  if (type == "dynamic") {
    // modeling_rope_utils._compute_dynamic_ntk_parameters: base x (factor x seq_len / max_pos -
    // (factor - 1))^(dim / (dim - 2)) with seq_len = max(sequence, max_position_embeddings), so
    // the default frequencies up to max_position_embeddings tokens (rope_freqs.cpp).
    out->type = RopeScaling::Type::dynamic;
    out->ntk_alpha = r.get_double("alpha", 0.0);
    out->factor = out->ntk_alpha != 0.0 ? r.get_double("factor", 1.0) : r.get_double("factor");
    return;
  }
  if (type == "longrope") {
    // transformers modeling_rope_utils._compute_longrope_parameters: with a top-level
    // original_max_position_embeddings (Phi-3), factor = max_position_embeddings / it.
    out->type = RopeScaling::Type::longrope;
    out->short_factor = double_list(r.at("short_factor"));
    out->long_factor = double_list(r.at("long_factor"));
    const int64_t max_pos = top.max_position_embeddings;
    if (top.original_max_position_embeddings) {
      out->original_max_position_embeddings = *top.original_max_position_embeddings;
      out->factor = static_cast<double>(max_pos) / static_cast<double>(out->original_max_position_embeddings);
    } else {
      out->original_max_position_embeddings = r.get_int("original_max_position_embeddings", max_pos);
      out->factor = r.get_double("factor", 1.0);
    }
    if (auto af = r.find("attention_factor")) {
      out->attention_factor = af->as_double();
    } else if (out->factor <= 1.0 || out->original_max_position_embeddings <= 1) {
      out->attention_factor = 1.0;
    } else {
      out->attention_factor = std::sqrt(1.0 + std::log(out->factor) /
                                                  std::log(static_cast<double>(out->original_max_position_embeddings)));
    }
    return;
  }
  if (type == "yarn") {
    parse_yarn(r, top, out);
    return;
  }
  if (type != "llama3") {
    r.fail(fmt::format("rope type '{}' is not supported (supported: default, linear, dynamic, llama3, longrope, yarn, proportional)",
                       type));
  }
  out->type = RopeScaling::Type::llama3;
  out->factor = r.get_double("factor");
  out->low_freq_factor = r.get_double("low_freq_factor");
  out->high_freq_factor = r.get_double("high_freq_factor");
  out->original_max_position_embeddings = r.get_int("original_max_position_embeddings");
}

void check_rope_scaling(const ModelSpec& s) {
  const RopeScaling& r = s.rope_scaling;
  if (r.type != RopeScaling::Type::none && (!(r.factor > 0) || !std::isfinite(r.factor))) {
    bad_key(s, "rope_scaling.factor", fmt::format("must be positive, found {}", r.factor));
  }
  if (r.type == RopeScaling::Type::llama3) {
    if (!(r.low_freq_factor > 0) || !std::isfinite(r.low_freq_factor)) {
      bad_key(s, "rope_scaling.low_freq_factor",
              fmt::format("must be positive, found {}", r.low_freq_factor));
    }
    // equal factors (Llama 4 Scout: 1.0 and 1.0) leave no blended band
    if (!(r.high_freq_factor >= r.low_freq_factor) || !std::isfinite(r.high_freq_factor)) {
      bad_key(s, "rope_scaling.high_freq_factor",
              fmt::format("must not be below low_freq_factor {}, found {}", r.low_freq_factor, r.high_freq_factor));
    }
    check_size(s, "rope_scaling.original_max_position_embeddings",
               r.original_max_position_embeddings);
  }
  if (r.type == RopeScaling::Type::longrope) {
    for (const auto* list : {&r.short_factor, &r.long_factor}) {
      const char* key = list == &r.short_factor ? "rope_scaling.short_factor" : "rope_scaling.long_factor";
      if (static_cast<int64_t>(list->size()) != s.rotary_dim() / 2) {
        bad_key(s, key, fmt::format("has {} values, expected {} / 2 = {}", list->size(),
                                    s.partial_rotary_dim > 0 ? "the rotary dims" : "head_dim", s.rotary_dim() / 2));
      }
      for (double f : *list) {
        if (!(f > 0) || !std::isfinite(f)) bad_key(s, key, fmt::format("values must be positive, found {}", f));
      }
    }
    check_size(s, "original_max_position_embeddings", r.original_max_position_embeddings);
    if (!(r.attention_factor > 0) || !std::isfinite(r.attention_factor)) {
      bad_key(s, "rope_scaling.attention_factor", fmt::format("must be positive, found {}", r.attention_factor));
    }
  }
  if (r.type == RopeScaling::Type::proportional && !(r.rotary_fraction > 0.0 && r.rotary_fraction <= 1.0)) {
    bad_key(s, "rope_parameters.partial_rotary_factor", fmt::format("must be in (0, 1], found {}", r.rotary_fraction));
  }
  if (r.type == RopeScaling::Type::yarn) {
    check_size(s, "rope_scaling.original_max_position_embeddings", r.original_max_position_embeddings);
    if (!(s.rope_theta > 1)) {  // the correction range divides by ln(theta)
      bad_key(s, "rope_theta", fmt::format("must be greater than 1 with yarn rope scaling, found {}", s.rope_theta));
    }
    // Equal betas are allowed (Kimi-K2: 1 and 1): the ramp is then one dimension wide, as in transformers.
    if (!(r.beta_fast >= r.beta_slow) || !(r.beta_slow > 0) || !std::isfinite(r.beta_fast)) {
      bad_key(s, "rope_scaling.beta_fast",
              fmt::format("must be at least beta_slow > 0, found beta_fast {} and beta_slow {}", r.beta_fast,
                          r.beta_slow));
    }
    if (!(r.attention_factor > 0) || !std::isfinite(r.attention_factor)) {
      bad_key(s, "rope_scaling.attention_factor", fmt::format("must be positive, found {}", r.attention_factor));
    }
  }
}

std::string describe_rope_scaling(const RopeScaling& r) {
  switch (r.type) {
    case RopeScaling::Type::none: return "";
    case RopeScaling::Type::llama3: return fmt::format(" llama3 x{}", r.factor);
    case RopeScaling::Type::linear: return fmt::format(" linear x{}", r.factor);
    case RopeScaling::Type::dynamic:
      return fmt::format(" dynamic NTK x{} (the default RoPE within the context of a run)", r.factor);
    case RopeScaling::Type::longrope:
      return fmt::format(" longrope (short factors up to {} tokens, long beyond, attention x{:.4g})",
                         r.original_max_position_embeddings, r.attention_factor);
    case RopeScaling::Type::yarn:
      return fmt::format(" yarn x{} (from {} tokens, attention x{:.4g})", r.factor,
                         r.original_max_position_embeddings, r.attention_factor);
    case RopeScaling::Type::proportional:
      return r.factor == 1.0 ? fmt::format(" proportional {:.4g}", r.rotary_fraction)
                             : fmt::format(" proportional {:.4g} x{}", r.rotary_fraction, r.factor);
  }
  return "";
}

}  // namespace abl::model
