// One backend interface for the phases: the weights, engine, KV cache, ablation and KL reference of
// one process behind a ForwardPass, on the CPU (engine/cpu/backend.h) or the GPU
// (engine/cuda/backend.h). The app picks the kind and builds the weights (resident or sharded by
// the parallel runtime); the phases ask for a pass and never see which engine runs.
#pragma once
#include <cstdint>
#include <string_view>

#include "abl/engine/ablation_table.h"
#include "abl/engine/forward_pass.h"

namespace abl::engine {

enum class BackendKind { cpu, cuda };
std::string_view backend_kind_name(BackendKind k);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  // Ablation of the passes that follow (null: none): per-trial tables and the weight-derived
  // vectors, computed once here for a batch of trials. Every rank of the shard group calls it.
  virtual void set_ablation(const AblationTable* table) = 0;
  // The reference of Outputs::kl: `rows` rows of V log-probabilities (host memory; the caller
  // keeps it alive until it is cleared with null). The CUDA backend copies it to the device once.
  virtual void set_kl_reference(const float* logprobs, int64_t rows) = 0;
  // The forward pass over a KV cache of at least `cache_rows` rows (grown when smaller), with the
  // current ablation and KL reference. Valid until the next call of pass(), set_ablation() or
  // set_kl_reference().
  virtual ForwardPass& pass(int64_t cache_rows) = 0;

  // GPU memory of this process for the phase logs: the most the engine's device buffers held since
  // the last call (the peak then restarts), what they hold now, and the device's own count of bytes
  // in use (every process and library on it). False on the CPU.
  struct DeviceMemory {
    int64_t peak = 0, held = 0, device_used = 0, device_total = 0;
  };
  virtual bool take_device_memory(DeviceMemory* /*out*/) { return false; }
};

// Clears the backend's ablation when it leaves scope (the phases that follow run unablated).
class AblationScope {
 public:
  AblationScope(Backend& b, const AblationTable& table) : b_(b) { b_.set_ablation(&table); }
  ~AblationScope() { b_.set_ablation(nullptr); }
  AblationScope(const AblationScope&) = delete;
  AblationScope& operator=(const AblationScope&) = delete;

 private:
  Backend& b_;
};

}  // namespace abl::engine
