// The CUDA backend of a rank (backend.h): this rank's GPU, the compute stream and the shard group's
// device communicator (parallel/cuda/device_binding.h), the weights (whole, or this rank's shards)
// and the engine's cuda::CudaBackend on them. One compute stream serves them all.
#ifdef ABL_WITH_CUDA
#include <memory>
#include <optional>

#include "abl/app/backend.h"
#include "abl/backend/cuda/memory.h"
#include "abl/core/log.h"
#include "abl/engine/cuda/backend.h"
#include "abl/parallel/cuda/device_binding.h"
#include "abl/parallel/cuda/sharded_device_weights.h"

namespace abl::app {
namespace {

// What the CUDA engine's backend runs on, made before it and destroyed after it (base-from-member):
// this rank's GPU, the compute stream and the shard group's device communicator.
struct DeviceResources {
  DeviceResources(const BackendSetup& setup, parallel::Runtime& rt) : device(cuda::bind_device(rt.topology())) {
    parallel::MpiComm& group = rt.shard_group_weights();
    if (group.size() == 1) return;
    std::optional<cuda::DeviceCommKind> requested;
    if (setup.comm == GpuComm::nccl) requested = cuda::DeviceCommKind::nccl;
    if (setup.comm == GpuComm::mpi) requested = cuda::DeviceCommKind::mpi;
    comm = cuda::make_group_device_comm(group, rt.host(), device, requested, compute.get());
  }
  int device;
  cuda::Stream compute;
  std::unique_ptr<cuda::DeviceComm> comm;
};

std::unique_ptr<cuda::DeviceWeightSource> load_weights(const BackendSetup& setup, DeviceResources& res) {
  cuda::DeviceShardingOptions opts;
  opts.offload_params = setup.offload_params;
  return cuda::load_device_weights(setup.model, res.comm.get(), opts, res.compute.get());
}

class RankCudaBackend final : private DeviceResources, public cuda::CudaBackend {
 public:
  RankCudaBackend(const BackendSetup& setup, parallel::Runtime& rt)
      : DeviceResources(setup, rt), cuda::CudaBackend(load_weights(setup, *this), setup.limits) {
    log::info("CUDA backend on GPU {}: {} MiB of bf16 weights{}, {} MiB of pass buffers", device,
              weights().bytes() >> 20, comm ? " (shards and gather slots)" : "", engine().plan().total() >> 20);
    log::debug("CUDA engine buffers:\n{}", engine().plan().table());
  }
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendSetup& setup, parallel::Runtime& rt) {
  return std::make_unique<RankCudaBackend>(setup, rt);
}

}  // namespace abl::app
#endif  // ABL_WITH_CUDA
