// Epilogue arithmetic in fp32 with double dot products. For `full`, s_i is evaluated from the
// cached n, Ŵa and ‖a‖² for the trial's λ, so a new λ costs O(H) per token, not a GEMV.
#include "abl/engine/cpu/ablation_epilogue.h"

#include <cmath>

#include "abl/core/error.h"

namespace abl::engine {

AblationEpilogue::AblationEpilogue(const model::ModelSpec& spec, std::vector<std::vector<float>> directions,
                                   std::vector<TrialAblation> trials)
    : spec_(spec), directions_(std::move(directions)), trials_(std::move(trials)) {
  const size_t L = static_cast<size_t>(spec.num_layers);
  for (const auto& d : directions_) {
    ABL_CHECK(static_cast<int64_t>(d.size()) == spec.hidden_size, "direction of length {} for hidden size {}",
              d.size(), spec.hidden_size);
  }
  for (size_t t = 0; t < trials_.size(); ++t) {
    const TrialAblation& tr = trials_[t];
    ABL_CHECK(tr.direction.size() == L && tr.lambda[0].size() == L && tr.lambda[1].size() == L,
              "trial {} does not give a direction and two weights for each of the {} layers", t, L);
    for (int32_t d : tr.direction) {
      ABL_CHECK(d >= 0 && d < static_cast<int32_t>(directions_.size()), "trial {} names direction {} of {}", t, d,
                directions_.size());
    }
  }
}

void AblationEpilogue::begin_layer(int64_t layer, const LayerWeights& w) {
  current_ = w;
  current_layer_ = layer;
}

AblationEpilogue::Source AblationEpilogue::source(Component c, int32_t expert) const {
  if (c == Component::attn_o) return {current_.wo, spec_.o_in(current_layer_)};
  if (expert == kSharedExpert) return {current_.shared.w_down, spec_.shared_expert_intermediate_size};
  if (expert == kLatentOut) return {current_.latent_out, spec_.moe_latent_size};
  if (expert >= 0) {
    ABL_CHECK(static_cast<size_t>(expert) < current_.experts.size(), "expert {} of a layer with {} experts", expert,
              current_.experts.size());
    return {current_.experts[static_cast<size_t>(expert)].w_down, spec_.moe_intermediate_size};
  }
  return {current_.w_down, spec_.mlp_width(current_layer_)};  // (Gemma 4's double-wide layers: 2·intermediate_size)
}

const AblationEpilogue::Vectors& AblationEpilogue::vectors(Component c, int64_t layer, int32_t expert, int32_t dir) {
  const auto key = std::make_tuple(static_cast<int>(c), layer, expert, dir);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  ABL_CHECK(layer == current_layer_, "ablation vectors of layer {} requested while layer {} is loaded", layer,
            current_layer_);
  const int64_t H = spec_.hidden_size;
  const Source src = source(c, expert);
  const int64_t in = src.in;
  const float* W = src.w;  // (H, in)
  ABL_CHECK(W != nullptr, "layer {} has no weight for this ablation", layer);
  const float* v = directions_[static_cast<size_t>(dir)].data();
  Vectors vec;
  vec.n.resize(static_cast<size_t>(H));
  vec.wa.resize(static_cast<size_t>(H));
  // a = Ŵᵀv = Wᵀ(v ⊘ n)
  std::vector<double> a(static_cast<size_t>(in), 0.0);
  for (int64_t i = 0; i < H; ++i) {
    const float* row = W + i * in;
    double ss = 0;
    for (int64_t j = 0; j < in; ++j) ss += static_cast<double>(row[j]) * row[j];
    vec.n[static_cast<size_t>(i)] = static_cast<float>(std::sqrt(ss));
    const double coef = vec.n[static_cast<size_t>(i)] > 0 ? v[i] / std::sqrt(ss) : 0.0;
    for (int64_t j = 0; j < in; ++j) a[static_cast<size_t>(j)] += coef * row[j];
  }
  for (double x : a) vec.a2 += x * x;
  for (int64_t i = 0; i < H; ++i) {
    const float* row = W + i * in;
    double dot = 0;
    for (int64_t j = 0; j < in; ++j) dot += row[j] * a[static_cast<size_t>(j)];
    const double n = vec.n[static_cast<size_t>(i)];
    vec.wa[static_cast<size_t>(i)] = static_cast<float>(n > 0 ? dot / n : 0.0);
  }
  return cache_.emplace(key, std::move(vec)).first->second;
}

void AblationEpilogue::apply(Component c, int64_t layer, float* y, const Batch& batch) {
  ablate(c, layer, -1, y, nullptr, batch.num_tokens(), batch);
}

void AblationEpilogue::apply_expert(int64_t layer, int32_t expert, float* y, const int64_t* tokens, int64_t n,
                                    const Batch& batch) {
  ablate(Component::mlp_down, layer, expert, y, tokens, n, batch);
}

void AblationEpilogue::ablate(Component c, int64_t layer, int32_t expert, float* y, const int64_t* tokens, int64_t n,
                              const Batch& batch) {
  const int64_t H = spec_.hidden_size;
  const int ci = static_cast<int>(c);
  for (int64_t r = 0; r < n; ++r) {
    const int64_t t = tokens ? tokens[r] : r;
    const int32_t trial = batch.trial[static_cast<size_t>(batch.row_seq[static_cast<size_t>(t)])];
    if (trial < 0) continue;
    ABL_CHECK(trial < num_trials(), "sequence with trial id {} but only {} trials", trial, num_trials());
    const TrialAblation& tr = trials_[static_cast<size_t>(trial)];
    if ((expert >= 0 || expert == kLatentOut) && !tr.routed_experts) continue;  // the routed experts' writer
    const float lambda = tr.lambda[static_cast<size_t>(ci)][static_cast<size_t>(layer)];
    if (lambda == 0.0f) continue;
    const int32_t dir = tr.direction[static_cast<size_t>(layer)];
    const float* v = directions_[static_cast<size_t>(dir)].data();
    float* yr = y + r * H;
    if (tr.mode == RowNorm::none) {
      double dot = 0;
      for (int64_t i = 0; i < H; ++i) dot += static_cast<double>(v[i]) * yr[i];
      const float k = static_cast<float>(lambda * dot);
      for (int64_t i = 0; i < H; ++i) yr[i] -= k * v[i];
      continue;
    }
    const Vectors& vec = vectors(c, layer, expert, dir);
    double dot = 0;
    for (int64_t i = 0; i < H; ++i) {
      if (vec.n[static_cast<size_t>(i)] > 0) dot += static_cast<double>(v[i]) / vec.n[static_cast<size_t>(i)] * yr[i];
    }
    const float k = static_cast<float>(lambda * dot);
    for (int64_t i = 0; i < H; ++i) {
      yr[i] -= k * vec.n[static_cast<size_t>(i)] * v[i];
      if (tr.mode == RowNorm::full) {
        const double vi = v[i];
        const double s2 = 1.0 - 2.0 * lambda * vi * vec.wa[static_cast<size_t>(i)] + static_cast<double>(lambda) * lambda * vi * vi * vec.a2;
        if (s2 > 0) yr[i] = static_cast<float>(yr[i] / std::sqrt(s2));
      }
    }
  }
}

}  // namespace abl::engine
