#include "abl/engine/cuda/backend.h"

#include <fmt/format.h>

#include "abl/backend/cuda/check.h"
#include "abl/core/error.h"

namespace abl::cuda {

void check_free_memory(int64_t bytes, const std::string& what) {
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (bytes > static_cast<int64_t>(free)) raise_out_of_device_memory(static_cast<size_t>(bytes), what);
}

CudaBackend::CudaBackend(std::unique_ptr<DeviceWeightSource> weights, engine::Limits limits)
    : weights_(std::move(weights)) {
  int device = 0, sm_count = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  check_free_memory(static_cast<int64_t>(plan_cuda_engine(weights_->spec(), limits, sm_count).total),
                    fmt::format("the CUDA engine's buffers ({} tokens, {} sequences per pass)", limits.max_tokens,
                                limits.max_seqs));
  engine_ = std::make_unique<CudaEngine>(*weights_, limits);
}

bool CudaBackend::take_device_memory(DeviceMemory* out) {
  const DeviceMemoryUse use = device_memory_use();
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  *out = {use.peak, use.current, static_cast<int64_t>(total - free), static_cast<int64_t>(total)};
  reset_device_memory_peak();
  return true;
}

void CudaBackend::set_ablation(const engine::AblationTable* table) {
  pass_.reset();
  ablation_.reset();
  if (table) ablation_ = std::make_unique<DeviceAblation>(*weights_, *table, engine_->stream());
}

void CudaBackend::set_kl_reference(const float* logprobs, int64_t rows) {
  pass_.reset();
  kl_ = {};
  kl_buffer_ = DeviceBuffer();
  if (!logprobs || rows == 0) return;
  const size_t bytes = static_cast<size_t>(rows * engine_->spec().vocab_size) * sizeof(float);
  kl_buffer_ = DeviceBuffer(bytes, "the KL reference's log-probabilities");
  copy_to_device(kl_buffer_.get(), logprobs, bytes, engine_->stream());
  kl_ = {kl_buffer_.as<float>(), rows};
}

engine::ForwardPass& CudaBackend::pass(int64_t cache_rows) {
  if (!cache_ || cache_->rows() < cache_rows) {
    pass_.reset();
    cache_.reset();  // free the old cache before the larger one is allocated
    const int64_t slots = engine_->limits().max_seqs;
    check_free_memory(DeviceKvCache::bytes_for(engine_->spec(), cache_rows) +
                          DeviceKvCache::state_bytes_for(engine_->spec(), slots),
                      fmt::format("a KV cache of {} rows", cache_rows));
    cache_ = std::make_unique<DeviceKvCache>(engine_->spec(), cache_rows, engine_->stream(), slots);
  }
  if (!pass_) pass_ = std::make_unique<DevicePass>(*engine_, *cache_, ablation_.get(), kl_);
  return *pass_;
}

}  // namespace abl::cuda
