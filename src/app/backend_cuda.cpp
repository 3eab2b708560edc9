// The CUDA backend of a rank (backend.h): binds this rank's GPU, makes the compute stream and the
// shard group's device communicator, loads the weights (whole, or this rank's shards) and runs the
// engine's cuda::CudaBackend on them. One compute stream serves them all.
#ifdef ABL_WITH_CUDA
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "abl/app/backend.h"
#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/device.h"
#include "abl/parallel/cuda/device_comm.h"
#include "abl/engine/cuda/backend.h"
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

// What the CUDA engine's backend runs on, made before it and destroyed after it (base-from-member):
// this rank's GPU, the compute stream and the shard group's device communicator.
struct DeviceResources {
  DeviceResources(const BackendSetup& setup, parallel::Runtime& rt) : device(bind_device(rt.topology())) {
    parallel::MpiComm& group = rt.shard_group_weights();
    if (group.size() == 1) return;
    GpuComm kind = setup.comm;
    const bool shared = group_shares_a_gpu(group, rt.host(), device);
    if (kind == GpuComm::automatic) kind = shared ? GpuComm::mpi : GpuComm::nccl;
    ABL_CHECK(!(kind == GpuComm::nccl && shared),
              "--comm nccl: ranks of a shard group share a GPU, which NCCL refuses; use --comm mpi or one rank "
              "per GPU");
    comm = cuda::make_device_comm(kind == GpuComm::nccl ? cuda::DeviceCommKind::nccl : cuda::DeviceCommKind::mpi,
                                  group.handle(), compute.get());
    log::info("CUDA weight gathers over {} in groups of {}", kind == GpuComm::nccl ? "NCCL" : "MPI (host staging)",
              group.size());
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
