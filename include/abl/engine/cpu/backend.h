// The CPU backend (engine/backend.h): the CPU Engine over a weight source (resident HostWeights or
// the parallel runtime's ShardedWeights), a KV cache grown on demand, the AblationEpilogue of the
// current trial batch and the KL reference in host memory. The twin of engine/cuda/backend.h.
#pragma once
#include <cstdint>
#include <memory>

#include "abl/engine/backend.h"
#include "abl/engine/cpu/ablation_epilogue.h"
#include "abl/engine/cpu/engine.h"
#include "abl/engine/cpu/forward_pass.h"

namespace abl::engine {

class CpuBackend final : public Backend {
 public:
  CpuBackend(std::unique_ptr<WeightSource> weights, Limits limits);
  BackendKind kind() const override { return BackendKind::cpu; }
  void set_ablation(const AblationTable* table) override;
  void set_kl_reference(const float* logprobs, int64_t rows) override;
  ForwardPass& pass(int64_t cache_rows) override;

 private:
  std::unique_ptr<WeightSource> weights_;
  Engine engine_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<AblationEpilogue> epilogue_;
  KlReference kl_;
  std::unique_ptr<HostPass> pass_;
};

}  // namespace abl::engine
