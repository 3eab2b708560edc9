// HostPass (forward_pass.h): the CPU engine behind ForwardPass, with the sweep's KL on the host.
#include "abl/engine/cpu/forward_pass.h"

#include <cmath>

#include "abl/backend/cpu/ops.h"
#include "abl/core/error.h"

namespace abl::engine {

double kl_from_logits(const float* ref, const float* logits, int64_t V, std::vector<float>& lp) {
  lp.resize(static_cast<size_t>(V));
  cpu::log_softmax(logits, lp.data(), 1, V);
  double kl = 0;  // KL(original ‖ ablated) = Σ p (log p − log q)
  for (int64_t v = 0; v < V; ++v) kl += std::exp(static_cast<double>(ref[v])) * (ref[v] - lp[static_cast<size_t>(v)]);
  return kl;
}

void HostPass::forward(const Batch& batch, const Outputs& out) {
  if (!out.kl) {
    engine_.forward(batch, cache_, out, epilogue_);
    return;
  }
  const int64_t B = batch.num_seqs(), V = engine_.spec().vocab_size;
  ABL_CHECK(kl_.logprobs && out.kl_rows, "KL asked of a pass without a KL reference or reference rows");
  Outputs o = out;
  if (!o.logits) {
    logits_.resize(static_cast<size_t>(B * V));
    o.logits = logits_.data();
  }
  engine_.forward(batch, cache_, o, epilogue_);
  for (int64_t s = 0; s < B; ++s) {
    const int32_t r = out.kl_rows[s];
    ABL_CHECK(r >= 0 && r < kl_.rows, "sequence {} asks for KL reference row {} of {}", s, r, kl_.rows);
    out.kl[s] = kl_from_logits(kl_.logprobs + static_cast<int64_t>(r) * V, o.logits + s * V, V, lp_);
  }
}

std::vector<GenerateResult> generate(Engine& engine, KvCache& cache, const text::Tokenizer& tok,
                                     const std::vector<GenerateRequest>& requests,
                                     const GenerateOptions& opts, Epilogue* epilogue) {
  HostPass pass(engine, cache, epilogue);
  return generate(pass, tok, requests, opts);
}

}  // namespace abl::engine
