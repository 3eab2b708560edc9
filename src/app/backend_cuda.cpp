// The CUDA backend (backend.h): this rank's GPU, the weights in bf16 on it (whole, or this rank's
// shards gathered over the shard group), the CudaEngine, a device KV cache grown on demand and the
// DeviceAblation of the current trial batch. One compute stream serves them all.
#ifdef ABL_WITH_CUDA
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "abl/app/backend.h"
#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/device.h"
#include "abl/parallel/cuda/device_comm.h"
#include "abl/engine/cuda/engine.h"
#include "abl/engine/cuda/forward_pass.h"
#include "abl/backend/cuda/memory.h"
#include "abl/parallel/cuda/sharded_device_weights.h"
#include "abl/core/error.h"
#include "abl/core/log.h"

namespace abl::app {
namespace {

// The local rank picks its GPU before any other CUDA call of this process creates a context.
int bind_device(const parallel::Topology& topo) {
  const int dev = cuda::select_device(topo.local_rank);
  ABL_CHECK(dev >= 0, "local rank {} could not select a GPU: {}", topo.local_rank, cuda::device_summary());
  return dev;
}

// Whether two ranks of `group` run on the same GPU (same host, same PCI bus id: device indices
// depend on each rank's CUDA_VISIBLE_DEVICES): NCCL refuses that.
bool group_shares_a_gpu(parallel::Comm& group, const std::string& host, int device) {
  const int64_t mine[2] = {static_cast<int64_t>(std::hash<std::string>{}(host)),
                           static_cast<int64_t>(std::hash<std::string>{}(cuda::device_pci_bus_id(device)))};
  std::vector<int64_t> all(2 * static_cast<size_t>(group.size()));
  group.all_gather(mine, all.data(), sizeof(mine));
  for (size_t i = 0; i < all.size(); i += 2) {
    for (size_t j = i + 2; j < all.size(); j += 2) {
      if (all[i] == all[j] && all[i + 1] == all[j + 1]) return true;
    }
  }
  return false;
}

// Fails with a message that says what to change when `bytes` more device memory do not fit (a
// plain allocation failure would only name the cudaMalloc).
void check_free_memory(int64_t bytes, const std::string& what) {
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  ABL_CHECK(bytes <= static_cast<int64_t>(free),
            "{} needs {:.2f} GiB of GPU memory, but {:.2f} of the GPU's {:.2f} GiB are free; lower --batch-tokens, "
            "--max-seqs or --max-response-length, or shard the weights (--sharding; `abliterate plan` sizes a run)",
            what, static_cast<double>(bytes) / kGiB, static_cast<double>(free) / kGiB,
            static_cast<double>(total) / kGiB);
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const BackendSetup& setup, parallel::Runtime& rt) : device_(bind_device(rt.topology())) {
    parallel::MpiComm& group = rt.shard_group_weights();
    if (group.size() > 1) {
      GpuComm comm = setup.comm;
      const bool shared = group_shares_a_gpu(group, rt.host(), device_);
      if (comm == GpuComm::automatic) comm = shared ? GpuComm::mpi : GpuComm::nccl;
      ABL_CHECK(!(comm == GpuComm::nccl && shared),
                "--comm nccl: ranks of a shard group share a GPU, which NCCL refuses; use --comm mpi or one rank "
                "per GPU");
      comm_ = cuda::make_device_comm(comm == GpuComm::nccl ? cuda::DeviceCommKind::nccl : cuda::DeviceCommKind::mpi,
                                     group.handle(), compute_.get());
      log::info("CUDA weight gathers over {} in groups of {}", comm == GpuComm::nccl ? "NCCL" : "MPI (host staging)",
                group.size());
    }
    cuda::DeviceShardingOptions opts;
    opts.offload_params = setup.offload_params;
    weights_ = cuda::load_device_weights(setup.model, comm_.get(), opts, compute_.get());
    int sm_count = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device_));
    const engine::BufferPlan plan = cuda::CudaEngine::plan_for(weights_->spec(), setup.limits, sm_count);
    check_free_memory(plan.total(), fmt::format("the CUDA engine's buffers ({} tokens, {} sequences per pass)",
                                                setup.limits.max_tokens, setup.limits.max_seqs));
    engine_ = std::make_unique<cuda::CudaEngine>(*weights_, setup.limits);
    log::info("CUDA backend on GPU {}: {} MiB of bf16 weights{}, {} MiB of pass buffers", device_,
              weights_->bytes() >> 20, group.size() > 1 ? " (shards and gather slots)" : "",
              engine_->plan().total() >> 20);
    log::debug("CUDA engine buffers:\n{}", engine_->plan().table());
  }

  BackendKind kind() const override { return BackendKind::cuda; }

  void set_ablation(const engine::AblationTable* table) override {
    pass_.reset();
    ablation_.reset();
    if (table) ablation_ = std::make_unique<cuda::DeviceAblation>(*weights_, *table, engine_->stream());
  }

  void set_kl_reference(const float* logprobs, int64_t rows) override {
    pass_.reset();
    kl_ = {};
    kl_buffer_ = cuda::DeviceBuffer();
    if (!logprobs || rows == 0) return;
    const size_t bytes = static_cast<size_t>(rows * engine_->spec().vocab_size) * sizeof(float);
    kl_buffer_ = cuda::DeviceBuffer(bytes);
    cuda::copy_to_device(kl_buffer_.get(), logprobs, bytes, engine_->stream());
    kl_ = {kl_buffer_.as<float>(), rows};
  }

  engine::ForwardPass& pass(int64_t cache_rows) override {
    if (!cache_ || cache_->rows() < cache_rows) {
      pass_.reset();
      cache_.reset();  // free the old cache before the larger one is allocated
      check_free_memory(cuda::DeviceKvCache::bytes_for(engine_->spec(), cache_rows),
                        fmt::format("a KV cache of {} rows", cache_rows));
      cache_ = std::make_unique<cuda::DeviceKvCache>(engine_->spec(), cache_rows, engine_->stream());
    }
    if (!pass_) pass_ = std::make_unique<cuda::DevicePass>(*engine_, *cache_, ablation_.get(), kl_);
    return *pass_;
  }

 private:
  // Declaration order is destruction order in reverse: the stream outlives everything on it.
  int device_;
  cuda::Stream compute_;
  std::unique_ptr<cuda::DeviceComm> comm_;
  std::unique_ptr<cuda::DeviceWeightSource> weights_;
  std::unique_ptr<cuda::CudaEngine> engine_;
  std::unique_ptr<cuda::DeviceKvCache> cache_;
  std::unique_ptr<cuda::DeviceAblation> ablation_;
  cuda::DeviceBuffer kl_buffer_;  // the KL reference (N_kl, V) f32 on the device
  engine::KlReference kl_;
  std::unique_ptr<cuda::DevicePass> pass_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendSetup& setup, parallel::Runtime& rt) {
  return std::make_unique<CudaBackend>(setup, rt);
}

}  // namespace abl::app
#endif  // ABL_WITH_CUDA
