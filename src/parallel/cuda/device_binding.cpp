#include "abl/parallel/cuda/device_binding.h"

#include <functional>
#include <vector>

#include "abl/backend/cuda/device.h"
#include "abl/core/error.h"
#include "abl/core/log.h"

namespace abl::cuda {

int bind_device(const parallel::Topology& topo) {
  const int dev = select_device(topo.local_rank);
  ABL_CHECK(dev >= 0, "local rank {} could not select a GPU: {}", topo.local_rank, device_summary());
  return dev;
}

bool group_shares_a_gpu(parallel::Comm& group, const std::string& host, int device) {
  const int64_t mine[2] = {static_cast<int64_t>(std::hash<std::string>{}(host)),
                           static_cast<int64_t>(std::hash<std::string>{}(device_pci_bus_id(device)))};
  std::vector<int64_t> all(2 * static_cast<size_t>(group.size()));
  group.all_gather(mine, all.data(), sizeof(mine));
  for (size_t i = 0; i < all.size(); i += 2) {
    for (size_t j = i + 2; j < all.size(); j += 2) {
      if (all[i] == all[j] && all[i + 1] == all[j + 1]) return true;
    }
  }
  return false;
}

std::unique_ptr<DeviceComm> make_group_device_comm(parallel::MpiComm& group, const std::string& host, int device,
                                                   std::optional<DeviceCommKind> requested, cudaStream_t compute) {
  const bool shared = group_shares_a_gpu(group, host, device);
  const DeviceCommKind kind = requested.value_or(shared ? DeviceCommKind::mpi : DeviceCommKind::nccl);
  ABL_CHECK(!(kind == DeviceCommKind::nccl && shared),
            "--comm nccl: ranks of a shard group share a GPU, which NCCL refuses; use --comm mpi or one rank per GPU");
  log::info("CUDA weight gathers over {} in groups of {}", kind == DeviceCommKind::nccl ? "NCCL" : "MPI (host staging)",
            group.size());
  return make_device_comm(kind, group.handle(), compute);
}

}  // namespace abl::cuda
