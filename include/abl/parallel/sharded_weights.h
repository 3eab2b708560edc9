// FSDP-style sharded weights. Units: the embedding, each decoder layer (its tensors in
// layer_slots() order in one flat buffer), and the head (final norm + lm_head, the embedding
// again when tied). Each unit is padded to a multiple of the group size G and rank j keeps
// elements [j·S, (j+1)·S) — read straight from the safetensors files, never the whole model.
// The forward pass's fixed order (embedding, layers, head) drives the gathers: asking for unit u
// completes its all-gather and starts u+1's, so at most two layer units are materialised and the
// next one's gather overlaps the current one's compute.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "abl/parallel/comm.h"
#include "abl/parallel/gather_scheduler.h"
#include "abl/engine/weights.h"

namespace abl::parallel {

class ShardedWeights final : public engine::WeightSource {
 public:
  // `model`: a model folder or synthetic:<preset>; `group`: the shard group (size G). Every rank
  // of the group must call this and then make the same sequence of weight requests.
  static std::unique_ptr<ShardedWeights> load(const std::string& model, Comm& group);
  static std::unique_ptr<ShardedWeights> load(const model::ModelSpec& spec, const std::string& dir, Comm& group);
  ~ShardedWeights() override;

  const model::ModelSpec& spec() const override { return spec_; }
  const float* embedding() override;
  engine::LayerWeights layer(int64_t l) override;
  engine::HeadWeights head() override;

  int64_t shard_bytes() const;     // what this rank holds permanently
  int64_t gathered_bytes() const;  // the gather buffers
  int64_t gathers() const { return gathers_ ? gathers_->gathers() : 0; }

 private:
  struct Unit {
    std::vector<std::pair<model::ExpectedWeight, int64_t>> tensors;  // tensor, element offset
    int64_t total = 0;  // elements before padding
    int64_t shard = 0;  // S: elements per rank
  };
  ShardedWeights(const model::ModelSpec& spec, Comm& group);
  float* ensure(size_t u);  // unit u gathered (waits for its prefetch), returns its buffer
  void prefetch(size_t u);
  float* slot_data(size_t slot);

  model::ModelSpec spec_;
  Comm& group_;
  std::vector<engine::UnitLayout> layouts_;  // (L)
  std::vector<Unit> units_;                // 0 embed, 1..L layers, L+1 head
  std::vector<std::vector<float>> shards_;  // this rank's slice of each unit
  std::vector<float> layer_slot_[2];
  std::vector<float> global_slot_;
  std::unique_ptr<GatherScheduler> gathers_;  // G > 1: the gather schedule over the three slots
};

}  // namespace abl::parallel
