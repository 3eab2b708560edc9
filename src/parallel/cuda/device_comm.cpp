// The device communicator of a shard group, by kind (device_comm.h).
#include "abl/parallel/cuda/device_comm.h"

#include <exception>

#include "abl/parallel/cuda/nccl_comm.h"
#include "abl/parallel/cuda/staging_comm.h"

namespace abl::cuda {

std::unique_ptr<DeviceComm> make_device_comm(DeviceCommKind kind, MPI_Comm group, cudaStream_t compute) {
  if (kind == DeviceCommKind::nccl) return std::make_unique<NcclComm>(group, compute);
  return std::make_unique<StagingComm>(group, compute);
}

void finish_quietly(parallel::Pending& p) noexcept {
  try {
    p.wait();
  } catch (const std::exception&) {
    // Unwinding already: the first error is the one reported.
  }
}

}  // namespace abl::cuda
