// Host (fp32) weights. Files are checked against the spec before any data is read, then each
// tensor is converted from its file dtype into its place in the unit buffer; synthetic presets
// are generated element by element from (seed, name, index) so any slice is reproducible.
#include "abl/engine/cpu/weights.h"

#include <algorithm>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/io/safetensors.h"

namespace abl::engine {
namespace {

constexpr const char* kSyntheticPrefix = "synthetic:";

bool is_synthetic(const std::string& model) { return model.rfind(kSyntheticPrefix, 0) == 0; }

// Fills `out` with slot `w` from the files, or synthetic values when `reader` is null.
void fill(const io::SafetensorsReader* reader, const model::ExpectedWeight& w, float* out) {
  model::read_weight(reader, w, 0, model::element_count(w.shape), out);
}

}  // namespace

std::unique_ptr<HostWeights> HostWeights::load(const std::string& model) {
  if (is_synthetic(model)) return load(model::synthetic_model_spec(model), "");
  return load(model::load_model_spec(model), model);
}

std::unique_ptr<HostWeights> HostWeights::load(const model::ModelSpec& spec, const std::string& dir) {
  std::unique_ptr<HostWeights> hw(new HostWeights());
  hw->spec_ = spec;
  hw->layouts_ = layer_unit_layouts(spec);
  std::unique_ptr<io::SafetensorsReader> reader;
  if (!dir.empty()) {
    reader = std::make_unique<io::SafetensorsReader>(dir);
    model::check_weights(spec, *reader);
  }
  const int64_t H = spec.hidden_size, V = spec.vocab_size;
  hw->units_.assign(static_cast<size_t>(spec.num_layers), std::vector<float>());
  hw->embed_.resize(static_cast<size_t>(V * H));
  hw->final_norm_.resize(static_cast<size_t>(H));
  if (!spec.tied_embeddings) hw->lm_head_.resize(static_cast<size_t>(V * H));
  if (spec.norm_bias) hw->final_norm_bias_.resize(static_cast<size_t>(H));
  if (spec.lm_head_bias) hw->lm_head_bias_.resize(static_cast<size_t>(V));
  for (size_t l = 0; l < hw->units_.size(); ++l) hw->units_[l].resize(static_cast<size_t>(hw->layouts_[l].total));

  for (const model::ExpectedWeight& w : model::expected_weights(spec)) {
    if (w.layer >= 0) {
      const UnitLayout& lay = hw->layouts_[static_cast<size_t>(w.layer)];
      fill(reader.get(), w, hw->units_[static_cast<size_t>(w.layer)].data() + lay.offsets[lay.index_of(w.role, w.expert)]);
    } else if (w.role == model::WeightRole::embed) {
      fill(reader.get(), w, hw->embed_.data());
    } else if (w.role == model::WeightRole::final_norm) {
      fill(reader.get(), w, hw->final_norm_.data());
    } else if (w.role == model::WeightRole::final_norm_bias) {
      fill(reader.get(), w, hw->final_norm_bias_.data());
    } else if (w.role == model::WeightRole::lm_head_bias) {
      fill(reader.get(), w, hw->lm_head_bias_.data());
    } else if (w.role == model::WeightRole::lm_head && !spec.tied_embeddings) {
      fill(reader.get(), w, hw->lm_head_.data());
    }
  }
  log::debug("loaded {} ({} MiB of fp32 weights)", spec.source, hw->bytes() >> 20);
  return hw;
}

LayerWeights HostWeights::layer(int64_t l) {
  ABL_CHECK(l >= 0 && l < spec_.num_layers, "layer {} out of range (L = {})", l, spec_.num_layers);
  return layer_views(spec_, layouts_[static_cast<size_t>(l)], units_[static_cast<size_t>(l)].data());
}

HeadWeights HostWeights::head() {
  HeadWeights h;
  h.final_norm = final_norm_.data();
  h.final_norm_bias = final_norm_bias_.empty() ? nullptr : final_norm_bias_.data();
  h.lm_head_bias = lm_head_bias_.empty() ? nullptr : lm_head_bias_.data();
  h.lm_head = spec_.tied_embeddings ? embed_.data() : lm_head_.data();
  return h;
}

int64_t HostWeights::bytes() const {
  int64_t n = static_cast<int64_t>(embed_.size() + final_norm_.size() + lm_head_.size() + final_norm_bias_.size() +
                                   lm_head_bias_.size());
  for (const auto& u : units_) n += static_cast<int64_t>(u.size());
  return n * 4;
}

float* HostWeights::layer_tensor(int64_t l, model::WeightRole role, int32_t expert) {
  ABL_CHECK(l >= 0 && l < spec_.num_layers, "layer {} out of range (L = {})", l, spec_.num_layers);
  const UnitLayout& lay = layouts_[static_cast<size_t>(l)];
  return units_[static_cast<size_t>(l)].data() + lay.offsets[lay.index_of(role, expert)];
}

}  // namespace abl::engine
