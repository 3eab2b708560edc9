// What generation and the lockstep prefill drive: one backend's forward pass bound to its KV cache
// and, optionally, an ablation. The CPU twin is HostPass (Engine + KvCache + Epilogue); the CUDA
// one is cuda::DevicePass (CudaEngine + DeviceKvCache + DeviceAblation). Both fill the same host
// Outputs, so the code above them — continuous batching, lockstep passes, KL and refusal scoring —
// does not know which backend runs.
#pragma once
#include <cstdint>

#include "abl/engine/engine.h"

namespace abl::engine {

class ForwardPass {
 public:
  virtual ~ForwardPass() = default;
  virtual const model::ModelSpec& spec() const = 0;
  virtual const Limits& limits() const = 0;
  virtual int64_t cache_rows() const = 0;
  // One pass: the batch's tokens through every layer, its k/v into the cache, the requested
  // outputs (host pointers) filled when this returns. Sequences with trial ≥ 0 are ablated with
  // the pass's ablation (none: an error is raised by the backend for a trial id it does not know).
  virtual void forward(const Batch& batch, const Outputs& out) = 0;
};

// The CPU backend: Engine::forward over `cache`, with `epilogue` (may be null).
class HostPass final : public ForwardPass {
 public:
  HostPass(Engine& engine, KvCache& cache, Epilogue* epilogue = nullptr)
      : engine_(engine), cache_(cache), epilogue_(epilogue) {}
  const model::ModelSpec& spec() const override { return engine_.spec(); }
  const Limits& limits() const override { return engine_.limits(); }
  int64_t cache_rows() const override { return cache_.rows(); }
  void forward(const Batch& batch, const Outputs& out) override { engine_.forward(batch, cache_, out, epilogue_); }

 private:
  Engine& engine_;
  KvCache& cache_;
  Epilogue* epilogue_;
};

}  // namespace abl::engine
