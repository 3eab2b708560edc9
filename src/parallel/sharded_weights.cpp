// Sharded weights on host memory (CPU backend, MPI all-gathers). A group of one rank (NO_SHARD)
// skips gathering entirely and computes straight from its full copy.
#include "abl/parallel/sharded_weights.h"

#include <algorithm>

#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/parallel/memory_plan.h"
#include "abl/io/safetensors.h"

namespace abl::parallel {

ShardedWeights::ShardedWeights(const model::ModelSpec& spec, Comm& group)
    : spec_(spec), group_(group), layouts_(engine::layer_unit_layouts(spec)) {}

ShardedWeights::~ShardedWeights() = default;

std::unique_ptr<ShardedWeights> ShardedWeights::load(const std::string& model, Comm& group) {
  if (model.rfind("synthetic:", 0) == 0) return load(model::synthetic_model_spec(model), "", group);
  return load(model::load_model_spec(model), model, group);
}

std::unique_ptr<ShardedWeights> ShardedWeights::load(const model::ModelSpec& spec, const std::string& dir,
                                                     Comm& group) {
  std::unique_ptr<ShardedWeights> sw(new ShardedWeights(spec, group));
  const int64_t L = spec.num_layers, G = group.size(), j = group.rank();
  sw->units_.resize(static_cast<size_t>(L + 2));
  const model::ExpectedWeight* embed = nullptr;
  std::vector<model::ExpectedWeight> expected = model::expected_weights(spec);
  for (const auto& w : expected) {
    if (w.role == model::WeightRole::embed) embed = &w;
  }
  for (const auto& w : expected) {
    if (w.layer >= 0) {
      const engine::UnitLayout& lay = sw->layouts_[static_cast<size_t>(w.layer)];
      sw->units_[static_cast<size_t>(w.layer + 1)].tensors.emplace_back(w, lay.offsets[lay.index_of(w.role, w.expert)]);
    } else if (w.role == model::WeightRole::embed) {
      sw->units_[0].tensors.emplace_back(w, 0);
    } else {
      // The head unit: the final norm (its bias, lm_head's bias), lm_head last — tied, the
      // embedding matrix a second time.
      Unit& head = sw->units_[static_cast<size_t>(L + 1)];
      const int64_t at = head.tensors.empty() ? 0
                                              : head.tensors.back().second +
                                                    model::element_count(head.tensors.back().first.shape);
      const bool tied_head = w.role == model::WeightRole::lm_head && spec.tied_embeddings;
      head.tensors.emplace_back(tied_head ? *embed : w, at);
    }
  }
  std::unique_ptr<io::SafetensorsReader> reader;
  if (!dir.empty()) {
    reader = std::make_unique<io::SafetensorsReader>(dir);
    model::check_weights(spec, *reader);
  }
  for (Unit& u : sw->units_) {
    for (const auto& [w, off] : u.tensors) u.total = std::max(u.total, off + model::element_count(w.shape));
    u.shard = shard_elements(u.total, static_cast<int>(G), sizeof(float));
    // This rank's elements [b, e) of the unit, filled tensor by tensor where they overlap.
    std::vector<float> mine(static_cast<size_t>(u.shard), 0.0f);
    const int64_t b = j * u.shard, e = b + u.shard;
    for (const auto& [w, off] : u.tensors) {
      const int64_t lo = std::max(b, off), hi = std::min(e, off + model::element_count(w.shape));
      if (lo >= hi) continue;
      model::read_weight(reader.get(), w, lo - off, hi - lo, mine.data() + (lo - b));
    }
    sw->shards_.push_back(std::move(mine));
  }
  if (G > 1) {
    int64_t max_layer = 0;
    for (int64_t l = 1; l <= L; ++l) max_layer = std::max(max_layer, sw->units_[static_cast<size_t>(l)].shard);
    for (auto& s : sw->layer_slot_) s.resize(static_cast<size_t>(max_layer * G));
    sw->global_slot_.resize(static_cast<size_t>(std::max(sw->units_[0].shard, sw->units_.back().shard) * G));
    ShardedWeights* w = sw.get();
    sw->gathers_ = std::make_unique<GatherScheduler>(sw->units_.size(), [w](size_t u, size_t slot) {
      return w->group_.start_all_gather(w->shards_[u].data(), w->slot_data(slot),
                                        static_cast<size_t>(w->units_[u].shard) * sizeof(float));
    });
  }
  log::debug("sharded weights: {} units, {:.1f} MiB held, {:.1f} MiB of gather buffers, group of {}",
             sw->units_.size(), static_cast<double>(sw->shard_bytes()) / (1 << 20),
             static_cast<double>(sw->gathered_bytes()) / (1 << 20), G);
  return sw;
}

float* ShardedWeights::slot_data(size_t slot) {
  return slot == GatherScheduler::kGlobalSlot ? global_slot_.data() : layer_slot_[slot].data();
}

void ShardedWeights::prefetch(size_t u) {
  if (gathers_) gathers_->prefetch(u);
}

float* ShardedWeights::ensure(size_t u) {
  if (!gathers_) return shards_[u].data();  // a group of one rank holds whole units
  return slot_data(gathers_->ensure(u));
}

const float* ShardedWeights::embedding() {
  const float* p = ensure(0);
  prefetch(1);
  return p;
}

engine::LayerWeights ShardedWeights::layer(int64_t l) {
  ABL_CHECK(l >= 0 && l < spec_.num_layers, "layer {} out of range (L = {})", l, spec_.num_layers);
  const size_t u = static_cast<size_t>(l + 1);
  const float* p = ensure(u);
  prefetch(u + 1);
  return engine::layer_views(spec_, layouts_[static_cast<size_t>(l)], p);
}

engine::HeadWeights ShardedWeights::head() {
  const float* p = ensure(units_.size() - 1);
  engine::HeadWeights h;
  for (const auto& [w, off] : units_.back().tensors) {
    switch (w.role) {
      case model::WeightRole::final_norm: h.final_norm = p + off; break;
      case model::WeightRole::final_norm_bias: h.final_norm_bias = p + off; break;
      case model::WeightRole::lm_head_bias: h.lm_head_bias = p + off; break;
      default: h.lm_head = p + off; break;  // lm_head, or the embedding when tied
    }
  }
  return h;
}

int64_t ShardedWeights::shard_bytes() const {
  int64_t n = 0;
  for (const auto& s : shards_) n += static_cast<int64_t>(s.size());
  return n * 4;
}

int64_t ShardedWeights::gathered_bytes() const {
  return static_cast<int64_t>(layer_slot_[0].size() + layer_slot_[1].size() + global_slot_.size()) * 4;
}

}  // namespace abl::parallel
