// The CUDA backend (engine/backend.h): the CudaEngine over device weights (resident, or this rank's
// shards gathered by the parallel runtime), a device KV cache grown on demand, the DeviceAblation of
// the current trial batch and the KL reference copied to the device once. Everything runs on the
// weights' compute stream. The twin of engine/cpu/backend.h.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "abl/engine/backend.h"
#include "abl/engine/cuda/engine.h"
#include "abl/engine/cuda/forward_pass.h"

namespace abl::cuda {

// Fails with a message that says what to change when `bytes` more device memory do not fit (a
// plain allocation failure would only name the cudaMalloc).
void check_free_memory(int64_t bytes, const std::string& what);

class CudaBackend : public engine::Backend {
 public:
  // Checks that the engine's plan fits the free device memory before allocating it.
  CudaBackend(std::unique_ptr<DeviceWeightSource> weights, engine::Limits limits);
  engine::BackendKind kind() const override { return engine::BackendKind::cuda; }
  void set_ablation(const engine::AblationTable* table) override;
  void set_kl_reference(const float* logprobs, int64_t rows) override;
  engine::ForwardPass& pass(int64_t cache_rows) override;
  bool take_device_memory(DeviceMemory* out) override;
  const CudaEngine& engine() const { return *engine_; }
  const DeviceWeightSource& weights() const { return *weights_; }

 private:
  std::unique_ptr<DeviceWeightSource> weights_;
  std::unique_ptr<CudaEngine> engine_;
  std::unique_ptr<DeviceKvCache> cache_;
  std::unique_ptr<DeviceAblation> ablation_;
  DeviceBuffer kl_buffer_;  // the KL reference (N_kl, V) f32 on the device
  engine::DeviceKlReference kl_;
  std::unique_ptr<DevicePass> pass_;
};

}  // namespace abl::cuda
