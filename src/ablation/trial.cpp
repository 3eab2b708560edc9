#include "abl/ablation/trial.h"

#include <cmath>

#include <fmt/format.h>

#include "abl/core/error.h"

namespace abl::ablation {

DirectionScope parse_direction_scope(std::string_view name) {
  if (name == "global") return DirectionScope::global;
  if (name == "per_layer" || name == "per layer" || name == "per-layer") return DirectionScope::per_layer;
  fail("invalid direction scope '{}' (expected global or per_layer)", name);
}

std::string_view direction_scope_name(DirectionScope s) {
  return s == DirectionScope::global ? "global" : "per_layer";
}

std::array<double, kParamNames.size()> param_values(const TrialParams& p) {
  std::array<double, kParamNames.size()> v{};
  v[0] = static_cast<double>(p.scope);
  v[1] = p.direction_index;
  for (size_t c = 0; c < 2; ++c) {
    v[2 + 4 * c] = p.comp[c].max_weight;
    v[3 + 4 * c] = p.comp[c].max_weight_position;
    v[4 + 4 * c] = p.comp[c].min_weight;
    v[5 + 4 * c] = p.comp[c].min_weight_distance;
  }
  return v;
}

TrialParams params_from_values(const std::array<double, kParamNames.size()>& v) {
  TrialParams p;
  ABL_CHECK(v[0] == 0.0 || v[0] == 1.0, "direction_scope must be 0 (global) or 1 (per_layer), got {}", v[0]);
  p.scope = v[0] == 0.0 ? DirectionScope::global : DirectionScope::per_layer;
  p.direction_index = v[1];
  for (size_t c = 0; c < 2; ++c) {
    p.comp[c].max_weight = v[2 + 4 * c];
    p.comp[c].max_weight_position = v[3 + 4 * c];
    p.comp[c].min_weight = v[4 + 4 * c];
    p.comp[c].min_weight_distance = v[5 + 4 * c];
  }
  return p;
}

std::string describe(const TrialParams& p) {
  std::string s = p.scope == DirectionScope::global ? fmt::format("global d={:.3f}", p.direction_index)
                                                     : std::string("per_layer");
  const char* names[2] = {"attn", "mlp"};
  for (size_t c = 0; c < 2; ++c) {
    const ComponentParams& k = p.comp[c];
    s += fmt::format(" {}(max {:.3f} @ {:.2f}, min {:.3f}, dist {:.2f})", names[c], k.max_weight,
                     k.max_weight_position, k.min_weight, k.min_weight_distance);
  }
  return s;
}

float layer_weight(const ComponentParams& c, int64_t layer) {
  const double dist = std::fabs(static_cast<double>(layer) - c.max_weight_position);
  if (!(c.min_weight_distance > 0) || dist > c.min_weight_distance) return 0.0f;
  return static_cast<float>(c.max_weight + (dist / c.min_weight_distance) * (c.min_weight - c.max_weight));
}

std::vector<float> global_direction(const std::vector<std::vector<float>>& r, double direction_index) {
  const int64_t L = static_cast<int64_t>(r.size()) - 1;
  ABL_CHECK(L >= 1, "need directions for at least 2 depths, got {}", r.size());
  ABL_CHECK(std::isfinite(direction_index) && direction_index >= 0.0 && direction_index <= static_cast<double>(L - 1),
            "direction_index {} is outside [0, {}] (the model has {} layers)", direction_index, L - 1, L);
  const auto lo = static_cast<int64_t>(std::floor(direction_index));
  const double frac = direction_index - static_cast<double>(lo);
  const std::vector<float>& a = r[static_cast<size_t>(lo + 1)];
  const std::vector<float>& b = frac > 0 ? r[static_cast<size_t>(lo + 2)] : a;
  std::vector<double> v(a.size());
  double ss = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    v[i] = (1.0 - frac) * a[i] + frac * b[i];
    ss += v[i] * v[i];
  }
  const double inv = ss > 0 ? 1.0 / std::sqrt(ss) : 0.0;
  std::vector<float> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = static_cast<float>(v[i] * inv);
  return out;
}

engine::AblationTable build_trial_table(const std::vector<TrialParams>& trials, const std::vector<std::vector<float>>& r,
                             engine::RowNorm mode, bool routed_experts) {
  const int64_t L = static_cast<int64_t>(r.size()) - 1;
  ABL_CHECK(L >= 1, "need directions for at least 2 depths, got {}", r.size());
  engine::AblationTable t;
  t.directions = r;
  for (size_t k = 0; k < trials.size(); ++k) {
    const TrialParams& p = trials[k];
    engine::TrialAblation a;
    a.mode = mode;
    a.routed_experts = routed_experts;
    a.direction.resize(static_cast<size_t>(L));
    if (p.scope == DirectionScope::global) {
      try {
        t.directions.push_back(global_direction(r, p.direction_index));
      } catch (const Error& e) {
        fail("trial {}: {}", k, e.what());
      }
      for (auto& d : a.direction) d = static_cast<int32_t>(t.directions.size() - 1);
    } else {
      for (int64_t l = 0; l < L; ++l) a.direction[static_cast<size_t>(l)] = static_cast<int32_t>(l + 1);
    }
    for (size_t c = 0; c < 2; ++c) {
      a.lambda[c].resize(static_cast<size_t>(L));
      for (int64_t l = 0; l < L; ++l) a.lambda[c][static_cast<size_t>(l)] = layer_weight(p.comp[c], l);
    }
    t.ablations.push_back(std::move(a));
  }
  return t;
}

}  // namespace abl::ablation
