// The ablation epilogue on the CUDA engine: the twin of engine/cpu/ablation_epilogue.h. The kernels
// are backend/cuda/ablation_epilogue.h; this holds their inputs for a batch of trials.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "abl/backend/cuda/ablation_epilogue.h"
#include "abl/backend/cuda/memory.h"
#include "abl/engine/ablation_table.h"
#include "abl/engine/batch.h"
#include "abl/engine/cuda/device_weights.h"

namespace abl::cuda {

// The ablation epilogue's device inputs for one batch of trials: the per-trial tables
// (AblationTrials) and, per (layer, component), the direction-dependent vectors (AblationVectors)
// computed on the device from the bf16 weights with ablation_row_norms / ablation_direction_vectors.
// Each layer keeps only the directions some trial uses there (its slots are renumbered per layer),
// n only where a pre/full trial ablates, Ŵa and ‖a‖² only where a full trial does. In MoE layers
// mlp.down_proj has vectors per expert (and for the shared expert): each its own row norms; a LatentMoE
// has one set for fc2_latent_proj (kLatentOut) in place of the experts'. Everything is
// computed once at construction (weights and directions do not change during a sweep). The
// constructor requests layer(0..L-1) from `weights`: with a collective (sharded) source every rank
// of the group must construct it at the same point, and `stream` must be the source's compute stream.
class DeviceAblation {
 public:
  DeviceAblation(DeviceWeightSource& weights, const engine::AblationTable& table, cudaStream_t stream);
  DeviceAblation(DeviceWeightSource& weights, const std::vector<std::vector<float>>& directions,
                 const std::vector<engine::TrialAblation>& trials, cudaStream_t stream);

  int32_t num_trials() const { return trials_.num_trials; }
  const AblationTrials& trials() const { return trials_; }
  const AblationVectors& vectors(engine::Component c, int64_t layer) const;
  // MoE layers: the vectors of expert e's down projection, the shared expert's (kSharedExpert), or a LatentMoE's
  // fc2_latent_proj (kLatentOut).
  static constexpr int32_t kSharedExpert = -2;
  static constexpr int32_t kLatentOut = -3;
  const AblationVectors& expert_vectors(int64_t layer, int32_t expert) const;
  // The routed experts' vector sets of an MoE layer as a device array of E (ablation_apply_grouped);
  // null where no trial ablates the layer, and in a LatentMoE.
  const AblationVectors* expert_table(int64_t layer) const;
  // Whether the trials ablate the routed experts (TrialAblation::routed_experts, the same for all).
  bool routed_experts() const { return routed_experts_; }
  size_t bytes() const { return buffer_.bytes(); }
  // Unique per ablation of this process, never 0 (a decode graph bakes its pointers in).
  uint64_t id() const { return id_; }

 private:
  uint64_t id_ = 0;
  DeviceBuffer buffer_;
  AblationTrials trials_;
  std::vector<AblationVectors> vectors_;  // (L, 2)
  // (L) of (the routed writers: E experts, or a LatentMoE's fc2_latent_proj; then the shared expert)
  std::vector<std::vector<AblationVectors>> expert_vectors_;
  std::vector<const AblationVectors*> expert_tables_;          // (L) device arrays of E, or null
  bool routed_experts_ = true;
  bool latent_ = false;      // a LatentMoE (ModelSpec::moe_latent_size)
  int64_t num_routed_ = 0;   // routed writers per MoE layer: E, or 1 (fc2_latent_proj)
};

}  // namespace abl::cuda
