// What generation and the lockstep prefill drive: one backend's forward pass bound to its KV cache
// and, optionally, an ablation. The CPU twin is HostPass (engine/cpu/forward_pass.h: Engine +
// KvCache + AblationEpilogue); the CUDA one is cuda::DevicePass (engine/cuda/forward_pass.h). Both fill the same host
// Outputs, so the code above them — continuous batching, lockstep passes, KL and refusal scoring —
// does not know which backend runs.
#pragma once
#include <cstdint>
#include <vector>

#include "abl/engine/batch.h"
#include "abl/model/model_spec.h"

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

// Which memory a pointer of a pass's input is in, told by its type: the host's (the CPU engine) or
// the GPU's (the CUDA engine), so a host pointer cannot reach a kernel by mistake.
struct HostMemory {};
struct DeviceMemory {};

// Log-probabilities a pass's KL is measured against (Outputs::kl): `rows` rows of V values in
// `Memory`; owned by the caller, alive while passes use it.
template <typename Memory>
struct KlReferenceIn {
  const float* logprobs = nullptr;  // (rows, V)
  int64_t rows = 0;
};
using KlReference = KlReferenceIn<HostMemory>;          // the CPU engine's
using DeviceKlReference = KlReferenceIn<DeviceMemory>;  // the CUDA engine's

}  // namespace abl::engine
