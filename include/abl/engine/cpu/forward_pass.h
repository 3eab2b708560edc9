// The CPU engine behind engine::ForwardPass: Engine::forward over its KV cache with an epilogue,
// and the sweep's KL computed on the host from the logits.
#pragma once
#include <cstdint>
#include <vector>

#include "abl/engine/cpu/engine.h"
#include "abl/engine/forward_pass.h"
#include "abl/engine/generate.h"

namespace abl::engine {

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


// The CPU engine over `cache` with `epilogue` (HostPass): generation on the CPU engine.
std::vector<GenerateResult> generate(Engine& engine, KvCache& cache, const text::Tokenizer& tok,
                                     const std::vector<GenerateRequest>& requests,
                                     const GenerateOptions& opts, Epilogue* epilogue = nullptr);

}  // namespace abl::engine
