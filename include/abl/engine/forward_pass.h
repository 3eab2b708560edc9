// What generation and the lockstep prefill drive: one backend's forward pass bound to its KV cache
// and, optionally, an ablation. The CPU twin is HostPass (Engine + KvCache + Epilogue); the CUDA
// one is cuda::DevicePass (CudaEngine + DeviceKvCache + DeviceAblation). Both fill the same host
// Outputs, so the code above them — continuous batching, lockstep passes, KL and refusal scoring —
// does not know which backend runs.
#pragma once
#include <cstdint>
#include <vector>

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

// Log-probabilities a pass's KL is measured against (Outputs::kl): `rows` rows of V values,
// host memory on the CPU, device memory on the GPU; owned by the caller, alive while passes use it.
struct KlReference {
  const float* logprobs = nullptr;  // (rows, V)
  int64_t rows = 0;
};

// KL(ref ‖ softmax(logits)) of one row, as the sweep scores it: fp32 log-softmax, fp64 sum.
double kl_from_logits(const float* ref_logprobs, const float* logits, int64_t V, std::vector<float>& scratch);

// The CPU backend: Engine::forward over `cache`, with `epilogue` (may be null) and the KL of
// Outputs::kl computed on the host from the logits.
class HostPass final : public ForwardPass {
 public:
  HostPass(Engine& engine, KvCache& cache, Epilogue* epilogue = nullptr, KlReference kl = {})
      : engine_(engine), cache_(cache), epilogue_(epilogue), kl_(kl) {}
  const model::ModelSpec& spec() const override { return engine_.spec(); }
  const Limits& limits() const override { return engine_.limits(); }
  int64_t cache_rows() const override { return cache_.rows(); }
  void forward(const Batch& batch, const Outputs& out) override;

 private:
  Engine& engine_;
  KvCache& cache_;
  Epilogue* epilogue_;
  KlReference kl_;
  std::vector<float> logits_, lp_;  // when the caller asks for KL without the logits; a log-softmax row
};

}  // namespace abl::engine
