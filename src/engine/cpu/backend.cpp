#include "abl/engine/cpu/backend.h"

namespace abl::engine {

CpuBackend::CpuBackend(std::unique_ptr<WeightSource> weights, Limits limits)
    : weights_(std::move(weights)), engine_(*weights_, limits) {}

void CpuBackend::set_ablation(const AblationTable* table) {
  pass_.reset();
  epilogue_.reset();
  if (table) epilogue_ = std::make_unique<AblationEpilogue>(engine_.spec(), table->directions, table->ablations);
}

void CpuBackend::set_kl_reference(const float* logprobs, int64_t rows) {
  pass_.reset();
  kl_ = {logprobs, rows};
}

ForwardPass& CpuBackend::pass(int64_t cache_rows) {
  if (!cache_ || cache_->rows() < cache_rows) {
    pass_.reset();
    cache_.reset();  // the old cache goes before the new one is allocated
    cache_ = std::make_unique<KvCache>(engine_.spec(), cache_rows, engine_.limits().max_seqs);
  }
  if (!pass_) pass_ = std::make_unique<HostPass>(engine_, *cache_, epilogue_.get(), kl_);
  return *pass_;
}

}  // namespace abl::engine
