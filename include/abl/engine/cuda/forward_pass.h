// The CUDA twin of engine::HostPass: CudaEngine::forward over a DeviceKvCache with an optional
// DeviceAblation, behind engine::ForwardPass so generate() and the lockstep prefill run on the GPU
// unchanged. Greedy ids are picked on the device (Outputs::next_ids).
#pragma once
#include "abl/engine/cuda/engine.h"
#include "abl/engine/forward_pass.h"

namespace abl::cuda {

class DevicePass final : public engine::ForwardPass {
 public:
  // `kl`: the KL reference in device memory (Outputs::kl), or none.
  DevicePass(CudaEngine& engine, DeviceKvCache& cache, const DeviceAblation* ablation = nullptr,
             engine::DeviceKlReference kl = {})
      : engine_(engine), cache_(cache), ablation_(ablation), kl_(kl) {}
  const model::ModelSpec& spec() const override { return engine_.spec(); }
  const engine::Limits& limits() const override { return engine_.limits(); }
  int64_t cache_rows() const override { return cache_.rows(); }
  void forward(const engine::Batch& batch, const engine::Outputs& out) override {
    engine_.forward(batch, cache_, out, ablation_, &kl_);
  }

 private:
  CudaEngine& engine_;
  DeviceKvCache& cache_;
  const DeviceAblation* ablation_;
  engine::DeviceKlReference kl_;
};

}  // namespace abl::cuda
